import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createGroup, makeProject, quickUser, makeToken, type TestUser } from '../../../test/support/fixtures.ts';

/** Users of these tests hold `api` and `read_user` tokens (administrators also `sudo`). */
const makeUser = (app: Parameters<typeof quickUser>[0], o: { admin?: boolean; username?: string } = {}) =>
  quickUser(app, { ...o, scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])] });

let t: TestApp;
let owner: TestUser, maintainer: TestUser, developer: TestUser, reporter: TestUser, guest: TestUser, stranger: TestUser, admin: TestUser;
let priv: any; // a private group with one member per role

before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  [maintainer, developer, reporter, guest, stranger] = await Promise.all([1, 2, 3, 4, 5].map(() => makeUser(t.app)));
  admin = await makeUser(t.app, { admin: true });
  priv = await createGroup(t.app, owner.token, { name: 'Secret', path: 'secret' });
  for (const [u, level] of [[maintainer, 40], [developer, 30], [reporter, 20], [guest, 10]] as const) {
    await addMember(t.app, { type: 'Namespace', id: priv.id }, u.user.id, level);
  }
});
after(async () => { await t.close(); });

test('POST /groups creates a group whose creator is its Owner, entity in reference order', async () => {
  const r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'Alpha Team', path: 'alpha-team', description: 'd', visibility: 'internal' } });
  assert.equal(r.status, 201);
  assert.deepEqual(Object.keys(r.body).slice(0, 24), [
    'id', 'web_url', 'name', 'path', 'description', 'visibility', 'share_with_group_lock', 'require_two_factor_authentication',
    'two_factor_grace_period', 'project_creation_level', 'auto_devops_enabled', 'subgroup_creation_level', 'emails_disabled',
    'emails_enabled', 'show_diff_preview_in_email', 'mentions_disabled', 'lfs_enabled', 'archived', 'math_rendering_limits_enabled',
    'lock_math_rendering_limits_enabled', 'default_branch', 'default_branch_protection', 'default_branch_protection_defaults', 'avatar_url',
  ]);
  assert.equal(r.body.web_url, 'http://bellows.test/groups/alpha-team');
  assert.equal(r.body.visibility, 'internal');
  assert.equal(r.body.full_name, 'Alpha Team');
  assert.equal(r.body.full_path, 'alpha-team');
  assert.equal(r.body.parent_id, null);
  assert.equal(r.body.created_at, '2026-06-01T12:00:00.000Z');
  // The create answer is the detail entity without the project lists.
  assert.deepEqual(Object.keys(r.body).slice(-3), ['marked_for_deletion_on', 'shared_with_groups', 'prevent_sharing_groups_outside_hierarchy']);
  const m = await t.app.db.selectFrom('members').selectAll().where('source_type', '=', 'Namespace').where('source_id', '=', r.body.id).execute();
  assert.deepEqual(m.map((x) => [x.user_id, x.access_level]), [[owner.user.id, 50]]);
  const ns = await t.app.db.selectFrom('namespaces').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
  assert.equal(ns.traversal, `/${r.body.id}/`);
});

test('POST /groups validation: missing params, bad values, duplicate path, nothing created', async () => {
  const before = await t.app.db.selectFrom('namespaces').select('id').execute();
  let r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { path: 'x1' } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "name" not given' }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1' } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "path" not given' }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: 'x1', visibility: 'secret' } });
  assert.deepEqual([r.status, r.body], [400, { error: 'visibility does not have a valid value' }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: 'x1', lfs_enabled: 'maybe' } });
  assert.deepEqual([r.status, r.body], [400, { error: 'lfs_enabled is invalid' }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: 'Secret' } });
  assert.deepEqual([r.status, r.body], [400, { message: { path: ['has already been taken'] } }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: owner.user.username } });
  assert.deepEqual([r.status, r.body], [400, { message: { path: ['has already been taken'] } }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: '-bad' } });
  assert.deepEqual([r.status, r.body], [400, { message: { path: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"] } }]);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: '*bad', path: 'x1' } });
  assert.equal(r.status, 400);
  assert.deepEqual(Object.keys(r.body.message), ['name']);
  r = await call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'x1', path: 'x1', parent_id: priv.id, visibility: 'public' } });
  assert.deepEqual([r.status, r.body], [400, { message: { visibility_level: ['public is not allowed since the parent group has a private visibility.'] } }]);
  assert.equal((await t.app.db.selectFrom('namespaces').select('id').execute()).length, before.length);
});

test('POST /groups: concurrent creations of one path give one group and one clean 400', async () => {
  const rs = await Promise.all([1, 2, 3].map(() => call(t.app, 'POST', '/groups', { token: owner.token, body: { name: 'race', path: 'race' } })));
  assert.deepEqual(rs.map((r) => r.status).sort(), [201, 400, 400]);
  for (const r of rs.filter((x) => x.status === 400)) assert.deepEqual(r.body, { message: { path: ['has already been taken'] } });
  const rows = await t.app.db.selectFrom('namespaces').select('id').where('full_path_lower', '=', 'race').execute();
  assert.equal(rows.length, 1);
});

test('POST /groups access: anonymous 401, read_api 403, cannot-create-group 403, subgroups need Maintainer of the parent', async () => {
  let r = await call(t.app, 'POST', '/groups', { body: { name: 'n1', path: 'n1' } });
  assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
  const ro = await makeToken(t.app, owner.user, ['read_api']);
  r = await call(t.app, 'POST', '/groups', { token: ro, body: { name: 'n1', path: 'n1' } });
  assert.equal(r.status, 403);
  assert.equal(r.body.error, 'insufficient_scope');
  const limited = await makeUser(t.app);
  await t.app.db.updateTable('users').set({ can_create_group: 0 }).where('id', '=', limited.user.id).execute();
  r = await call(t.app, 'POST', '/groups', { token: limited.token, body: { name: 'n1', path: 'n1' } });
  assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);

  const expect = [[stranger, 404], [guest, 403], [reporter, 403], [developer, 403], [maintainer, 201], [owner, 201], [admin, 201]] as const;
  for (const [i, [u, status]] of expect.entries()) {
    r = await call(t.app, 'POST', '/groups', { token: u.token, body: { name: `sub${i}`, path: `sub${i}`, parent_id: priv.id } });
    assert.equal(r.status, status, `role #${i}`);
    if (status === 201) {
      assert.equal(r.body.full_path, `secret/sub${i}`);
      assert.equal(r.body.full_name, `Secret / sub${i}`);
      assert.equal(r.body.visibility, 'private');
    }
  }
  // subgroup_creation_level=owner keeps Maintainers out.
  await call(t.app, 'PUT', `/groups/${priv.id}`, { token: owner.token, body: { subgroup_creation_level: 'owner' } });
  r = await call(t.app, 'POST', '/groups', { token: maintainer.token, body: { name: 'subm', path: 'subm', parent_id: priv.id } });
  assert.equal(r.status, 403);
  await call(t.app, 'PUT', `/groups/${priv.id}`, { token: owner.token, body: { subgroup_creation_level: 'maintainer' } });
});

test('GET /groups/:id by id or encoded path; private groups are 404 to outsiders', async () => {
  for (const u of [guest, reporter, developer, maintainer, owner, admin]) {
    const r = await call(t.app, 'GET', `/groups/${priv.id}`, { token: u.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, priv.id);
  }
  let r = await call(t.app, 'GET', '/groups/SECRET', { token: guest.token });
  assert.equal(r.body.id, priv.id);
  for (const token of [stranger.token, undefined]) {
    r = await call(t.app, 'GET', `/groups/${priv.id}`, { token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
    r = await call(t.app, 'GET', '/groups/secret', { token });
    assert.equal(r.status, 404);
  }
  r = await call(t.app, 'GET', '/groups/999999', { token: admin.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
});

test('GET /groups/:id lists the readable projects of the group; with_projects=false leaves them out', async () => {
  const g = await createGroup(t.app, owner.token, { name: 'withproj', path: 'withproj', visibility: 'public' });
  const pub = await makeProject(t.app, { namespace: { id: g.id, full_path: g.full_path }, path: 'pub', visibility: 20 });
  await makeProject(t.app, { namespace: { id: g.id, full_path: g.full_path }, path: 'hidden', visibility: 0 });
  let r = await call(t.app, 'GET', `/groups/${g.id}`, { token: stranger.token });
  assert.deepEqual(r.body.projects.map((p: any) => p.id), [pub.id]);
  assert.equal(r.body.projects[0].path_with_namespace, 'withproj/pub');
  assert.equal(r.body.projects[0].name_with_namespace, 'withproj / pub');
  r = await call(t.app, 'GET', `/groups/${g.id}`, { token: owner.token });
  assert.equal(r.body.projects.length, 2);
  r = await call(t.app, 'GET', `/groups/${g.id}?with_projects=false`, { token: owner.token });
  assert.equal('projects' in r.body, false);
  assert.equal('shared_with_groups' in r.body, false);
});

test('GET /groups visibility: anonymous public only, users their groups (all_available adds public+internal), admin all', async () => {
  const u = await makeUser(t.app);
  const pub = await createGroup(t.app, u.token, { name: 'vis-pub', path: 'vis-pub', visibility: 'public' });
  const int = await createGroup(t.app, u.token, { name: 'vis-int', path: 'vis-int', visibility: 'internal' });
  const prv = await createGroup(t.app, u.token, { name: 'vis-prv', path: 'vis-prv', visibility: 'private' });
  const sub = await createGroup(t.app, u.token, { name: 'vis-sub', path: 'vis-sub', parent_id: prv.id });
  const mine = [pub.id, int.id, prv.id, sub.id];
  const ids = async (token: string | undefined, q = '') => {
    const r = await call(t.app, 'GET', `/groups?search=vis-&per_page=100${q}`, { token });
    assert.equal(r.status, 200);
    return r.body.map((g: any) => g.id).sort((a: number, b: number) => a - b);
  };
  assert.deepEqual(await ids(undefined), [pub.id]);
  assert.deepEqual(await ids(stranger.token), []);
  assert.deepEqual(await ids(stranger.token, '&all_available=true'), [pub.id, int.id]);
  assert.deepEqual(await ids(u.token), mine);
  assert.deepEqual(await ids(admin.token), mine);
  assert.deepEqual(await ids(admin.token, '&all_available=false'), []);
  assert.deepEqual(await ids(u.token, '&top_level_only=true'), [pub.id, int.id, prv.id]);
  assert.deepEqual(await ids(u.token, `&skip_groups[]=${pub.id}&skip_groups[]=${int.id}`), [prv.id, sub.id]);
  assert.deepEqual(await ids(u.token, `&skip_groups=${pub.id},${sub.id}`), [int.id, prv.id]);
  const bad = await call(t.app, 'GET', '/groups?skip_groups=x', { token: u.token });
  assert.deepEqual([bad.status, bad.body], [400, { error: 'skip_groups is invalid' }]);
  // Inherited membership reaches the subgroup; owned means a direct Owner membership.
  await addMember(t.app, { type: 'Namespace', id: prv.id }, stranger.user.id, 20);
  assert.deepEqual(await ids(stranger.token), [prv.id, sub.id]);
  assert.deepEqual(await ids(stranger.token, '&owned=true'), []);
  assert.deepEqual(await ids(stranger.token, '&min_access_level=20'), [prv.id, sub.id]);
  assert.deepEqual(await ids(stranger.token, '&min_access_level=30'), []);
  // The creator of a subgroup is its direct Owner too.
  assert.deepEqual(await ids(u.token, '&owned=true'), mine);
  assert.deepEqual(await ids(undefined, '&owned=true'), []);
  await t.app.db.deleteFrom('members').where('user_id', '=', stranger.user.id).where('source_id', '=', prv.id).execute();
  let r = await call(t.app, 'GET', '/groups?min_access_level=35', { token: u.token });
  assert.deepEqual([r.status, r.body], [400, { error: 'min_access_level does not have a valid value' }]);
  r = await call(t.app, 'GET', '/groups?order_by=size', { token: u.token });
  assert.deepEqual([r.status, r.body], [400, { error: 'order_by does not have a valid value' }]);
});

test('GET /groups order_by and sort, ties broken by id', async () => {
  const u = await makeUser(t.app);
  const a = await createGroup(t.app, u.token, { name: 'ord-b', path: 'ord-z' });
  const b = await createGroup(t.app, u.token, { name: 'ord-a', path: 'ord-y' });
  const c = await createGroup(t.app, u.token, { name: 'ord-c', path: 'ord-x' });
  const ids = async (q: string) => (await call(t.app, 'GET', `/groups?${q}`, { token: u.token })).body.map((g: any) => g.id);
  assert.deepEqual(await ids(''), [b.id, a.id, c.id]);
  assert.deepEqual(await ids('sort=desc'), [c.id, a.id, b.id]);
  assert.deepEqual(await ids('order_by=path'), [c.id, b.id, a.id]);
  assert.deepEqual(await ids('order_by=id&sort=desc'), [c.id, b.id, a.id]);
  assert.deepEqual(await ids('search=ORD-A'), [b.id]);
  // LIKE wildcards in a search are plain characters.
  const under = await createGroup(t.app, u.token, { name: 'ord_x', path: 'ord-under' });
  await createGroup(t.app, u.token, { name: 'ordzx', path: 'ord-plain' });
  assert.deepEqual(await ids('search=ord_x'), [under.id]);
  assert.deepEqual(await ids('search=%25'), []);
});

test('keyset walk of the anonymous group list sees each public group exactly once, no Link on the last page', async () => {
  const u = await makeUser(t.app);
  const names = ['kw-e', 'kw-a', 'kw-c', 'kw-b', 'kw-d'];
  const made = [];
  for (const [i, n] of names.entries()) made.push(await createGroup(t.app, u.token, { name: n, path: `kw${i}`, visibility: 'public' }));
  made.push(await createGroup(t.app, u.token, { name: 'kw-a', path: 'kw-dup', visibility: 'public' })); // same name, later id
  await createGroup(t.app, u.token, { name: 'kw-hidden', path: 'kw-hidden', visibility: 'internal' });
  const all = await t.app.db.selectFrom('namespaces').select(['id', 'name']).where('kind', '=', 'group').where('visibility_level', '=', 20).execute();
  const seen: number[] = [];
  let url: string | null = '/api/v4/groups?pagination=keyset&per_page=2&order_by=name&sort=asc';
  let pages = 0;
  while (url) {
    const r = await call(t.app, 'GET', url);
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], undefined);
    seen.push(...r.body.map((g: any) => g.id));
    const link = r.headers.link as string | undefined;
    if (link) {
      const m = /^<http:\/\/bellows\.test(\/api\/v4\/groups\?[^>]+)>; rel="next"$/.exec(link);
      assert.ok(m, link);
      assert.match(m[1], /cursor=/);
      assert.equal(r.body.length, 2);
      url = m[1];
    } else url = null;
    pages++;
  }
  assert.equal(new Set(seen).size, seen.length);
  assert.deepEqual([...seen].sort((a, b) => a - b), all.map((g) => g.id).sort((a, b) => a - b));
  const expected = [...all].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id - y.id)).map((g) => g.id);
  assert.deepEqual(seen, expected);
  assert.ok(pages >= 3);
  const dupA = made[1].id < made[5].id ? [made[1].id, made[5].id] : [made[5].id, made[1].id];
  assert.deepEqual(seen.filter((id) => dupA.includes(id)), dupA);
});

test('keyset rules: other orders 405, authenticated callers get offset pagination, bad cursor 400', async () => {
  for (const q of ['order_by=id', 'order_by=path', 'sort=desc']) {
    const r = await call(t.app, 'GET', `/groups?pagination=keyset&${q}`);
    assert.deepEqual([r.status, r.body], [405, { error: 'Keyset pagination is not yet available for this type of request' }]);
  }
  let r = await call(t.app, 'GET', '/groups?pagination=keyset', { token: owner.token });
  assert.equal(r.status, 200);
  assert.equal(r.headers['x-page'], '1');
  r = await call(t.app, 'GET', '/groups?pagination=keyset&cursor=@@@');
  assert.deepEqual([r.status, r.body], [400, { error: 'cursor is invalid' }]);
  r = await call(t.app, 'GET', '/groups?pagination=keyset&per_page=100&cursor=' + Buffer.from(JSON.stringify({ name: 'zzzz', id: 1 })).toString('base64url'));
  assert.deepEqual([r.status, r.body, r.headers.link], [200, [], undefined]);
});

test('offset cap on the anonymous group list', async () => {
  let r = await call(t.app, 'GET', '/groups?page=3000&per_page=25');
  assert.deepEqual([r.status, r.body], [405, { error: 'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Group. Remaining records can be retrieved using keyset pagination.' }]);
  r = await call(t.app, 'GET', '/groups?page=500&per_page=100');
  assert.equal(r.status, 200);
  r = await call(t.app, 'GET', '/groups?page=3000&per_page=25', { token: owner.token });
  assert.equal(r.status, 200);
});

test('PUT /groups/:id needs Owner; rename and path change reach every descendant group and project', async () => {
  const u = await makeUser(t.app);
  const top = await createGroup(t.app, u.token, { name: 'Top', path: 'top', visibility: 'public' });
  const mid = await createGroup(t.app, u.token, { name: 'Mid', path: 'mid', parent_id: top.id });
  const leaf = await createGroup(t.app, u.token, { name: 'Leaf', path: 'leaf', parent_id: mid.id });
  const p1 = await makeProject(t.app, { namespace: { id: leaf.id, full_path: leaf.full_path }, path: 'p1' });
  const p2 = await makeProject(t.app, { namespace: { id: top.id, full_path: top.full_path }, path: 'p2' });
  const m = await makeUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: top.id }, m.user.id, 40);
  let r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: m.token, body: { name: 'Nope' } });
  assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
  r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: stranger.token, body: { name: 'Nope' } });
  assert.equal(r.status, 403);
  r = await call(t.app, 'PUT', `/groups/${top.id}`, { body: { name: 'Nope' } });
  assert.equal(r.status, 401);

  r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: u.token, body: { name: 'Summit', path: 'summit', description: 'new', lfs_enabled: false, emails_disabled: true } });
  assert.equal(r.status, 200);
  assert.equal(r.body.full_path, 'summit');
  assert.equal(r.body.description, 'new');
  assert.equal(r.body.lfs_enabled, false);
  assert.equal(r.body.emails_enabled, false);
  assert.equal(r.body.emails_disabled, true);
  assert.equal(r.body.projects[0].path_with_namespace, 'summit/p2');
  const rows = await t.app.db.selectFrom('namespaces').select(['id', 'full_path', 'full_name', 'full_path_lower', 'traversal']).where('id', 'in', [mid.id, leaf.id]).orderBy('id').execute();
  assert.deepEqual(rows, [
    { id: mid.id, full_path: 'summit/mid', full_name: 'Summit / Mid', full_path_lower: 'summit/mid', traversal: `/${top.id}/${mid.id}/` },
    { id: leaf.id, full_path: 'summit/mid/leaf', full_name: 'Summit / Mid / Leaf', full_path_lower: 'summit/mid/leaf', traversal: `/${top.id}/${mid.id}/${leaf.id}/` },
  ]);
  const projects = await t.app.db.selectFrom('projects').select(['id', 'full_path', 'full_path_lower']).where('id', 'in', [p1.id, p2.id]).orderBy('id').execute();
  assert.deepEqual(projects.map((p) => p.full_path), ['summit/mid/leaf/p1', 'summit/p2']);
  r = await call(t.app, 'GET', '/groups/summit%2Fmid%2Fleaf', { token: u.token });
  assert.equal(r.body.id, leaf.id);
  r = await call(t.app, 'GET', '/groups/top%2Fmid', { token: u.token });
  assert.equal(r.status, 404);

  // Visibility rules on update.
  r = await call(t.app, 'PUT', `/groups/${mid.id}`, { token: u.token, body: { visibility: 'public' } });
  assert.equal(r.status, 200);
  r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: u.token, body: { visibility: 'private' } });
  assert.deepEqual([r.status, r.body], [400, { message: { visibility_level: ['private is not allowed since there are sub-groups with higher visibility.'] } }]);
  await t.app.db.updateTable('projects').set({ visibility_level: 10 }).where('id', '=', p2.id).execute();
  await call(t.app, 'PUT', `/groups/${mid.id}`, { token: u.token, body: { visibility: 'private' } });
  r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: u.token, body: { visibility: 'private' } });
  assert.deepEqual([r.status, r.body], [400, { message: { visibility_level: ['private is not allowed since this group contains projects with higher visibility.'] } }]);
  r = await call(t.app, 'PUT', `/groups/${leaf.id}`, { token: u.token, body: { path: 'p1' } });
  assert.equal(r.status, 200);
  r = await call(t.app, 'PUT', `/groups/${mid.id}`, { token: u.token, body: { path: 'p2' } });
  assert.deepEqual([r.status, r.body], [400, { message: { path: ['has already been taken'] } }]);
  r = await call(t.app, 'PUT', `/groups/${top.id}`, { token: u.token, body: { name: '' } });
  assert.deepEqual([r.status, r.body], [400, { message: { name: ["can't be blank"] } }]);
  const after = await t.app.db.selectFrom('namespaces').select('name').where('id', '=', top.id).executeTakeFirstOrThrow();
  assert.equal(after.name, 'Summit');
});

test('POST /groups/:id/transfer moves a subtree and rewrites its paths', async () => {
  const u = await makeUser(t.app);
  const a = await createGroup(t.app, u.token, { name: 'A', path: 'tr-a' });
  const b = await createGroup(t.app, u.token, { name: 'B', path: 'tr-b' });
  const child = await createGroup(t.app, u.token, { name: 'C', path: 'c', parent_id: a.id });
  const grand = await createGroup(t.app, u.token, { name: 'G', path: 'g', parent_id: child.id });
  const p = await makeProject(t.app, { namespace: { id: grand.id, full_path: grand.full_path }, path: 'proj' });
  let r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token, body: { group_id: b.id } });
  assert.equal(r.status, 201);
  assert.equal(r.body.full_path, 'tr-b/c');
  assert.equal(r.body.parent_id, b.id);
  const g = await t.app.db.selectFrom('namespaces').selectAll().where('id', '=', grand.id).executeTakeFirstOrThrow();
  assert.deepEqual([g.full_path, g.full_name, g.traversal], ['tr-b/c/g', 'B / C / G', `/${b.id}/${child.id}/${grand.id}/`]);
  const pr = await t.app.db.selectFrom('projects').select('full_path').where('id', '=', p.id).executeTakeFirstOrThrow();
  assert.equal(pr.full_path, 'tr-b/c/g/proj');
  r = await call(t.app, 'POST', `/groups/${b.id}/transfer`, { token: u.token, body: { group_id: grand.id } });
  assert.deepEqual([r.status, r.body], [400, { message: 'Transfer failed: Cannot transfer group to one of its subgroup.' }]);
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token, body: { group_id: b.id } });
  assert.deepEqual([r.status, r.body], [400, { message: 'Transfer failed: Group is already associated to the parent group.' }]);
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token, body: { group_id: priv.id } });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
  await addMember(t.app, { type: 'Namespace', id: priv.id }, u.user.id, 30);
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token, body: { group_id: priv.id } });
  assert.deepEqual([r.status, r.body], [400, { message: "Transfer failed: You don't have enough permissions." }]);
  await t.app.db.deleteFrom('members').where('source_id', '=', priv.id).where('user_id', '=', u.user.id).execute();
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: stranger.token });
  assert.equal(r.status, 404);
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token });
  assert.equal(r.status, 201);
  assert.equal(r.body.full_path, 'c');
  assert.equal(r.body.parent_id, null);
  r = await call(t.app, 'POST', `/groups/${child.id}/transfer`, { token: u.token });
  assert.deepEqual([r.status, r.body], [400, { message: 'Transfer failed: Group is already a root group.' }]);
  // Moving under a less visible parent lowers the subtree to the parent's visibility.
  const open = await createGroup(t.app, u.token, { name: 'Open', path: 'tr-open', visibility: 'public' });
  const openKid = await createGroup(t.app, u.token, { name: 'OpenKid', path: 'kid', parent_id: open.id, visibility: 'internal' });
  const openProject = await makeProject(t.app, { namespace: { id: openKid.id, full_path: openKid.full_path }, path: 'pp', visibility: 20 });
  r = await call(t.app, 'POST', `/groups/${open.id}/transfer`, { token: u.token, body: { group_id: a.id } });
  assert.deepEqual([r.status, r.body.visibility, r.body.full_path], [201, 'private', 'tr-a/tr-open']);
  const vis = await t.app.db.selectFrom('namespaces').select('visibility_level').where('id', '=', openKid.id).executeTakeFirstOrThrow();
  const pvis = await t.app.db.selectFrom('projects').select(['visibility_level', 'full_path']).where('id', '=', openProject.id).executeTakeFirstOrThrow();
  assert.deepEqual([vis.visibility_level, pvis.visibility_level, pvis.full_path], [0, 0, 'tr-a/tr-open/kid/pp']);
});

test('GET /groups/:id/subgroups lists readable direct children', async () => {
  const u = await makeUser(t.app);
  const top = await createGroup(t.app, u.token, { name: 'sg', path: 'sg', visibility: 'public' });
  const a = await createGroup(t.app, u.token, { name: 'sg-a', path: 'a', parent_id: top.id, visibility: 'public' });
  const b = await createGroup(t.app, u.token, { name: 'sg-b', path: 'b', parent_id: top.id, visibility: 'internal' });
  const c = await createGroup(t.app, u.token, { name: 'sg-c', path: 'c', parent_id: top.id, visibility: 'private' });
  await createGroup(t.app, u.token, { name: 'sg-deep', path: 'deep', parent_id: a.id, visibility: 'public' });
  const ids = async (token?: string) => {
    const r = await call(t.app, 'GET', `/groups/${top.id}/subgroups`, { token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], String(r.body.length));
    return r.body.map((g: any) => g.id);
  };
  assert.deepEqual(await ids(), [a.id]);
  assert.deepEqual(await ids(stranger.token), [a.id, b.id]);
  assert.deepEqual(await ids(u.token), [a.id, b.id, c.id]);
  assert.deepEqual(await ids(admin.token), [a.id, b.id, c.id]);
  let r = await call(t.app, 'GET', `/groups/${priv.id}/subgroups`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
  r = await call(t.app, 'GET', `/groups/${top.id}/descendant_groups`, { token: stranger.token });
  assert.deepEqual(r.body.map((g: any) => g.name), ['sg-a', 'sg-b', 'sg-deep']);
  r = await call(t.app, 'GET', `/groups/${top.id}/descendant_groups?search=deep`);
  assert.deepEqual(r.body.map((g: any) => g.full_path), ['sg/a/deep']);
});

test('DELETE /groups/:id: Owner only, 202, removes subgroups, memberships and the projects they hold', async () => {
  const u = await makeUser(t.app);
  const top = await createGroup(t.app, u.token, { name: 'del', path: 'del' });
  const sub = await createGroup(t.app, u.token, { name: 'dsub', path: 'dsub', parent_id: top.id });
  const m = await makeUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: top.id }, m.user.id, 40);
  await addMember(t.app, { type: 'Namespace', id: sub.id }, stranger.user.id, 30);
  let r = await call(t.app, 'DELETE', `/groups/${top.id}`, { token: m.token });
  assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
  r = await call(t.app, 'DELETE', `/groups/${top.id}`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
  const p = await makeProject(t.app, { namespace: { id: sub.id, full_path: sub.full_path }, path: 'keep' });
  r = await call(t.app, 'DELETE', `/groups/${top.id}`, { token: u.token, headers: { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' } });
  assert.deepEqual([r.status, r.body], [412, { message: '412 Precondition Failed' }]);
  r = await call(t.app, 'DELETE', `/groups/${top.id}`, { token: u.token });
  assert.deepEqual([r.status, r.body], [202, { message: '202 Accepted' }]);
  await t.app.jobs.drain();
  assert.deepEqual(await t.app.db.selectFrom('projects').select('id').where('id', '=', p.id).execute(), []);
  const left = await t.app.db.selectFrom('namespaces').select('id').where('id', 'in', [top.id, sub.id]).execute();
  assert.deepEqual(left, []);
  const members = await t.app.db.selectFrom('members').select('id').where('source_type', '=', 'Namespace').where('source_id', 'in', [top.id, sub.id]).execute();
  assert.deepEqual(members, []);
  r = await call(t.app, 'GET', `/groups/${top.id}`, { token: u.token });
  assert.equal(r.status, 404);
  // Admins may delete any group.
  const g = await createGroup(t.app, u.token, { name: 'adm-del', path: 'adm-del' });
  r = await call(t.app, 'DELETE', `/groups/${g.id}`, { token: admin.token });
  assert.equal(r.status, 202);
});

test('read_api tokens read groups but cannot change them', async () => {
  const ro = await makeToken(t.app, owner.user, ['read_api']);
  let r = await call(t.app, 'GET', `/groups/${priv.id}`, { token: ro });
  assert.equal(r.status, 200);
  r = await call(t.app, 'PUT', `/groups/${priv.id}`, { token: ro, body: { description: 'x' } });
  assert.deepEqual([r.status, r.body.error, r.body.scope], [403, 'insufficient_scope', 'api']);
  r = await call(t.app, 'DELETE', `/groups/${priv.id}`, { token: ro });
  assert.equal(r.status, 403);
});
