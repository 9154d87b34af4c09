import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeGroup, makeProject, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';

// GET /groups/:id/projects: the projects listing of GET /projects narrowed to a group (its subgroups with
// include_subgroups, the projects shared with it unless with_shared=false), with the reference's filters.

let t: TestApp;
let admin: TestUser;
let g: Awaited<ReturnType<typeof makeGroup>>;
let sub: Awaited<ReturnType<typeof makeGroup>>;
const u: Record<string, TestUser> = {};
const ids: Record<string, number> = {};
before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
  g = await makeGroup(t.app, { path: 'gp', visibility: 0 });
  sub = await makeGroup(t.app, { path: 'sub', visibility: 0, parent: g });
  const other = await makeGroup(t.app, { path: 'other', visibility: 0 });
  ids.alpha = (await makeProject(t.app, { namespace: g, path: 'alpha', visibility: 0 })).id;
  ids.beta = (await makeProject(t.app, { namespace: g, path: 'beta', visibility: 0 })).id;
  ids.gamma = (await makeProject(t.app, { namespace: sub, path: 'gamma', visibility: 0 })).id;
  ids.shared = (await makeProject(t.app, { namespace: other, path: 'shared', visibility: 0 })).id;
  ids.outside = (await makeProject(t.app, { namespace: other, path: 'outside', visibility: 0 })).id;
  await t.app.db.updateTable('projects').set({ archived: 1, issues_access_level: 0 }).where('id', '=', ids.beta).execute();
  await t.app.db.insertInto('project_group_links').values({ project_id: ids.shared, group_id: g.id, group_access: 30, expires_at: null, created_at: 0, updated_at: 0 }).execute();
  for (const [name, level] of Object.entries(Role)) {
    u[name] = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, u[name].user.id, level);
  }
  u.nonMember = await quickUser(t.app);
});
after(async () => { await t.close(); });

const list = async (token: string | undefined, query: Record<string, string> = {}, group: number | string = g.id) => {
  const res = await call(t.app, 'GET', `/groups/${group}/projects`, { token, query });
  return { status: res.status, names: res.status === 200 ? res.body.map((p: any) => p.path) : res.body, res };
};

test('role table: the group must be readable; its members see its projects and those shared with it', async () => {
  assert.deepEqual(await list(undefined).then((r) => [r.status, r.names]), [404, { message: '404 Group Not Found' }]);
  assert.deepEqual(await list(u.nonMember.token).then((r) => [r.status, r.names]), [404, { message: '404 Group Not Found' }]);
  for (const role of ['guest', 'reporter', 'developer', 'maintainer', 'owner']) {
    assert.deepEqual((await list(u[role].token)).names, ['shared', 'beta', 'alpha'], role);
  }
  assert.deepEqual((await list(admin.token)).names, ['shared', 'beta', 'alpha']);
  // By full path too.
  assert.deepEqual((await list(u.guest.token, {}, 'gp')).names, ['shared', 'beta', 'alpha']);
});

test('include_subgroups, with_shared and the filters of the reference', async () => {
  const tok = u.developer.token;
  assert.deepEqual((await list(tok, { include_subgroups: 'true' })).names, ['shared', 'gamma', 'beta', 'alpha']);
  assert.deepEqual((await list(tok, { with_shared: 'false' })).names, ['beta', 'alpha']);
  assert.deepEqual((await list(tok, { archived: 'true' })).names, ['beta']);
  assert.deepEqual((await list(tok, { archived: 'false' })).names, ['shared', 'alpha']);
  assert.deepEqual((await list(tok, { order_by: 'path', sort: 'asc' })).names, ['alpha', 'beta', 'shared']);
  assert.deepEqual((await list(tok, { search: 'alp' })).names, ['alpha']);
  assert.deepEqual((await list(tok, { with_issues_enabled: 'true' })).names, ['shared', 'alpha']);
  assert.deepEqual((await list(tok, { min_access_level: '40' })).names, []);
  assert.deepEqual((await list(u.maintainer.token, { min_access_level: '40', order_by: 'id', sort: 'asc' })).names, ['alpha', 'beta']);
  assert.deepEqual((await list(u.owner.token, { owned: 'true' })).names, ['beta', 'alpha']);
  assert.deepEqual((await list(tok, { visibility: 'public' })).names, []);
  await call(t.app, 'POST', `/projects/${ids.alpha}/star`, { token: tok });
  assert.deepEqual((await list(tok, { starred: 'true' })).names, ['alpha']);
  const simple = await list(tok, { simple: 'true', per_page: '1' });
  assert.deepEqual(Object.keys(simple.res.body[0]).slice(0, 3), ['id', 'description', 'name']);
  assert.equal(simple.res.body[0].permissions, undefined);
  assert.equal(simple.res.headers['x-total'], '3');
  assert.equal(simple.res.headers['x-next-page'], '2');
  const bad = await list(tok, { order_by: 'nope' });
  assert.deepEqual([bad.status, bad.names], [400, { error: 'order_by does not have a valid value' }]);
});

test('a public group shows anonymous callers its public projects only', async () => {
  const pub = await makeGroup(t.app, { path: 'pubg', visibility: 20 });
  await makeProject(t.app, { namespace: pub, path: 'open', visibility: 20 });
  await makeProject(t.app, { namespace: pub, path: 'closed', visibility: 0 });
  assert.deepEqual((await list(undefined, {}, pub.id)).names, ['open']);
  assert.deepEqual((await list(u.nonMember.token, {}, pub.id)).names, ['open']);
  assert.deepEqual((await list(admin.token, {}, pub.id)).names, ['closed', 'open']);
});
