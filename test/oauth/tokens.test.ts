import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import type { ManualClock } from '../../src/platform/clock.ts';
import { issueToken } from '../../src/oauth/tokens.ts';
import { REDIRECT, basic, getCode, makeApp, pkce, signIn, tokenRequest, type Browser } from './helpers.ts';

let t: TestApp;
let clock: ManualClock;
let u: TestUser;
let b: Browser;
before(async () => {
  t = await buildTestApp();
  clock = t.clock as ManualClock;
  u = await makeUser(t.app);
  b = await signIn(t.app, u.user.username);
});
after(async () => { await t.close(); });

const INVALID_GRANT = 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.';

function err(r: { status: number; body: any }, status: number, error: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error, error);
}

async function apiStatus(token: string): Promise<number> {
  return (await call(t.app, 'GET', '/user', { query: { access_token: token } })).status;
}

async function codeTokens(o: { confidential?: boolean; scopes?: string[] } = {}) {
  const { app: c, secret } = await makeApp(t.app, { confidential: o.confidential, scopes: o.scopes });
  const p = pkce();
  const code = await getCode(t.app, b, c, o.confidential === false ? { code_challenge: p.challenge, code_challenge_method: 'S256', scope: (o.scopes ?? ['api']).join(' ') } : { scope: (o.scopes ?? ['api']).join(' ') });
  const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid };
  if (o.confidential === false) form.code_verifier = p.verifier;
  else form.client_secret = secret;
  const r = await tokenRequest(t.app, form);
  assert.equal(r.status, 200);
  return { client: c, secret, verifier: p.verifier, tokens: r.body };
}

// --- refresh_token grant

test('refresh rotates: new pair, the previous access and refresh token stop working at once', async () => {
  const { client, secret, tokens } = await codeTokens({ scopes: ['api', 'read_user'] });
  clock.advance(1000);
  const r = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.uid, client_secret: secret, redirect_uri: REDIRECT });
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
  assert.equal(r.body.scope, 'api read_user');
  assert.equal(r.body.expires_in, 7200);
  assert.notEqual(r.body.access_token, tokens.access_token);
  assert.notEqual(r.body.refresh_token, tokens.refresh_token);
  assert.equal(await apiStatus(tokens.access_token), 401);
  assert.equal(await apiStatus(r.body.access_token), 200);
});

test('refresh with the PKCE parameter set (public client: client_id, redirect_uri, code_verifier)', async () => {
  const { client, verifier, tokens } = await codeTokens({ confidential: false });
  const r = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.uid, redirect_uri: REDIRECT, code_verifier: verifier });
  assert.equal(r.status, 200);
  assert.equal(await apiStatus(r.body.access_token), 200);
});

test('a rotated-out refresh token presented again revokes the whole family', async () => {
  const { client, secret, tokens } = await codeTokens();
  const form = { grant_type: 'refresh_token', client_id: client.uid, client_secret: secret };
  const second = await tokenRequest(t.app, { ...form, refresh_token: tokens.refresh_token });
  const third = await tokenRequest(t.app, { ...form, refresh_token: second.body.refresh_token });
  assert.equal(third.status, 200);
  assert.equal(await apiStatus(third.body.access_token), 200);
  const replay = await tokenRequest(t.app, { ...form, refresh_token: tokens.refresh_token });
  err(replay, 400, 'invalid_grant');
  assert.equal(replay.body.error_description, INVALID_GRANT);
  assert.equal(await apiStatus(third.body.access_token), 401, 'the newest access token of the family is revoked');
  err(await tokenRequest(t.app, { ...form, refresh_token: third.body.refresh_token }), 400, 'invalid_grant');
});

test('concurrent refreshes with one refresh token: one wins, and the replay revokes the family', async () => {
  const { client, secret, tokens } = await codeTokens();
  const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.uid, client_secret: secret };
  const results = await Promise.all([tokenRequest(t.app, form), tokenRequest(t.app, form)]);
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
  const win = results.find((r) => r.status === 200)!;
  assert.equal(await apiStatus(win.body.access_token), 401);
});

test('refresh errors: missing, unknown, client checks, scope', async () => {
  const { client, secret, tokens } = await codeTokens({ scopes: ['api', 'read_user'] });
  const { app: other, secret: otherSecret } = await makeApp(t.app);
  const base = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
  const missing = await tokenRequest(t.app, { grant_type: 'refresh_token', client_id: client.uid, client_secret: secret });
  err(missing, 400, 'invalid_request');
  assert.equal(missing.body.error_description, 'Missing required parameter: refresh_token.');
  err(await tokenRequest(t.app, { ...base, refresh_token: 'nope', client_id: client.uid, client_secret: secret }), 400, 'invalid_grant');
  err(await tokenRequest(t.app, base), 400, 'invalid_grant');
  err(await tokenRequest(t.app, { ...base, client_id: client.uid }), 401, 'invalid_client');
  err(await tokenRequest(t.app, { ...base, client_id: client.uid, client_secret: 'gloas-bad' }), 401, 'invalid_client');
  err(await tokenRequest(t.app, { ...base, client_id: other.uid, client_secret: otherSecret }), 400, 'invalid_grant');
  const wide = await tokenRequest(t.app, { ...base, client_id: client.uid, client_secret: secret, scope: 'api sudo' });
  err(wide, 400, 'invalid_scope');
  assert.equal(wide.body.error_description, 'The requested scope is invalid, unknown, or malformed.');
  // None of the refusals used the token up.
  assert.equal(await apiStatus(tokens.access_token), 200);
  const narrow = await tokenRequest(t.app, { ...base, client_id: client.uid, client_secret: secret, scope: 'read_user' }, {});
  assert.equal(narrow.status, 200);
  assert.equal(narrow.body.scope, 'read_user');
});

test('a blocked user gets no new tokens from a refresh token or a code', async () => {
  const v = await makeUser(t.app);
  const vb = await signIn(t.app, v.user.username);
  const { app: c, secret } = await makeApp(t.app);
  const code1 = await getCode(t.app, vb, c);
  const code2 = await getCode(t.app, vb, c);
  const first = await tokenRequest(t.app, { grant_type: 'authorization_code', code: code1, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret });
  await t.app.db.updateTable('users').set({ state: 'blocked' }).where('id', '=', v.user.id).execute();
  err(await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: c.uid, client_secret: secret }), 400, 'invalid_grant');
  err(await tokenRequest(t.app, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret }), 400, 'invalid_grant');
  assert.equal((await call(t.app, 'GET', '/user', { query: { access_token: first.body.access_token } })).status, 403);
});

// --- password grant

test('password grant without a client: bearer token, api scope, no refresh_token or created_at', async () => {
  const r = await tokenRequest(t.app, { grant_type: 'password', username: u.user.username, password: 'password123' });
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body), ['access_token', 'token_type', 'expires_in', 'scope']);
  assert.equal(r.body.token_type, 'bearer');
  assert.equal(r.body.expires_in, 7200);
  assert.equal(r.body.scope, 'api');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(await apiStatus(r.body.access_token), 200);
  const info = await call(t.app, 'GET', '/oauth/token/info', { headers: { authorization: `Bearer ${r.body.access_token}` } });
  assert.deepEqual(info.body.application, { uid: null });
});

test('password grant with HTTP Basic client credentials, by email, with a scope', async () => {
  const { app: c, secret } = await makeApp(t.app, { scopes: ['api', 'read_user'] });
  const r = await tokenRequest(t.app, { grant_type: 'password', username: u.user.email.toUpperCase(), password: 'password123', scope: 'read_user' }, { authorization: basic(c.uid, secret) });
  assert.equal(r.status, 200);
  assert.equal(r.body.scope, 'read_user');
  const info = await call(t.app, 'GET', '/oauth/token/info', { query: { access_token: r.body.access_token } });
  assert.equal(info.body.application.uid, c.uid);
  // A public client may also use its client_id alone.
  const { app: pub } = await makeApp(t.app, { confidential: false });
  assert.equal((await tokenRequest(t.app, { grant_type: 'password', username: u.user.username, password: 'password123', client_id: pub.uid })).status, 200);
});

test('password grant: an application without api gives a token without scopes', async () => {
  const { app: c, secret } = await makeApp(t.app, { scopes: ['read_user'] });
  const r = await tokenRequest(t.app, { grant_type: 'password', username: u.user.username, password: 'password123', client_id: c.uid, client_secret: secret });
  assert.equal(r.status, 200);
  assert.equal(r.body.scope, '');
  const me = await call(t.app, 'GET', '/user', { query: { access_token: r.body.access_token } });
  assert.equal(me.status, 403);
  assert.equal(me.body.error, 'insufficient_scope');
});

test('password grant errors', async () => {
  const v = await makeUser(t.app);
  const { app: c, secret } = await makeApp(t.app, { scopes: ['read_user'] });
  const { app: pub } = await makeApp(t.app, { confidential: false });
  const ok = { grant_type: 'password', username: v.user.username, password: 'password123' };
  err(await tokenRequest(t.app, { ...ok, client_id: 'unknown' }), 401, 'invalid_client');
  err(await tokenRequest(t.app, { ...ok, client_id: c.uid }), 401, 'invalid_client');
  err(await tokenRequest(t.app, { ...ok, client_id: pub.uid, client_secret: 'gloas-wrong' }), 401, 'invalid_client');
  err(await tokenRequest(t.app, { grant_type: 'password', password: 'password123' }), 400, 'invalid_grant');
  err(await tokenRequest(t.app, { grant_type: 'password', username: v.user.username }), 400, 'invalid_grant');
  err(await tokenRequest(t.app, { ...ok, username: 'nobody-here' }), 400, 'invalid_grant');
  err(await tokenRequest(t.app, { ...ok, scope: 'nonsense' }), 400, 'invalid_scope');
  err(await tokenRequest(t.app, { ...ok, client_id: c.uid, client_secret: secret, scope: 'api' }), 400, 'invalid_scope');
  const blocked = await makeUser(t.app, { state: 'blocked' });
  err(await tokenRequest(t.app, { ...ok, username: blocked.user.username }), 400, 'invalid_grant');
  assert.equal(await t.app.db.selectFrom('oauth_access_tokens').select('id').where('user_id', '=', v.user.id).execute().then((r) => r.length), 0);
});

test('password grant is throttled after repeated failures', async () => {
  const v = await makeUser(t.app);
  const form = (password: string) => ({ grant_type: 'password', username: v.user.username, password });
  for (let i = 0; i < 3; i++) err(await tokenRequest(t.app, form('wrong-password')), 400, 'invalid_grant');
  err(await tokenRequest(t.app, form('password123')), 400, 'invalid_grant');
  clock.advance(1000);
  assert.equal((await tokenRequest(t.app, form('password123'))).status, 200);
});

// --- revocation

async function revoke(form: Record<string, string>, headers: Record<string, string> = {}) {
  return call(t.app, 'POST', '/oauth/revoke', { form, headers });
}

test('revoking an access token ends the pair', async () => {
  const { client, secret, tokens } = await codeTokens();
  const r = await revoke({ token: tokens.access_token, client_id: client.uid, client_secret: secret });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {});
  const me = await call(t.app, 'GET', '/user', { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert.equal(me.status, 401);
  assert.deepEqual(me.body, { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
  err(await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.uid, client_secret: secret }), 400, 'invalid_grant');
  // Revoking again still answers 200.
  assert.equal((await revoke({ token: tokens.access_token, client_id: client.uid, client_secret: secret })).status, 200);
});

test('revoking a refresh token (with or without the hint) ends the pair', async () => {
  for (const hint of ['refresh_token', undefined]) {
    const { client, secret, tokens } = await codeTokens();
    const form: Record<string, string> = { token: tokens.refresh_token };
    if (hint) form.token_type_hint = hint;
    const r = await revoke(form, { authorization: basic(client.uid, secret) });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {});
    assert.equal(await apiStatus(tokens.access_token), 401);
  }
});

test('revoking: a public client with its client_id; unknown or missing tokens answer 200', async () => {
  const { client, tokens } = await codeTokens({ confidential: false });
  assert.deepEqual((await revoke({ token: tokens.access_token, client_id: client.uid })).body, {});
  assert.equal(await apiStatus(tokens.access_token), 401);
  const unknown = await revoke({ token: 'f'.repeat(64) });
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body, {});
  const none = await revoke({});
  assert.equal(none.status, 200);
  assert.deepEqual(none.body, {});
});

test('revoking someone else\'s token is 403 unauthorized_client and the token survives', async () => {
  const { client, tokens } = await codeTokens();
  const { app: other, secret: otherSecret } = await makeApp(t.app);
  const cases: Array<[Record<string, string>, Record<string, string>]> = [
    [{ token: tokens.access_token, client_id: other.uid, client_secret: otherSecret }, {}],
    [{ token: tokens.access_token, client_id: client.uid, client_secret: 'gloas-wrong' }, {}],
    [{ token: tokens.access_token, client_id: client.uid }, {}],
    [{ token: tokens.refresh_token }, {}],
  ];
  for (const [form, headers] of cases) {
    const r = await revoke(form, headers);
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { error: 'unauthorized_client', error_description: 'You are not authorized to revoke this token' });
  }
  assert.equal(await apiStatus(tokens.access_token), 200);
  const both = await revoke({ token: tokens.access_token, client_id: client.uid, client_secret: 'x' }, { authorization: basic(client.uid, 'x') });
  assert.equal(both.status, 400);
  assert.equal(both.body.error, 'invalid_request');
});

test('a token issued without a client can be revoked by whoever holds it', async () => {
  const r = await tokenRequest(t.app, { grant_type: 'password', username: u.user.username, password: 'password123' });
  assert.deepEqual((await revoke({ token: r.body.access_token })).body, {});
  assert.equal(await apiStatus(r.body.access_token), 401);
});

// --- token info

test('token info: the reference body, by query parameter and by Bearer header', async () => {
  const { client, tokens } = await codeTokens({ scopes: ['api', 'read_user'] });
  clock.advance(100_000);
  for (const opts of [{ query: { access_token: tokens.access_token } }, { headers: { authorization: `Bearer ${tokens.access_token}` } }]) {
    const r = await call(t.app, 'GET', '/oauth/token/info', opts);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      resource_owner_id: u.user.id,
      scope: ['api', 'read_user'],
      expires_in: 7100,
      application: { uid: client.uid },
      created_at: tokens.created_at,
      scopes: ['api', 'read_user'],
      expires_in_seconds: 7100,
    });
    assert.deepEqual(Object.keys(r.body), ['resource_owner_id', 'scope', 'expires_in', 'application', 'created_at', 'scopes', 'expires_in_seconds']);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers.etag, undefined);
  }
});

test('token info refuses missing, unknown, expired and revoked tokens with 401 invalid_token', async () => {
  const expected = { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' };
  const check = async (opts: any) => {
    const r = await call(t.app, 'GET', '/oauth/token/info', opts);
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, expected);
    assert.equal(r.headers['www-authenticate'], 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"');
  };
  await check({});
  await check({ query: { access_token: 'nope' } });
  const a = await codeTokens();
  const pat = u.token;
  await check({ headers: { authorization: `Bearer ${pat}` } });
  await revoke({ token: a.tokens.access_token, client_id: a.client.uid, client_secret: a.secret });
  await check({ query: { access_token: a.tokens.access_token } });
  const e = await codeTokens();
  clock.advance(7200_000);
  await check({ query: { access_token: e.tokens.access_token } });
});

// --- userinfo

/** A client-less token as the password grant issues it, without paying for a password hash each time. */
async function passwordToken(scope: string, userName = u.user.username) {
  const user = await t.app.db.selectFrom('users').select('id').where('username', '=', userName).executeTakeFirstOrThrow();
  const issued = await issueToken(t.app.db, clock.now(), { applicationId: null, userId: user.id, grantId: null, scopes: scope.split(' '), refresh: false });
  return issued.accessToken;
}

test('userinfo: OpenID-style claims, email only with the email scope, group memberships', async () => {
  const v = await makeUser(t.app);
  await t.app.db.updateTable('users').set({ website_url: 'https://v.example', public_email: null }).where('id', '=', v.user.id).execute();
  const now = clock.now();
  const g = await t.app.db.insertInto('namespaces').values({
    name: 'Team', path: 'team', kind: 'group', parent_id: null, owner_id: null, visibility_level: 0, description: '',
    full_path: `team${v.user.id}`, full_path_lower: `team${v.user.id}`, full_name: 'Team', traversal: '/', request_access_enabled: 1,
    project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  await t.app.db.insertInto('members').values({ source_type: 'Namespace', source_id: g.id, user_id: v.user.id, access_level: 30, expires_at: null, created_by_id: null, created_at: now, updated_at: now }).execute();

  const token = await passwordToken('openid email', v.user.username);
  const r = await call(t.app, 'GET', '/oauth/userinfo', { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    sub: String(v.user.id), name: v.user.name, nickname: v.user.username, preferred_username: v.user.username,
    email: v.user.email, email_verified: true, website: 'https://v.example', profile: `http://bellows.test/${v.user.username}`,
    groups: [`team${v.user.id}`],
  });
  const post = await call(t.app, 'POST', '/oauth/userinfo', { form: { access_token: token } });
  assert.deepEqual(post.body, r.body);

  for (const scope of ['profile', 'read_user']) {
    const p = await call(t.app, 'GET', '/oauth/userinfo', { query: { access_token: await passwordToken(scope, v.user.username) } });
    assert.equal(p.status, 200);
    assert.equal(p.body.email, undefined, 'no primary email without the email scope');
    assert.equal(p.body.sub, String(v.user.id));
  }
});

test('userinfo errors: challenge header and empty body', async () => {
  const none = await call(t.app, 'GET', '/oauth/userinfo');
  assert.equal(none.status, 401);
  assert.equal(none.text, '');
  assert.equal(none.headers['www-authenticate'], 'Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"');
  const apiOnly = await passwordToken('api');
  const forbidden = await call(t.app, 'GET', '/oauth/userinfo', { headers: { authorization: `Bearer ${apiOnly}` } });
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.text, '');
  assert.equal(forbidden.headers['www-authenticate'], 'Bearer realm="Doorkeeper", error="insufficient_scope", error_description="Access to this resource requires scope _openid_, _profile_ or _read_user_."');
  const tok = await passwordToken('openid');
  await revoke({ token: tok });
  const revoked = await call(t.app, 'GET', '/oauth/userinfo', { headers: { authorization: `Bearer ${tok}` } });
  assert.equal(revoked.status, 401);
  assert.match(String(revoked.headers['www-authenticate']), /error_description="The access token was revoked"/);
  const tok2 = await passwordToken('openid');
  clock.advance(7200_000);
  const expired = await call(t.app, 'GET', '/oauth/userinfo', { headers: { authorization: `Bearer ${tok2}` } });
  assert.equal(expired.status, 401);
  assert.match(String(expired.headers['www-authenticate']), /error_description="The access token expired"/);
});

// --- OAuth tokens on the API

test('OAuth tokens authenticate the API with their scopes', async () => {
  const admin = await makeUser(t.app, { admin: true });
  const readApi = await passwordToken('read_api', admin.user.username);
  assert.equal((await call(t.app, 'GET', '/applications', { headers: { authorization: `Bearer ${readApi}` } })).status, 200);
  const write = await call(t.app, 'POST', '/applications', { headers: { authorization: `Bearer ${readApi}` }, body: { name: 'x', redirect_uri: REDIRECT, scopes: 'api' } });
  assert.equal(write.status, 403);
  assert.deepEqual(write.body, { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api' });
  const api = await passwordToken('api', admin.user.username);
  assert.equal((await call(t.app, 'POST', '/applications', { query: { access_token: api }, body: { name: 'x', redirect_uri: REDIRECT, scopes: 'api' } })).status, 201);
  const readUser = await passwordToken('read_user');
  const me = await call(t.app, 'GET', '/user', { headers: { authorization: `Bearer ${readUser}` } });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, u.user.id);
  assert.equal((await call(t.app, 'GET', '/user', { headers: { authorization: 'Bearer nonsense' } })).status, 401);
});

test('an administrator\'s OAuth token with the sudo scope can act as another user', async () => {
  const admin = await makeUser(t.app, { admin: true });
  const withSudo = await passwordToken('api sudo', admin.user.username);
  const r = await call(t.app, 'GET', '/user', { headers: { authorization: `Bearer ${withSudo}`, sudo: u.user.username } });
  assert.equal(r.status, 200);
  assert.equal(r.body.id, u.user.id);
  const without = await passwordToken('api', admin.user.username);
  const refused = await call(t.app, 'GET', '/user', { headers: { authorization: `Bearer ${without}`, sudo: u.user.username } });
  assert.equal(refused.status, 403);
  assert.equal(refused.body.scope, 'sudo');
});

// --- CORS

async function preflight(url: string, method: string, headers?: string) {
  const h: Record<string, string> = { origin: 'https://spa.example', 'access-control-request-method': method };
  if (headers) h['access-control-request-headers'] = headers;
  return t.app.inject({ method: 'OPTIONS', url, headers: h });
}

test('CORS preflight for token, revoke and userinfo allows simple headers plus Authorization', async () => {
  for (const [url, method, methods] of [['/oauth/token', 'POST', 'POST'], ['/oauth/revoke', 'POST', 'POST'], ['/oauth/userinfo', 'GET', 'GET, HEAD, POST']]) {
    const r = await preflight(url, method, 'Authorization, Content-Type');
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '');
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.equal(r.headers['access-control-allow-methods'], methods);
    assert.equal(r.headers['access-control-allow-headers'], 'authorization, content-type');
    assert.equal(r.headers['access-control-max-age'], '7200');
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
  }
});

test('CORS preflight refusals carry no Access-Control headers', async () => {
  const refused = [
    await preflight('/oauth/token', 'POST', 'X-Requested-With'),
    await preflight('/oauth/token', 'POST', 'Authorization, X-Requested-With'),
    await preflight('/oauth/revoke', 'PUT'),
    await preflight('/oauth/token/info', 'GET', 'Authorization'),
    await preflight('/oauth/authorize', 'POST'),
  ];
  for (const r of refused) {
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
    assert.equal(r.headers['access-control-allow-headers'], undefined);
    assert.equal(r.headers['access-control-allow-methods'], undefined);
  }
  assert.equal((await preflight('/oauth/nothing', 'POST')).statusCode, 404);
});

test('cross-origin token request gets Access-Control-Allow-Origin; no Origin, no CORS headers', async () => {
  const withOrigin = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: 'grant_type=nope', headers: { origin: 'https://spa.example', 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(withOrigin.statusCode, 400);
  assert.equal(withOrigin.headers['access-control-allow-origin'], '*');
  assert.equal(withOrigin.headers['access-control-allow-methods'], 'POST');
  assert.equal(withOrigin.headers.vary, 'Origin');
  assert.equal(withOrigin.headers['access-control-allow-credentials'], undefined);
  const info = await t.app.inject({ method: 'GET', url: '/oauth/token/info', headers: { origin: 'https://spa.example' } });
  assert.equal(info.headers['access-control-allow-origin'], '*');
  const plain = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: 'grant_type=nope', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(plain.headers['access-control-allow-origin'], undefined);
  const authorize = await t.app.inject({ method: 'GET', url: '/oauth/authorize', headers: { origin: 'https://spa.example' } });
  assert.equal(authorize.headers['access-control-allow-origin'], undefined);
});

test('authorization server metadata (RFC 8414)', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(JSON.parse(res.body), {
    issuer: 'http://bellows.test',
    authorization_endpoint: 'http://bellows.test/oauth/authorize',
    token_endpoint: 'http://bellows.test/oauth/token',
    revocation_endpoint: 'http://bellows.test/oauth/revoke',
    userinfo_endpoint: 'http://bellows.test/oauth/userinfo',
    scopes_supported: ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode', 'openid', 'profile', 'email'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'password', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
  });
});
