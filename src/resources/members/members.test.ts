import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createGroup, makeProject, userNamespace, quickUser, makeToken, type TestUser } from '../../../test/support/fixtures.ts';

/** Users of these tests hold `api` and `read_user` tokens (administrators also `sudo`). */
const makeUser = (app: Parameters<typeof quickUser>[0], o: { admin?: boolean; username?: string } = {}) =>
  quickUser(app, { ...o, scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])] });

let t: TestApp;
let owner: TestUser, maintainer: TestUser, developer: TestUser, reporter: TestUser, guest: TestUser, stranger: TestUser, admin: TestUser;
let top: any, sub: any;
let project: { id: number; full_path: string };

const roles = () => [['guest', guest, 10], ['reporter', reporter, 20], ['developer', developer, 30], ['maintainer', maintainer, 40], ['owner', owner, 50], ['admin', admin, 50]] as const;

before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  [maintainer, developer, reporter, guest, stranger] = await Promise.all([1, 2, 3, 4, 5].map(() => makeUser(t.app)));
  admin = await makeUser(t.app, { admin: true });
  top = await createGroup(t.app, owner.token, { name: 'Top', path: 'mtop' });
  sub = await createGroup(t.app, owner.token, { name: 'Sub', path: 'msub', parent_id: top.id });
  for (const [, u, level] of roles().slice(0, 4)) await addMember(t.app, { type: 'Namespace', id: top.id }, u.user.id, level);
  project = await makeProject(t.app, { namespace: { id: sub.id, full_path: sub.full_path }, path: 'proj' });
});
after(async () => { await t.close(); });

const member = async (sourceId: number, userId: number, type: 'Namespace' | 'Project' = 'Namespace') =>
  t.app.db.selectFrom('members').selectAll().where('source_type', '=', type).where('source_id', '=', sourceId).where('user_id', '=', userId).executeTakeFirst();

test('GET /groups/:id/members: every member role reads; outsiders 404; anonymous 401; entity fields in order', async () => {
  for (const [name, u] of roles()) {
    const r = await call(t.app, 'GET', `/groups/${top.id}/members`, { token: u.token });
    assert.equal(r.status, 200, name);
    assert.equal(r.headers['x-total'], '5');
  }
  let r = await call(t.app, 'GET', `/groups/${top.id}/members`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
  r = await call(t.app, 'GET', `/groups/${top.id}/members`);
  assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
  r = await call(t.app, 'GET', `/groups/${top.id}/members/${owner.user.id}`, { token: guest.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    id: owner.user.id, username: owner.user.username, name: owner.user.name, state: 'active', locked: false, avatar_url: null,
    web_url: `http://bellows.test/${owner.user.username}`, access_level: 50, created_at: '2026-06-01T12:00:00.000Z',
    created_by: { id: owner.user.id, username: owner.user.username, name: owner.user.name, state: 'active', locked: false, avatar_url: null, web_url: `http://bellows.test/${owner.user.username}` },
    expires_at: null, membership_state: 'active',
  });
  r = await call(t.app, 'GET', `/groups/${top.id}/members/${stranger.user.id}`, { token: guest.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  r = await call(t.app, 'GET', `/groups/${top.id}/members?query=${encodeURIComponent(developer.user.username)}`, { token: guest.token });
  assert.deepEqual(r.body.map((m: any) => m.id), [developer.user.id]);
  r = await call(t.app, 'GET', `/groups/${top.id}/members?user_ids=${guest.user.id},${reporter.user.id}`, { token: guest.token });
  assert.deepEqual(r.body.map((m: any) => m.id).sort(), [guest.user.id, reporter.user.id].sort());
  r = await call(t.app, 'GET', `/groups/${top.id}/members?user_ids=a,b`, { token: guest.token });
  assert.deepEqual([r.status, r.body], [400, { error: 'user_ids is invalid' }]);
});

test('members/all shows inherited memberships with the highest level per user', async () => {
  // The subgroup has only its creator directly; its ancestors supply the rest.
  let r = await call(t.app, 'GET', `/groups/${sub.id}/members`, { token: guest.token });
  assert.deepEqual(r.body.map((m: any) => m.id), [owner.user.id]);
  await addMember(t.app, { type: 'Namespace', id: sub.id }, guest.user.id, 30); // higher than inherited Guest
  await addMember(t.app, { type: 'Namespace', id: sub.id }, stranger.user.id, 20);
  r = await call(t.app, 'GET', `/groups/${sub.id}/members/all`, { token: guest.token });
  assert.equal(r.status, 200);
  const levels = Object.fromEntries(r.body.map((m: any) => [m.id, m.access_level]));
  assert.deepEqual(levels, {
    [owner.user.id]: 50, [maintainer.user.id]: 40, [developer.user.id]: 30, [reporter.user.id]: 20, [guest.user.id]: 30, [stranger.user.id]: 20,
  });
  assert.equal(r.headers['x-total'], '6');
  r = await call(t.app, 'GET', `/groups/${sub.id}/members/all/${maintainer.user.id}`, { token: stranger.token });
  assert.deepEqual([r.status, r.body.access_level], [200, 40]);
  r = await call(t.app, 'GET', `/groups/${sub.id}/members/${maintainer.user.id}`, { token: stranger.token });
  assert.equal(r.status, 404);
  r = await call(t.app, 'GET', `/groups/${sub.id}/members/all/${admin.user.id}`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  // Projects inherit from the whole group hierarchy.
  await addMember(t.app, { type: 'Project', id: project.id }, reporter.user.id, 40);
  r = await call(t.app, 'GET', `/projects/${project.id}/members/all`, { token: reporter.token });
  assert.equal(r.status, 200);
  const plevels = Object.fromEntries(r.body.map((m: any) => [m.id, m.access_level]));
  assert.equal(plevels[reporter.user.id], 40);
  assert.equal(plevels[owner.user.id], 50);
  assert.equal(plevels[guest.user.id], 30);
  r = await call(t.app, 'GET', `/projects/${encodeURIComponent(project.full_path)}/members`, { token: reporter.token });
  assert.deepEqual(r.body.map((m: any) => [m.id, m.access_level]), [[reporter.user.id, 40]]);
  await t.app.db.deleteFrom('members').where('source_id', 'in', [sub.id, project.id]).where('user_id', 'in', [guest.user.id, stranger.user.id, reporter.user.id]).execute();
});

test('POST members: Maintainer+ adds, Owner grants Owner, lower roles 403, conflicts and bad input', async () => {
  const g = await createGroup(t.app, owner.token, { name: 'Adders', path: 'adders' });
  for (const [, u, level] of roles().slice(0, 4)) await addMember(t.app, { type: 'Namespace', id: g.id }, u.user.id, level);
  const newbies = await Promise.all([1, 2, 3, 4].map(() => makeUser(t.app)));
  for (const [name, u] of roles().slice(0, 3)) {
    const r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: u.token, body: { user_id: newbies[0].user.id, access_level: 10 } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }], name);
  }
  let r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: stranger.token, body: { user_id: newbies[0].user.id, access_level: 10 } });
  assert.equal(r.status, 404);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: maintainer.token, body: { user_id: newbies[0].user.id, access_level: 50 } });
  assert.equal(r.status, 403);
  assert.equal(await member(g.id, newbies[0].user.id), undefined);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: maintainer.token, form: { user_id: String(newbies[0].user.id), access_level: '40', expires_at: '2027-01-31' } });
  assert.equal(r.status, 201);
  assert.deepEqual([r.body.id, r.body.access_level, r.body.expires_at, r.body.created_by.id], [newbies[0].user.id, 40, '2027-01-31', maintainer.user.id]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[1].user.id, access_level: 50 } });
  assert.equal(r.status, 201);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: admin.token, body: { user_id: newbies[2].user.id, access_level: 50 } });
  assert.equal(r.status, 201);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[0].user.id, access_level: 30 } });
  assert.deepEqual([r.status, r.body], [409, { message: 'Member already exists' }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[3].user.id, access_level: 35 } });
  assert.deepEqual([r.status, r.body], [400, { error: 'access_level does not have a valid value' }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[3].user.id } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "access_level" not given' }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { access_level: 30 } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "user_id" not given' }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: 999999, access_level: 30 } });
  assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[3].user.id, access_level: 30, expires_at: '2020-01-01' } });
  assert.deepEqual([r.status, r.body], [400, { message: { expires_at: ['cannot be a date in the past'] } }]);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: owner.token, body: { user_id: newbies[3].user.id, access_level: 30, expires_at: 'soon' } });
  assert.deepEqual([r.status, r.body], [400, { error: 'expires_at is invalid' }]);
  assert.equal(await member(g.id, newbies[3].user.id), undefined);
  const ro = await makeToken(t.app, owner.user, ['read_api']);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: ro, body: { user_id: newbies[3].user.id, access_level: 30 } });
  assert.equal(r.status, 403);
  assert.equal(r.body.error, 'insufficient_scope');
});

test('a subgroup or project membership cannot be below the inherited one', async () => {
  let r = await call(t.app, 'POST', `/groups/${sub.id}/members`, { token: owner.token, body: { user_id: developer.user.id, access_level: 20 } });
  assert.deepEqual([r.status, r.body], [400, { message: { access_level: ['should be greater than or equal to Developer inherited membership from group Top'] } }]);
  r = await call(t.app, 'POST', `/projects/${project.id}/members`, { token: owner.token, body: { user_id: maintainer.user.id, access_level: 30 } });
  assert.deepEqual([r.status, r.body], [400, { message: { access_level: ['should be greater than or equal to Maintainer inherited membership from group Top'] } }]);
  r = await call(t.app, 'POST', `/groups/${sub.id}/members`, { token: owner.token, body: { user_id: developer.user.id, access_level: 40 } });
  assert.equal(r.status, 201);
  await t.app.db.deleteFrom('members').where('source_id', '=', sub.id).where('user_id', '=', developer.user.id).execute();
});

test('PUT members: roles, Owner rules, missing member', async () => {
  const g = await createGroup(t.app, owner.token, { name: 'Editors', path: 'editors' });
  for (const [, u, level] of roles().slice(0, 4)) await addMember(t.app, { type: 'Namespace', id: g.id }, u.user.id, level);
  for (const [name, u] of roles().slice(0, 3)) {
    const r = await call(t.app, 'PUT', `/groups/${g.id}/members/${guest.user.id}`, { token: u.token, body: { access_level: 20 } });
    assert.equal(r.status, 403, name);
  }
  let r = await call(t.app, 'PUT', `/groups/${g.id}/members/${guest.user.id}`, { token: maintainer.token, body: { access_level: 20, expires_at: '2027-03-01' } });
  assert.deepEqual([r.status, r.body.access_level, r.body.expires_at], [200, 20, '2027-03-01']);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${guest.user.id}`, { token: maintainer.token, body: { access_level: 50 } });
  assert.equal(r.status, 403);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${owner.user.id}`, { token: maintainer.token, body: { access_level: 40 } });
  assert.equal(r.status, 403);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${guest.user.id}`, { token: owner.token, body: { access_level: 50 } });
  assert.equal(r.status, 200);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${stranger.user.id}`, { token: owner.token, body: { access_level: 20 } });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${guest.user.id}`, { token: owner.token, body: { access_level: 7 } });
  assert.deepEqual([r.status, r.body], [400, { error: 'access_level does not have a valid value' }]);
  assert.equal((await member(g.id, guest.user.id))!.access_level, 50);
});

test('the last Owner of a group cannot be removed or demoted', async () => {
  const u = await makeUser(t.app);
  const g = await createGroup(t.app, u.token, { name: 'Lonely', path: 'lonely' });
  const child = await createGroup(t.app, u.token, { name: 'Kid', path: 'kid', parent_id: g.id });
  let r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${u.user.id}`, { token: u.token });
  assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${u.user.id}`, { token: u.token, body: { access_level: 40 } });
  assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${u.user.id}`, { token: admin.token });
  assert.equal(r.status, 403);
  assert.equal((await member(g.id, u.user.id))!.access_level, 50);
  // In the subgroup the same person is the only owner across the hierarchy too.
  r = await call(t.app, 'DELETE', `/groups/${child.id}/members/${u.user.id}`, { token: u.token });
  assert.equal(r.status, 403);
  // A second Owner lifts the protection.
  const other = await makeUser(t.app);
  r = await call(t.app, 'POST', `/groups/${g.id}/members`, { token: u.token, body: { user_id: other.user.id, access_level: 50 } });
  assert.equal(r.status, 201);
  r = await call(t.app, 'PUT', `/groups/${g.id}/members/${u.user.id}`, { token: u.token, body: { access_level: 40 } });
  assert.equal(r.status, 200);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${other.user.id}`, { token: other.token });
  assert.equal(r.status, 403);
});

test('DELETE members: Maintainer+ removes others, anyone leaves, subresources follow; 204 and state after', async () => {
  const g = await createGroup(t.app, owner.token, { name: 'Leavers', path: 'leavers' });
  const child = await createGroup(t.app, owner.token, { name: 'LeaveKid', path: 'lk', parent_id: g.id });
  const p = await makeProject(t.app, { namespace: { id: child.id, full_path: child.full_path }, path: 'lp' });
  for (const [, u, level] of roles().slice(0, 4)) await addMember(t.app, { type: 'Namespace', id: g.id }, u.user.id, level);
  await addMember(t.app, { type: 'Namespace', id: child.id }, reporter.user.id, 30);
  await addMember(t.app, { type: 'Project', id: p.id }, reporter.user.id, 40);
  let r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${reporter.user.id}`, { token: developer.token });
  assert.equal(r.status, 403);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${owner.user.id}`, { token: maintainer.token });
  assert.equal(r.status, 403);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${reporter.user.id}`, { token: maintainer.token });
  assert.deepEqual([r.status, r.text], [204, '']);
  assert.equal(await member(g.id, reporter.user.id), undefined);
  assert.equal(await member(child.id, reporter.user.id), undefined);
  assert.equal(await member(p.id, reporter.user.id, 'Project'), undefined);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${guest.user.id}`, { token: guest.token });
  assert.equal(r.status, 204);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${guest.user.id}`, { token: owner.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
  await addMember(t.app, { type: 'Namespace', id: child.id }, developer.user.id, 40);
  r = await call(t.app, 'DELETE', `/groups/${g.id}/members/${developer.user.id}?skip_subresources=true`, { token: owner.token });
  assert.equal(r.status, 204);
  assert.equal((await member(child.id, developer.user.id))!.access_level, 40);
});

test('project members: Maintainer manages, Owner of the group grants Owner, personal project owner manages', async () => {
  const p = await makeProject(t.app, { namespace: { id: top.id, full_path: top.full_path }, path: 'pm' });
  const newbie = await makeUser(t.app);
  let r = await call(t.app, 'POST', `/projects/${p.id}/members`, { token: developer.token, body: { user_id: newbie.user.id, access_level: 20 } });
  assert.equal(r.status, 403);
  r = await call(t.app, 'POST', `/projects/${p.id}/members`, { token: stranger.token, body: { user_id: newbie.user.id, access_level: 20 } });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
  r = await call(t.app, 'POST', `/projects/${p.id}/members`, { token: maintainer.token, body: { user_id: newbie.user.id, access_level: 50 } });
  assert.equal(r.status, 403);
  r = await call(t.app, 'POST', `/projects/${p.id}/members`, { token: maintainer.token, body: { user_id: newbie.user.id, access_level: 30 } });
  assert.equal(r.status, 201);
  r = await call(t.app, 'PUT', `/projects/${p.id}/members/${newbie.user.id}`, { token: owner.token, body: { access_level: 50 } });
  assert.equal(r.status, 200);
  r = await call(t.app, 'GET', `/projects/${p.id}/members`, { token: newbie.token });
  assert.deepEqual(r.body.map((m: any) => [m.id, m.access_level]), [[newbie.user.id, 50]]);
  r = await call(t.app, 'DELETE', `/projects/${p.id}/members/${newbie.user.id}`, { token: owner.token });
  assert.equal(r.status, 204);
  r = await call(t.app, 'GET', `/projects/${p.id}/members`, { token: newbie.token });
  assert.equal(r.status, 404);
  // A personal project: its namespace owner is Owner without a membership row.
  const ns = await userNamespace(t.app, stranger.user.id);
  const mine = await makeProject(t.app, { namespace: ns, path: 'mine' });
  r = await call(t.app, 'POST', `/projects/${mine.id}/members`, { token: stranger.token, body: { user_id: newbie.user.id, access_level: 50 } });
  assert.equal(r.status, 201);
  r = await call(t.app, 'GET', `/projects/${mine.id}/members/all`, { token: newbie.token });
  assert.deepEqual(r.body.map((m: any) => m.id), [newbie.user.id]);
  r = await call(t.app, 'GET', `/projects/${mine.id}/members`, { token: guest.token });
  assert.equal(r.status, 404);
});

test('expired memberships give no access and are not listed', async () => {
  const g = await createGroup(t.app, owner.token, { name: 'Expiring', path: 'expiring' });
  const u = await makeUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: g.id }, u.user.id, 30, Date.parse('2020-01-01T00:00:00Z'));
  let r = await call(t.app, 'GET', `/groups/${g.id}`, { token: u.token });
  assert.equal(r.status, 404);
  r = await call(t.app, 'GET', `/groups/${g.id}/members`, { token: owner.token });
  assert.deepEqual(r.body.map((m: any) => m.id), [owner.user.id]);
});
