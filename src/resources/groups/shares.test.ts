import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeGroup, makeProject, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';

// POST /groups/:id/share and DELETE /groups/:id/share/:group_id: a share gives the other group's members the lower
// of its level and their own in this group, its subgroups and its projects, through the one authorisation. Group
// custom attributes (admin).

let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

async function roles(groupId: number) {
  const cast: Record<string, TestUser | null> = { anonymous: null, nonMember: await quickUser(t.app), admin };
  for (const [name, level] of Object.entries(Role)) {
    cast[name] = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: groupId }, cast[name]!.user.id, level);
  }
  return cast;
}

test('role table: sharing and unsharing need admin_group (Owner); the target must be readable', async () => {
  const g = await makeGroup(t.app, { visibility: 0 });
  const target = await makeGroup(t.app, { visibility: 10 });
  const hidden = await makeGroup(t.app, { visibility: 0 });
  const cast = await roles(g.id);
  const expect: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 201, admin: 201 };
  for (const [role, status] of Object.entries(expect)) {
    const token = cast[role]?.token;
    const res = await call(t.app, 'POST', `/groups/${g.id}/share`, { token, body: { group_id: target.id, group_access: 30 } });
    assert.equal(res.status, status, `${role}: ${res.text}`);
    if (status === 201) {
      assert.deepEqual(res.body.shared_with_groups, [{ group_id: target.id, group_name: target.name, group_full_path: target.full_path, group_access_level: 30, expires_at: null }]);
      const del = await call(t.app, 'DELETE', `/groups/${g.id}/share/${target.id}`, { token });
      assert.equal(del.status, 204);
    } else {
      const del = await call(t.app, 'DELETE', `/groups/${g.id}/share/${target.id}`, { token });
      assert.equal(del.status, status === 201 ? 204 : status, role);
    }
  }
  const res = await call(t.app, 'POST', `/groups/${g.id}/share`, { token: cast.owner!.token, body: { group_id: hidden.id, group_access: 30 } });
  assert.deepEqual([res.status, res.body], [404, { message: '404 Group Not Found' }]);
  assert.equal((await t.app.db.selectFrom('group_group_links').selectAll().execute()).length, 0);
});

test('bad input: 4xx and nothing stored', async () => {
  const g = await makeGroup(t.app, { visibility: 0 });
  const target = await makeGroup(t.app, { visibility: 0 });
  const send = (body: Record<string, unknown>) => call(t.app, 'POST', `/groups/${g.id}/share`, { token: admin.token, body });
  assert.deepEqual(await send({ group_access: 30 }).then((r) => [r.status, r.body]), [400, { message: '400 (Bad request) "group_id" not given' }]);
  assert.deepEqual(await send({ group_id: target.id, group_access: 35 }).then((r) => [r.status, r.body]), [400, { error: 'group_access does not have a valid value' }]);
  assert.deepEqual(await send({ group_id: target.id, group_access: 30, expires_at: '2020-01-01' }).then((r) => [r.status, r.body]), [400, { message: { expires_at: ['cannot be a date in the past'] } }]);
  assert.deepEqual(await send({ group_id: g.id, group_access: 30 }).then((r) => [r.status, r.body]), [400, { message: { shared_with_group: ['cannot be the group itself'] } }]);
  assert.equal((await t.app.db.selectFrom('group_group_links').selectAll().where('shared_group_id', '=', g.id).execute()).length, 0);
  assert.equal((await send({ group_id: target.id, group_access: 30, expires_at: '2027-01-02' })).status, 201);
  assert.deepEqual(await send({ group_id: target.id, group_access: 40 }).then((r) => [r.status, r.body]), [409, { message: 'Group already shared with this group' }]);
  const res = await call(t.app, 'GET', `/groups/${g.id}`, { token: admin.token });
  assert.deepEqual(res.body.shared_with_groups.map((s: any) => [s.group_id, s.group_access_level, s.expires_at]), [[target.id, 30, '2027-01-02']]);
  assert.deepEqual(await call(t.app, 'DELETE', `/groups/${g.id}/share/99999`, { token: admin.token }).then((r) => [r.status, r.body]), [404, { message: '404 Group Link Not Found' }]);
});

test('a share takes effect: the other group members reach the group, its subgroups and projects at the lower level', async () => {
  const g = await makeGroup(t.app, { visibility: 0 });
  const sub = await makeGroup(t.app, { visibility: 0, parent: g });
  const p = await makeProject(t.app, { namespace: sub, visibility: 0, repository: true });
  const team = await makeGroup(t.app, { visibility: 0 });
  const dev = await quickUser(t.app);
  const guest = await quickUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: team.id }, dev.user.id, Role.developer);
  await addMember(t.app, { type: 'Namespace', id: team.id }, guest.user.id, Role.guest);
  const reach = async (u: TestUser) => [
    (await call(t.app, 'GET', `/groups/${g.id}`, { token: u.token })).status,
    (await call(t.app, 'GET', `/groups/${sub.id}`, { token: u.token })).status,
    (await call(t.app, 'GET', `/projects/${p.id}`, { token: u.token })).status,
    (await call(t.app, 'GET', '/groups', { token: u.token })).body.map((x: any) => x.id).includes(g.id),
    (await call(t.app, 'GET', '/projects', { token: u.token, query: { membership: 'true' } })).body.map((x: any) => x.id).includes(p.id),
  ];
  assert.deepEqual(await reach(dev), [404, 404, 404, false, false]);
  const res = await call(t.app, 'POST', `/groups/${g.id}/share`, { token: admin.token, body: { group_id: team.id, group_access: Role.reporter } });
  assert.equal(res.status, 201);
  assert.deepEqual(await reach(dev), [200, 200, 200, true, true]);
  assert.deepEqual(await reach(guest), [200, 200, 200, true, true]);
  // The lower of the two levels: Reporter for the Developer (no push), Guest for the Guest.
  const proj = await call(t.app, 'GET', `/projects/${p.id}`, { token: dev.token });
  assert.deepEqual(proj.body.permissions.group_access, { access_level: Role.reporter, notification_level: 3 });
  const branch = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: dev.token, body: { branch: 'x', ref: 'main' } });
  assert.equal(branch.status, 403);
  const listed = await call(t.app, 'GET', '/groups', { token: dev.token, query: { min_access_level: String(Role.reporter) } });
  assert.deepEqual(listed.body.map((x: any) => x.id).sort(), [g.id, sub.id, team.id].sort());
  const none = await call(t.app, 'GET', '/groups', { token: guest.token, query: { min_access_level: String(Role.reporter) } });
  assert.deepEqual(none.body.map((x: any) => x.id), []); // a Guest of the team: below Reporter everywhere
  // Unshared: gone again.
  assert.equal((await call(t.app, 'DELETE', `/groups/${g.id}/share/${team.id}`, { token: admin.token })).status, 204);
  assert.deepEqual(await reach(dev), [404, 404, 404, false, false]);
});

test('group custom attributes: administrators only', async () => {
  const g = await makeGroup(t.app, { visibility: 20 });
  const owner = await quickUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, Role.owner);
  const url = `/groups/${g.id}/custom_attributes`;
  assert.equal((await call(t.app, 'GET', url)).status, 401);
  assert.equal((await call(t.app, 'GET', url, { token: owner.token })).status, 403);
  assert.equal((await call(t.app, 'PUT', `${url}/k`, { token: owner.token, body: { value: 'v' } })).status, 403);
  assert.deepEqual(await call(t.app, 'PUT', `${url}/k`, { token: admin.token, body: { value: 'v' } }).then((r) => [r.status, r.body]), [200, { key: 'k', value: 'v' }]);
  await call(t.app, 'PUT', `${url}/a`, { token: admin.token, body: { value: '1' } });
  await call(t.app, 'PUT', `${url}/k`, { token: admin.token, body: { value: 'w' } });
  assert.deepEqual((await call(t.app, 'GET', url, { token: admin.token })).body, [{ key: 'a', value: '1' }, { key: 'k', value: 'w' }]);
  assert.deepEqual((await call(t.app, 'GET', `${url}/k`, { token: admin.token })).body, { key: 'k', value: 'w' });
  assert.deepEqual(await call(t.app, 'PUT', `${url}/k`, { token: admin.token, body: {} }).then((r) => [r.status, r.body]), [400, { message: '400 (Bad request) "value" not given' }]);
  assert.equal((await call(t.app, 'DELETE', `${url}/k`, { token: owner.token })).status, 403);
  assert.equal((await call(t.app, 'DELETE', `${url}/k`, { token: admin.token })).status, 204);
  assert.deepEqual(await call(t.app, 'GET', `${url}/k`, { token: admin.token }).then((r) => [r.status, r.body]), [404, { message: '404 Custom Attribute Not Found' }]);
  assert.equal((await call(t.app, 'GET', `/groups/99999/custom_attributes`, { token: admin.token })).status, 404);
});
