import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, castRoles, makeGroup, makeProject, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';

// GET /projects/:id/groups, /projects/:id/users, /projects/:id/languages, /users/:id/starred_projects,
// GET /namespaces/:id/exists, topics (admin), POST /projects/:id/uploads and the uploaded file served back.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

test('GET /projects/:id/groups: ancestors, with_shared and its level, search, skip_groups; only readable groups', async () => {
  const top = await makeGroup(t.app, { path: 'pg-top', visibility: 20 });
  const mid = await makeGroup(t.app, { path: 'pg-mid', visibility: 20, parent: top });
  const shared = await makeGroup(t.app, { path: 'pg-shared', visibility: 20 });
  const low = await makeGroup(t.app, { path: 'pg-low', visibility: 20 });
  const hidden = await makeGroup(t.app, { path: 'pg-hidden', visibility: 0 });
  const p = await makeProject(t.app, { namespace: mid, visibility: 20 });
  for (const [g, level] of [[shared, 30], [low, 10], [hidden, 30]] as const) {
    await t.app.db.insertInto('project_group_links').values({ project_id: p.id, group_id: g.id, group_access: level, expires_at: null, created_at: 0, updated_at: 0 }).execute();
  }
  const names = async (query: Record<string, string> = {}, token?: string) => {
    const r = await call(t.app, 'GET', `/projects/${p.id}/groups`, { token, query });
    assert.equal(r.status, 200, r.text);
    return r.body.map((g: any) => g.full_path);
  };
  assert.deepEqual(await names(), ['pg-top/pg-mid', 'pg-top']);
  assert.deepEqual(await names({ with_shared: 'true' }), ['pg-low', 'pg-top/pg-mid', 'pg-shared', 'pg-top']);
  assert.deepEqual(await names({ with_shared: 'true' }, admin.token), ['pg-hidden', 'pg-low', 'pg-top/pg-mid', 'pg-shared', 'pg-top']);
  assert.deepEqual(await names({ with_shared: 'true', shared_min_access_level: '30' }), ['pg-top/pg-mid', 'pg-shared', 'pg-top']);
  assert.deepEqual(await names({ search: 'mid' }), ['pg-top/pg-mid']);
  assert.deepEqual(await names({ 'skip_groups[]': String(top.id) }), ['pg-top/pg-mid']);
  const one = await call(t.app, 'GET', `/projects/${p.id}/groups`, { query: { search: 'top' } });
  assert.deepEqual(one.body, [{ id: top.id, web_url: 'http://bellows.test/groups/pg-top', name: 'pg-top', avatar_url: null, full_name: 'pg-top', full_path: 'pg-top' }]);
  const priv = await makeProject(t.app, { namespace: mid, visibility: 0 });
  assert.equal((await call(t.app, 'GET', `/projects/${priv.id}/groups`)).status, 404);
});

test('GET /projects/:id/users: members of the project, its groups and the groups it is shared with; search, skip_users', async () => {
  const g = await makeGroup(t.app, { visibility: 0 });
  const team = await makeGroup(t.app, { visibility: 0 });
  const p = await makeProject(t.app, { namespace: g, visibility: 0 });
  const direct = await quickUser(t.app);
  const inGroup = await quickUser(t.app);
  const inTeam = await quickUser(t.app);
  const expired = await quickUser(t.app);
  await addMember(t.app, { type: 'Project', id: p.id }, direct.user.id, Role.developer);
  await addMember(t.app, { type: 'Namespace', id: g.id }, inGroup.user.id, Role.guest);
  await addMember(t.app, { type: 'Namespace', id: team.id }, inTeam.user.id, Role.reporter);
  await addMember(t.app, { type: 'Project', id: p.id }, expired.user.id, Role.developer, t.clock.now() - 1000);
  await t.app.db.insertInto('project_group_links').values({ project_id: p.id, group_id: team.id, group_access: 30, expires_at: null, created_at: 0, updated_at: 0 }).execute();
  const ids = async (query: Record<string, string> = {}, token = direct.token) => (await call(t.app, 'GET', `/projects/${p.id}/users`, { token, query })).body.map((u: any) => u.id);
  assert.deepEqual(await ids(), [direct.user.id, inGroup.user.id, inTeam.user.id]);
  assert.deepEqual(await ids({ search: inTeam.user.username }), [inTeam.user.id]);
  assert.deepEqual(await ids({ skip_users: String(direct.user.id) }), [inGroup.user.id, inTeam.user.id]);
  const r = await call(t.app, 'GET', `/projects/${p.id}/users`, { token: direct.token, query: { per_page: '1' } });
  assert.deepEqual(Object.keys(r.body[0]), ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url']);
  assert.equal(r.headers['x-total'], '3');
  assert.equal((await call(t.app, 'GET', `/projects/${p.id}/users`, { token: (await quickUser(t.app)).token })).status, 404);
  assert.equal((await call(t.app, 'GET', `/projects/${p.id}/users`)).status, 404);
});

test('GET /users/:id/starred_projects and GET /projects/:id/languages', async () => {
  const u = await quickUser(t.app);
  const pub = await makeProject(t.app, { visibility: 20 });
  const priv = await makeProject(t.app, { owner: u.user, visibility: 0 });
  for (const p of [pub, priv]) await call(t.app, 'POST', `/projects/${p.id}/star`, { token: u.token });
  const starred = async (token?: string) => (await call(t.app, 'GET', `/users/${u.user.id}/starred_projects`, { token })).body.map((p: any) => p.id);
  assert.deepEqual(await starred(u.token), [priv.id, pub.id]);
  assert.deepEqual(await starred(), [pub.id]);
  assert.deepEqual(await starred(admin.token), [priv.id, pub.id]);
  assert.equal((await call(t.app, 'GET', '/users/99999/starred_projects')).status, 404);

  await t.app.db.insertInto('project_languages').values([
    { project_id: pub.id, name: 'TypeScript', name_lower: 'typescript', share: 66.666 },
    { project_id: pub.id, name: 'Shell', name_lower: 'shell', share: 33.334 },
  ]).execute();
  const langs = await call(t.app, 'GET', `/projects/${pub.id}/languages`);
  assert.equal(langs.status, 200);
  assert.equal(langs.text, '{"TypeScript":66.67,"Shell":33.33}');
  assert.deepEqual((await call(t.app, 'GET', `/projects/${priv.id}/languages`, { token: u.token })).body, {});
  assert.equal((await call(t.app, 'GET', `/projects/${priv.id}/languages`)).status, 404);
});

test('GET /namespaces/:id/exists: top level or under parent_id, with a free path suggested', async () => {
  const u = await quickUser(t.app);
  const g = await makeGroup(t.app, { path: 'taken' });
  await makeGroup(t.app, { path: 'taken1' });
  await makeGroup(t.app, { path: 'child', parent: g });
  const ask = async (path: string, query: Record<string, string> = {}) => (await call(t.app, 'GET', `/namespaces/${path}/exists`, { token: u.token, query })).body;
  assert.deepEqual(await ask('taken'), { exists: true, suggests: ['taken2'] });
  assert.deepEqual(await ask('TAKEN1'), { exists: true, suggests: ['TAKEN11'] });
  assert.deepEqual(await ask('free'), { exists: false, suggests: [] });
  assert.deepEqual(await ask('child'), { exists: false, suggests: [] });
  assert.deepEqual(await ask('child', { parent_id: String(g.id) }), { exists: true, suggests: ['child1'] });
  assert.deepEqual(await ask(u.user.username), { exists: true, suggests: [`${u.user.username}1`] });
  assert.equal((await call(t.app, 'GET', '/namespaces/taken/exists')).status, 401);
});

test('topics: administrators create, edit (with avatar) and delete; anyone reads one', async () => {
  const u = await quickUser(t.app);
  assert.equal((await call(t.app, 'POST', '/topics', { token: u.token, body: { name: 'x', title: 'X' } })).status, 403);
  let r = await call(t.app, 'POST', '/topics', { token: admin.token, multipart: { name: 'ruby', title: 'Ruby', description: 'gems', avatar: { filename: 't.png', content: PNG } } });
  assert.equal(r.status, 201, r.text);
  const id = r.body.id;
  assert.deepEqual(r.body, { id, name: 'ruby', title: 'Ruby', description: 'gems', total_projects_count: 0, avatar_url: `http://bellows.test/uploads/-/system/projects/topic/avatar/${id}/t.png` });
  assert.equal((await t.app.inject({ method: 'GET', url: `/uploads/-/system/projects/topic/avatar/${id}/t.png` })).statusCode, 200);
  r = await call(t.app, 'POST', '/topics', { token: admin.token, body: { name: 'RUBY', title: 'again' } });
  assert.deepEqual([r.status, r.body], [400, { message: { name: ['has already been taken'] } }]);
  r = await call(t.app, 'POST', '/topics', { token: admin.token, body: { name: 'notitle' } });
  assert.equal(r.status, 400);
  r = await call(t.app, 'PUT', `/topics/${id}`, { token: admin.token, form: { title: 'Ruby lang', avatar: '' } });
  assert.deepEqual([r.body.title, r.body.avatar_url], ['Ruby lang', null]);
  assert.deepEqual((await call(t.app, 'GET', `/topics/${id}`)).body.title, 'Ruby lang');
  r = await call(t.app, 'PUT', `/topics/${id}`, { token: admin.token, body: {} });
  assert.equal(r.status, 400);
  const p = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'topical', topics: ['ruby'] } });
  assert.equal((await call(t.app, 'GET', `/topics/${id}`)).body.total_projects_count, 1);
  assert.equal((await call(t.app, 'DELETE', `/topics/${id}`, { token: u.token })).status, 403);
  assert.equal((await call(t.app, 'DELETE', `/topics/${id}`, { token: admin.token })).status, 204);
  assert.deepEqual(await call(t.app, 'GET', `/topics/${id}`).then((x) => [x.status, x.body]), [404, { message: '404 Topic Not Found' }]);
  assert.deepEqual((await call(t.app, 'GET', `/projects/${p.body.id}`, { token: admin.token })).body.topics, []);
});

test('POST /projects/:id/uploads: the Markdown answer; the file served back with the project read access', async () => {
  const p = await makeProject(t.app, { visibility: 0 });
  const cast = await castRoles(t.app, p);
  const expect: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 };
  let last: any;
  for (const [role, status] of Object.entries(expect)) {
    const token = (cast as any)[role]?.token;
    const r = await call(t.app, 'POST', `/projects/${p.id}/uploads`, { token, multipart: { file: { filename: 'my shot.png', content: PNG } } });
    assert.equal(r.status, status, `${role}: ${r.text}`);
    if (r.status === 201) last = r.body;
  }
  assert.match(last.url, /^\/uploads\/[0-9a-f]{32}\/my_shot\.png$/);
  assert.deepEqual(last, { id: last.id, alt: 'my_shot', url: last.url, full_path: `/${p.full_path}${last.url}`, markdown: `![my_shot](${last.url})` });
  const doc = await call(t.app, 'POST', `/projects/${p.id}/uploads`, { token: cast.owner.token, multipart: { file: { filename: 'notes.txt', content: 'hello' } } });
  assert.equal(doc.body.markdown, `[notes.txt](${doc.body.url})`);
  const missing = await call(t.app, 'POST', `/projects/${p.id}/uploads`, { token: cast.owner.token, body: {} });
  assert.deepEqual([missing.status, missing.body], [400, { message: '400 (Bad request) "file" not given' }]);
  const get = (url: string, token?: string) => t.app.inject({ method: 'GET', url, headers: token ? { 'private-token': token } : {} });
  const served = await get(last.full_path, cast.guest.token);
  assert.equal(served.statusCode, 200);
  assert.deepEqual(served.rawPayload, PNG);
  assert.equal(served.headers['content-type'], 'image/png');
  assert.equal((await get(last.full_path)).statusCode, 404);
  assert.equal((await get(last.full_path, cast.nonMember.token)).statusCode, 404);
  assert.equal((await get(doc.body.full_path, cast.owner.token)).headers['content-disposition']?.toString().startsWith('attachment'), true);
  assert.equal((await get(last.full_path.replace(/[0-9a-f]{32}/, 'f'.repeat(32)), cast.owner.token)).statusCode, 404);
  await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', p.id).execute();
  assert.equal((await call(t.app, 'POST', `/projects/${p.id}/uploads`, { token: cast.owner.token, multipart: { file: { filename: 'a.png', content: PNG } } })).status, 403);
});
