import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { makeToken, makeUser, type TestUser } from '../support/fixtures.ts';
import { httpSignIn, listeningApp } from './listen.ts';
import type { TestApp } from '../support/app.ts';

// A third-party client library (oauth4webapi) drives the provider over real HTTP, as an integrator would.

let t: TestApp & { base: string };
let user: TestUser;
let as: oauth.AuthorizationServer;
let cookie: string;
const REDIRECT = 'http://127.0.0.1:1/callback';
const insecure = { [oauth.allowInsecureRequests]: true };

before(async () => {
  t = await listeningApp();
  user = await makeUser(t.app);
  cookie = await httpSignIn(t.base, user.user.username);
  const issuer = new URL(t.base);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
});
after(async () => { await t.close(); });

/** Registers a client through the Applications API, as automation would. */
async function register(confidential: boolean, scopes = 'api read_user openid profile email') {
  const admin = await makeUser(t.app, { admin: true });
  const token = await makeToken(t.app, admin.user, ['api']);
  const res = await fetch(`${t.base}/api/v4/applications`, {
    method: 'POST', headers: { 'private-token': token, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Library client', redirect_uri: REDIRECT, scopes, confidential }),
  });
  assert.equal(res.status, 201);
  return (await res.json()) as { application_id: string; secret: string };
}

/** The API refuses a revoked token with an RFC 6750 challenge the library understands. */
async function assertRefused(accessToken: string) {
  await assert.rejects(
    () => oauth.protectedResourceRequest(accessToken, 'GET', new URL(`${t.base}/api/v4/user`), undefined, undefined, insecure),
    (e: any) => e instanceof oauth.WWWAuthenticateChallengeError && e.status === 401 && e.cause[0].parameters.error === 'invalid_token',
  );
}

/** The browser part: open the authorization URL as the signed-in user and approve. */
async function authorize(url: URL): Promise<URL> {
  const page = await fetch(url, { headers: { cookie } });
  assert.equal(page.status, 200);
  const html = await page.text();
  const form = html.slice(0, html.indexOf('id="authorize"'));
  const fields = new URLSearchParams();
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields.set(m[1], m[2].replace(/&amp;/g, '&'));
  const res = await fetch(`${t.base}/oauth/authorize`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: fields });
  assert.equal(res.status, 302);
  return new URL(res.headers.get('location')!);
}

test('metadata is accepted by the library', () => {
  assert.equal(as.issuer, t.base);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
});

test('authorization code with PKCE for a public client, refresh, userinfo, revocation', async () => {
  const reg = await register(false);
  const client: oauth.Client = { client_id: reg.application_id };
  const auth = oauth.None();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid read_user', state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
  }).toString();
  const callback = await authorize(url);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client,
    await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure));
  assert.equal(tokens.token_type, 'bearer');
  assert.equal(tokens.expires_in, 7200);
  assert.equal(tokens.scope, 'openid read_user');
  assert.ok(tokens.refresh_token);

  const info = await oauth.processUserInfoResponse(as, client, String(user.user.id), await oauth.userInfoRequest(as, client, tokens.access_token, insecure));
  assert.equal(info.preferred_username, user.user.username);

  const me = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${t.base}/api/v4/user`), undefined, undefined, insecure);
  assert.equal(me.status, 200);

  const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
  assert.notEqual(refreshed.access_token, tokens.access_token);
  await assertRefused(tokens.access_token);

  // Replaying the rotated-out refresh token is refused.
  await assert.rejects(
    async () => oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure)),
    (e: any) => e instanceof oauth.WWWAuthenticateChallengeError && e.cause[0].parameters.error === 'invalid_grant' && e.response.status === 400,
  );

  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.access_token, insecure));
  await assertRefused(refreshed.access_token);
});

test('authorization code for a confidential client with client_secret_basic; a bad secret is invalid_client', async () => {
  const reg = await register(true);
  const client: oauth.Client = { client_id: reg.application_id };
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state }).toString();
  const params = oauth.validateAuthResponse(as, client, await authorize(url), state);
  await assert.rejects(
    async () => oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic('gloas-wrong'), params, REDIRECT, oauth.nopkce, insecure)),
    (e: any) => e instanceof oauth.WWWAuthenticateChallengeError && e.response.status === 401 && e.cause[0].parameters.error === 'invalid_client',
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(reg.secret), params, REDIRECT, oauth.nopkce, insecure));
  assert.equal(tokens.scope, 'api');
});

test('denied consent comes back as access_denied', async () => {
  const reg = await register(false);
  const client: oauth.Client = { client_id: reg.application_id };
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, scope: 'read_user' }).toString();
  const page = await fetch(url, { headers: { cookie } });
  const html = await page.text();
  const denyForm = html.slice(html.indexOf('name="_method"'));
  const fields = new URLSearchParams({ _method: 'delete' });
  for (const m of denyForm.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields.set(m[1], m[2]);
  const res = await fetch(`${t.base}/oauth/authorize`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: fields });
  assert.throws(() => oauth.validateAuthResponse(as, client, new URL(res.headers.get('location')!), state), (e: any) => e.error === 'access_denied');
});

test('password grant through the library', async () => {
  const reg = await register(true);
  const client: oauth.Client = { client_id: reg.application_id };
  const res = await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretPost(reg.secret), 'password',
    new URLSearchParams({ username: user.user.username, password: 'password123', scope: 'read_user' }), insecure);
  const tokens = await oauth.processGenericTokenEndpointResponse(as, client, res);
  assert.equal(tokens.scope, 'read_user');
  assert.equal(tokens.refresh_token, undefined);
  const bad = await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretPost(reg.secret), 'password',
    new URLSearchParams({ username: user.user.username, password: 'wrong-password' }), insecure);
  await assert.rejects(() => oauth.processGenericTokenEndpointResponse(as, client, bad), (e: any) => e.cause[0].parameters.error === 'invalid_grant');
});
