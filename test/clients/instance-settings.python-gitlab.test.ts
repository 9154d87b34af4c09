import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import { insertGroup } from '../support/instance-settings-rows.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab, the real client, against a listening server: broadcast messages, features, notification settings.

const server = pythonServer();
let admin: TestUser;

before(async () => {
  if (pythonSkip) return;
  await server.ready();
  admin = await makeUser(server.t.app, { admin: true, username: 'pyadmin' });
});

const SCRIPT = String.raw`
# Broadcast messages
m = gl.broadcastmessages.create({'message': 'Upgrade at noon', 'target_access_levels': [10, 30], 'font': '#FFFFFF'})
out['created'] = m.attributes
m.message = 'Upgrade at one'
m.save()
out['updated'] = gl.broadcastmessages.get(m.id).message
out['listed'] = [x.id for x in gl.broadcastmessages.list()]
m.delete()
try:
    gl.broadcastmessages.get(m.id)
    out['after_delete'] = 'still there'
except gitlab.exceptions.GitlabGetError as e:
    out['after_delete'] = e.response_code

# Features
f = gl.features.set('role_targeted_broadcast_messages', True)
out['feature_on'] = f.attributes
f = gl.features.set('api_redirect_moved_projects', 30)
out['feature_pct'] = {'state': f.state, 'gates': f.gates}
f = gl.features.set('api_redirect_moved_projects', True, user='pyadmin', group='pygroup')
out['feature_actors'] = f.gates
try:
    gl.features.set('api_redirect_moved_projects', True, user='nobody')
except gitlab.exceptions.GitlabSetError as e:
    out['feature_missing'] = [e.response_code, e.error_message]
out['features'] = sorted(x.name for x in gl.features.list())
gl.features.delete('api_redirect_moved_projects')
out['features_after_delete'] = [x.name for x in gl.features.list()]

# Notification settings
ns = gl.notificationsettings.get()
out['notify_default'] = ns.attributes
ns.level = 'custom'
ns.new_note = True
ns.save()
out['notify_custom'] = gl.notificationsettings.get().attributes
gs = gl.groups.get(int(os.environ['GROUP_ID']), lazy=True).notificationsettings.get()
gs.level = 'watch'
gs.save()
out['group_notify'] = gl.groups.get(int(os.environ['GROUP_ID']), lazy=True).notificationsettings.get().level
`;

test('python-gitlab drives broadcast messages, features and notification settings', { skip: pythonSkip }, async () => {
  const t = server.t;
  const group = await insertGroup(t.app, { path: 'pygroup', visibility: 20 });
  const out = await pythonGitlab(server.url, admin.token, SCRIPT, { env: { GROUP_ID: String(group.id) } });
  assert.equal(out.created.message, 'Upgrade at noon');
  assert.deepEqual(out.created.target_access_levels, [10, 30]);
  assert.equal(out.created.active, true);
  assert.equal(out.updated, 'Upgrade at one');
  assert.deepEqual(out.listed, [out.created.id]);
  assert.equal(out.after_delete, 404);
  assert.equal(await t.app.db.selectFrom('broadcast_messages').select('id').executeTakeFirst(), undefined);

  assert.deepEqual(out.feature_on.state, 'on');
  assert.deepEqual(out.feature_on.gates, [{ key: 'boolean', value: true }]);
  assert.deepEqual(out.feature_pct, { state: 'conditional', gates: [{ key: 'boolean', value: false }, { key: 'percentage_of_time', value: 30 }] });
  assert.deepEqual(out.feature_actors, [{ key: 'boolean', value: false }, { key: 'actors', value: [`User:${admin.user.id}`, `Group:${group.id}`] }, { key: 'percentage_of_time', value: 30 }]);
  assert.deepEqual(out.feature_missing, [400, '400 Bad request - nobody is not found!']);
  assert.deepEqual(out.features, ['api_redirect_moved_projects', 'role_targeted_broadcast_messages']);
  assert.deepEqual(out.features_after_delete, ['role_targeted_broadcast_messages']);

  assert.deepEqual(out.notify_default, { level: 'participating', notification_email: admin.user.email });
  assert.equal(out.notify_custom.level, 'custom');
  assert.equal(out.notify_custom.events.new_note, true);
  assert.equal(out.notify_custom.events.new_issue, false);
  assert.equal(out.group_notify, 'watch');
  const stored = await t.app.db.selectFrom('notification_settings').select(['source_type', 'source_id', 'level']).where('user_id', '=', admin.user.id).orderBy('id').execute();
  assert.deepEqual(stored, [{ source_type: 'Global', source_id: 0, level: 'custom' }, { source_type: 'Namespace', source_id: group.id, level: 'watch' }]);
});
