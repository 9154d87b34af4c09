import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE, type UserRow } from '../http/auth.ts';
import { digest, safeEqual } from '../platform/crypto/tokens.ts';

// Browser sessions: a random value in the `_service_session` cookie, only its digest in `sessions`.
// The CSRF token is derived from the cookie value (so it needs no storage of its own and cannot
// reveal the cookie); its digest is kept on the session for the API's X-CSRF-Token check.

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Before sign-in there is no session: the sign-in form uses a double-submit cookie instead. */
export const PRE_SESSION_COOKIE = '_service_csrf';

export interface WebSession {
  user: UserRow;
  csrf: string;
  csrfDigest: string;
}

export function csrfTokenFor(cookieValue: string): string {
  return createHmac('sha256', cookieValue).update('csrf').digest('base64url');
}

function cookieOptions(req: FastifyRequest) {
  return { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: req.server.config.externalUrl.startsWith('https:') };
}

export async function currentSession(req: FastifyRequest): Promise<WebSession | null> {
  const cookie = req.cookies?.[SESSION_COOKIE];
  if (!cookie) return null;
  const s = await req.server.auth.userFromSession(cookie);
  if (!s || s.user.state === 'blocked') return null;
  return { user: s.user, csrf: csrfTokenFor(cookie), csrfDigest: s.csrfDigest };
}

/** Constant-time check of a form's `authenticity_token` (or an `X-CSRF-Token` header). */
export function csrfValid(req: FastifyRequest, session: WebSession, submitted: string | undefined): boolean {
  const value = submitted ?? (typeof req.headers['x-csrf-token'] === 'string' ? req.headers['x-csrf-token'] : undefined);
  return typeof value === 'string' && safeEqual(digest(value), session.csrfDigest);
}

export async function startSession(req: FastifyRequest, reply: FastifyReply, user: UserRow): Promise<void> {
  const db = req.server.db;
  const now = req.server.clock.now();
  // A new value on every sign-in (no session fixation); the previous session of this browser ends.
  const old = req.cookies?.[SESSION_COOKIE];
  if (old) await db.deleteFrom('sessions').where('digest', '=', digest(old)).execute();
  const value = randomBytes(32).toString('base64url');
  await db.insertInto('sessions').values({
    user_id: user.id, digest: digest(value), csrf_digest: digest(csrfTokenFor(value)),
    created_at: now, last_seen_at: now, expires_at: now + SESSION_TTL_MS,
    ip: req.ip ?? null, user_agent: String(req.headers['user-agent'] ?? '').slice(0, 512) || null,
  }).execute();
  await db.updateTable('users').set({ current_sign_in_at: now }).where('id', '=', user.id).execute();
  reply.setCookie(SESSION_COOKIE, value, { ...cookieOptions(req), expires: new Date(now + SESSION_TTL_MS) });
  reply.clearCookie(PRE_SESSION_COOKIE, { path: '/' });
}

export async function endSession(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const cookie = req.cookies?.[SESSION_COOKIE];
  if (cookie) await req.server.db.deleteFrom('sessions').where('digest', '=', digest(cookie)).execute();
  reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
}

/** The sign-in form's token: reuses the browser's pre-session cookie or sets a new one. */
export function preSessionToken(req: FastifyRequest, reply: FastifyReply): string {
  const existing = req.cookies?.[PRE_SESSION_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const value = randomBytes(32).toString('base64url');
  reply.setCookie(PRE_SESSION_COOKIE, value, { ...cookieOptions(req), sameSite: 'strict' });
  return value;
}

export function preSessionValid(req: FastifyRequest, submitted: string | undefined): boolean {
  const cookie = req.cookies?.[PRE_SESSION_COOKIE];
  return !!cookie && typeof submitted === 'string' && safeEqual(cookie, submitted);
}

/** Only same-site paths may be returned to after sign-in (no open redirect). */
export function safeReturnTo(v: string | undefined, fallback = '/profile/applications'): string {
  if (!v || !v.startsWith('/') || v.startsWith('//') || v.startsWith('/\\') || /[\u0000-\u001f\u007f]/.test(v)) return fallback;
  return v;
}
