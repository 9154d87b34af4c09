import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeProject, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';

// A new project's default branch is protected once its first commit lands (or when it is created with a README), as
// the default branch protection of its group (or, in a personal namespace, of the instance) says; 2 by default.

let t: TestApp;
let owner: TestUser;
before(async () => {
  t = await buildTestApp();
  owner = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

const rules = async (app: TestApp['app'], id: number, token: string) => (await call(app, 'GET', `/projects/${id}/protected_branches`, { token })).body
  .map((r: any) => [r.name, r.push_access_levels.map((a: any) => a.access_level), r.merge_access_levels.map((a: any) => a.access_level), r.allow_force_push]);
const commit = (app: TestApp['app'], id: number, token: string, path: string) => call(app, 'POST', `/projects/${id}/repository/commits`, {
  token, body: { branch: 'main', commit_message: path, actions: [{ action: 'create', file_path: path, content: 'x' }] },
});

test('created with a README: fully protected by default (Maintainers push and merge); Developers refused', async () => {
  const res = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'readme-protected', initialize_with_readme: true } });
  assert.equal(res.status, 201);
  assert.deepEqual(await rules(t.app, res.body.id, owner.token), [['main', [40], [40], false]]);
  const dev = await quickUser(t.app);
  const maint = await quickUser(t.app);
  await addMember(t.app, { type: 'Project', id: res.body.id }, dev.user.id, Role.developer);
  await addMember(t.app, { type: 'Project', id: res.body.id }, maint.user.id, Role.maintainer);
  assert.equal((await commit(t.app, res.body.id, dev.token, 'dev.txt')).status, 403);
  assert.equal((await commit(t.app, res.body.id, maint.token, 'maint.txt')).status, 201);
  const branch = await call(t.app, 'GET', `/projects/${res.body.id}/repository/branches/main`, { token: dev.token });
  assert.deepEqual([branch.body.protected, branch.body.developers_can_push, branch.body.developers_can_merge], [true, false, false]);
});

test('an empty project: protected when its first commit lands, once (unprotecting it later holds)', async () => {
  const res = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'empty-first' } });
  const id = res.body.id;
  assert.deepEqual(await rules(t.app, id, owner.token), []);
  assert.equal((await commit(t.app, id, owner.token, 'a.txt')).status, 201);
  assert.deepEqual(await rules(t.app, id, owner.token), [['main', [40], [40], false]]);
  assert.equal((await call(t.app, 'DELETE', `/projects/${id}/protected_branches/main`, { token: owner.token })).status, 204);
  assert.equal((await commit(t.app, id, owner.token, 'b.txt')).status, 201);
  assert.deepEqual(await rules(t.app, id, owner.token), []);
  // A fixture project (an existing one) is left alone; one made as new gets the rule.
  const old = await makeProject(t.app, { owner: owner.user, repository: true });
  await commit(t.app, old.id, owner.token, 'c.txt');
  assert.deepEqual(await rules(t.app, old.id, owner.token), []);
  const fresh = await makeProject(t.app, { owner: owner.user, repository: true, protectOnFirstCommit: true });
  await commit(t.app, fresh.id, owner.token, 'c.txt');
  assert.deepEqual(await rules(t.app, fresh.id, owner.token), [['main', [40], [40], false]]);
});

test("the group's default_branch_protection: exposed, settable on create and edit, applied to its projects", async () => {
  let g = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'dbp', path: 'dbp' } });
  assert.equal(g.body.default_branch_protection, 2);
  g = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'dbp1', path: 'dbp1', default_branch_protection: 1 } });
  assert.equal(g.body.default_branch_protection, 1);
  assert.deepEqual(g.body.default_branch_protection_defaults, { allowed_to_push: [{ access_level: 30 }], allow_force_push: false, allowed_to_merge: [{ access_level: 30 }] });
  let p = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'in-dbp1', namespace_id: g.body.id, initialize_with_readme: true } });
  assert.deepEqual(await rules(t.app, p.body.id, owner.token), [['main', [30], [30], false]]);
  const bad = await call(t.app, 'PUT', `/groups/${g.body.id}`, { token: owner.token, body: { default_branch_protection: 7 } });
  assert.deepEqual([bad.status, bad.body], [400, { error: 'default_branch_protection does not have a valid value' }]);
  g = await call(t.app, 'PUT', `/groups/${g.body.id}`, { token: owner.token, body: { default_branch_protection: 0 } });
  assert.equal(g.body.default_branch_protection, 0);
  p = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'in-dbp0', namespace_id: g.body.id, initialize_with_readme: true } });
  assert.deepEqual(await rules(t.app, p.body.id, owner.token), []);
});

test("the instance's setting: personal projects and new groups follow it", async () => {
  const t0 = await buildTestApp({ config: { defaultBranchProtection: 0 } });
  try {
    const admin = await quickUser(t0.app, { admin: true });
    const p = await call(t0.app, 'POST', '/projects', { token: admin.token, body: { name: 'open', initialize_with_readme: true } });
    assert.deepEqual(await rules(t0.app, p.body.id, admin.token), []);
    const g = await call(t0.app, 'POST', '/groups', { token: admin.token, body: { name: 'g0', path: 'g0' } });
    assert.equal(g.body.default_branch_protection, 0);
  } finally {
    await t0.close();
  }
});
