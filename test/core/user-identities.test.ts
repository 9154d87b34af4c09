import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';

// Identities at external providers: `PUT /users/:id` with `provider` and `extern_uid` (administrators), one per
// provider and user, shown in `identities` to administrators and to the user themself.

let t: TestApp;
let admin: TestUser;
let ann: TestUser;
let bob: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'idadmin', admin: true });
  ann = await makeUser(t.app, { username: 'ann' });
  bob = await makeUser(t.app, { username: 'bob' });
});
after(async () => { await t.close(); });

const put = (token: string, id: number, body: Record<string, unknown>) => call(t.app, 'PUT', `/users/${id}`, { token, body });
const rows = (userId: number) => t.app.db.selectFrom('identities').select(['provider', 'extern_uid']).where('user_id', '=', userId).orderBy('id').execute();

test('an administrator adds and changes identities; they show to administrators and to the user', async () => {
  let r = await put(admin.token, ann.user.id, { provider: 'ldapmain', extern_uid: 'uid=ann,ou=people' });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.identities, [{ provider: 'ldapmain', extern_uid: 'uid=ann,ou=people' }]);
  // The same provider again changes that identity; another provider adds one.
  r = await put(admin.token, ann.user.id, { provider: 'ldapmain', extern_uid: 'uid=ann2,ou=people', name: 'Ann' });
  assert.deepEqual([r.body.name, r.body.identities], ['Ann', [{ provider: 'ldapmain', extern_uid: 'uid=ann2,ou=people' }]]);
  r = await put(admin.token, ann.user.id, { provider: 'github', extern_uid: '4242' });
  const both = [{ provider: 'ldapmain', extern_uid: 'uid=ann2,ou=people' }, { provider: 'github', extern_uid: '4242' }];
  assert.deepEqual(r.body.identities, both);
  assert.deepEqual(await rows(ann.user.id), both);

  assert.deepEqual((await call(t.app, 'GET', `/users/${ann.user.id}`, { token: admin.token })).body.identities, both);
  const list = await call(t.app, 'GET', '/users', { token: admin.token, query: { username: 'ann' } });
  assert.deepEqual(list.body[0].identities, both);
  assert.deepEqual((await call(t.app, 'GET', '/user', { token: ann.token })).body.identities, both);
  // Others see no identities at all.
  assert.equal('identities' in (await call(t.app, 'GET', `/users/${ann.user.id}`, { token: bob.token })).body, false);
  assert.deepEqual((await call(t.app, 'GET', '/user', { token: bob.token })).body.identities, []);
});

test('refused: non-administrators, half an identity, an uid another user holds (any case), blanks; nothing changes', async () => {
  await put(admin.token, bob.user.id, { provider: 'saml', extern_uid: 'Bob@Example.com' });
  const before = await rows(bob.user.id);
  let r = await put(bob.token, bob.user.id, { provider: 'saml', extern_uid: 'other' });
  assert.equal(r.status, 403);
  r = await put(admin.token, bob.user.id, { provider: 'saml', name: 'Changed' });
  assert.deepEqual([r.status, r.body], [400, { error: 'provider, extern_uid provide all or none of parameters' }]);
  r = await put(admin.token, ann.user.id, { provider: 'saml', extern_uid: 'bob@example.COM', name: 'Changed' });
  assert.deepEqual([r.status, r.body], [400, { message: { 'identities.extern_uid': ['has already been taken'] } }]);
  r = await put(admin.token, ann.user.id, { provider: ' ', extern_uid: 'x' });
  assert.deepEqual([r.status, r.body], [400, { message: { 'identities.provider': ["can't be blank"] } }]);
  assert.deepEqual(await rows(bob.user.id), before);
  assert.equal((await rows(ann.user.id)).some((i) => i.provider === 'saml' || i.provider === ' '), false);
  assert.notEqual((await call(t.app, 'GET', `/users/${ann.user.id}`, { token: admin.token })).body.name, 'Changed');
  // The same uid at another provider is another identity.
  r = await put(admin.token, ann.user.id, { provider: 'oidc', extern_uid: 'Bob@Example.com' });
  assert.equal(r.status, 200);
});

test('deleting a user removes their identities', async () => {
  const u = await makeUser(t.app, { username: 'gone' });
  await put(admin.token, u.user.id, { provider: 'ldapmain', extern_uid: 'uid=gone' });
  assert.equal((await call(t.app, 'DELETE', `/users/${u.user.id}`, { token: admin.token })).status, 204);
  assert.deepEqual(await rows(u.user.id), []);
  // Its uid is free again.
  assert.equal((await put(admin.token, bob.user.id, { provider: 'ldapmain', extern_uid: 'uid=gone' })).status, 200);
});
