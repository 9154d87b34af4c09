import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createProject, makeGroup, makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';

let t: TestApp;
let owner: TestUser;
let admin: TestUser;
const roles: Record<string, TestUser> = {};

before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  admin = await makeUser(t.app, { admin: true });
  for (const [name, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
    roles[name] = await makeUser(t.app);
    void level;
  }
  roles.stranger = await makeUser(t.app);
});
after(async () => { await t.close(); });

async function privateProject(name: string) {
  const p = await createProject(t.app, owner.token, { name });
  for (const [role, level] of [['guest', 10], ['reporter', 20], ['developer', 30], ['maintainer', 40]] as const) {
    await addMember(t.app, { type: 'Project', id: p.id }, roles[role].user.id, level);
  }
  return p;
}

test('each role against each write: unreadable is 404, readable below the role is 403', async () => {
  const p = await privateProject('roles');
  const g = await makeGroup(t.app);
  await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, 50);
  const g2 = await makeGroup(t.app);
  const cases: Array<[string, string, unknown, Record<string, number>]> = [
    ['GET', `/projects/${p.id}`, undefined, { anonymous: 404, stranger: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }],
    ['PUT', `/projects/${p.id}`, { description: 'd' }, { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 }],
    ['POST', `/projects/${p.id}/archive`, undefined, { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 201, admin: 201 }],
    ['POST', `/projects/${p.id}/share`, { group_id: g2.id, group_access: 10 }, { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 201, owner: 409, admin: 409 }],
    ['PUT', `/projects/${p.id}/transfer`, { namespace: g.id }, { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 }],
    ['DELETE', `/projects/${p.id}`, undefined, { anonymous: 401, stranger: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 }],
  ];
  const tokens: Record<string, string | undefined> = { anonymous: undefined, owner: owner.token, admin: admin.token, ...Object.fromEntries(Object.entries(roles).map(([k, v]) => [k, v.token])) };
  for (const [method, url, body, expected] of cases) {
    for (const [who, status] of Object.entries(expected)) {
      const r = await call(t.app, method, url, { token: tokens[who], body });
      assert.equal(r.status, status, `${method} ${url} as ${who}: ${r.text}`);
    }
  }
  const r = await call(t.app, 'DELETE', `/projects/${p.id}`, { token: admin.token });
  assert.equal(r.status, 202);
});

test('token scopes: read_api reads but cannot write; api writes', async () => {
  const p = await createProject(t.app, owner.token, { name: 'scoped' });
  const ro = await makeToken(t.app, owner.user, ['read_api']);
  const rw = await makeToken(t.app, owner.user, ['api']);
  const user = await makeToken(t.app, owner.user, ['read_user']);
  assert.equal((await call(t.app, 'GET', `/projects/${p.id}`, { token: ro })).status, 200);
  assert.equal((await call(t.app, 'GET', '/projects', { token: ro })).status, 200);
  for (const [method, url] of [['PUT', `/projects/${p.id}`], ['POST', `/projects/${p.id}/star`], ['POST', `/projects/${p.id}/fork`], ['DELETE', `/projects/${p.id}`]]) {
    const r = await call(t.app, method, url, { token: ro, body: { description: 'x' } });
    assert.deepEqual([r.status, r.body.error, r.body.scope], [403, 'insufficient_scope', 'api'], `${method} ${url}`);
  }
  const r = await call(t.app, 'GET', `/projects/${p.id}`, { token: user });
  assert.deepEqual([r.status, r.body.scope], [403, 'api read_api']);
  assert.equal((await call(t.app, 'PUT', `/projects/${p.id}`, { token: rw, body: { description: 'x' } })).status, 200);
});

test('DELETE honours If-Unmodified-Since', async () => {
  const p = await createProject(t.app, owner.token, { name: 'cond' });
  let r = await call(t.app, 'DELETE', `/projects/${p.id}`, { token: owner.token, headers: { 'if-unmodified-since': 'Mon, 01 Jan 2024 00:00:00 GMT' } });
  assert.deepEqual([r.status, r.body], [412, { message: '412 Precondition Failed' }]);
  r = await call(t.app, 'DELETE', `/projects/${p.id}`, { token: owner.token, headers: { 'if-unmodified-since': 'Fri, 01 Jan 2027 00:00:00 GMT' } });
  assert.equal(r.status, 202);
});

test('above 10,000 matches the totals and the last link are omitted; the next page is still known', async () => {
  const ns = await t.app.db.selectFrom('namespaces').select('id').where('owner_id', '=', owner.user.id).executeTakeFirstOrThrow();
  const now = Date.now();
  const rows = Array.from({ length: 10_010 }, (_, k) => ({
    namespace_id: ns.id, name: `bulk ${k}`, path: `bulk-${k}`, full_path: `${owner.user.username}/bulk-${k}`, full_path_lower: `${owner.user.username}/bulk-${k}`.toLowerCase(),
    description: null, visibility_level: 20, creator_id: owner.user.id, archived: 0, default_branch: null, repository_storage: 'default',
    repository_read_only: 0, empty_repo: 1, pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now,
    forked_from_project_id: null, import_url: null, import_type: null, import_error: null, readme_path: null, marked_for_deletion_at: null, runners_token_digest: null,
  }));
  for (let i = 0; i < rows.length; i += 500) await t.app.db.insertInto('projects').values(rows.slice(i, i + 500)).execute();
  let r = await call(t.app, 'GET', '/projects?simple=true');
  assert.equal(r.status, 200);
  assert.equal(r.body.length, 20);
  assert.equal(r.headers['x-total'], undefined);
  assert.equal(r.headers['x-total-pages'], undefined);
  assert.equal(r.headers['x-next-page'], '2');
  assert.doesNotMatch(r.headers.link as string, /rel="last"/);
  // A seeded project without a repository on disk reads as an empty repository.
  assert.equal(r.body[0].default_branch, 'main');
  r = await call(t.app, 'GET', `/projects/${r.body[0].id}`, { token: owner.token });
  assert.deepEqual([r.status, r.body.empty_repo, r.body.readme_url], [200, true, null]);
  r = await call(t.app, 'GET', '/projects?simple=true&search=bulk 1000');
  assert.equal(r.headers['x-total'], '11');
});

test('the listing reuses a caller\'s group memberships briefly and drops them on any write', async () => {
  const c = await buildTestApp({ config: { authCacheMs: 60_000 } });
  try {
    const o = await makeUser(c.app);
    const m = await makeUser(c.app);
    const g = await makeGroup(c.app, { visibility: 0 });
    const p = await createProject(c.app, o.token, { name: 'cached-auth', namespace_id: g.id }).catch(async () => {
      await addMember(c.app, { type: 'Namespace', id: g.id }, o.user.id, 50);
      return createProject(c.app, o.token, { name: 'cached-auth', namespace_id: g.id });
    });
    const list = async () => (await call(c.app, 'GET', '/projects?membership=true', { token: m.token })).body.map((x: any) => x.id);
    assert.deepEqual(await list(), []);
    await addMember(c.app, { type: 'Namespace', id: g.id }, m.user.id, 30);
    assert.deepEqual(await list(), [], 'cached within the window');
    assert.equal((await call(c.app, 'GET', `/projects/${p.id}`, { token: m.token })).status, 404);
    await call(c.app, 'POST', `/projects/${p.id}/star`, { token: o.token });
    assert.deepEqual(await list(), [p.id], 'a write drops the cache');
    const r = await call(c.app, 'GET', `/projects/${p.id}`, { token: m.token });
    assert.deepEqual([r.status, r.body.permissions], [200, { project_access: null, group_access: { access_level: 30, notification_level: 3 } }]);
  } finally {
    await c.close();
  }
});

test('namespaces and topics shown with projects are reused briefly and drop on any write', async () => {
  const c = await buildTestApp({ config: { authCacheMs: 60_000 } });
  try {
    const o = await makeUser(c.app);
    const g = await call(c.app, 'POST', '/groups', { token: o.token, body: { name: 'Cached NS', path: 'cached-ns' } });
    assert.equal(g.status, 201);
    const p = await createProject(c.app, o.token, { name: 'in-cached-ns', namespace_id: g.body.id });
    const nsName = async () => (await call(c.app, 'GET', `/projects/${p.id}`, { token: o.token })).body.namespace.name;
    assert.equal(await nsName(), 'Cached NS');
    // A change that bypasses the API is not seen within the window: the cache is in use.
    await c.app.db.updateTable('namespaces').set({ name: 'Changed Behind' }).where('id', '=', g.body.id).execute();
    assert.equal(await nsName(), 'Cached NS');
    const list = async () => (await call(c.app, 'GET', '/projects?owned=true', { token: o.token })).body.map((x: any) => x.namespace.name);
    assert.deepEqual(await list(), ['Cached NS']);
    const r = await call(c.app, 'PUT', `/groups/${g.body.id}`, { token: o.token, body: { name: 'Renamed NS' } });
    assert.equal(r.status, 200);
    assert.equal(await nsName(), 'Renamed NS', 'a write drops the cache');
    assert.deepEqual(await list(), ['Renamed NS']);
    const topics = async () => (await call(c.app, 'GET', `/projects/${p.id}`, { token: o.token })).body.topics;
    assert.deepEqual(await topics(), []);
    const e = await call(c.app, 'PUT', `/projects/${p.id}`, { token: o.token, body: { topics: ['zeta', 'alpha'] } });
    assert.deepEqual([e.status, e.body.topics], [200, ['alpha', 'zeta']]);
    assert.deepEqual(await topics(), ['alpha', 'zeta'], 'a write drops the cached topics');
  } finally {
    await c.close();
  }
});

test('reused project entities follow each caller\'s access and every change, on single reads and pages', async () => {
  const c = await buildTestApp({ config: { authCacheMs: 60_000 } });
  try {
    const o = await makeUser(c.app);
    const dev = await makeUser(c.app);
    const rep = await makeUser(c.app);
    const p = await createProject(c.app, o.token, { name: 'reused', visibility: 'public' });
    await addMember(c.app, { type: 'Project', id: p.id }, dev.user.id, 30);
    await addMember(c.app, { type: 'Project', id: p.id }, rep.user.id, 20);
    const one = async (u?: TestUser, q = '') => (await call(c.app, 'GET', `/projects/${p.id}${q}`, { token: u?.token })).body;
    const inList = async (u?: TestUser) => (await call(c.app, 'GET', `/projects?search=reused${u ? '' : '&simple=true'}`, { token: u?.token })).body.find((x: any) => x.id === p.id);
    for (let round = 0; round < 2; round++) {
      assert.deepEqual((await one(dev)).permissions.project_access, { access_level: 30, notification_level: 3 });
      assert.deepEqual((await one(rep)).permissions.project_access, { access_level: 20, notification_level: 3 });
      assert.deepEqual((await inList(o)).permissions.project_access, { access_level: 50, notification_level: 3 });
      assert.equal((await inList(rep)).permissions.project_access.access_level, 20);
      assert.equal((await one()).permissions, undefined, 'anonymous callers get the simple form');
      assert.equal((await inList()).description, null);
    }
    // A role change through the API.
    let r = await call(c.app, 'PUT', `/projects/${p.id}/members/${rep.user.id}`, { token: o.token, body: { access_level: 40 } });
    assert.equal(r.status, 200);
    assert.equal((await one(rep)).permissions.project_access.access_level, 40);
    assert.equal((await inList(rep)).permissions.project_access.access_level, 40);
    // A share with a group shows on the project at once.
    const g = await call(c.app, 'POST', '/groups', { token: o.token, body: { name: 'Sharers', path: 'sharers' } });
    r = await call(c.app, 'POST', `/projects/${p.id}/share`, { token: o.token, body: { group_id: g.body.id, group_access: 30 } });
    assert.equal(r.status, 201);
    assert.deepEqual((await one(dev)).shared_with_groups.map((s: any) => s.group_full_path), ['sharers']);
    assert.deepEqual((await inList(dev)).shared_with_groups.map((s: any) => s.group_access_level), [30]);
    // Edits, archiving, and statistics (never reused).
    await call(c.app, 'PUT', `/projects/${p.id}`, { token: o.token, body: { description: 'now described' } });
    assert.equal((await inList()).description, 'now described');
    assert.equal((await one()).description, 'now described');
    await call(c.app, 'POST', `/projects/${p.id}/archive`, { token: o.token });
    assert.equal((await one(dev)).archived, true);
    assert.equal((await inList(dev)).archived, true);
    assert.deepEqual(Object.keys((await one(dev, '?statistics=true')).statistics ?? {}).slice(0, 2), ['commit_count', 'storage_size']);
    assert.equal((await one(dev)).statistics, undefined);
    // Tags of pages assembled from reused entities: stable while nothing changes, 304 on a match.
    const page = `/projects?search=reused`;
    const first = await call(c.app, 'GET', page, { token: dev.token });
    const tag = first.headers.etag as string;
    assert.match(tag, /^W\/"[A-Za-z0-9_-]{27}"$/);
    assert.equal((await call(c.app, 'GET', page, { token: dev.token })).headers.etag, tag);
    const again = await call(c.app, 'GET', page, { token: dev.token, headers: { 'if-none-match': tag } });
    assert.deepEqual([again.status, again.text], [304, '']);
    const single = await call(c.app, 'GET', `/projects/${p.id}`, { token: dev.token });
    assert.notEqual(single.headers.etag, tag);
    assert.equal((await call(c.app, 'GET', `/projects/${p.id}`, { token: dev.token, headers: { 'if-none-match': single.headers.etag as string } })).status, 304);
    // A change written past the server is seen by a single read when the read-cache window ends, or at once after
    // any write through the server; a page reads its rows' versions, so it sees the change at once.
    await one(dev);
    await inList(dev);
    await c.app.db.updateTable('projects').set({ star_count: 5 }).where('id', '=', p.id).execute();
    assert.equal((await one(dev)).star_count, 0);
    assert.equal((await inList(dev)).star_count, 5);
    await call(c.app, 'POST', `/projects/${p.id}/unarchive`, { token: o.token });
    assert.equal((await one(dev)).star_count, 5);
    assert.equal((await inList(dev)).star_count, 5);
    // A project created through the API is on the next page of every caller.
    const fresh = await createProject(c.app, o.token, { name: 'reused-too', visibility: 'public' });
    assert.ok((await call(c.app, 'GET', '/projects?search=reused', { token: dev.token })).body.some((x: any) => x.id === fresh.id));
    const changed = await call(c.app, 'GET', page, { token: dev.token, headers: { 'if-none-match': tag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.etag, tag);
  } finally {
    await c.close();
  }
});
