import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';
import type { ManualClock } from '../../src/platform/clock.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { s256 } from '../../src/platform/crypto/pkce.ts';
import { REDIRECT, basic, getCode, makeApp, pkce, signIn, tokenRequest, type Browser } from './helpers.ts';

let t: TestApp;
let clock: ManualClock;
let b: Browser;
before(async () => {
  t = await buildTestApp();
  clock = t.clock as ManualClock;
  const u = await makeUser(t.app);
  b = await signIn(t.app, u.user.username);
});
after(async () => { await t.close(); });

const INVALID_GRANT = 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.';
const INVALID_CLIENT = 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.';

function assertOAuthError(r: { status: number; headers: any; body: any }, status: number, error: string, description: string) {
  assert.equal(r.status, status);
  assert.deepEqual(r.body, { error, error_description: description });
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers.pragma, 'no-cache');
  assert.equal(r.headers['www-authenticate'], `Bearer realm="Doorkeeper", error="${error}", error_description="${description.replace(/"/g, '_')}"`);
}

async function apiUser(token: string) {
  return call(t.app, 'GET', '/user', { headers: { authorization: `Bearer ${token}` } });
}

test('confidential client exchanges a code with client_secret: token response shape and headers', async () => {
  const { app: c, secret } = await makeApp(t.app, { scopes: ['api', 'read_user'] });
  const code = await getCode(t.app, b, c, { scope: 'api read_user' });
  assert.match(code, /^[0-9a-f]{64}$/);
  const r = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret, scope: 'read_user' });
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope', 'created_at']);
  assert.match(r.body.access_token, /^[0-9a-f]{64}$/);
  assert.match(r.body.refresh_token, /^[0-9a-f]{64}$/);
  assert.equal(r.body.token_type, 'bearer');
  assert.equal(r.body.expires_in, 7200);
  assert.equal(r.body.scope, 'api read_user', 'the grant decides the scopes; a scope parameter is ignored');
  assert.equal(r.body.created_at, Math.floor(clock.now() / 1000));
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers.pragma, 'no-cache');
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  // Only digests are stored.
  const row = await t.app.db.selectFrom('oauth_access_tokens').selectAll().where('token_digest', '=', digest(r.body.access_token)).executeTakeFirstOrThrow();
  assert.equal(row.refresh_token_digest, digest(r.body.refresh_token));
  const grant = await t.app.db.selectFrom('oauth_grants').selectAll().where('code_digest', '=', digest(code)).executeTakeFirstOrThrow();
  assert.notEqual(grant.revoked_at, null);
  const me = await apiUser(r.body.access_token);
  assert.equal(me.status, 200);
});

test('HTTP Basic client authentication works for the code exchange', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const code = await getCode(t.app, b, c);
  const r = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { authorization: basic(c.uid, secret) });
  assert.equal(r.status, 200);
  assert.equal(r.body.scope, 'api');
});

test('public client with PKCE needs no secret; the challenge never appears in the redirect', async () => {
  const { app: c } = await makeApp(t.app, { confidential: false });
  const { verifier, challenge } = pkce();
  const code = await getCode(t.app, b, c, { code_challenge: challenge, code_challenge_method: 'S256' });
  const r = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, code_verifier: verifier });
  assert.equal(r.status, 200);
  assert.equal((await apiUser(r.body.access_token)).status, 200);
});

test('PKCE failures are invalid_grant and do not consume the code', async () => {
  const { app: c } = await makeApp(t.app, { confidential: false });
  const { verifier, challenge } = pkce();
  const code = await getCode(t.app, b, c, { code_challenge: challenge, code_challenge_method: 'S256' });
  const base = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid };
  assertOAuthError(await tokenRequest(t.app, base), 400, 'invalid_request', 'Missing required parameter: code_verifier.');
  assertOAuthError(await tokenRequest(t.app, { ...base, code_verifier: `${verifier}x` }), 400, 'invalid_grant', INVALID_GRANT);
  // The plain method is not accepted: the challenge itself as verifier fails.
  assertOAuthError(await tokenRequest(t.app, { ...base, code_verifier: challenge }), 400, 'invalid_grant', INVALID_GRANT);
  assert.equal((await tokenRequest(t.app, { ...base, code_verifier: verifier, code_challenge_method: 'plain' })).status, 200, 'code_challenge_method at the token endpoint is ignored');
});

test('a verifier outside the spec rules (42 characters) never matches', async () => {
  const { app: c } = await makeApp(t.app, { confidential: false });
  const verifier = 'a'.repeat(42);
  const code = await getCode(t.app, b, c, { code_challenge: s256(verifier), code_challenge_method: 'S256' });
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, code_verifier: verifier }), 400, 'invalid_grant', INVALID_GRANT);
  const bad = 'a'.repeat(43).replace(/a$/, '+');
  const code2 = await getCode(t.app, b, c, { code_challenge: s256(bad), code_challenge_method: 'S256' });
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: c.uid, code_verifier: bad }), 400, 'invalid_grant', INVALID_GRANT);
});

test('a verifier for a code issued without a challenge is refused (downgrade)', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const code = await getCode(t.app, b, c);
  const r = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret, code_verifier: pkce().verifier });
  assertOAuthError(r, 400, 'invalid_grant', INVALID_GRANT);
});

test('token endpoint request errors in the reference order', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const { app: other, secret: otherSecret } = await makeApp(t.app);
  const code = await getCode(t.app, b, c);
  const ok = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret };
  assertOAuthError(await tokenRequest(t.app, {}), 400, 'invalid_request', 'Missing required parameter: grant_type.');
  assertOAuthError(await tokenRequest(t.app, { grant_type: '' }), 400, 'invalid_request', 'Missing required parameter: grant_type.');
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'client_credentials' }), 400, 'unsupported_grant_type', 'The authorization grant type is not supported by the authorization server.');
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'toString' }), 400, 'unsupported_grant_type', 'The authorization grant type is not supported by the authorization server.');
  assertOAuthError(await tokenRequest(t.app, { ...ok, code: '' }), 400, 'invalid_request', 'Missing required parameter: code.');
  assertOAuthError(await tokenRequest(t.app, { ...ok, redirect_uri: '' }), 400, 'invalid_request', 'Missing required parameter: redirect_uri.');
  assertOAuthError(await tokenRequest(t.app, { ...ok, client_secret: '' }), 401, 'invalid_client', INVALID_CLIENT);
  assertOAuthError(await tokenRequest(t.app, { ...ok, client_secret: 'gloas-wrong' }), 401, 'invalid_client', INVALID_CLIENT);
  assertOAuthError(await tokenRequest(t.app, { ...ok, client_id: 'nope' }), 401, 'invalid_client', INVALID_CLIENT);
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }), 401, 'invalid_client', INVALID_CLIENT);
  assertOAuthError(await tokenRequest(t.app, { ...ok, client_id: other.uid, client_secret: otherSecret }), 400, 'invalid_grant', INVALID_GRANT);
  assertOAuthError(await tokenRequest(t.app, { ...ok, code: 'f'.repeat(64) }), 400, 'invalid_grant', INVALID_GRANT);
  assertOAuthError(await tokenRequest(t.app, { ...ok, redirect_uri: `${REDIRECT}/other` }), 400, 'invalid_grant', INVALID_GRANT);
  // Two ways of authenticating the client at once.
  const both = await tokenRequest(t.app, ok, { authorization: basic(c.uid, secret) });
  assertOAuthError(both, 400, 'invalid_request', 'The request utilizes more than one mechanism for authenticating the client.');
  // After all these refusals the code still works once.
  assert.equal((await tokenRequest(t.app, ok)).status, 200);
});

test('a code expires after 600 seconds', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const code1 = await getCode(t.app, b, c);
  const code2 = await getCode(t.app, b, c);
  clock.advance(599_000);
  assert.equal((await tokenRequest(t.app, { grant_type: 'authorization_code', code: code1, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret })).status, 200);
  clock.advance(1_000);
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret }), 400, 'invalid_grant', INVALID_GRANT);
});

test('a reused code is refused and revokes the tokens it produced', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const code = await getCode(t.app, b, c);
  const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret };
  const first = await tokenRequest(t.app, form);
  assert.equal(first.status, 200);
  assert.equal((await apiUser(first.body.access_token)).status, 200);
  assertOAuthError(await tokenRequest(t.app, form), 400, 'invalid_grant', INVALID_GRANT);
  const me = await apiUser(first.body.access_token);
  assert.equal(me.status, 401);
  assert.deepEqual(me.body, { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });
  assertOAuthError(await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: c.uid, client_secret: secret }), 400, 'invalid_grant', INVALID_GRANT);
  assert.equal(await t.app.db.selectFrom('oauth_access_tokens').select('id').where('application_id', '=', c.id).execute().then((r) => r.length), 1);
});

test('concurrent redemption of one code: exactly one request wins', async () => {
  for (let round = 0; round < 3; round++) {
    const { app: c, secret } = await makeApp(t.app);
    const code = await getCode(t.app, b, c);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret };
    const results = await Promise.all([tokenRequest(t.app, form), tokenRequest(t.app, form), tokenRequest(t.app, form)]);
    const wins = results.filter((r) => r.status === 200);
    const losses = results.filter((r) => r.status === 400);
    assert.equal(wins.length, 1, JSON.stringify(results.map((r) => r.body)));
    assert.equal(losses.length, 2);
    for (const l of losses) assert.equal(l.body.error, 'invalid_grant');
    const rows = await t.app.db.selectFrom('oauth_access_tokens').selectAll().where('application_id', '=', c.id).execute();
    assert.equal(rows.length, 1, 'only one token was ever issued');
    // The replay revoked what the code produced.
    assert.equal((await apiUser(wins[0].body.access_token)).status, 401);
  }
});

test('access tokens last 7200 seconds; the API then answers invalid_token (expired)', async () => {
  const { app: c, secret } = await makeApp(t.app);
  const code = await getCode(t.app, b, c);
  const r = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: c.uid, client_secret: secret });
  clock.advance(7_199_000);
  assert.equal((await apiUser(r.body.access_token)).status, 200);
  clock.advance(1_000);
  const me = await apiUser(r.body.access_token);
  assert.equal(me.status, 401);
  assert.deepEqual(me.body, { error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' });
  assert.match(String(me.headers['www-authenticate']), /^Bearer .*error="invalid_token"/);
  // Refresh works after expiry.
  const refreshed = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token, client_id: c.uid, client_secret: secret });
  assert.equal(refreshed.status, 200);
  assert.equal((await apiUser(refreshed.body.access_token)).status, 200);
});
