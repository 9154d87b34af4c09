import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createGroup, makeProject, quickUser, makeToken, type TestUser } from '../../../test/support/fixtures.ts';

/** Users of these tests hold `api` and `read_user` tokens (administrators also `sudo`). */
const makeUser = (app: Parameters<typeof quickUser>[0], o: { admin?: boolean; username?: string } = {}) =>
  quickUser(app, { ...o, scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])] });

// One table per endpoint: the status each caller gets on a private group (and a project in it).
let t: TestApp;
const who: Record<string, TestUser | null> = {};
const ROLES = ['anonymous', 'stranger', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
type Role = (typeof ROLES)[number];
let group: any;
let project: { id: number; full_path: string };
let target: TestUser;

before(async () => {
  t = await buildTestApp();
  const owner = await makeUser(t.app);
  who.anonymous = null;
  who.owner = owner;
  who.admin = await makeUser(t.app, { admin: true });
  for (const r of ['stranger', 'guest', 'reporter', 'developer', 'maintainer'] as const) who[r] = await makeUser(t.app);
  target = await makeUser(t.app);
  group = await createGroup(t.app, owner.token, { name: 'Matrix', path: 'matrix' });
  const levels = { guest: 10, reporter: 20, developer: 30, maintainer: 40 } as const;
  for (const [r, level] of Object.entries(levels)) await addMember(t.app, { type: 'Namespace', id: group.id }, who[r]!.user.id, level);
  project = await makeProject(t.app, { namespace: { id: group.id, full_path: group.full_path }, path: 'matrix-project' });
});
after(async () => { await t.close(); });

async function matrix(expected: Record<Role, number>, req: (role: Role) => Promise<{ status: number; body: any }>) {
  for (const role of ROLES) {
    const r = await req(role);
    assert.equal(r.status, expected[role], `${role}: ${JSON.stringify(r.body)}`);
  }
}
const tok = (role: Role) => who[role]?.token;

test('GET /groups/:id, /subgroups, /members, /members/all and project members', async () => {
  const read = { anonymous: 404, stranger: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
  await matrix(read, (r) => call(t.app, 'GET', `/groups/${group.id}`, { token: tok(r) }));
  await matrix(read, (r) => call(t.app, 'GET', `/groups/${group.id}/subgroups`, { token: tok(r) }));
  const members = { ...read, anonymous: 401 };
  await matrix(members, (r) => call(t.app, 'GET', `/groups/${group.id}/members`, { token: tok(r) }));
  await matrix(members, (r) => call(t.app, 'GET', `/groups/${group.id}/members/all`, { token: tok(r) }));
  await matrix(members, (r) => call(t.app, 'GET', `/projects/${project.id}/members/all`, { token: tok(r) }));
  await matrix(members, (r) => call(t.app, 'GET', `/namespaces/${group.id}`, { token: tok(r) }));
});

test('member writes: add, change and remove a Developer', async () => {
  const write = { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 };
  await matrix(write, async (r) => {
    const res = await call(t.app, 'POST', `/groups/${group.id}/members`, { token: tok(r), body: { user_id: target.user.id, access_level: 30 } });
    if (res.status === 201) await t.app.db.deleteFrom('members').where('source_id', '=', group.id).where('source_type', '=', 'Namespace').where('user_id', '=', target.user.id).execute();
    return res;
  });
  await addMember(t.app, { type: 'Namespace', id: group.id }, target.user.id, 30);
  await matrix({ ...write, maintainer: 200, owner: 200, admin: 200 }, (r) => call(t.app, 'PUT', `/groups/${group.id}/members/${target.user.id}`, { token: tok(r), body: { access_level: 20 } }));
  await matrix({ ...write, maintainer: 204, owner: 204, admin: 204 }, async (r) => {
    const res = await call(t.app, 'DELETE', `/groups/${group.id}/members/${target.user.id}`, { token: tok(r) });
    if (res.status === 204) await addMember(t.app, { type: 'Namespace', id: group.id }, target.user.id, 30);
    return res;
  });
  await matrix({ ...write, maintainer: 201, owner: 201, admin: 201 }, async (r) => {
    const res = await call(t.app, 'POST', `/projects/${project.id}/members`, { token: tok(r), body: { user_id: target.user.id, access_level: 40 } });
    if (res.status === 201) await t.app.db.deleteFrom('members').where('source_type', '=', 'Project').where('user_id', '=', target.user.id).execute();
    return res;
  });
});

test('group settings, deletion and tokens', async () => {
  const ownerOnly = { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200 };
  await matrix(ownerOnly, (r) => call(t.app, 'PUT', `/groups/${group.id}`, { token: tok(r), body: { description: r } }));
  const tokenList = { anonymous: 401, stranger: 404, guest: 401, reporter: 401, developer: 401, maintainer: 401, owner: 200, admin: 200 };
  await matrix(tokenList, (r) => call(t.app, 'GET', `/groups/${group.id}/access_tokens`, { token: tok(r) }));
  await matrix({ ...tokenList, maintainer: 200 }, (r) => call(t.app, 'GET', `/projects/${project.id}/access_tokens`, { token: tok(r) }));
  const tokenCreate = { anonymous: 401, stranger: 404, guest: 400, reporter: 400, developer: 400, maintainer: 400, owner: 201, admin: 201 };
  await matrix(tokenCreate, (r) => call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: tok(r), body: { name: `t-${r}`, scopes: ['api'], access_level: 10 } }));
  await matrix({ ...tokenCreate, maintainer: 201 }, (r) => call(t.app, 'POST', `/projects/${project.id}/access_tokens`, { token: tok(r), body: { name: `p-${r}`, scopes: ['api'], access_level: 10 } }));
  const victims = await Promise.all(ROLES.map(() => createGroup(t.app, who.owner!.token, { name: `v${Math.random()}`.replace('.', ''), path: `v${Math.random()}`.replace('.', '') })));
  for (const v of victims) for (const r of ['guest', 'reporter', 'developer', 'maintainer'] as const) await addMember(t.app, { type: 'Namespace', id: v.id }, who[r]!.user.id, { guest: 10, reporter: 20, developer: 30, maintainer: 40 }[r]);
  let i = 0;
  await matrix({ ...ownerOnly, owner: 202, admin: 202 }, (r) => call(t.app, 'DELETE', `/groups/${victims[i++].id}`, { token: tok(r) }));
});

test('sudo creates a group for the sudo target; read_api cannot add members or tokens', async () => {
  const sudoToken = await makeToken(t.app, who.admin!.user, ['api', 'sudo']);
  let r = await call(t.app, 'POST', '/groups', { token: sudoToken, headers: { sudo: who.stranger!.user.username }, body: { name: 'Sudoed', path: 'sudoed' } });
  assert.equal(r.status, 201);
  const m = await t.app.db.selectFrom('members').select(['user_id', 'access_level']).where('source_type', '=', 'Namespace').where('source_id', '=', r.body.id).execute();
  assert.deepEqual(m, [{ user_id: who.stranger!.user.id, access_level: 50 }]);
  const ro = await makeToken(t.app, who.owner!.user, ['read_api']);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: ro, body: { name: 'x', scopes: ['api'] } });
  assert.deepEqual([r.status, r.body.error], [403, 'insufficient_scope']);
  r = await call(t.app, 'DELETE', `/groups/${group.id}/members/${who.guest!.user.id}`, { token: ro });
  assert.deepEqual([r.status, r.body.error], [403, 'insufficient_scope']);
  r = await call(t.app, 'GET', '/namespaces', { token: ro });
  assert.equal(r.status, 200);
});
