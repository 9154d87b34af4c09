import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, type RoleCast, makeToken } from '../../../test/support/fixtures.ts';
import { trackerDsn } from './error-tracking.service.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const SETTING_FIELDS = ['active', 'project_name', 'tracker_external_url', 'api_url', 'integrated'];
const KEY_FIELDS = ['id', 'active', 'public_key', 'tracker_dsn'];

async function setup(visibility = 0) {
  const project = await makeProject(t.app, { visibility });
  return { project, roles: await castRoles(t.app, project) };
}

const settingRow = (projectId: number) => t.app.db.selectFrom('error_tracking_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
const keyRows = (projectId: number) => t.app.db.selectFrom('error_tracking_client_keys').selectAll().where('project_id', '=', projectId).orderBy('id').execute();

describe('error tracking: access', () => {
  let project: { id: number };
  let roles: RoleCast;
  before(async () => ({ project, roles } = await setup(0)));

  const expected: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 403], ['developer', 403],
    ['maintainer', 200], ['owner', 200], ['admin', 200],
  ];
  const routes: Array<[string, string, unknown, number]> = [
    ['PUT', 'settings', { active: true, integrated: true }, 200],
    ['GET', 'settings', undefined, 200],
    ['PATCH', 'settings', { active: true }, 200],
    ['GET', 'client_keys', undefined, 200],
    ['POST', 'client_keys', undefined, 201],
  ];
  for (const [method, path, body, okStatus] of routes) {
    for (const [role, status] of expected) {
      test(`${role}: ${method} ${path} answers ${status === 200 ? okStatus : status}`, async () => {
        const keysBefore = (await keyRows(project.id)).length;
        const r = await call(t.app, method, `/projects/${project.id}/error_tracking/${path}`, { token: roles[role]?.token, body });
        assert.equal(r.status, status === 200 ? okStatus : status, JSON.stringify(r.body));
        if (status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
        if (status === 404) assert.deepEqual(r.body, { message: '404 Project Not Found' });
        if (status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
        if (method === 'POST') assert.equal((await keyRows(project.id)).length, keysBefore + (status === 200 ? 1 : 0));
      });
    }
  }

  test('DELETE of a client key needs Maintainer', async () => {
    const key = (await call(t.app, 'POST', `/projects/${project.id}/error_tracking/client_keys`, { token: roles.owner.token })).body;
    for (const role of ['guest', 'reporter', 'developer'] as const) {
      assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/error_tracking/client_keys/${key.id}`, { token: roles[role].token })).status, 403);
    }
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/error_tracking/client_keys/${key.id}`, { token: roles.nonMember.token })).status, 404);
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/error_tracking/client_keys/${key.id}`)).status, 401);
    assert.ok((await keyRows(project.id)).some((k) => k.id === key.id));
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/error_tracking/client_keys/${key.id}`, { token: roles.admin.token })).status, 200);
  });

  test('a public project still needs Maintainer: non-members get 403', async () => {
    const { project: pub, roles: r } = await setup(20);
    assert.equal((await call(t.app, 'GET', `/projects/${pub.id}/error_tracking/client_keys`, { token: r.nonMember.token })).status, 403);
  });

  test('a read_api token reads but cannot write', async () => {
    const token = await makeToken(t.app, roles.maintainer.user, ['read_api']);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/error_tracking/client_keys`, { token })).status, 200);
    for (const [method, path, body] of [['POST', 'client_keys', undefined], ['PUT', 'settings', { active: false, integrated: false }], ['PATCH', 'settings', { active: false }]] as const) {
      const r = await call(t.app, method, `/projects/${project.id}/error_tracking/${path}`, { token, body });
      assert.equal(r.status, 403);
      assert.equal(r.body.error, 'insufficient_scope');
    }
    assert.equal((await settingRow(project.id))!.enabled, 1);
  });
});

describe('error tracking: settings', () => {
  test('GET and PATCH are 404 before PUT creates the setting', async () => {
    const { project, roles } = await setup();
    const get = await call(t.app, 'GET', `/projects/${project.id}/error_tracking/settings`, { token: roles.maintainer.token });
    assert.deepEqual([get.status, get.body], [404, { message: '404 Error Tracking Setting Not Found' }]);
    const patch = await call(t.app, 'PATCH', `/projects/${project.id}/error_tracking/settings`, { token: roles.maintainer.token, body: { active: true } });
    assert.deepEqual([patch.status, patch.body], [404, { message: '404 Error Tracking Setting Not Found' }]);
    assert.equal(await settingRow(project.id), undefined);

    const put = await call(t.app, 'PUT', `/projects/${project.id}/error_tracking/settings`, { token: roles.maintainer.token, body: { active: true, integrated: true } });
    assert.equal(put.status, 200);
    assert.deepEqual(Object.keys(put.body), SETTING_FIELDS);
    assert.deepEqual(put.body, { active: true, project_name: null, tracker_external_url: null, api_url: null, integrated: true });
    const got = await call(t.app, 'GET', `/projects/${project.id}/error_tracking/settings`, { token: roles.maintainer.token });
    assert.deepEqual([got.status, got.body], [200, put.body]);
  });

  test('PATCH changes active, and integrated only when given; PUT replaces both', async () => {
    const { project, roles } = await setup();
    const url = `/projects/${project.id}/error_tracking/settings`;
    await call(t.app, 'PUT', url, { token: roles.owner.token, body: { active: true, integrated: true } });
    const p1 = await call(t.app, 'PATCH', url, { token: roles.owner.token, body: { active: false } });
    assert.deepEqual([p1.status, p1.body.active, p1.body.integrated], [200, false, true]);
    const p2 = await call(t.app, 'PATCH', url, { token: roles.owner.token, form: { active: 'true', integrated: 'false' } });
    assert.deepEqual([p2.body.active, p2.body.integrated], [true, false]);
    const put = await call(t.app, 'PUT', url, { token: roles.owner.token, body: { active: false, integrated: true } });
    assert.deepEqual([put.body.active, put.body.integrated], [false, true]);
    const row = (await settingRow(project.id))!;
    assert.deepEqual([row.enabled, row.integrated], [0, 1]);
    const rows = await t.app.db.selectFrom('error_tracking_settings').select('id').where('project_id', '=', project.id).execute();
    assert.equal(rows.length, 1);
  });

  test('concurrent PUTs leave one setting', async () => {
    const { project, roles } = await setup();
    const url = `/projects/${project.id}/error_tracking/settings`;
    const rs = await Promise.all([true, false, true, false].map((active) => call(t.app, 'PUT', url, { token: roles.owner.token, body: { active, integrated: true } })));
    for (const r of rs) assert.equal(r.status, 200);
    const rows = await t.app.db.selectFrom('error_tracking_settings').select('id').where('project_id', '=', project.id).execute();
    assert.equal(rows.length, 1);
  });

  test('tracker_external_url is derived from a stored tracker API URL', async () => {
    const { project, roles } = await setup();
    const url = `/projects/${project.id}/error_tracking/settings`;
    await call(t.app, 'PUT', url, { token: roles.owner.token, body: { active: true, integrated: false } });
    await t.app.db.updateTable('error_tracking_settings').set({ api_url: 'https://sentry.example.com/api/0/projects/org/proj/', project_name: 'proj' }).where('project_id', '=', project.id).execute();
    const r = await call(t.app, 'GET', url, { token: roles.owner.token });
    assert.deepEqual(r.body, {
      active: true, project_name: 'proj', tracker_external_url: 'https://sentry.example.com/org/proj/',
      api_url: 'https://sentry.example.com/api/0/projects/org/proj/', integrated: false,
    });
  });

  const invalid: Array<[string, string, Record<string, unknown>, unknown]> = [
    ['PUT', 'without active', { integrated: true }, { message: '400 (Bad request) "active" not given' }],
    ['PUT', 'without integrated', { active: true }, { message: '400 (Bad request) "integrated" not given' }],
    ['PUT', 'with a non-boolean active', { active: 'yes', integrated: true }, { error: 'active is invalid' }],
    ['PATCH', 'without active', { integrated: true }, { message: '400 (Bad request) "active" not given' }],
    ['PATCH', 'with a non-boolean integrated', { active: true, integrated: 'maybe' }, { error: 'integrated is invalid' }],
  ];
  for (const [method, name, body, expected] of invalid) {
    test(`${method} ${name} is refused and changes nothing`, async () => {
      const { project, roles } = await setup();
      const url = `/projects/${project.id}/error_tracking/settings`;
      await call(t.app, 'PUT', url, { token: roles.owner.token, body: { active: false, integrated: false } });
      const r = await call(t.app, method, url, { token: roles.owner.token, body });
      assert.deepEqual([r.status, r.body], [400, expected]);
      const row = (await settingRow(project.id))!;
      assert.deepEqual([row.enabled, row.integrated], [0, 0]);
    });
  }
});

describe('error tracking: client keys', () => {
  test('create, list and delete, with a DSN that points here and carries the key', async () => {
    const { project, roles } = await setup();
    const base = `/projects/${project.id}/error_tracking/client_keys`;
    const empty = await call(t.app, 'GET', base, { token: roles.maintainer.token });
    assert.deepEqual([empty.status, empty.body, empty.headers['x-total']], [200, [], '0']);

    const a = await call(t.app, 'POST', base, { token: roles.maintainer.token, headers: { 'content-type': 'application/json' } });
    assert.equal(a.status, 201);
    assert.deepEqual(Object.keys(a.body), KEY_FIELDS);
    assert.equal(a.body.active, true);
    assert.match(a.body.public_key, /^glet_[0-9a-f]{32}$/);
    assert.equal(a.body.tracker_dsn, `http://${a.body.public_key}@bellows.test/api/v4/error_tracking/collector/${project.id}`);
    const b = await call(t.app, 'POST', base, { token: roles.maintainer.token });
    assert.notEqual(b.body.public_key, a.body.public_key);
    const stored = await keyRows(project.id);
    assert.deepEqual(stored.map((k) => k.public_key), [a.body.public_key, b.body.public_key]);

    const list = await call(t.app, 'GET', base, { token: roles.maintainer.token });
    assert.deepEqual(list.body, [a.body, b.body]);
    assert.equal(list.headers['x-total'], '2');
    const page = await call(t.app, 'GET', base, { token: roles.maintainer.token, query: { per_page: '1', page: '2' } });
    assert.deepEqual(page.body, [b.body]);

    const del = await call(t.app, 'DELETE', `${base}/${a.body.id}`, { token: roles.maintainer.token });
    assert.deepEqual([del.status, del.body], [200, a.body]);
    assert.deepEqual((await keyRows(project.id)).map((k) => k.id), [b.body.id]);
    const again = await call(t.app, 'DELETE', `${base}/${a.body.id}`, { token: roles.maintainer.token });
    assert.deepEqual([again.status, again.body], [404, { message: '404 Not found' }]);
    const huge = await call(t.app, 'DELETE', `${base}/3000000000`, { token: roles.maintainer.token });
    assert.deepEqual([huge.status, huge.body], [404, { message: '404 Not found' }]);
    const bigProject = await call(t.app, 'GET', '/projects/99999999999999999999/error_tracking/client_keys', { token: roles.admin.token });
    assert.deepEqual([bigProject.status, bigProject.body], [404, { message: '404 Project Not Found' }]);
    const bad = await call(t.app, 'DELETE', `${base}/abc`, { token: roles.maintainer.token });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'key_id is invalid' }]);
  });

  test("another project's key cannot be deleted through this project", async () => {
    const { project: a, roles: ra } = await setup();
    const { project: b } = await setup();
    const key = (await call(t.app, 'POST', `/projects/${a.id}/error_tracking/client_keys`, { token: ra.admin.token })).body;
    const r = await call(t.app, 'DELETE', `/projects/${b.id}/error_tracking/client_keys/${key.id}`, { token: ra.admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
    assert.equal((await keyRows(a.id)).length, 1);
  });

  test('the DSN follows the external URL, its port and path', () => {
    assert.equal(trackerDsn('http://127.0.0.1:8080', 'glet_x', 5), 'http://glet_x@127.0.0.1:8080/api/v4/error_tracking/collector/5');
    assert.equal(trackerDsn('https://example.com/code/', 'glet_y', 7), 'https://glet_y@example.com/code/api/v4/error_tracking/collector/7');
    assert.equal(trackerDsn('https://example.com:443', 'glet_z', 1), 'https://glet_z@example.com/api/v4/error_tracking/collector/1');
  });
});
