import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { digest } from '../../platform/crypto/tokens.ts';

let t: TestApp;
let admin: TestUser;
let user: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
  user = await makeUser(t.app);
});
after(async () => { await t.close(); });

const body = { name: 'CI bot', redirect_uri: 'https://ci.example/oauth/callback', scopes: 'api read_user' };

test('POST /applications: an administrator registers a client and sees the secret once', async () => {
  const r = await call(t.app, 'POST', '/applications', { token: admin.token, body });
  assert.equal(r.status, 201);
  assert.deepEqual(Object.keys(r.body), ['id', 'application_id', 'application_name', 'secret', 'callback_url', 'confidential']);
  assert.match(r.body.application_id, /^[0-9a-f]{64}$/);
  assert.match(r.body.secret, /^gloas-[0-9a-f]{64}$/);
  assert.equal(r.body.application_name, 'CI bot');
  assert.equal(r.body.callback_url, 'https://ci.example/oauth/callback');
  assert.equal(r.body.confidential, true);
  const row = await t.app.db.selectFrom('oauth_applications').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
  assert.equal(row.secret_digest, digest(r.body.secret));
  assert.equal(row.owner_id, null);
  assert.equal(row.scopes, 'api read_user');
  const list = await call(t.app, 'GET', '/applications', { token: admin.token });
  const listed = list.body.find((a: any) => a.id === r.body.id);
  assert.deepEqual(listed, { id: r.body.id, application_id: r.body.application_id, application_name: 'CI bot', callback_url: 'https://ci.example/oauth/callback', confidential: true });
});

test('POST /applications with form data, confidential=false and several redirect URIs', async () => {
  const r = await call(t.app, 'POST', '/applications', { token: admin.token, form: { name: 'SPA', redirect_uri: 'http://localhost:3000/cb\nhttps://spa.example/cb', scopes: 'read_user', confidential: 'false' } });
  assert.equal(r.status, 201);
  assert.equal(r.body.confidential, false);
  assert.equal(r.body.callback_url, 'http://localhost:3000/cb\nhttps://spa.example/cb');
});

test('POST /applications validation', async () => {
  const cases: Array<[Record<string, unknown>, number, unknown]> = [
    [{ redirect_uri: body.redirect_uri, scopes: 'api' }, 400, { message: '400 (Bad request) "name" not given' }],
    [{ name: 'x', scopes: 'api' }, 400, { message: '400 (Bad request) "redirect_uri" not given' }],
    [{ name: 'x', redirect_uri: body.redirect_uri }, 400, { message: '400 (Bad request) "scopes" not given' }],
    [{ ...body, redirect_uri: 'not a uri' }, 400, { message: { redirect_uri: ['must be an absolute URI.'] } }],
    [{ ...body, redirect_uri: 'javascript:alert(1)' }, 400, { message: { redirect_uri: ['is forbidden by the server.'] } }],
    [{ ...body, scopes: 'api everything' }, 400, { message: { scopes: ["doesn't match configured on the server."] } }],
    [{ ...body, scopes: '' }, 400, { message: { scopes: ["can't be blank"] } }],
    [{ ...body, confidential: 'yes' }, 400, { error: 'confidential is invalid' }],
  ];
  const before = (await t.app.db.selectFrom('oauth_applications').select('id').execute()).length;
  for (const [b, status, expected] of cases) {
    const r = await call(t.app, 'POST', '/applications', { token: admin.token, body: b });
    assert.equal(r.status, status, JSON.stringify(b));
    assert.deepEqual(r.body, expected);
  }
  assert.equal((await t.app.db.selectFrom('oauth_applications').select('id').execute()).length, before);
});

test('only administrators use the Applications API', async () => {
  assert.deepEqual((await call(t.app, 'GET', '/applications')).body, { message: '401 Unauthorized' });
  assert.equal((await call(t.app, 'POST', '/applications', { body })).status, 401);
  const r = await call(t.app, 'GET', '/applications', { token: user.token });
  assert.equal(r.status, 403);
  assert.deepEqual(r.body, { message: '403 Forbidden' });
  assert.equal((await call(t.app, 'POST', '/applications', { token: user.token, body })).status, 403);
  assert.equal((await call(t.app, 'DELETE', '/applications/1', { token: user.token })).status, 403);
  const readApi = await makeToken(t.app, admin.user, ['read_api']);
  assert.equal((await call(t.app, 'GET', '/applications', { token: readApi })).status, 200);
  const w = await call(t.app, 'POST', '/applications', { token: readApi, body });
  assert.equal(w.status, 403);
  assert.equal(w.body.error, 'insufficient_scope');
});

test('DELETE /applications/:id removes the client with its tokens; unknown ids are 404', async () => {
  const created = await call(t.app, 'POST', '/applications', { token: admin.token, body });
  const tok = await call(t.app, 'POST', '/oauth/token', { form: { grant_type: 'password', username: user.user.username, password: 'password123', client_id: created.body.application_id, client_secret: created.body.secret } });
  assert.equal(tok.status, 200);
  const r = await call(t.app, 'DELETE', `/applications/${created.body.id}`, { token: admin.token });
  assert.equal(r.status, 204);
  assert.equal(r.text, '');
  assert.equal((await call(t.app, 'GET', '/user', { query: { access_token: tok.body.access_token } })).status, 401);
  const again = await call(t.app, 'DELETE', `/applications/${created.body.id}`, { token: admin.token });
  assert.equal(again.status, 404);
  assert.deepEqual(again.body, { message: '404 Application Not Found' });
  assert.deepEqual((await call(t.app, 'DELETE', '/applications/abc', { token: admin.token })).body, { error: 'id is invalid' });
  assert.deepEqual((await call(t.app, 'DELETE', '/applications/99999999999', { token: admin.token })).body, { message: '404 Application Not Found' });
});

test('POST /applications/:id/renew-secret replaces the secret', async () => {
  const created = await call(t.app, 'POST', '/applications', { token: admin.token, body });
  const r = await call(t.app, 'POST', `/applications/${created.body.id}/renew-secret`, { token: admin.token });
  assert.equal(r.status, 201);
  assert.notEqual(r.body.secret, created.body.secret);
  const form = { grant_type: 'password', username: user.user.username, password: 'password123', client_id: created.body.application_id };
  assert.equal((await call(t.app, 'POST', '/oauth/token', { form: { ...form, client_secret: created.body.secret } })).status, 401);
  assert.equal((await call(t.app, 'POST', '/oauth/token', { form: { ...form, client_secret: r.body.secret } })).status, 200);
});
