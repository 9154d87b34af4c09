import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';
import type { Application } from '../../src/oauth/applications.ts';
import { REDIRECT, approve, formBody, makeApp, pkce, signIn, type Browser } from './helpers.ts';

let t: TestApp;
let b: Browser;
let other: Browser;
let client: Application;
before(async () => {
  t = await buildTestApp();
  const u = await makeUser(t.app);
  b = await signIn(t.app, u.user.username);
  other = await signIn(t.app, (await makeUser(t.app)).user.username);
  client = (await makeApp(t.app, { scopes: ['api', 'read_user'] })).app;
});
after(async () => { await t.close(); });

function authorizeUrl(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params)}`;
}

async function get(params: Record<string, string>, cookie = b.cookie) {
  return t.app.inject({ method: 'GET', url: authorizeUrl(params), headers: cookie ? { cookie } : {} });
}

const full = () => ({ client_id: client.uid, redirect_uri: REDIRECT, response_type: 'code', state: 'st8', scope: 'api' });

async function grantCount(): Promise<number> {
  return (await t.app.db.selectFrom('oauth_grants').select('id').execute()).length;
}

test('signed-out visitors are sent to sign in first, whatever the parameters, and come back', async () => {
  const r = await get({ client_id: 'unknown' }, '');
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, `/users/sign_in?return_to=${encodeURIComponent('/oauth/authorize?client_id=unknown')}`);
  const url = authorizeUrl(full());
  const page = await t.app.inject({ method: 'GET', url: `/users/sign_in?return_to=${encodeURIComponent(url)}` });
  const token = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
  const v = await makeUser(t.app);
  const signed = await t.app.inject({
    method: 'POST', url: '/users/sign_in', payload: formBody({ login: v.user.username, password: 'password123', authenticity_token: token, return_to: url }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `_service_csrf=${token}` },
  });
  assert.equal(signed.statusCode, 302);
  assert.equal(signed.headers.location, url);
});

test('the consent page names the application and the scopes and cannot be framed', async () => {
  const r = await get({ ...full(), scope: 'api read_user' });
  assert.equal(r.statusCode, 200);
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(r.headers['x-frame-options'], 'DENY');
  assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.equal(r.headers['referrer-policy'], 'no-referrer');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.match(r.body, /Authorize Test client to use your account\?/);
  assert.match(r.body, /<strong>api<\/strong>: Complete read and write access/);
  assert.match(r.body, /<strong>read_user<\/strong>/);
  assert.match(r.body, /<input type="hidden" name="state" value="st8">/);
  assert.match(r.body, /<input type="hidden" name="_method" value="delete">/);
  assert.equal((r.body.match(/name="authenticity_token" value="([^"]+)"/g) ?? []).length, 3);
});

test('an application name with markup is escaped on the consent page', async () => {
  const { app: evil } = await makeApp(t.app, { name: '<script>alert("x")</script>' });
  const r = await get({ ...full(), client_id: evil.uid });
  assert.equal(r.statusCode, 200);
  assert.doesNotMatch(r.body, /<script>alert/);
  assert.match(r.body, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
});

test('client and redirect URI errors are shown on a page, never redirected', async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ ...full(), client_id: '' }, 'Missing required parameter: client_id.'],
    [{ ...full(), client_id: 'unknown' }, 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.'],
    [{ ...full(), redirect_uri: '' }, "The requested redirect URI is malformed or doesn't match the client redirect URI."],
    [{ ...full(), redirect_uri: 'https://evil.example/callback' }, "The requested redirect URI is malformed or doesn't match the client redirect URI."],
    [{ ...full(), redirect_uri: `${REDIRECT}/more` }, "The requested redirect URI is malformed or doesn't match the client redirect URI."],
    [{ ...full(), redirect_uri: `${REDIRECT}?extra=1` }, "The requested redirect URI is malformed or doesn't match the client redirect URI."],
    [{ ...full(), redirect_uri: REDIRECT.toUpperCase() }, "The requested redirect URI is malformed or doesn't match the client redirect URI."],
  ];
  for (const [params, text] of cases) {
    const r = await get(params);
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers.location, undefined);
    assert.match(r.body, /An error has occurred/);
    assert.ok(r.body.includes(text.replace(/'/g, '&#39;')), text);
  }
});

test('other request errors go back to the client with error, error_description and state', async () => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ ...full(), response_type: '' }, 'invalid_request', 'Missing required parameter: response_type.'],
    [{ ...full(), response_type: 'token' }, 'unsupported_response_type', 'The authorization server does not support this response type.'],
    [{ ...full(), response_mode: 'fragment' }, 'unsupported_response_mode', 'The authorization server does not support this response mode.'],
    [{ ...full(), scope: 'sudo' }, 'invalid_scope', 'The requested scope is invalid, unknown, or malformed.'],
    [{ ...full(), scope: 'bogus' }, 'invalid_scope', 'The requested scope is invalid, unknown, or malformed.'],
    [{ ...full(), code_challenge: pkce().challenge, code_challenge_method: 'plain' }, 'invalid_request', 'The code_challenge_method must be S256.'],
    [{ ...full(), code_challenge: pkce().challenge }, 'invalid_request', 'The code_challenge_method must be S256.'],
    [{ ...full(), code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request', 'The code_challenge must be the URL-safe Base64 encoding of a SHA-256 digest (43 characters).'],
  ];
  for (const [params, error, description] of cases) {
    const r = await get(params);
    assert.equal(r.statusCode, 302, JSON.stringify(params));
    const loc = new URL(String(r.headers.location));
    assert.equal(`${loc.origin}${loc.pathname}`, REDIRECT);
    assert.deepEqual(Object.fromEntries(loc.searchParams), { error, error_description: description, state: 'st8' });
  }
});

test('approve: 302 to the redirect URI with code and state; the grant is stored as a digest', async () => {
  const before = await grantCount();
  const r = await approve(t.app, b, { client_id: client.uid, redirect_uri: REDIRECT, state: 'st8', scope: 'api' });
  assert.equal(r.statusCode, 302);
  const loc = new URL(String(r.headers.location));
  assert.deepEqual([...loc.searchParams.keys()], ['code', 'state']);
  assert.match(loc.searchParams.get('code')!, /^[0-9a-f]{64}$/);
  assert.equal(loc.searchParams.get('state'), 'st8');
  assert.equal(await grantCount(), before + 1);
  const row = await t.app.db.selectFrom('oauth_grants').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.notEqual(row.code_digest, loc.searchParams.get('code'));
  assert.equal(row.expires_at - row.created_at, 600_000);
  assert.equal(row.scopes, 'api');
});

test('approve without state leaves it out; a registered query string is kept', async () => {
  const { app: c } = await makeApp(t.app, { redirectUri: 'https://client.example/cb?tenant=7\nhttp://127.0.0.1:9999/cb' });
  const r = await approve(t.app, b, { client_id: c.uid, redirect_uri: 'https://client.example/cb?tenant=7' });
  assert.equal(r.statusCode, 302);
  assert.match(String(r.headers.location), /^https:\/\/client\.example\/cb\?tenant=7&code=[0-9a-f]{64}$/);
  const second = await approve(t.app, b, { client_id: c.uid, redirect_uri: 'http://127.0.0.1:9999/cb', state: 'a b&c' });
  assert.match(String(second.headers.location), /^http:\/\/127\.0\.0\.1:9999\/cb\?code=[0-9a-f]{64}&state=a\+b%26c$/);
});

test('the default scope is api; an application without api must ask for a scope', async () => {
  const r = await get({ client_id: client.uid, redirect_uri: REDIRECT, response_type: 'code' });
  assert.equal(r.statusCode, 200);
  assert.match(r.body, /<input type="hidden" name="scope" value="api">/);
  const { app: c } = await makeApp(t.app, { scopes: ['read_user'] });
  const refused = await get({ client_id: c.uid, redirect_uri: REDIRECT, response_type: 'code' });
  assert.equal(refused.statusCode, 302);
  assert.equal(new URL(String(refused.headers.location)).searchParams.get('error'), 'invalid_scope');
});

test('deny: redirect with access_denied and state, no code, no grant', async () => {
  const before = await grantCount();
  const r = await approve(t.app, b, { client_id: client.uid, redirect_uri: REDIRECT, state: 'st8' }, 'deny');
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, `${REDIRECT}?error=access_denied&error_description=The+resource+owner+or+authorization+server+denied+the+request.&state=st8`);
  const del = await t.app.inject({
    method: 'DELETE', url: '/oauth/authorize', payload: formBody({ authenticity_token: b.csrf, client_id: client.uid, redirect_uri: REDIRECT, response_type: 'code' }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.cookie },
  });
  assert.equal(del.statusCode, 302);
  assert.equal(del.headers.location, `${REDIRECT}?error=access_denied&error_description=The+resource+owner+or+authorization+server+denied+the+request.`);
  assert.equal(await grantCount(), before);
});

test('approve needs the session\'s CSRF token', async () => {
  const before = await grantCount();
  const forged = await t.app.inject({
    method: 'POST', url: '/oauth/authorize', payload: formBody({ client_id: client.uid, redirect_uri: REDIRECT, response_type: 'code' }),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.cookie },
  });
  assert.equal(forged.statusCode, 422);
  const foreign = await approve(t.app, { cookie: b.cookie, csrf: other.csrf }, { client_id: client.uid, redirect_uri: REDIRECT });
  assert.equal(foreign.statusCode, 422);
  assert.equal(await grantCount(), before);
  const signedOut = await approve(t.app, { cookie: '', csrf: b.csrf }, { client_id: client.uid, redirect_uri: REDIRECT });
  assert.equal(signedOut.statusCode, 302);
  assert.equal(signedOut.headers.location, '/users/sign_in');
});

test('approve with a bad client or redirect URI answers JSON, without redirecting', async () => {
  const unknown = await approve(t.app, b, { client_id: 'nope', redirect_uri: REDIRECT });
  assert.equal(unknown.statusCode, 401);
  assert.equal(unknown.headers.location, undefined);
  assert.deepEqual(JSON.parse(unknown.body), { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.' });
  const badUri = await approve(t.app, b, { client_id: client.uid, redirect_uri: 'https://evil.example/' });
  assert.equal(badUri.statusCode, 400);
  assert.equal(JSON.parse(badUri.body).error, 'invalid_redirect_uri');
  const badScope = await approve(t.app, b, { client_id: client.uid, redirect_uri: REDIRECT, scope: 'sudo', state: 's' });
  assert.equal(badScope.statusCode, 302);
  assert.equal(new URL(String(badScope.headers.location)).searchParams.get('error'), 'invalid_scope');
});
