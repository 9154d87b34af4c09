import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import type { Db } from '../platform/db/index.ts';
import type { UsersTable } from '../platform/db/schema.ts';
import type { Config } from '../config/index.ts';
import type { Clock } from '../platform/clock.ts';
import { digest, safeEqual } from '../platform/crypto/tokens.ts';
import { accessChanged, configureAuthorizationCache } from '../platform/membership.ts';
import { onCacheVoid } from '../platform/cache-bus.ts';
import {
  ForbiddenError, InsufficientScopeError, InvalidTokenError, NotFoundError, RuleError, UnauthorizedError,
} from '../platform/errors.ts';

export type UserRow = Selectable<UsersTable>;


export const ALL_SCOPES = [
  'api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode',
  'openid', 'profile', 'email',
] as const;

export type TokenKind = 'personal' | 'impersonation' | 'oauth';

/** A credential found by one of the resolvers, before its validity is checked. */
export interface ResolvedToken {
  kind: TokenKind;
  id: number;
  userId: number;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
}

/** Looks up a secret; returns null when it is not a token of its kind. */
export type TokenResolver = (secret: string) => Promise<ResolvedToken | null>;

export interface Actor {
  /** Whose permissions the request runs with (the sudo target when sudo is used). */
  user: UserRow | null;
  /** Effective administrator rights. */
  admin: boolean;
  token: ResolvedToken | null;
  via: 'token' | 'session' | 'none';
  sudo: boolean;
}

export const anonymous: Actor = Object.freeze({ user: null, admin: false, token: null, via: 'none', sudo: false }) as Actor;

export const SESSION_COOKIE = '_service_session';

export interface Authenticator {
  /** Resolves the caller: throws 401/403 for bad credentials. Scope and role checks come later, per route. */
  authenticate(req: FastifyRequest, params: Record<string, unknown>): Promise<Actor>;
  /** Refuses a token that lacks every scope the route accepts. */
  checkScopes(actor: Actor, accepted: string[]): void;
  /** OAuth and other token kinds register here; they are tried before personal access tokens. */
  addResolver(resolver: TokenResolver, priority?: 'first' | 'last'): void;
  findUserByIdOrUsername(value: string): Promise<UserRow | undefined>;
  userFromSession(cookie: string | undefined): Promise<{ user: UserRow; csrfDigest: string } | null>;
  /** Stops following cache announcements (the application is closing). */
  dispose(): void;
}

export function createAuthenticator(deps: { db: Db; config: Config; clock: Clock }): Authenticator {
  const { db, config, clock } = deps;
  const resolvers: TokenResolver[] = [];
  // Recently resolved credentials (keyed by a digest of the presented values), reused for
  // config.authCacheMs so a burst of reads costs no lookups. Cleared by any state-changing request
  // in this server (every worker hears of it, see platform/cache-bus.ts); processes outside it, such as the
  // command line, are seen within authCacheMs.
  const tokenCache = new Map<string, { token: ResolvedToken; user: UserRow; at: number }>();
  let generation = 0;
  const voidCaches = () => {
    generation++;
    tokenCache.clear();
    accessChanged(db);
  };
  const stopListening = onCacheVoid('all', voidCaches);
  // Users' memberships are reused for the same window and dropped by the same writes.
  configureAuthorizationCache(db, config.authCacheMs);

  const personal: TokenResolver = async (secret) => {
    const row = await db.selectFrom('personal_access_tokens')
      .select(['id', 'user_id', 'scopes', 'expires_at', 'revoked', 'impersonation', 'last_used_at'])
      .where('token_digest', '=', digest(secret)).executeTakeFirst();
    if (!row) return null;
    const now = clock.now();
    // Written at most once a minute so that reads do not turn into a write per request.
    if (!row.last_used_at || now - row.last_used_at > 60_000) {
      await db.updateTable('personal_access_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
    }
    return {
      kind: row.impersonation ? 'impersonation' : 'personal',
      id: row.id,
      userId: row.user_id,
      scopes: row.scopes.split(' ').filter(Boolean),
      expiresAt: row.expires_at,
      revoked: !!row.revoked,
    };
  };

  async function resolveToken(oauthValue: string | undefined, privateValue: string | undefined): Promise<ResolvedToken | null | 'unknown'> {
    // OAuth resolvers see the bearer/access_token value first; personal tokens are looked up from
    // private_token / PRIVATE-TOKEN, then from the same bearer value (a PAT may be sent as Bearer).
    if (oauthValue) {
      for (const r of resolvers) {
        const t = await r(oauthValue);
        if (t) return t;
      }
    }
    const candidates = [privateValue, oauthValue].filter((v): v is string => !!v);
    for (const v of candidates) {
      const t = await personal(v);
      if (t) return t;
    }
    return candidates.length > 0 || oauthValue ? 'unknown' : null;
  }

  async function findUserByIdOrUsername(value: string) {
    const q = db.selectFrom('users').selectAll();
    // Values no user can have (a NUL, an id beyond 32 bits) would only make the database complain.
    if (value.includes('\u0000') || (/^\d+$/.test(value) && Number(value) > 2_147_483_647)) return undefined;
    if (/^\d+$/.test(value)) return q.where('id', '=', Number(value)).executeTakeFirst();
    return q.where((eb) => eb(eb.fn('lower', ['username']), '=', value.toLowerCase())).executeTakeFirst();
  }

  async function userFromSession(cookie: string | undefined) {
    if (!cookie) return null;
    const now = clock.now();
    const s = await db.selectFrom('sessions').select(['id', 'user_id', 'csrf_digest', 'expires_at', 'last_seen_at'])
      .where('digest', '=', digest(cookie)).executeTakeFirst();
    if (!s || s.expires_at <= now) return null;
    const user = await db.selectFrom('users').selectAll().where('id', '=', s.user_id).executeTakeFirst();
    if (!user) return null;
    return { user, csrfDigest: s.csrf_digest };
  }

  function assertUsable(user: UserRow) {
    // A banned user is a blocked user (the reference's `blocked?`).
    if (user.state === 'blocked' || user.state === 'banned') throw new ForbiddenError('Your account has been blocked.');
  }

  return {
    addResolver(r, priority = 'last') {
      if (priority === 'first') resolvers.unshift(r);
      else resolvers.push(r);
    },
    findUserByIdOrUsername,
    userFromSession,
    dispose: stopListening,

    async authenticate(req, params) {
      const authz = req.headers.authorization;
      const bearer = typeof authz === 'string' && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : undefined;
      const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      const oauthValue = str(params.access_token) ?? bearer;
      const header = req.headers['private-token'];
      const privateValue = str(params.private_token) ?? (typeof header === 'string' && header !== '' ? header : undefined);

      let actor: Actor = anonymous;
      // A state-changing request may revoke tokens or block users: forget every cached credential first.
      // (Nor is anything cached during one: the request itself may be the revocation.)
      const safeMethod = req.method === 'GET' || req.method === 'HEAD';
      if (!safeMethod) voidCaches();
      const generationBefore = generation;
      const cacheKey = oauthValue || privateValue ? digest(`${oauthValue ?? ''}\0${privateValue ?? ''}`) : null;
      const hit = cacheKey ? tokenCache.get(cacheKey) : undefined;
      const fresh = hit && Date.now() - hit.at < config.authCacheMs ? hit : undefined;
      const found = fresh ? fresh.token : await resolveToken(oauthValue, privateValue);
      if (found === 'unknown') throw new UnauthorizedError();
      if (found) {
        const now = clock.now();
        if (found.expiresAt !== null && found.expiresAt <= now) throw new InvalidTokenError('expired');
        if (found.revoked) throw new InvalidTokenError('revoked');
        if (found.kind === 'impersonation' && !config.impersonationEnabled) throw new InvalidTokenError('impersonation_disabled');
        const user = fresh ? fresh.user : await db.selectFrom('users').selectAll().where('id', '=', found.userId).executeTakeFirst();
        if (!user) throw new UnauthorizedError();
        if (cacheKey && !fresh && safeMethod && config.authCacheMs > 0 && generation === generationBefore) {
          if (tokenCache.size >= 10_000) tokenCache.clear();
          tokenCache.set(cacheKey, { token: found, user, at: Date.now() });
        }
        assertUsable(user);
        const admin = !!user.admin && (!config.adminMode || found.scopes.includes('admin_mode'));
        actor = { user, admin, token: found, via: 'token', sudo: false };
      } else {
        const cookie = req.cookies?.[SESSION_COOKIE];
        const session = await userFromSession(cookie);
        if (session) {
          const safe = req.method === 'GET' || req.method === 'HEAD';
          const csrf = req.headers['x-csrf-token'];
          // State-changing API calls with a cookie need the session's CSRF token; otherwise the cookie is ignored.
          if (safe || (typeof csrf === 'string' && safeEqual(digest(csrf), session.csrfDigest))) {
            assertUsable(session.user);
            actor = { user: session.user, admin: !!session.user.admin, token: null, via: 'session', sudo: false };
          }
        }
      }

      const sudoParam = params.sudo;
      const sudoHeader = req.headers.sudo;
      const sudoValue = sudoParam !== undefined && sudoParam !== '' ? String(sudoParam) : typeof sudoHeader === 'string' && sudoHeader !== '' ? sudoHeader : undefined;
      if (sudoValue !== undefined) {
        if (!actor.user) throw new UnauthorizedError();
        // Administrator rights as they stand for this token (admin mode may withhold them).
        if (!actor.admin) throw new ForbiddenError('Must be admin to use sudo');
        if (actor.via !== 'token') throw new ForbiddenError('Must be authenticated using an OAuth or personal access token to use sudo');
        if (!actor.token!.scopes.includes('sudo')) throw new InsufficientScopeError(['sudo']);
        const target = await findUserByIdOrUsername(sudoValue);
        if (!target) throw new RuleError('not_found', `404 User with ID or username '${sudoValue}' Not Found`);
        assertUsable(target);
        actor = { user: target, admin: !!target.admin, token: actor.token, via: 'token', sudo: true };
      }
      return actor;
    },

    checkScopes(actor, accepted) {
      if (!actor.token || actor.sudo) return;
      if (!accepted.some((s) => actor.token!.scopes.includes(s))) throw new InsufficientScopeError(accepted);
    },
  };
}

/** 401 unless signed in. */
export function requireUser(actor: Actor): UserRow {
  if (!actor.user) throw new UnauthorizedError();
  return actor.user;
}

/** 401 when anonymous, 403 when signed in without administrator rights. */
export function requireAdmin(actor: Actor): UserRow {
  const user = requireUser(actor);
  if (!actor.admin) throw new ForbiddenError();
  return user;
}

export { NotFoundError };
