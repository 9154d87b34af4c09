import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';

// python-gitlab sends booleans as `1` / `0` in multipart bodies (a file attached); the reference's Boolean coercion
// reads them there. Everywhere else booleans stay `true` / `false` (DESIGN §1).

let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

const user = (n: string) => ({ email: `${n}@example.com`, username: n, name: n, password: 's3cret-password' });

test('multipart fields: boolean parameters take 1 and 0; text parameters keep them as text', async () => {
  const res = await call(t.app, 'POST', '/users', {
    token: admin.token,
    multipart: { ...user('mp1'), private_profile: '1', can_create_group: '0', external: 'True', bio: '1', avatar: { filename: 'a.png', content: 'x', type: 'image/png' } },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.private_profile, true);
  assert.equal(res.body.can_create_group, false);
  assert.equal(res.body.external, true);
  assert.equal(res.body.bio, '1');
});

test('multipart fields: other words stay refused', async () => {
  for (const v of ['yes', 'on', '2', 't']) {
    const res = await call(t.app, 'POST', '/users', { token: admin.token, multipart: { ...user(`mpbad${v}`), private_profile: v } });
    assert.deepEqual([res.status, res.body], [400, { error: 'private_profile is invalid' }], v);
  }
  const listed = await call(t.app, 'GET', '/users', { token: admin.token, query: { search: 'mpbad' } });
  assert.deepEqual(listed.body, []);
});

test('1 and 0 outside a multipart body are refused as before', async () => {
  let res = await call(t.app, 'POST', '/users', { token: admin.token, body: { ...user('js1'), private_profile: '1' } });
  assert.deepEqual([res.status, res.body], [400, { error: 'private_profile is invalid' }]);
  res = await call(t.app, 'POST', '/users', { token: admin.token, body: { ...user('js2'), private_profile: 1 } });
  assert.deepEqual([res.status, res.body], [400, { error: 'private_profile is invalid' }]);
  res = await call(t.app, 'POST', '/users', { token: admin.token, form: { ...user('fm1'), private_profile: '1' } });
  assert.deepEqual([res.status, res.body], [400, { error: 'private_profile is invalid' }]);
  // A query parameter of a multipart request is no multipart field.
  res = await call(t.app, 'POST', '/users?private_profile=1', { token: admin.token, multipart: { ...user('qs1') } });
  assert.deepEqual([res.status, res.body], [400, { error: 'private_profile is invalid' }]);
  res = await call(t.app, 'GET', '/users', { token: admin.token, query: { blocked: '1' } });
  assert.deepEqual([res.status, res.body], [400, { error: 'blocked is invalid' }]);
});

test('JSON null for an optional date is "not given" (python-gitlab sends expires_at: null); other text stays refused', async () => {
  const g = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'nulldate', path: 'nulldate' } });
  const p = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'nulldate' } });
  let res = await call(t.app, 'POST', `/projects/${p.body.id}/share`, { token: admin.token, body: { group_id: g.body.id, group_access: 30, expires_at: null } });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.expires_at, null);
  res = await call(t.app, 'POST', `/projects/${p.body.id}/share`, { token: admin.token, body: { group_id: g.body.id, group_access: 30, expires_at: 'soon' } });
  assert.deepEqual([res.status, res.body], [400, { error: 'expires_at is invalid' }]);
});
