import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeUser } from '../../../test/support/fixtures.ts';
import { makeGroup, makeProject, roleUsers, addMember, type RoleUsers } from './testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { refMatches } from './protection.ts';

let t: TestApp;
let p: ProjectRow;
let other: ProjectRow;
let u: RoleUsers;

before(async () => {
  t = await buildTestApp();
  const owner = await makeUser(t.app);
  p = await makeProject(t.app, owner.user);
  other = await makeProject(t.app, owner.user);
  u = await roleUsers(t.app, p, owner, (o) => makeUser(t.app, o));
});
after(async () => { await t.close(); });

test('wildcards: * matches any run of characters, / included, anchored', () => {
  assert.equal(refMatches('release/*', 'release/1.0'), true);
  assert.equal(refMatches('release/*', 'release/a/b'), true);
  assert.equal(refMatches('release/*', 'xrelease/1'), false);
  assert.equal(refMatches('*-stable', '1-0-stable'), true);
  assert.equal(refMatches('v1.*', 'v1x2'), false, 'dots are literal');
  assert.equal(refMatches('main', 'main2'), false);
});

describe('protected branches', () => {
  const base = () => `/projects/${p.id}/protected_branches`;

  test('create with defaults and fields in order', async () => {
    const r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'main' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), ['id', 'name', 'push_access_levels', 'merge_access_levels', 'allow_force_push', 'unprotect_access_levels', 'code_owner_approval_required']);
    assert.equal(r.body.name, 'main');
    assert.equal(r.body.allow_force_push, false);
    const entry = r.body.push_access_levels[0];
    assert.deepEqual(Object.keys(entry), ['id', 'access_level', 'access_level_description', 'deploy_key_id', 'user_id', 'group_id']);
    assert.deepEqual({ ...entry, id: 0 }, { id: 0, access_level: 40, access_level_description: 'Maintainers', deploy_key_id: null, user_id: null, group_id: null });
    assert.equal(r.body.merge_access_levels[0].access_level, 40);
    assert.equal(r.body.unprotect_access_levels[0].access_level, 40);
  });

  test('levels, users, groups and wildcards', async () => {
    const gid = await makeGroup(t.app, `grp${process.pid}`);
    await addMember(t.app, 'Namespace', gid, u.developer.user.id, 30);
    const r = await call(t.app, 'POST', base(), {
      token: u.maintainer.token,
      body: { name: 'release/*', push_access_level: 30, merge_access_level: 0, allow_force_push: true, allowed_to_push: [{ user_id: u.reporter.user.id }, { group_id: gid }] },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.push_access_levels.map((e: any) => [e.access_level, e.access_level_description, e.user_id, e.group_id]), [
      [30, 'Developers + Maintainers', null, null],
      [40, u.reporter.user.name, u.reporter.user.id, null],
      [40, `grp${process.pid}`, null, gid],
    ]);
    assert.deepEqual(r.body.merge_access_levels.map((e: any) => e.access_level_description), ['No one']);
    assert.equal(r.body.allow_force_push, true);
    const form = await call(t.app, 'POST', base(), { token: u.maintainer.token, form: { name: 'hotfix', push_access_level: '0', allow_force_push: 'false' } });
    assert.equal(form.status, 201);
    assert.equal(form.body.push_access_levels[0].access_level_description, 'No one');
  });

  test('list, single (exact name), errors', async () => {
    const list = await call(t.app, 'GET', base(), { token: u.maintainer.token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((b: any) => b.name), ['main', 'release/*', 'hotfix']);
    assert.equal(list.headers['x-total'], '3');
    const one = await call(t.app, 'GET', `${base()}/${encodeURIComponent('release/*')}`, { token: u.maintainer.token });
    assert.equal(one.body.name, 'release/*');
    const miss = await call(t.app, 'GET', `${base()}/release%2F1`, { token: u.maintainer.token });
    assert.deepEqual([miss.status, miss.body], [404, { message: '404 Not found' }]);
    const dup = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'main' } });
    assert.deepEqual([dup.status, dup.body], [409, { message: "Protected branch 'main' already exists" }]);
    const otherProject = await call(t.app, 'POST', `/projects/${other.id}/protected_branches`, { token: u.owner.token, body: { name: 'main' } });
    assert.equal(otherProject.status, 201);
    const bad = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'x', push_access_level: 25 } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'push_access_level does not have a valid value' }]);
    const missing = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: {} });
    assert.deepEqual([missing.status, missing.body], [400, { message: '400 (Bad request) "name" not given' }]);
    const noUser = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'y', allowed_to_push: [{ user_id: 999999 }] } });
    assert.deepEqual([noUser.status, noUser.body], [422, { message: ['Push access levels user does not exist'] }]);
    const forceBool = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'z', allow_force_push: 'yes' } });
    assert.deepEqual([forceBool.status, forceBool.body], [400, { error: 'allow_force_push is invalid' }]);
  });

  test('access: Maintainer and up; developers 403, strangers 404, anonymous 401', async () => {
    assert.equal((await call(t.app, 'GET', base(), { token: u.developer.token })).status, 403);
    assert.equal((await call(t.app, 'POST', base(), { token: u.developer.token, body: { name: 'dev' } })).status, 403);
    assert.equal((await call(t.app, 'DELETE', `${base()}/main`, { token: u.developer.token })).status, 403);
    assert.equal((await call(t.app, 'GET', base(), { token: u.stranger.token })).status, 404);
    assert.equal((await call(t.app, 'GET', base())).status, 401);
    assert.equal((await call(t.app, 'GET', base(), { token: u.owner.token })).status, 200);
    assert.equal((await call(t.app, 'GET', base(), { token: u.admin.token })).status, 200);
  });

  test('delete: 204, then 404; If-Unmodified-Since in the past is 412', async () => {
    let r = await call(t.app, 'DELETE', `${base()}/hotfix`, { token: u.maintainer.token, headers: { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    assert.equal(r.status, 412);
    r = await call(t.app, 'DELETE', `${base()}/hotfix`, { token: u.maintainer.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', `${base()}/hotfix`, { token: u.maintainer.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  });
});

describe('protected tags', () => {
  const base = () => `/projects/${p.id}/protected_tags`;

  test('create: default level 40, access_level_description, no deploy_key_id for roles', async () => {
    const r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'release-*' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), ['name', 'create_access_levels']);
    assert.equal(r.body.name, 'release-*');
    assert.equal(r.body.create_access_levels.length, 1);
    const e = r.body.create_access_levels[0];
    assert.deepEqual(Object.keys(e), ['id', 'access_level', 'access_level_description']);
    assert.deepEqual([e.access_level, e.access_level_description], [40, 'Maintainers']);
  });

  test('create_access_level and allowed_to_create of users, groups and levels', async () => {
    let r = await call(t.app, 'POST', base(), { token: u.maintainer.token, form: { name: 'v*', create_access_level: '30' } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.create_access_levels.map((x: any) => x.access_level_description), ['Developers + Maintainers']);
    const gid = await makeGroup(t.app, `tg${process.pid}`);
    r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'mixed', allowed_to_create: [{ user_id: u.developer.user.id }, { group_id: gid }, { access_level: 0 }] } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.create_access_levels.map((x: any) => ({ ...x, id: 0 })), [
      { id: 0, access_level: 40, access_level_description: u.developer.user.name, user_id: u.developer.user.id },
      { id: 0, access_level: 40, access_level_description: `tg${process.pid}`, group_id: gid },
      { id: 0, access_level: 0, access_level_description: 'No one' },
    ]);
  });

  test('errors: duplicate name, bad level, missing name, unknown deploy key', async () => {
    let r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'release-*' } });
    assert.deepEqual([r.status, r.body], [422, { message: ['Name has already been taken'] }]);
    r = await call(t.app, 'POST', `/projects/${other.id}/protected_tags`, { token: u.owner.token, body: { name: 'release-*' } });
    assert.equal(r.status, 201);
    r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'x', create_access_level: 20 } });
    assert.deepEqual([r.status, r.body], [400, { error: 'create_access_level does not have a valid value' }]);
    r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "name" not given' }]);
    r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'k', allowed_to_create: [{ deploy_key_id: 424242 }] } });
    assert.deepEqual([r.status, r.body], [422, { message: ['Create access levels deploy key does not exist'] }]);
  });

  test('deploy keys: enabled on the project, shown with deploy_key_id and their title', async () => {
    const now = Date.now();
    const key = await t.app.db.insertInto('deploy_keys').values({
      user_id: u.owner.user.id, title: 'CI deploy key', key: 'ssh-ed25519 AAAA', key_type: 'ssh-ed25519', key_bits: 256, key_blob: 'AAAA',
      fingerprint: 'aa', fingerprint_sha256: 'bb', public: 0, expires_at: null, last_used_at: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    let r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'deploy-*', allowed_to_create: [{ deploy_key_id: key.id }] } });
    assert.deepEqual([r.status, r.body], [422, { message: ['Create access levels deploy key is not enabled for this project'] }]);
    await t.app.db.insertInto('deploy_keys_projects').values({ deploy_key_id: key.id, project_id: p.id, can_push: 1, created_at: now, updated_at: now }).execute();
    r = await call(t.app, 'POST', base(), { token: u.maintainer.token, body: { name: 'deploy-*', allowed_to_create: [{ deploy_key_id: key.id }] } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.create_access_levels.map((x: any) => ({ ...x, id: 0 })), [
      { id: 0, access_level: 40, access_level_description: 'CI deploy key', deploy_key_id: key.id },
    ]);
  });

  test('list and single by exact name', async () => {
    const r = await call(t.app, 'GET', base(), { token: u.reporter.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x: any) => x.name), ['release-*', 'v*', 'mixed', 'deploy-*']);
    const one = await call(t.app, 'GET', `${base()}/v*`, { token: u.developer.token });
    assert.equal(one.body.name, 'v*');
    const miss = await call(t.app, 'GET', `${base()}/v1`, { token: u.developer.token });
    assert.deepEqual([miss.status, miss.body], [404, { message: '404 Not found' }]);
  });

  test('access: guests 403 on reads, developers 403 on writes, strangers 404', async () => {
    assert.equal((await call(t.app, 'GET', base(), { token: u.guest.token })).status, 403);
    assert.equal((await call(t.app, 'POST', base(), { token: u.developer.token, body: { name: 'd' } })).status, 403);
    assert.equal((await call(t.app, 'DELETE', `${base()}/v*`, { token: u.developer.token })).status, 403);
    assert.equal((await call(t.app, 'DELETE', `${base()}/v*`, { token: u.stranger.token })).status, 404);
    assert.equal((await call(t.app, 'GET', base())).status, 401);
  });

  test('delete by literal name', async () => {
    let r = await call(t.app, 'DELETE', `${base()}/v*`, { token: u.maintainer.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', `${base()}/v*`, { token: u.maintainer.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  });
});
