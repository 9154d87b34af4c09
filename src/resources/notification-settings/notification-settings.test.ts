import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { addMember, insertGroup, insertProject } from '../../../test/support/instance-settings-rows.ts';
import { effectiveNotificationLevel } from './notification-settings.service.ts';

let t: TestApp;
let admin: TestUser;

const EVENTS = [
  'new_note', 'new_issue', 'reopen_issue', 'close_issue', 'reassign_issue', 'issue_due', 'new_merge_request',
  'push_to_merge_request', 'reopen_merge_request', 'close_merge_request', 'reassign_merge_request',
  'change_reviewer_merge_request', 'merge_merge_request',
  'failed_pipeline', 'fixed_pipeline', 'success_pipeline', 'moved_project', 'merge_when_pipeline_succeeds',
];
/** Every event off except the two the reference turns on by default, with some overrides. */
const events = (overrides: Record<string, boolean> = {}, withEpic = false) => Object.fromEntries(
  [...EVENTS, ...(withEpic ? ['new_epic'] : [])].map((e) => [e, overrides[e] ?? (e === 'failed_pipeline' || e === 'fixed_pipeline')]),
);
const rows = async () => t.app.db.selectFrom('notification_settings').select(['user_id', 'source_type', 'source_id', 'level', 'events', 'notification_email']).orderBy('id').execute();

before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

test('global setting: participating and the primary e-mail by default; anonymous is 401', async () => {
  const u = await makeUser(t.app);
  const r = await call(t.app, 'GET', '/notification_settings', { token: u.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { level: 'participating', notification_email: u.user.email });
  assert.deepEqual(Object.keys(r.body), ['level', 'notification_email']);
  for (const method of ['GET', 'PUT']) {
    const anon = await call(t.app, method, '/notification_settings', { body: method === 'PUT' ? { level: 'watch' } : undefined });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.body, { message: '401 Unauthorized' });
  }
});

test('PUT global: level, events shown when custom, notification_email only a verified address', async () => {
  const u = await makeUser(t.app);
  await t.app.db.updateTable('users').set({ public_email: 'Public@Example.org' }).where('id', '=', u.user.id).execute();
  const watch = await call(t.app, 'PUT', '/notification_settings', { token: u.token, body: { level: 'watch', new_note: true } });
  assert.equal(watch.status, 200);
  assert.deepEqual(watch.body, { level: 'watch', notification_email: u.user.email });

  const custom = await call(t.app, 'PUT', '/notification_settings', { token: u.token, form: { level: 'custom', failed_pipeline: 'false', new_issue: 'true', notification_email: 'public@example.org' } });
  assert.equal(custom.status, 200);
  assert.deepEqual(custom.body, { level: 'custom', events: events({ new_note: true, new_issue: true, failed_pipeline: false }), notification_email: 'public@example.org' });
  assert.deepEqual(Object.keys(custom.body), ['level', 'events', 'notification_email']);
  assert.deepEqual(Object.keys(custom.body.events), EVENTS);
  assert.deepEqual((await call(t.app, 'GET', '/notification_settings', { token: u.token })).body, custom.body);

  const before = await rows();
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{ notification_email: 'someone@else.org' }, { message: { notification_email: ['must be an email you have verified'] } }],
    [{ level: 'loud' }, { message: { level: ['is not included in the list'] } }],
    [{ level: 'loud', notification_email: 'x@y.z' }, { message: { level: ['is not included in the list'], notification_email: ['must be an email you have verified'] } }],
    [{ level: '' }, { message: { level: ['is not included in the list'] } }],
    [{ new_note: 'maybe' }, { error: 'new_note is invalid' }],
    [{ merge_when_pipeline_succeeds: 'yes' }, { error: 'merge_when_pipeline_succeeds is invalid' }],
  ];
  for (const [body, expected] of cases) {
    const r = await call(t.app, 'PUT', '/notification_settings', { token: u.token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, expected, JSON.stringify(body));
  }
  assert.deepEqual(await rows(), before);

  const reset = await call(t.app, 'PUT', '/notification_settings', { token: u.token, body: { notification_email: '' } });
  assert.deepEqual(reset.body.notification_email, u.user.email);
  const primary = await call(t.app, 'PUT', '/notification_settings', { token: u.token, body: { notification_email: u.user.email.toUpperCase(), level: 'mention' } });
  assert.deepEqual(primary.body, { level: 'mention', notification_email: u.user.email.toUpperCase() });
});

test('tokens: read_api reads but cannot write; settings belong to the caller', async () => {
  const a = await makeUser(t.app);
  const b = await makeUser(t.app);
  const readApi = await makeToken(t.app, a.user, ['read_api']);
  assert.equal((await call(t.app, 'GET', '/notification_settings', { token: readApi })).status, 200);
  const w = await call(t.app, 'PUT', '/notification_settings', { token: readApi, body: { level: 'watch' } });
  assert.equal(w.status, 403);
  assert.equal(w.body.error, 'insufficient_scope');
  await call(t.app, 'PUT', '/notification_settings', { token: a.token, body: { level: 'disabled' } });
  assert.equal((await call(t.app, 'GET', '/notification_settings', { token: a.token })).body.level, 'disabled');
  assert.equal((await call(t.app, 'GET', '/notification_settings', { token: b.token })).body.level, 'participating');
  const sudo = await call(t.app, 'GET', '/notification_settings', { token: admin.token, headers: { sudo: a.user.username } });
  assert.deepEqual(sudo.body, { level: 'disabled', notification_email: a.user.email });
});

test('group setting: readers only (private group is 404 to others), global by default, new_epic among its events', async () => {
  const g = await insertGroup(t.app, { visibility: 0 });
  const outsider = await makeUser(t.app);
  const url = `/groups/${g.id}/notification_settings`;
  assert.equal((await call(t.app, 'GET', url)).status, 401);
  for (const method of ['GET', 'PUT']) {
    const r = await call(t.app, method, url, { token: outsider.token, body: method === 'PUT' ? { level: 'watch' } : undefined });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { message: '404 Group Not Found' });
  }
  const missing = await call(t.app, 'GET', '/groups/999999/notification_settings', { token: admin.token });
  assert.deepEqual([missing.status, missing.body], [404, { message: '404 Group Not Found' }]);

  for (const level of [10, 20, 30, 40, 50]) {
    const m = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, m.user.id, level);
    const get = await call(t.app, 'GET', url, { token: m.token });
    assert.deepEqual([get.status, get.body], [200, { level: 'global' }], `role ${level}`);
    const put = await call(t.app, 'PUT', `/groups/${encodeURIComponent(g.full_path)}/notification_settings`, { token: m.token, body: { level: 'mention' } });
    assert.deepEqual([put.status, put.body], [200, { level: 'mention' }], `role ${level}`);
  }
  const custom = await call(t.app, 'PUT', url, { token: admin.token, body: { level: 'custom', new_epic: true, notification_email: admin.user.email, push_to_merge_request: true } });
  assert.equal(custom.status, 200);
  assert.deepEqual(custom.body, { level: 'custom', events: events({ new_epic: true, push_to_merge_request: true }, true) });
  const stored = (await rows()).filter((r) => r.user_id === admin.user.id && r.source_type === 'Namespace');
  assert.deepEqual(stored.map((r) => [r.source_id, r.level, r.notification_email]), [[g.id, 'custom', null]]);
  const bad = await call(t.app, 'PUT', url, { token: admin.token, body: { level: 'everything' } });
  assert.deepEqual([bad.status, bad.body], [400, { message: { level: ['is not included in the list'] } }]);
  assert.equal((await call(t.app, 'GET', url, { token: admin.token })).body.level, 'custom');

  const pub = await insertGroup(t.app, { visibility: 20 });
  const open = await call(t.app, 'PUT', `/groups/${pub.id}/notification_settings`, { token: outsider.token, body: { level: 'watch' } });
  assert.deepEqual([open.status, open.body], [200, { level: 'watch' }]);
});

test('project setting: by id or path; members through the group; 404 for those who cannot read it', async () => {
  const g = await insertGroup(t.app);
  const p = await insertProject(t.app, g, { visibility: 0 });
  const outsider = await makeUser(t.app);
  const url = `/projects/${p.id}/notification_settings`;
  const hidden = await call(t.app, 'PUT', url, { token: outsider.token, body: { level: 'watch' } });
  assert.deepEqual([hidden.status, hidden.body], [404, { message: '404 Project Not Found' }]);
  assert.equal((await call(t.app, 'GET', url)).status, 401);

  for (const level of [10, 20, 30, 40, 50]) {
    const m = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, m.user.id, level);
    assert.deepEqual((await call(t.app, 'GET', url, { token: m.token })).body, { level: 'global' });
    const put = await call(t.app, 'PUT', `/projects/${encodeURIComponent(p.full_path)}/notification_settings`, { token: m.token, form: { level: 'custom', new_note: 'true' } });
    assert.deepEqual([put.status, put.body], [200, { level: 'custom', events: events({ new_note: true }) }], `role ${level}`);
  }
  const viaGroup = await makeUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: g.id }, viaGroup.user.id, 10);
  assert.equal((await call(t.app, 'PUT', url, { token: viaGroup.token, body: { level: 'disabled' } })).body.level, 'disabled');
  const epic = await call(t.app, 'PUT', url, { token: admin.token, body: { level: 'custom', new_epic: true } });
  assert.deepEqual(epic.body, { level: 'custom', events: events() }, 'projects have no epics');
});

test('effectiveNotificationLevel: project, then the nearest group that is not global, then the global setting', async () => {
  const u = await makeUser(t.app);
  const root = await insertGroup(t.app);
  const sub = await insertGroup(t.app, { parent: root });
  const p = await insertProject(t.app, sub);
  const userNs = await t.app.db.selectFrom('namespaces').select(['id', 'full_path']).where('owner_id', '=', u.user.id).executeTakeFirstOrThrow();
  const personal = await insertProject(t.app, userNs);
  const put = (url: string, body: Record<string, unknown>) => call(t.app, 'PUT', url, { token: admin.token, headers: { sudo: u.user.username }, body });
  const eff = async (where: { projectId?: number; groupId?: number }) => {
    const e = await effectiveNotificationLevel(t.app, u.user.id, where);
    return [e.level, e.source.type, e.source.id];
  };
  await addMember(t.app, { type: 'Namespace', id: root.id }, u.user.id, 30);
  await addMember(t.app, { type: 'Project', id: personal.id }, u.user.id, 50);

  assert.deepEqual(await eff({ projectId: p.id }), ['participating', 'Global', 0]);
  assert.deepEqual(await eff({}), ['participating', 'Global', 0]);
  await put('/notification_settings', { level: 'watch' });
  assert.deepEqual(await eff({ projectId: p.id }), ['watch', 'Global', 0]);
  await put(`/groups/${root.id}/notification_settings`, { level: 'mention' });
  assert.deepEqual(await eff({ projectId: p.id }), ['mention', 'Namespace', root.id]);
  assert.deepEqual(await eff({ groupId: sub.id }), ['mention', 'Namespace', root.id]);
  await put(`/groups/${sub.id}/notification_settings`, { level: 'global' });
  assert.deepEqual(await eff({ projectId: p.id }), ['mention', 'Namespace', root.id], 'global defers to the parent');
  await put(`/groups/${sub.id}/notification_settings`, { level: 'disabled' });
  assert.deepEqual(await eff({ projectId: p.id }), ['disabled', 'Namespace', sub.id]);
  assert.deepEqual(await eff({ groupId: root.id }), ['mention', 'Namespace', root.id]);
  await put(`/projects/${p.id}/notification_settings`, { level: 'custom', new_note: true, failed_pipeline: false });
  const custom = await effectiveNotificationLevel(t.app, u.user.id, { projectId: p.id });
  assert.deepEqual(custom, { level: 'custom', events: events({ new_note: true, failed_pipeline: false }), source: { type: 'Project', id: p.id } });
  await put(`/projects/${p.id}/notification_settings`, { level: 'global' });
  assert.deepEqual(await eff({ projectId: p.id }), ['disabled', 'Namespace', sub.id]);
  assert.deepEqual(await eff({ projectId: personal.id }), ['watch', 'Global', 0], 'a personal project has no group chain');
  await put('/notification_settings', { level: 'global' });
  assert.deepEqual(await eff({ projectId: personal.id }), ['participating', 'Global', 0]);
  await assert.rejects(effectiveNotificationLevel(t.app, u.user.id, { projectId: 999999 }), /Project not found/);
});
