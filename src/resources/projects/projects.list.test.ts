import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { setResolver } from '../../platform/outbound-url.ts';
import { addMember, createProject, makeGroup, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { ManualClock } from '../../platform/clock.ts';
import { Repository } from '../../platform/git/index.ts';
import { repositoryPath } from './repository.ts';

// A small world where every filter has something to get wrong: private projects that must not leak,
// a project with two of three topics, archived and internal ones, a group project reached through a membership.

let t: TestApp;
let clock: ManualClock;
let alice: TestUser; // owns most projects
let bob: TestUser; // a stranger with one public archived project
let carol: TestUser; // Reporter of a private group
let admin: TestUser;
let ext: TestUser; // an external user: no internal projects
const P: Record<string, any> = {};

const ids = (r: { body: any[] }) => r.body.map((p: any) => p.id);
const get = (url: string, token?: string) => call(t.app, 'GET', url, { token });

before(async () => {
  // The import URL below names a public host; this machine need not resolve it (nothing is fetched: no job runs here).
  setResolver(async (host) => (host === 'example.com' ? [{ address: '93.184.216.34', family: 4 }] : []));
  clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  t = await buildTestApp({ clock, config: { storage: [{ name: 'default', path: 'repositories', weight: 1 }, { name: 'second', path: 'second', weight: 1 }] } as any });
  alice = await makeUser(t.app, { username: 'alice' });
  bob = await makeUser(t.app, { username: 'bob' });
  carol = await makeUser(t.app, { username: 'carol' });
  admin = await makeUser(t.app, { username: 'boss', admin: true });
  ext = await makeUser(t.app, { username: 'outsider' });
  await t.app.db.updateTable('users').set({ external: 1 }).where('id', '=', ext.user.id).execute();
  const step = () => clock.advance(60_000);
  P.pub = await createProject(t.app, alice.token, { name: 'Alpha Search Engine', path: 'zeta', visibility: 'public', topics: ['x', 'y', 'z'], description: 'finds needles' }); step();
  P.internal = await createProject(t.app, alice.token, { name: 'beta', visibility: 'internal', topics: ['x', 'y'] }); step();
  P.priv = await createProject(t.app, alice.token, { name: 'gamma secret', visibility: 'private', topics: ['x', 'y', 'z'] }); step();
  const g = await makeGroup(t.app, { path: 'acme', visibility: 0 });
  await addMember(t.app, { type: 'Namespace', id: g.id }, carol.user.id, 20);
  await addMember(t.app, { type: 'Namespace', id: g.id }, alice.user.id, 50);
  P.group = await createProject(t.app, alice.token, { name: 'delta', namespace_id: g.id, visibility: 'private', issues_access_level: 'private' }); step();
  P.bobs = await createProject(t.app, bob.token, { name: 'epsilon', visibility: 'public', issues_enabled: false, import_url: 'https://example.com/x.git' }); step();
  await call(t.app, 'POST', `/projects/${P.bobs.id}/archive`, { token: bob.token });
  P.noMr = await createProject(t.app, alice.token, { name: 'aardvark', visibility: 'public', merge_requests_access_level: 'private' }); step();
  // Stars: bob stars the public one and (as he cannot see it) nothing else.
  await call(t.app, 'POST', `/projects/${P.pub.id}/star`, { token: bob.token });
  await call(t.app, 'POST', `/projects/${P.pub.id}/star`, { token: carol.token });
  await call(t.app, 'POST', `/projects/${P.noMr.id}/star`, { token: carol.token });
  // Activity and edits at known times.
  await t.app.db.updateTable('projects').set({ last_activity_at: Date.parse('2026-03-01T00:00:00Z') }).where('id', '=', P.internal.id).execute();
  clock.set(Date.parse('2026-02-01T00:00:00Z'));
  await call(t.app, 'PUT', `/projects/${P.priv.id}`, { token: alice.token, body: { description: 'edited' } });
});
after(async () => { await t.close(); });

test('visibility base sets: anonymous, stranger, owner, external, admin (default order id desc)', async () => {
  assert.deepEqual(ids(await get('/projects')), [P.noMr.id, P.bobs.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects', bob.token)), [P.noMr.id, P.bobs.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects', alice.token)), [P.noMr.id, P.bobs.id, P.group.id, P.priv.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects', carol.token)), [P.noMr.id, P.bobs.id, P.group.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects', ext.token)), [P.noMr.id, P.bobs.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects', admin.token)), [P.noMr.id, P.bobs.id, P.group.id, P.priv.id, P.internal.id, P.pub.id]);
  const r = await get('/projects', bob.token);
  assert.equal(r.headers['x-total'], '4');
  assert.equal(r.headers['x-total-pages'], '1');
});

test('anonymous with owned, membership or min_access_level gets an empty list', async () => {
  for (const q of ['owned=true', 'membership=true', 'min_access_level=10']) {
    const r = await get(`/projects?${q}`);
    assert.deepEqual([r.status, r.body, r.headers['x-total']], [200, [], '0'], q);
  }
});

test('owned, membership and min_access_level', async () => {
  assert.deepEqual(ids(await get('/projects?owned=true', alice.token)), [P.noMr.id, P.group.id, P.priv.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?owned=true', carol.token)), []);
  assert.deepEqual(ids(await get('/projects?owned=true', admin.token)), []);
  assert.deepEqual(ids(await get('/projects?membership=true', carol.token)), [P.group.id]);
  assert.deepEqual(ids(await get('/projects?membership=true', bob.token)), [P.bobs.id]);
  assert.deepEqual(ids(await get('/projects?min_access_level=20', carol.token)), [P.group.id]);
  assert.deepEqual(ids(await get('/projects?min_access_level=30', carol.token)), []);
  const r = await get('/projects?min_access_level=25', carol.token);
  assert.deepEqual([r.status, r.body], [400, { error: 'min_access_level does not have a valid value' }]);
});

test('archived, visibility, id bounds, imported, repository_storage', async () => {
  assert.deepEqual(ids(await get('/projects?archived=true', alice.token)), [P.bobs.id]);
  assert.equal(ids(await get('/projects?archived=false', alice.token)).includes(P.bobs.id), false);
  assert.deepEqual(ids(await get('/projects?visibility=internal', alice.token)), [P.internal.id]);
  assert.deepEqual(ids(await get('/projects?visibility=private', bob.token)), []);
  assert.deepEqual(ids(await get(`/projects?id_after=${P.internal.id}&id_before=${P.bobs.id}`, alice.token)), [P.group.id, P.priv.id]);
  assert.deepEqual(ids(await get('/projects?id_after=', alice.token)).length, 6);
  assert.deepEqual(ids(await get('/projects?imported=true', bob.token)), [P.bobs.id]);
  assert.deepEqual(ids(await get('/projects?imported=true', alice.token)), []);
  const imported = (await get(`/projects/${P.bobs.id}`, bob.token)).body;
  assert.deepEqual([imported.import_url, imported.import_type, imported.import_status], ['https://example.com/x.git', 'git', 'scheduled']);
  assert.equal('import_url' in (await get(`/projects/${P.bobs.id}`, alice.token)).body, false, 'import_url is for Maintainers');
  const rows = await t.app.db.selectFrom('projects').select(['id', 'repository_storage']).execute();
  const second = rows.filter((r) => r.repository_storage === 'second').map((r) => r.id).sort((a, b) => b - a);
  assert.deepEqual(ids(await get('/projects?repository_storage=second', admin.token)), second);
  assert.deepEqual(ids(await get('/projects?repository_storage=second', alice.token)).length, 6, 'ignored for non-admins');
  assert.deepEqual(ids(await get('/projects?repository_checksum_failed=true', admin.token)), []);
});

test('topic needs every topic; topic_id; unknown topics give nothing; private never leaks', async () => {
  assert.deepEqual(ids(await get('/projects?topic=x,y', alice.token)), [P.priv.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?topic=x,y,z', alice.token)), [P.priv.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?topic=X, z ,,', alice.token)), [P.priv.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?topic=x,y,z', bob.token)), [P.pub.id]);
  assert.deepEqual(ids(await get('/projects?topic=x,nope', alice.token)), []);
  assert.deepEqual(ids(await get('/projects?topic=', alice.token)).length, 6);
  const topics = await get('/topics');
  assert.deepEqual(topics.body.map((x: any) => [x.name, x.total_projects_count]), [['x', 3], ['y', 3], ['z', 2]]);
  assert.deepEqual(Object.keys(topics.body[0]), ['id', 'name', 'title', 'description', 'total_projects_count', 'avatar_url']);
  const z = topics.body.find((x: any) => x.name === 'z');
  assert.deepEqual(ids(await get(`/projects?topic_id=${z.id}`, alice.token)), [P.priv.id, P.pub.id]);
  assert.deepEqual(ids(await get(`/projects?topic_id=${z.id}`)), [P.pub.id]);
  assert.deepEqual(ids(await get('/projects?topic_id=99999', alice.token)), []);
  assert.deepEqual((await get('/topics?search=z')).body.map((x: any) => x.name), ['z']);
});

test('search: words in one column, short words dropped, exact match when all are short, namespaces opt-in', async () => {
  assert.deepEqual(ids(await get('/projects?search=alpha engine', alice.token)), [P.pub.id]);
  assert.deepEqual(ids(await get('/projects?search=alpha needles', alice.token)), [], 'terms must match the same column');
  assert.deepEqual(ids(await get('/projects?search=NEEDLES', alice.token)), [P.pub.id]);
  assert.deepEqual(ids(await get('/projects?search=secret', bob.token)), [], 'private never leaks');
  assert.deepEqual(ids(await get('/projects?search=secret', alice.token)), [P.priv.id]);
  assert.deepEqual(ids(await get('/projects?search=be', alice.token)), []);
  assert.deepEqual(ids(await get('/projects?search=beta', alice.token)), [P.internal.id]);
  assert.deepEqual(ids(await get('/projects?search=%25', alice.token)), [], 'LIKE wildcards are escaped');
  assert.deepEqual(ids(await get('/projects?search=acme', alice.token)), []);
  assert.deepEqual(ids(await get('/projects?search=acme&search_namespaces=true', alice.token)), [P.group.id]);
  assert.deepEqual(ids(await get('/projects?search=acme/delta&search_namespaces=true', alice.token)), [P.group.id]);
});

test('orders with the id tie-breaker; admin-only and similarity orders fall back', async () => {
  assert.deepEqual((await get('/projects?order_by=name&sort=asc', alice.token)).body.map((p: any) => p.name),
    ['aardvark', 'Alpha Search Engine', 'beta', 'delta', 'epsilon', 'gamma secret'].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  assert.deepEqual((await get('/projects?order_by=path&sort=desc', alice.token)).body.map((p: any) => p.path), ['zeta', 'gamma-secret', 'epsilon', 'delta', 'beta', 'aardvark']);
  assert.deepEqual(ids(await get('/projects?order_by=id&sort=asc', alice.token)), [P.pub.id, P.internal.id, P.priv.id, P.group.id, P.bobs.id, P.noMr.id]);
  assert.deepEqual(ids(await get('/projects?order_by=last_activity_at', alice.token)).slice(0, 1), [P.internal.id]);
  // Archiving and editing moved updated_at; equal times fall back to id in the same direction.
  assert.deepEqual(ids(await get('/projects?order_by=updated_at&sort=asc', alice.token)), [P.pub.id, P.internal.id, P.group.id, P.bobs.id, P.noMr.id, P.priv.id]);
  assert.deepEqual(ids(await get('/projects?order_by=star_count&sort=desc', alice.token)).slice(0, 2), [P.pub.id, P.noMr.id]);
  assert.deepEqual(ids(await get('/projects?order_by=repository_size', alice.token)), ids(await get('/projects', alice.token)), 'non-admin: default order');
  const sizes = await t.app.db.selectFrom('project_statistics').select(['project_id', 'repository_size']).execute();
  const bySize = [...sizes].sort((a, b) => a.repository_size - b.repository_size || a.project_id - b.project_id).map((s) => s.project_id);
  assert.deepEqual(ids(await get('/projects?order_by=repository_size&sort=asc', admin.token)), bySize);
  assert.deepEqual(ids(await get('/projects?order_by=similarity', alice.token)), ids(await get('/projects', alice.token)), 'no search: default');
  assert.deepEqual(ids(await get('/projects?order_by=similarity&search=alp', alice.token)), [P.pub.id]);
  assert.deepEqual(ids(await get('/projects?order_by=similarity&search=alpha')), [P.pub.id], 'anonymous: ignored, plain search');
  const r = await get('/projects?order_by=stars');
  assert.deepEqual([r.status, r.body], [400, { error: 'order_by does not have a valid value' }]);
});

test('updated_before/after need order_by=updated_at; last_activity bounds are strict', async () => {
  let r = await get('/projects?updated_before=2026-01-15T00:00:00Z', alice.token);
  assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - `updated_at` filter and `updated_at` sorting must be paired' }]);
  r = await get('/projects?updated_after=2026-01-15T00:00:00Z&order_by=created_at', alice.token);
  assert.equal(r.status, 400);
  r = await get('/projects?updated_after=2026-01-15T00:00:00Z&order_by=updated_at', alice.token);
  assert.deepEqual(ids(r), [P.priv.id]);
  r = await get('/projects?updated_before=2026-01-15T00:00:00Z&order_by=updated_at&sort=asc', alice.token);
  assert.deepEqual(ids(r), [P.pub.id, P.internal.id, P.group.id, P.bobs.id, P.noMr.id]);
  r = await get('/projects?last_activity_after=2026-03-01T00:00:00Z', alice.token);
  assert.deepEqual(ids(r), []);
  r = await get('/projects?last_activity_after=2026-02-28T23:59:59Z', alice.token);
  assert.deepEqual(ids(r), [P.internal.id]);
  r = await get('/projects?last_activity_before=2026-01-01T00:01:00Z', alice.token);
  assert.deepEqual(ids(r), [P.pub.id]);
  r = await get('/projects?last_activity_before=yesterday', alice.token);
  assert.deepEqual([r.status, r.body], [400, { error: 'last_activity_before is invalid' }]);
});

test('starred, with_issues_enabled, with_merge_requests_enabled', async () => {
  assert.deepEqual(ids(await get('/projects?starred=true', carol.token)), [P.noMr.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?starred=true', alice.token)), []);
  assert.equal(ids(await get('/projects?starred=true')).length, 3, 'ignored for anonymous callers');
  // Issues: disabled on bob's project, members-only on the group project (carol is a member, bob is not).
  assert.deepEqual(ids(await get('/projects?with_issues_enabled=true', carol.token)), [P.noMr.id, P.group.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?with_issues_enabled=true', bob.token)), [P.noMr.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?with_merge_requests_enabled=true', bob.token)), [P.bobs.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/projects?with_merge_requests_enabled=true', alice.token)).includes(P.noMr.id), true);
});

test('with_programming_language: languages of the default branch, recorded when it changes', async () => {
  const p = await createProject(t.app, alice.token, { name: 'typed', visibility: 'public' });
  const repo = new Repository(repositoryPath(t.config, (await t.app.db.selectFrom('projects').select('repository_storage').where('id', '=', p.id).executeTakeFirstOrThrow()).repository_storage, p.id));
  await repo.createCommit({ branch: 'dev', actions: [{ action: 'create', file_path: 'src/app.ts', content: 'export const a = 1;\n' }, { action: 'create', file_path: 'README.md', content: 'hi' }], message: 'code', author: { name: 'A', email: 'a@example.com' } });
  assert.deepEqual(ids(await get('/projects?with_programming_language=typescript', alice.token)), []);
  const r = await call(t.app, 'PUT', `/projects/${p.id}`, { token: alice.token, body: { default_branch: 'dev' } });
  assert.equal(r.status, 200);
  assert.equal(r.body.empty_repo, false);
  assert.equal(r.body.readme_url, `http://bellows.test/alice/typed/-/blob/dev/README.md`);
  assert.deepEqual(ids(await get('/projects?with_programming_language=TypeScript', alice.token)), [p.id]);
  assert.deepEqual(ids(await get('/projects?with_programming_language=ruby', alice.token)), []);
  await call(t.app, 'DELETE', `/projects/${p.id}`, { token: alice.token });
});

test('simple and full forms in lists; statistics for Reporter and up', async () => {
  let r = await get('/projects?simple=false');
  assert.deepEqual(Object.keys(r.body[0]), ['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list', 'topics', 'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'avatar_url', 'star_count', 'last_activity_at', 'namespace']);
  r = await get('/projects?simple=true', alice.token);
  assert.equal('permissions' in r.body[0], false);
  assert.equal(Object.keys(r.body[0]).length, 17);
  r = await get('/projects?statistics=true', carol.token);
  const byId = new Map(r.body.map((p: any) => [p.id, p]));
  assert.equal('statistics' in (byId.get(P.group.id) as any), true, 'Reporter of the group');
  assert.equal('statistics' in (byId.get(P.pub.id) as any), false, 'no role');
  assert.equal((byId.get(P.group.id) as any).permissions.group_access.access_level, 20);
  r = await get('/projects?statistics=true', admin.token);
  assert.equal(r.body.every((p: any) => 'statistics' in p), true);
});

test('keyset pagination by id sees every visible project once, both directions, anonymous and signed in', async () => {
  for (const [token, sort] of [[undefined, 'asc'], [alice.token, 'desc'], [bob.token, 'asc'], [admin.token, 'desc']] as const) {
    const expected = ids(await get(`/projects?order_by=id&sort=${sort}&per_page=100`, token));
    const seen: number[] = [];
    let url: string | null = `/projects?pagination=keyset&order_by=id&sort=${sort}&per_page=2`;
    let pages = 0;
    while (url) {
      const r = await get(url, token);
      assert.equal(r.status, 200);
      assert.equal(r.headers['x-total'], undefined);
      seen.push(...ids(r));
      const link = r.headers.link as string | undefined;
      if (r.body.length === 0) assert.equal(link, undefined);
      url = link ? link.replace(/^<http:\/\/bellows\.test\/api\/v4(.*)>; rel="next"$/, '$1') : null;
      if (link) assert.match(link, sort === 'asc' ? /id_after=\d+/ : /id_before=\d+/);
      assert.ok(++pages < 20);
    }
    assert.deepEqual(seen, expected);
  }
  const r = await get('/projects?pagination=keyset&per_page=2');
  assert.deepEqual([r.status, r.body], [405, { error: 'Keyset pagination is not yet available for this type of request' }]);
});

test('offset pagination is capped at 50,000 records', async () => {
  let r = await get('/projects?page=500&per_page=100', alice.token);
  assert.deepEqual([r.status, r.body], [200, []]);
  r = await get('/projects?page=501&per_page=100', alice.token);
  assert.deepEqual([r.status, r.body], [405, { error: 'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. Remaining records can be retrieved using keyset pagination.' }]);
  r = await get('/projects?page=2501');
  assert.equal(r.status, 405);
  r = await get('/projects?page=2&per_page=2', alice.token);
  assert.deepEqual([r.headers['x-page'], r.headers['x-next-page'], r.headers['x-prev-page'], r.headers['x-total-pages']], ['2', '3', '1', '3']);
  assert.match(r.headers.link as string, /rel="prev".*rel="next".*rel="first".*rel="last"/);
});

test('GET /users/:user_id/projects: only the personal namespace; private profiles list nothing', async () => {
  assert.deepEqual(ids(await get('/users/alice/projects', bob.token)), [P.noMr.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get(`/users/${alice.user.id}/projects`, alice.token)), [P.noMr.id, P.priv.id, P.internal.id, P.pub.id]);
  assert.deepEqual(ids(await get('/users/ALICE/projects')), [P.noMr.id, P.pub.id]);
  assert.deepEqual(ids(await get('/users/alice/projects?owned=true&membership=true', carol.token)), [P.noMr.id, P.internal.id, P.pub.id], 'owned/membership have no effect');
  assert.deepEqual(ids(await get('/users/alice/projects?topic=x', carol.token)).length, 3, 'topic is not a parameter here');
  assert.deepEqual(ids(await get('/users/alice/projects?starred=true', carol.token)), [P.noMr.id, P.pub.id]);
  assert.equal((await call(t.app, 'PUT', `/users/${alice.user.id}`, { token: admin.token, body: { private_profile: true } })).status, 200);
  assert.deepEqual(ids(await get('/users/alice/projects', bob.token)), []);
  assert.deepEqual(ids(await get('/users/alice/projects', alice.token)).length, 4);
  assert.deepEqual(ids(await get('/users/alice/projects', admin.token)).length, 4);
  assert.equal((await call(t.app, 'PUT', `/users/${alice.user.id}`, { token: admin.token, body: { private_profile: false } })).status, 200);
  const r = await get('/users/nobody/projects');
  assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
});

test('a listing page reads a row again once its version moved, whoever changed it', async () => {
  const page = async () => (await get(`/projects?per_page=100`, alice.token)).body.find((p: { id: number }) => p.id === P.pub.id);
  assert.equal((await page()).description, (await page()).description);
  // Written past the server (as another process would): no announcement, only the row's version moves.
  await t.app.db.updateTable('projects').set({ description: 'changed behind the server' }).where('id', '=', P.pub.id).execute();
  assert.equal((await page()).description, 'changed behind the server');
  await t.app.db.updateTable('projects').set({ star_count: 7 }).where('id', '=', P.pub.id).execute();
  assert.equal((await page()).star_count, 7);
  const versions = await t.app.db.selectFrom('projects').select('row_version').where('id', '=', P.pub.id).executeTakeFirstOrThrow();
  assert.ok(versions.row_version >= 2, `each update moves the version (${versions.row_version})`);
  await t.app.db.updateTable('projects').set({ star_count: 0 }).where('id', '=', P.pub.id).execute();
});
