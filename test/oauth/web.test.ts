import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import type { ManualClock } from '../../src/platform/clock.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import { REDIRECT, cookieValue, formBody, getCode, signIn, tokenRequest, type Browser } from './helpers.ts';

let t: TestApp;
let clock: ManualClock;
// Password hashing is deliberately slow: two users serve the whole file.
let u: TestUser;
let other: TestUser;
before(async () => {
  t = await buildTestApp();
  clock = t.clock as ManualClock;
  u = await makeUser(t.app);
  other = await makeUser(t.app);
});
after(async () => { await t.close(); });

const FORM = 'application/x-www-form-urlencoded';

async function signInForm(ip = '127.0.0.1') {
  const page = await t.app.inject({ method: 'GET', url: '/users/sign_in', remoteAddress: ip });
  const token = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
  return { page, token };
}

async function postSignIn(login: string, password: string, o: { ip?: string; token?: string | null; returnTo?: string } = {}) {
  const { token } = await signInForm(o.ip);
  const t2 = o.token === null ? undefined : o.token ?? token;
  const fields: Record<string, string> = { login, password };
  if (t2) fields.authenticity_token = t2;
  if (o.returnTo) fields.return_to = o.returnTo;
  return t.app.inject({ method: 'POST', url: '/users/sign_in', remoteAddress: o.ip ?? '127.0.0.1', payload: formBody(fields), headers: { 'content-type': FORM, cookie: `_service_csrf=${token}` } });
}

function post(url: string, b: Browser, fields: Record<string, string | string[]> = {}, withCsrf = true) {
  const q = new URLSearchParams();
  if (withCsrf) q.append('authenticity_token', b.csrf);
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  return t.app.inject({ method: 'POST', url, payload: q.toString(), headers: { 'content-type': FORM, cookie: b.cookie } });
}

// --- sign-in and sessions

test('the sign-in page: a form with a CSRF token in a strict, HttpOnly pre-session cookie', async () => {
  const { page, token } = await signInForm();
  assert.equal(page.statusCode, 200);
  assert.equal(page.headers['x-frame-options'], 'DENY');
  assert.match(page.body, /<label for="login">Username or email<\/label>/);
  const set = String(page.headers['set-cookie']);
  assert.match(set, new RegExp(`^_service_csrf=${token}; Path=/; HttpOnly; SameSite=Strict$`));
});

test('signing in sets the session cookie; only its digest is stored; it authenticates the API', async () => {
  const r = await postSignIn(u.user.username, 'password123');
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, '/profile/applications');
  const set = ([] as string[]).concat(r.headers['set-cookie'] as any);
  const session = set.find((c) => c.startsWith('_service_session='))!;
  assert.match(session, /^_service_session=[A-Za-z0-9_-]{43}; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/);
  const value = cookieValue(set, '_service_session')!;
  const row = await t.app.db.selectFrom('sessions').selectAll().where('digest', '=', digest(value)).executeTakeFirstOrThrow();
  assert.equal(row.user_id, u.user.id);
  assert.equal(await t.app.db.selectFrom('sessions').select('id').where('digest', '=', value).executeTakeFirst(), undefined);
  assert.equal(row.expires_at - row.created_at, 7 * 24 * 3600 * 1000);
  const me = await call(t.app, 'GET', '/user', { headers: { cookie: `_service_session=${value}` } });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, u.user.id);
});

test('the session cookie is Secure when the external URL is https', async () => {
  const s = await buildTestApp({ config: { externalUrl: 'https://bellows.test' } });
  try {
    const u = await makeUser(s.app);
    const page = await s.app.inject({ method: 'GET', url: '/users/sign_in' });
    const token = /name="authenticity_token" value="([^"]+)"/.exec(page.body)![1];
    const r = await s.app.inject({ method: 'POST', url: '/users/sign_in', payload: formBody({ login: u.user.username, password: 'password123', authenticity_token: token }), headers: { 'content-type': FORM, cookie: `_service_csrf=${token}` } });
    const session = ([] as string[]).concat(r.headers['set-cookie'] as any).find((c) => c.startsWith('_service_session='))!;
    assert.match(session, /; Secure; SameSite=Lax$/);
  } finally {
    await s.close();
  }
});

test('sign-in refusals: bad CSRF token, bad password, blocked account', async () => {
  const noCsrf = await postSignIn(u.user.username, 'password123', { token: null });
  assert.equal(noCsrf.statusCode, 422);
  assert.equal(cookieValue(noCsrf.headers['set-cookie'], '_service_session'), undefined);
  const forged = await postSignIn(u.user.username, 'password123', { token: 'A'.repeat(43) });
  assert.equal(forged.statusCode, 422);
  const bad = await postSignIn(u.user.username, 'nope-nope', { ip: '10.0.0.9' });
  assert.equal(bad.statusCode, 401);
  assert.match(bad.body, /Invalid login or password\./);
  assert.equal(cookieValue(bad.headers['set-cookie'], '_service_session'), undefined);
  const blocked = await makeUser(t.app, { state: 'blocked' });
  const r = await postSignIn(blocked.user.username, 'password123');
  assert.equal(r.statusCode, 403);
  assert.match(r.body, /Your account has been blocked/);
});

test('repeated failures slow sign-in down, then lock it for this login and address', async () => {
  const ip = '10.1.1.1';
  for (let i = 0; i < 3; i++) assert.equal((await postSignIn(u.user.username, 'wrong-one', { ip })).statusCode, 401);
  const slowed = await postSignIn(u.user.username, 'password123', { ip });
  assert.equal(slowed.statusCode, 429);
  assert.equal(slowed.headers['retry-after'], '1');
  assert.match(slowed.body, /Try again in 1 seconds/);
  // Another address is not affected.
  assert.equal((await postSignIn(u.user.username, 'password123', { ip: '10.1.1.2' })).statusCode, 302);
  // Each further failure doubles the wait: 1, 2, 4, ... seconds; the tenth locks for ten minutes.
  for (let f = 3; f < 10; f++) {
    clock.advance(1000 * 2 ** (f - 3));
    assert.equal((await postSignIn(u.user.username, 'wrong-one', { ip })).statusCode, 401);
  }
  clock.advance(5 * 60 * 1000);
  const locked = await postSignIn(u.user.username, 'password123', { ip });
  assert.equal(locked.statusCode, 429);
  assert.equal(locked.headers['retry-after'], '300');
  assert.match(locked.body, /locked/);
  clock.advance(5 * 60 * 1000);
  const ok = await postSignIn(u.user.username, 'password123', { ip });
  assert.equal(ok.statusCode, 302);
  assert.equal(await t.app.db.selectFrom('sign_in_throttles').select('id').where('key', '=', `${u.user.username.toLowerCase()}|${ip}`).executeTakeFirst(), undefined, 'success clears the counter');
});

test('only local paths are returned to after sign-in', async () => {
  for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
    const r = await postSignIn(u.user.username, 'password123', { returnTo: bad });
    assert.equal(r.headers.location, '/profile/applications', bad);
  }
  assert.equal((await postSignIn(u.user.username, 'password123', { returnTo: '/oauth/authorize?x=1' })).headers.location, '/oauth/authorize?x=1');
});

test('API calls with the session cookie: reads always, writes only with X-CSRF-Token', async () => {
  const admin = await makeUser(t.app, { admin: true });
  const b = await signIn(t.app, admin.user.username);
  const body = { name: 'by cookie', redirect_uri: REDIRECT, scopes: 'api' };
  assert.equal((await call(t.app, 'POST', '/applications', { headers: { cookie: b.cookie }, body })).status, 401);
  assert.equal((await call(t.app, 'POST', '/applications', { headers: { cookie: b.cookie, 'x-csrf-token': 'wrong' }, body })).status, 401);
  assert.equal((await call(t.app, 'POST', '/applications', { headers: { cookie: b.cookie, 'x-csrf-token': b.csrf }, body })).status, 201);
});

test('sessions expire after seven days', async () => {
  const b = await signIn(t.app, u.user.username);
  clock.advance(7 * 24 * 3600 * 1000 - 1000);
  assert.equal((await t.app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: b.cookie } })).statusCode, 200);
  clock.advance(1000);
  const r = await t.app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: b.cookie } });
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, '/users/sign_in?return_to=%2Fprofile%2Fapplications');
  assert.equal((await call(t.app, 'GET', '/user', { headers: { cookie: b.cookie } })).status, 401);
});

test('sign-out needs the CSRF token, then ends the session', async () => {
  const b = await signIn(t.app, u.user.username);
  assert.equal((await post('/users/sign_out', b, {}, false)).statusCode, 422);
  assert.equal((await call(t.app, 'GET', '/user', { headers: { cookie: b.cookie } })).status, 200);
  const r = await post('/users/sign_out', b);
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, '/users/sign_in');
  assert.match(String(r.headers['set-cookie']), /^_service_session=; Max-Age=0; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax$/);
  assert.equal((await call(t.app, 'GET', '/user', { headers: { cookie: b.cookie } })).status, 401);
  assert.equal(await t.app.db.selectFrom('sessions').select('id').where('digest', '=', digest(cookieValue([b.cookie], '_service_session')!)).executeTakeFirst(), undefined);
});

// --- /profile/applications

test('register an application: the ID and the secret are shown once; the secret is stored as a digest', async () => {
  const b = await signIn(t.app, u.user.username);
  const r = await post('/profile/applications', b, { name: 'My tool', redirect_uri: `${REDIRECT}\nhttp://127.0.0.1:7000/cb`, confidential: '1', 'scopes[]': ['api', 'read_user'] });
  assert.equal(r.statusCode, 201);
  const uid = /<code id="application_id">([0-9a-f]{64})<\/code>/.exec(r.body)![1];
  const secret = /<code class="secret" id="secret">(gloas-[0-9a-f]{64})<\/code>/.exec(r.body)![1];
  const row = await t.app.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirstOrThrow();
  assert.deepEqual({ ...row, id: 0, created_at: 0, updated_at: 0 }, {
    id: 0, owner_id: u.user.id, name: 'My tool', uid, secret_digest: digest(secret), redirect_uri: `${REDIRECT}\nhttp://127.0.0.1:7000/cb`,
    scopes: 'api read_user', confidential: 1, created_at: 0, updated_at: 0,
  });
  const show = await t.app.inject({ method: 'GET', url: `/profile/applications/${row.id}`, headers: { cookie: b.cookie } });
  assert.equal(show.statusCode, 200);
  assert.ok(show.body.includes(uid));
  assert.ok(!show.body.includes(secret), 'the secret is not shown again');
  const list = await t.app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: b.cookie } });
  assert.match(list.body, /<a href="\/profile\/applications\/\d+">My tool<\/a>/);
  // The registered client works at the token endpoint with that secret.
  const code = await getCode(t.app, b, row);
  assert.equal((await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: uid, client_secret: secret })).status, 200);
});

test('registration errors re-render the form and create nothing', async () => {
  const b = await signIn(t.app, u.user.username);
  const count = async () => (await t.app.db.selectFrom('oauth_applications').select('id').where('owner_id', '=', u.user.id).execute()).length;
  const before = await count();
  const bad = await post('/profile/applications', b, { name: '', redirect_uri: 'javascript:alert(1)', 'scopes[]': ['api'] });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /<li>Name can&#39;t be blank<\/li>/);
  assert.match(bad.body, /<li>Redirect URI is forbidden by the server\.<\/li>/);
  const relative = await post('/profile/applications', b, { name: 'x', redirect_uri: '/callback', 'scopes[]': ['api'] });
  assert.match(relative.body, /Redirect URI must be an absolute URI\./);
  const fragment = await post('/profile/applications', b, { name: 'x', redirect_uri: 'https://a.example/cb#frag', 'scopes[]': ['api'] });
  assert.match(fragment.body, /Redirect URI cannot contain a fragment\./);
  const noScopes = await post('/profile/applications', b, { name: 'x', redirect_uri: REDIRECT });
  assert.match(noScopes.body, /Scopes can&#39;t be blank/);
  const badScope = await post('/profile/applications', b, { name: 'x', redirect_uri: REDIRECT, 'scopes[]': ['everything'] });
  assert.equal(badScope.statusCode, 422);
  const forged = await post('/profile/applications', b, { name: 'x', redirect_uri: REDIRECT, 'scopes[]': ['api'] }, false);
  assert.equal(forged.statusCode, 422);
  assert.equal(await count(), before);
  const signedOut = await t.app.inject({ method: 'GET', url: '/profile/applications' });
  assert.equal(signedOut.statusCode, 302);
});

test('renew the secret: the new one works, the old one stops at once', async () => {
  const b = await signIn(t.app, u.user.username);
  const created = await post('/profile/applications', b, { name: 'Renew me', redirect_uri: REDIRECT, confidential: '1', 'scopes[]': ['api'] });
  const oldSecret = /id="secret">([^<]+)</.exec(created.body)![1];
  const app = await t.app.db.selectFrom('oauth_applications').selectAll().where('name', '=', 'Renew me').where('owner_id', '=', u.user.id).executeTakeFirstOrThrow();
  const renewed = await post(`/profile/applications/${app.id}/renew`, b);
  assert.equal(renewed.statusCode, 200);
  const newSecret = /id="secret">([^<]+)</.exec(renewed.body)![1];
  assert.notEqual(newSecret, oldSecret);
  const code1 = await getCode(t.app, b, app);
  assert.equal((await tokenRequest(t.app, { grant_type: 'authorization_code', code: code1, redirect_uri: REDIRECT, client_id: app.uid, client_secret: oldSecret })).status, 401);
  assert.equal((await tokenRequest(t.app, { grant_type: 'authorization_code', code: code1, redirect_uri: REDIRECT, client_id: app.uid, client_secret: newSecret })).status, 200);
});

test('other users cannot see, renew or delete an application', async () => {
  const ob = await signIn(t.app, u.user.username);
  await post('/profile/applications', ob, { name: 'Mine', redirect_uri: REDIRECT, 'scopes[]': ['api'] });
  const app = await t.app.db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', u.user.id).where('name', '=', 'Mine').executeTakeFirstOrThrow();
  const intruder = await signIn(t.app, other.user.username);
  assert.equal((await t.app.inject({ method: 'GET', url: `/profile/applications/${app.id}`, headers: { cookie: intruder.cookie } })).statusCode, 404);
  assert.equal((await post(`/profile/applications/${app.id}/renew`, intruder)).statusCode, 404);
  assert.equal((await post(`/profile/applications/${app.id}/delete`, intruder)).statusCode, 404);
  assert.equal((await t.app.inject({ method: 'GET', url: '/profile/applications/abc', headers: { cookie: intruder.cookie } })).statusCode, 404);
  assert.equal((await t.app.inject({ method: 'GET', url: '/profile/applications/9999999999', headers: { cookie: intruder.cookie } })).statusCode, 404);
  assert.equal((await post('/profile/applications/authorized/9999999999/revoke', intruder)).statusCode, 404);
  const after = await t.app.db.selectFrom('oauth_applications').selectAll().where('id', '=', app.id).executeTakeFirstOrThrow();
  assert.equal(after.secret_digest, app.secret_digest);
});

test('delete an application: its codes and tokens go with it', async () => {
  const b = await signIn(t.app, u.user.username);
  const created = await post('/profile/applications', b, { name: 'Doomed', redirect_uri: REDIRECT, confidential: '1', 'scopes[]': ['api'] });
  const secret = /id="secret">([^<]+)</.exec(created.body)![1];
  const app = await t.app.db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', u.user.id).where('name', '=', 'Doomed').executeTakeFirstOrThrow();
  const code = await getCode(t.app, b, app);
  const tok = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.uid, client_secret: secret });
  const r = await post(`/profile/applications/${app.id}/delete`, b);
  assert.equal(r.statusCode, 302);
  assert.equal(r.headers.location, '/profile/applications');
  assert.equal(await t.app.db.selectFrom('oauth_applications').select('id').where('id', '=', app.id).executeTakeFirst(), undefined);
  assert.equal(await t.app.db.selectFrom('oauth_access_tokens').select('id').where('application_id', '=', app.id).executeTakeFirst(), undefined);
  assert.equal((await call(t.app, 'GET', '/user', { query: { access_token: tok.body.access_token } })).status, 401);
});

test('authorized applications are listed and can be revoked', async () => {
  const ob = await signIn(t.app, u.user.username);
  const created = await post('/profile/applications', ob, { name: 'Third party', redirect_uri: REDIRECT, confidential: '1', 'scopes[]': ['api'] });
  const secret = /id="secret">([^<]+)</.exec(created.body)![1];
  const app = await t.app.db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', u.user.id).where('name', '=', 'Third party').executeTakeFirstOrThrow();
  const b = await signIn(t.app, other.user.username);
  const code = await getCode(t.app, b, app);
  const tok = await tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: app.uid, client_secret: secret });
  const list = await t.app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: b.cookie } });
  assert.match(list.body, /Authorized applications \(1\)/);
  assert.match(list.body, new RegExp(`<form method="post" action="/profile/applications/authorized/${app.id}/revoke">`));
  assert.equal((await post(`/profile/applications/authorized/${app.id}/revoke`, b, {}, false)).statusCode, 422);
  assert.equal((await call(t.app, 'GET', '/user', { query: { access_token: tok.body.access_token } })).status, 200);
  const r = await post(`/profile/applications/authorized/${app.id}/revoke`, b);
  assert.equal(r.statusCode, 302);
  assert.equal((await call(t.app, 'GET', '/user', { query: { access_token: tok.body.access_token } })).status, 401);
  assert.equal((await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: tok.body.refresh_token, client_id: app.uid, client_secret: secret })).status, 400);
  const after = await t.app.inject({ method: 'GET', url: '/profile/applications', headers: { cookie: b.cookie } });
  assert.match(after.body, /Authorized applications \(0\)/);
});
