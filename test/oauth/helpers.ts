import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { createApplication, type Application } from '../../src/oauth/applications.ts';
import { s256 } from '../../src/platform/crypto/pkce.ts';

export const REDIRECT = 'https://client.example/callback';

export function formBody(o: Record<string, string>): string {
  return new URLSearchParams(o).toString();
}

export function cookieValue(setCookie: string | string[] | undefined, name: string): string | undefined {
  const list = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  for (const c of list) {
    const m = new RegExp(`^${name}=([^;]*)`).exec(c);
    if (m) return m[1];
  }
  return undefined;
}

export interface Browser {
  cookie: string;
  csrf: string;
}

/** Signs in through the sign-in form and returns the session cookie and the page's CSRF token. */
export async function signIn(app: FastifyInstance, login: string, password = 'password123'): Promise<Browser> {
  const page = await app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.equal(page.statusCode, 200);
  const pre = cookieValue(page.headers['set-cookie'], '_service_csrf')!;
  const token = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
  const r = await app.inject({
    method: 'POST', url: '/users/sign_in', payload: formBody({ login, password, authenticity_token: token }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `_service_csrf=${pre}` },
  });
  assert.equal(r.statusCode, 302, r.body);
  const session = cookieValue(r.headers['set-cookie'], '_service_session')!;
  const apps = await app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: `_service_session=${session}` } });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(apps.body)![1];
  return { cookie: `_service_session=${session}`, csrf };
}

export async function makeApp(app: FastifyInstance, o: { confidential?: boolean; scopes?: string[]; redirectUri?: string; ownerId?: number | null; name?: string } = {}): Promise<{ app: Application; secret: string }> {
  return createApplication(app, {
    name: o.name ?? 'Test client', redirectUri: o.redirectUri ?? REDIRECT, scopes: o.scopes ?? ['api', 'read_user', 'openid', 'profile', 'email'],
    confidential: o.confidential ?? true, ownerId: o.ownerId ?? null,
  });
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = 'v'.repeat(10) + Math.random().toString(36).slice(2).padEnd(40, 'x');
  return { verifier, challenge: s256(verifier) };
}

/** Approves an authorization request as the signed-in browser; returns the redirect Location. */
export async function approve(app: FastifyInstance, b: Browser, fields: Record<string, string>, action: 'approve' | 'deny' = 'approve') {
  const body: Record<string, string> = { authenticity_token: b.csrf, response_type: 'code', ...fields };
  if (action === 'deny') body._method = 'delete';
  return app.inject({ method: 'POST', url: '/oauth/authorize', payload: formBody(body), headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.cookie } });
}

/** Runs consent and approval; returns the authorization code. */
export async function getCode(app: FastifyInstance, b: Browser, client: Application, extra: Record<string, string> = {}): Promise<string> {
  const q = new URLSearchParams({ client_id: client.uid, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz', ...extra });
  const page = await app.inject({ method: 'GET', url: `/oauth/authorize?${q}`, headers: { cookie: b.cookie } });
  assert.equal(page.statusCode, 200, page.body);
  assert.match(page.body, /id="authorize"/);
  const r = await approve(app, b, { client_id: client.uid, redirect_uri: REDIRECT, state: 'xyz', ...extra });
  assert.equal(r.statusCode, 302, r.body);
  const loc = new URL(String(r.headers.location));
  assert.equal(loc.searchParams.get('state'), 'xyz');
  return loc.searchParams.get('code')!;
}

export async function tokenRequest(app: FastifyInstance, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await app.inject({ method: 'POST', url: '/oauth/token', payload: formBody(form), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
  return { status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : null };
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}
