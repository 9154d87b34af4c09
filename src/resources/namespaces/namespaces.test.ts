import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createGroup, userNamespace, quickUser, type TestUser } from '../../../test/support/fixtures.ts';

/** Users of these tests hold `api` and `read_user` tokens (administrators also `sudo`). */
const makeUser = (app: Parameters<typeof quickUser>[0], o: { admin?: boolean; username?: string } = {}) =>
  quickUser(app, { ...o, scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])] });

let t: TestApp;
let owner: TestUser, dev: TestUser, guest: TestUser, stranger: TestUser, admin: TestUser;
let top: any, sub: any, pub: any;

before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  [dev, guest, stranger] = await Promise.all([1, 2, 3].map(() => makeUser(t.app)));
  admin = await makeUser(t.app, { admin: true });
  top = await createGroup(t.app, owner.token, { name: 'NsTop', path: 'nstop' });
  sub = await createGroup(t.app, owner.token, { name: 'NsSub', path: 'nssub', parent_id: top.id });
  pub = await createGroup(t.app, stranger.token, { name: 'NsPub', path: 'nspub', visibility: 'public' });
  await addMember(t.app, { type: 'Namespace', id: top.id }, dev.user.id, 30);
  await addMember(t.app, { type: 'Namespace', id: top.id }, guest.user.id, 10);
});
after(async () => { await t.close(); });

test('GET /namespaces: own namespace plus groups the user can create projects in', async () => {
  const own = await userNamespace(t.app, dev.user.id);
  let r = await call(t.app, 'GET', '/namespaces', { token: dev.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.map((n: any) => n.id), [own.id, top.id, sub.id]);
  assert.deepEqual(r.body[0], {
    id: own.id, name: dev.user.name, path: dev.user.username, kind: 'user', full_path: dev.user.username, parent_id: null,
    avatar_url: null, web_url: `http://bellows.test/${dev.user.username}`,
  });
  assert.deepEqual(r.body[2], {
    id: sub.id, name: 'NsSub', path: 'nssub', kind: 'group', full_path: 'nstop/nssub', parent_id: top.id, avatar_url: null,
    web_url: 'http://bellows.test/groups/nstop/nssub',
  });
  // Guests cannot create projects; project_creation_level narrows who can.
  r = await call(t.app, 'GET', '/namespaces', { token: guest.token });
  assert.deepEqual(r.body.map((n: any) => n.kind), ['user']);
  await call(t.app, 'PUT', `/groups/${sub.id}`, { token: owner.token, body: { project_creation_level: 'maintainer' } });
  r = await call(t.app, 'GET', '/namespaces', { token: dev.token });
  assert.deepEqual(r.body.map((n: any) => n.id), [own.id, top.id]);
  // Owners see members_count_with_descendants.
  r = await call(t.app, 'GET', '/namespaces?search=nstop', { token: owner.token });
  assert.deepEqual(r.body.map((n: any) => [n.id, n.members_count_with_descendants]), [[top.id, 3]]);
  r = await call(t.app, 'GET', '/namespaces?owned_only=true', { token: dev.token });
  assert.deepEqual(r.body.map((n: any) => n.id), [own.id]);
  r = await call(t.app, 'GET', '/namespaces', { token: admin.token });
  assert.ok(r.body.length >= 8);
  assert.equal(r.headers['x-total'], String(r.body.length));
  r = await call(t.app, 'GET', '/namespaces');
  assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
});

test('GET /namespaces/:id by id or path; unreadable is 404 Namespace Not Found', async () => {
  let r = await call(t.app, 'GET', `/namespaces/${top.id}`, { token: guest.token });
  assert.deepEqual([r.status, r.body.full_path, 'members_count_with_descendants' in r.body], [200, 'nstop', false]);
  r = await call(t.app, 'GET', '/namespaces/nstop%2Fnssub', { token: owner.token });
  assert.deepEqual([r.status, r.body.id, r.body.members_count_with_descendants], [200, sub.id, 1]);
  r = await call(t.app, 'GET', `/namespaces/${dev.user.username}`, { token: dev.token });
  assert.deepEqual([r.status, r.body.kind], [200, 'user']);
  r = await call(t.app, 'GET', `/namespaces/${dev.user.username}`, { token: guest.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Namespace Not Found' }]);
  r = await call(t.app, 'GET', `/namespaces/${top.id}`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Namespace Not Found' }]);
  r = await call(t.app, 'GET', `/namespaces/${pub.id}`, { token: guest.token });
  assert.equal(r.status, 200);
  r = await call(t.app, 'GET', `/namespaces/${top.id}`, { token: admin.token });
  assert.equal(r.status, 200);
  r = await call(t.app, 'GET', '/namespaces/999999', { token: admin.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Namespace Not Found' }]);
});
