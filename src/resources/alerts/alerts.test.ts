import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeAlert, makeProject, quickUser, type RoleCast } from '../../../test/support/fixtures.ts';
import { digest } from '../../platform/crypto/tokens.ts';

// Alert integrations (Bellows extensions), the notify endpoints monitoring tools call, and the alerts REST
// extensions: iids, deduplication by fingerprint, recovery, status and assignees with their system notes, issues.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const BASE = 'http://bellows.test';
const alertsOf = (projectId: number) => t.app.db.selectFrom('alert_management_alerts').selectAll().where('project_id', '=', projectId).orderBy('iid').execute();
const notesOf = (alertId: number) => t.app.db.selectFrom('notes').select(['body', 'author_id', 'system']).where('noteable_type', '=', 'AlertManagement::Alert')
  .where('noteable_id', '=', alertId).orderBy('id').execute().then((r) => r.map((n) => n.body));

/** A request as curl or a monitoring tool sends it: raw body, its own content type, a bearer token. */
async function notify(url: string, body: string | object, token: string | null, contentType = 'application/json') {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await t.app.inject({ method: 'POST', url: url.replace(BASE, ''), headers, payload: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
}

async function integration(owner: string, projectId: number, body: Record<string, unknown> = { name: 'My tool' }) {
  const r = await call(t.app, 'POST', `/projects/${projectId}/alert_management/http_integrations`, { token: owner, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

describe('alert integrations', () => {
  let project: Awaited<ReturnType<typeof makeProject>>;
  let roles: RoleCast;
  before(async () => {
    project = await makeProject(t.app, { visibility: 20 });
    roles = await castRoles(t.app, project);
  });

  test('created with its endpoint and a token shown once, stored only as its digest', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.maintainer.token, body: { name: 'Datadog hook', type: 'http' } });
    assert.equal(r.status, 201);
    const row = await t.app.db.selectFrom('alert_integrations').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.match(r.body.token, /^[0-9a-f]{32}$/);
    assert.equal(row.token_digest, digest(r.body.token));
    assert.ok(!JSON.stringify(row).includes(r.body.token));
    assert.deepEqual(Object.keys(r.body), ['id', 'name', 'type', 'active', 'url', 'token', 'created_at', 'updated_at']);
    assert.equal(r.body.url, `${BASE}/${project.full_path}/alerts/notify/datadog-hook/${row.endpoint_identifier}.json`);
    assert.deepEqual([r.body.name, r.body.type, r.body.active], ['Datadog hook', 'http', true]);
    // Never shown again.
    const one = await call(t.app, 'GET', `/projects/${project.id}/alert_management/http_integrations/${r.body.id}`, { token: roles.maintainer.token });
    assert.equal(one.status, 200);
    assert.equal(one.body.token, undefined);
    const list = await call(t.app, 'GET', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.owner.token });
    assert.ok(list.body.every((i: any) => i.token === undefined));
    const prom = await integration(roles.maintainer.token, project.id, { name: 'Prom', type: 'prometheus' });
    assert.equal(prom.url, `${BASE}/${project.full_path}/prometheus/alerts/notify.json`);
  });

  test('update, reset_token (the old token stops working), delete', async () => {
    const made = await integration(roles.owner.token, project.id);
    let r = await call(t.app, 'PUT', `/projects/${project.id}/alert_management/http_integrations/${made.id}`, { token: roles.maintainer.token, body: { name: 'Renamed', active: false } });
    assert.deepEqual([r.status, r.body.name, r.body.active, r.body.token], [200, 'Renamed', false, undefined]);
    r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations/${made.id}/reset_token`, { token: roles.maintainer.token });
    assert.equal(r.status, 201);
    assert.notEqual(r.body.token, made.token);
    await call(t.app, 'PUT', `/projects/${project.id}/alert_management/http_integrations/${made.id}`, { token: roles.maintainer.token, body: { active: true } });
    assert.equal((await notify(made.url, { title: 'old token' }, made.token)).status, 401);
    assert.equal((await notify(made.url, { title: 'new token' }, r.body.token)).status, 200);
    r = await call(t.app, 'DELETE', `/projects/${project.id}/alert_management/http_integrations/${made.id}`, { token: roles.maintainer.token });
    assert.equal(r.status, 204);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/alert_management/http_integrations/${made.id}`, { token: roles.maintainer.token })).status, 404);
    // The alert it raised stays, without it.
    const left = (await alertsOf(project.id)).find((a) => a.title === 'new token')!;
    assert.equal(left.integration_id, null);
  });

  test('bad input: blank or long name, unknown type, unknown id; nothing stored', async () => {
    const count = async () => (await t.app.db.selectFrom('alert_integrations').select('id').where('project_id', '=', project.id).execute()).length;
    const before = await count();
    let r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.owner.token, body: { name: ' ' } });
    assert.deepEqual([r.status, r.body], [400, { message: { name: ["can't be blank"] } }]);
    r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.owner.token, body: { name: 'x'.repeat(256) } });
    assert.deepEqual([r.status, r.body], [400, { message: { name: ['is too long (maximum is 255 characters)'] } }]);
    r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.owner.token, body: { name: 'x', type: 'nagios' } });
    assert.deepEqual([r.status, r.body], [400, { error: 'type does not have a valid value' }]);
    r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles.owner.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "name" not given' }]);
    assert.equal(await count(), before);
    r = await call(t.app, 'GET', `/projects/${project.id}/alert_management/http_integrations/999999`, { token: roles.owner.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Integration Not Found' }]);
  });

  test('Maintainer and up manage them; documented as Bellows extensions', async () => {
    const expected: Array<[keyof RoleCast, number]> = [
      ['anonymous', 401], ['nonMember', 403], ['guest', 403], ['reporter', 403], ['developer', 403], ['maintainer', 201], ['owner', 201], ['admin', 201],
    ];
    for (const [role, status] of expected) {
      const r = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, { token: roles[role]?.token, body: { name: `by ${role}` } });
      assert.equal(r.status, status, role);
      const g = await call(t.app, 'GET', `/projects/${project.id}/alert_management/http_integrations`, { token: roles[role]?.token });
      assert.equal(g.status, status === 201 ? 200 : status, role);
    }
    const priv = await makeProject(t.app, { visibility: 0 });
    assert.equal((await call(t.app, 'GET', `/projects/${priv.id}/alert_management/http_integrations`, { token: roles.nonMember.token })).status, 404);
    const doc = (await call(t.app, 'GET', '/api/v4/openapi.json')).body;
    assert.deepEqual(doc.paths['/api/v4/projects/{id}/alert_management/http_integrations'].post.tags, ['alert_management', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/projects/{id}/alert_management_alerts'].get.tags, ['alert_management', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/projects/{id}/alert_management_alerts/{alert_iid}/metric_images'].post.tags, ['alert_management']);
  });
});

describe('the generic notify endpoint', () => {
  let project: Awaited<ReturnType<typeof makeProject>>;
  let owner: string;
  let hook: any;
  before(async () => {
    project = await makeProject(t.app, { visibility: 0 });
    owner = (await castRoles(t.app, project)).owner.token;
    hook = await integration(owner, project.id, { name: 'Generic' });
  });

  test('an alert with every field; iids count per project', async () => {
    const payload = {
      title: 'Disk full', description: 'sda1 at 99%', start_time: '2026-05-31T10:00:00Z', service: 'db', monitoring_tool: 'Nagios',
      hosts: ['db1', 'db2'], severity: 'high', fingerprint: 'disk-db1', gitlab_environment_name: 'production', extra: { a: 1 },
    };
    const r = await notify(hook.url, payload, hook.token);
    assert.deepEqual(r, { status: 200, body: null });
    const [a] = await alertsOf(project.id);
    assert.equal(a.iid, 1);
    const got = await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts/1`, { token: owner });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, {
      id: a.id, iid: 1, project_id: project.id, title: 'Disk full', description: 'sda1 at 99%', severity: 'high', status: 'triggered',
      started_at: '2026-05-31T10:00:00.000Z', ended_at: null, events: 1, monitoring_tool: 'Nagios', service: 'db', hosts: ['db1', 'db2'],
      fingerprint: createHash('sha1').update('disk-db1').digest('hex'), environment_name: 'production', issue_iid: null, assignees: [],
      payload, created_at: '2026-06-01T12:00:00.000Z', updated_at: '2026-06-01T12:00:00.000Z',
      web_url: `${BASE}/${project.full_path}/-/alert_management/1/details`,
    });
    assert.deepEqual(await notesOf(a.id), ['logged an alert from **Nagios**']);
    // The defaults: now, critical, no fingerprint (every notification its own alert), one host as a string.
    await notify(hook.url, { title: 'Ping', hosts: 'web1', severity: 'bogus' }, hook.token, 'text/plain');
    await notify(hook.url, { title: 'Ping' }, hook.token);
    const all = await alertsOf(project.id);
    assert.deepEqual(all.map((x) => [x.iid, x.title, x.severity, x.hosts, x.fingerprint]), [
      [1, 'Disk full', 'high', '["db1","db2"]', a.fingerprint], [2, 'Ping', 'critical', '["web1"]', null], [3, 'Ping', 'critical', '[]', null],
    ]);
    assert.deepEqual(await notesOf(all[1].id), ['logged an alert from **Generic**']);
  });

  test('the same fingerprint counts events on the open alert; end_time resolves it; then a new one opens', async () => {
    const fp = { title: 'CPU', fingerprint: ['cpu', 42] };
    for (let i = 0; i < 3; i++) assert.equal((await notify(hook.url, fp, hook.token)).status, 200);
    let cpu = (await alertsOf(project.id)).filter((a) => a.title === 'CPU');
    assert.deepEqual(cpu.map((a) => [a.events, a.status]), [[3, 'triggered']]);
    assert.equal(cpu[0].fingerprint, createHash('sha1').update('cpu42').digest('hex'));
    assert.equal((await notify(hook.url, { ...fp, end_time: '2026-06-01T11:00:00Z' }, hook.token)).status, 200);
    cpu = (await alertsOf(project.id)).filter((a) => a.title === 'CPU');
    assert.deepEqual(cpu.map((a) => [a.events, a.status, a.ended_at]), [[3, 'resolved', Date.parse('2026-06-01T11:00:00Z')]]);
    assert.deepEqual(await notesOf(cpu[0].id), [
      'logged an alert from **Generic**', 'logged a recovery alert from **Generic**', 'changed the status to **Resolved** by recovery alert notification',
    ]);
    await notify(hook.url, fp, hook.token);
    cpu = (await alertsOf(project.id)).filter((a) => a.title === 'CPU');
    assert.deepEqual(cpu.map((a) => [a.events, a.status]), [[3, 'resolved'], [1, 'triggered']]);
  });

  test('refusals: token, integration state, payload, size; nothing stored', async () => {
    const before = (await alertsOf(project.id)).length;
    const cases: Array<[string, string | object, string | null, string, number, unknown]> = [
      ['no token', { title: 'x' }, null, 'application/json', 401, { message: '401 Unauthorized' }],
      ['wrong token', { title: 'x' }, 'f'.repeat(32), 'application/json', 401, { message: '401 Unauthorized' }],
      ['another integration\'s token', { title: 'x' }, 'OTHER', 'application/json', 401, { message: '401 Unauthorized' }],
      ['not JSON', '{"title": ', hook.token, 'application/json', 400, { message: 'The payload is not valid JSON' }],
      ['empty', '', hook.token, 'application/json', 400, { message: 'The payload is empty; send a JSON object' }],
      ['an array', '[1]', hook.token, 'application/json', 400, { message: 'The payload must be a JSON object' }],
      ['no title', { description: 'x' }, hook.token, 'application/json', 422, { message: 'title is missing' }],
      ['blank title', { title: '  ' }, hook.token, 'application/json', 422, { message: 'title is missing' }],
      ['bad start_time', { title: 'x', start_time: 'yesterday' }, hook.token, 'application/json', 422, { message: 'start_time is not a valid date and time' }],
      ['bad end_time', { title: 'x', end_time: '2026-13-45T99:00:00Z' }, hook.token, 'application/json', 422, { message: 'end_time is not a valid date and time' }],
      ['bad hosts', { title: 'x', hosts: { a: 1 } }, hook.token, 'application/json', 422, { message: 'hosts must be a string or an array of strings' }],
      ['bad service', { title: 'x', service: ['a'] }, hook.token, 'application/json', 422, { message: 'service must be a string' }],
      ['over 1 MB', { title: 'x', description: 'y'.repeat(1024 * 1024) }, hook.token, 'application/json', 413, { message: '413 Request Entity Too Large' }],
    ];
    // curl -d without a content type of its own, and no content type at all, are read as JSON too.
    const bare = await t.app.inject({ method: 'POST', url: hook.url.replace(BASE, ''), headers: { authorization: `Bearer ${hook.token}` }, payload: '{"title":' });
    assert.deepEqual([bare.statusCode, JSON.parse(bare.body)], [400, { message: 'The payload is not valid JSON' }]);
    const form = await notify(hook.url, '{"title":', hook.token, 'application/x-www-form-urlencoded');
    assert.deepEqual([form.status, form.body], [400, { message: 'The payload is not valid JSON' }]);
    const other = await integration(owner, project.id, { name: 'Other' });
    for (const [name, body, token, type, status, answer] of cases) {
      const r = await notify(hook.url, body, token === 'OTHER' ? other.token : token, type);
      assert.deepEqual([r.status, r.body], [status, answer], name);
    }
    // A disabled integration refuses even its right token.
    await call(t.app, 'PUT', `/projects/${project.id}/alert_management/http_integrations/${other.id}`, { token: owner, body: { active: false } });
    assert.deepEqual(await notify(other.url, { title: 'x' }, other.token), { status: 403, body: { message: '403 Forbidden' } });
    // Unknown endpoint, unknown project, a Prometheus URL without a Prometheus integration.
    assert.equal((await notify(hook.url.replace(/[0-9a-f]{16}\.json$/, '0123456789abcdef.json'), { title: 'x' }, hook.token)).status, 404);
    assert.equal((await notify(hook.url.replace(/\.json$/, ''), { title: 'x' }, hook.token)).status, 404);
    assert.equal((await notify(`/nobody/nothing/alerts/notify/generic/${hook.url.slice(-21)}`, { title: 'x' }, hook.token)).status, 404);
    assert.equal((await notify(`/${project.full_path}/prometheus/alerts/notify.json`, { alerts: [] }, hook.token)).status, 401);
    assert.deepEqual(await notify('/nobody/nothing/prometheus/alerts/notify.json', { alerts: [] }, hook.token), { status: 401, body: { message: '401 Unauthorized' } });
    assert.equal((await alertsOf(project.id)).length, before);
  });
});

describe('the Prometheus payload', () => {
  test('a batch: firing alerts open, a resolved one resolves, a bad one refuses the whole batch', async () => {
    const project = await makeProject(t.app, { visibility: 0 });
    const owner = (await castRoles(t.app, project)).owner.token;
    const prom = await integration(owner, project.id, { name: 'Prometheus', type: 'prometheus' });
    const firing = (name: string, extra: object = {}) => ({
      status: 'firing', labels: { alertname: name, severity: 'warning', job: 'node', instance: 'host:9100' },
      annotations: { summary: `${name} summary`, description: `${name} is on fire` }, startsAt: '2026-06-01T11:00:00Z',
      endsAt: '0001-01-01T00:00:00Z', generatorURL: 'http://prometheus/graph', fingerprint: 'abc', ...extra,
    });
    const batch = (alerts: object[], status = 'firing') => ({ version: '4', groupKey: '{}:{}', status, receiver: 'bellows', groupLabels: {}, commonLabels: {}, commonAnnotations: {}, externalURL: 'http://am', alerts });
    let r = await notify(prom.url, batch([firing('HighLoad'), firing('LowDisk')]), prom.token);
    assert.equal(r.status, 200);
    let rows = await alertsOf(project.id);
    assert.deepEqual(rows.map((a) => [a.iid, a.title, a.severity, a.status, a.monitoring_tool, a.service, a.hosts, a.description]), [
      [1, 'HighLoad summary', 'medium', 'triggered', 'Prometheus', 'node', '["host:9100"]', 'HighLoad is on fire'],
      [2, 'LowDisk summary', 'medium', 'triggered', 'Prometheus', 'node', '["host:9100"]', 'LowDisk is on fire'],
    ]);
    // Repeated: one more event each.
    await notify(prom.url, batch([firing('HighLoad'), firing('LowDisk')]), prom.token);
    // A batch with one broken alert stores nothing of it.
    r = await notify(prom.url, batch([firing('HighLoad'), { status: 'firing', labels: {}, annotations: {}, startsAt: '2026-06-01T11:00:00Z' }]), prom.token);
    assert.deepEqual(r, { status: 422, body: { message: 'alerts[1] has no title (annotations.title, annotations.summary or labels.alertname)' } });
    r = await notify(prom.url, { receiver: 'x' }, prom.token);
    assert.deepEqual(r, { status: 422, body: { message: 'alerts is missing' } });
    rows = await alertsOf(project.id);
    assert.deepEqual(rows.map((a) => a.events), [2, 2]);
    // Resolved.
    r = await notify(prom.url, batch([firing('HighLoad', { status: 'resolved', endsAt: '2026-06-01T11:30:00Z' })], 'resolved'), prom.token);
    assert.equal(r.status, 200);
    rows = await alertsOf(project.id);
    assert.deepEqual(rows.map((a) => [a.status, a.ended_at]), [['resolved', Date.parse('2026-06-01T11:30:00Z')], ['triggered', null]]);
    // The generic URL of a prometheus integration takes the same payload.
    const viaGeneric = (await t.app.db.selectFrom('alert_integrations').select('endpoint_identifier').where('id', '=', prom.id).executeTakeFirstOrThrow()).endpoint_identifier;
    r = await notify(`/${project.full_path}/alerts/notify/prometheus/${viaGeneric}.json`, batch([firing('Other')]), prom.token);
    assert.equal(r.status, 200);
    assert.equal((await alertsOf(project.id)).length, 3);
  });
});

describe('alerts REST extensions', () => {
  let project: Awaited<ReturnType<typeof makeProject>>;
  let roles: RoleCast;
  before(async () => {
    project = await makeProject(t.app, { visibility: 20 });
    roles = await castRoles(t.app, project);
    await makeAlert(t.app, project, { title: 'Low one', severity: 'low', startedAt: Date.parse('2026-05-01T00:00:00Z'), service: 'api' });
    await makeAlert(t.app, project, { title: 'Critical one', severity: 'critical', startedAt: Date.parse('2026-05-03T00:00:00Z') });
    await makeAlert(t.app, project, { title: 'Medium 100%_done', severity: 'medium', status: 'resolved', startedAt: Date.parse('2026-05-02T00:00:00Z') });
  });
  const list = async (query: Record<string, string> = {}) => {
    const r = await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts`, { token: roles.developer.token, query });
    assert.equal(r.status, 200, r.text);
    return r;
  };

  test('filters, search, order and pagination', async () => {
    assert.deepEqual((await list()).body.map((a: any) => a.iid), [2, 3, 1]);
    assert.deepEqual((await list({ sort: 'asc' })).body.map((a: any) => a.iid), [1, 3, 2]);
    assert.deepEqual((await list({ order_by: 'severity' })).body.map((a: any) => a.severity), ['critical', 'medium', 'low']);
    assert.deepEqual((await list({ order_by: 'severity', sort: 'asc' })).body.map((a: any) => a.severity), ['low', 'medium', 'critical']);
    assert.deepEqual((await list({ status: 'resolved' })).body.map((a: any) => a.iid), [3]);
    assert.deepEqual((await list({ severity: 'low' })).body.map((a: any) => a.iid), [1]);
    assert.deepEqual((await list({ search: 'API' })).body.map((a: any) => a.iid), [1]);
    assert.deepEqual((await list({ search: '%_' })).body.map((a: any) => a.iid), [3]);
    const page = await list({ per_page: '2', page: '2' });
    assert.deepEqual(page.body.map((a: any) => a.iid), [1]);
    assert.equal(page.headers['x-total'], '3');
    assert.equal(page.headers['x-prev-page'], '1');
    const bad = await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts`, { token: roles.developer.token, query: { status: 'open' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'status does not have a valid value' }]);
    const missing = await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts/99`, { token: roles.developer.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Alert Not Found' }]);
  });

  test('status and assignees change with their system notes; only readers of the alert are assignable', async () => {
    const alert = await makeAlert(t.app, project, { title: 'Worked on' });
    const url = `/projects/${project.id}/alert_management_alerts/${alert.iid}`;
    let r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { status: 'acknowledged', assignee_ids: [roles.maintainer.user.id] } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'acknowledged');
    assert.deepEqual(r.body.assignees.map((u: any) => u.id), [roles.maintainer.user.id]);
    r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { status: 'resolved', assignee_ids: [roles.developer.user.id] } });
    assert.deepEqual([r.body.status, r.body.ended_at], ['resolved', '2026-06-01T12:00:00.000Z']);
    assert.deepEqual(await notesOf(alert.id), [
      'changed the status to **Acknowledged**', `assigned to @${roles.maintainer.user.username}`,
      'changed the status to **Resolved**', `assigned to @${roles.developer.user.username} and unassigned @${roles.maintainer.user.username}`,
    ]);
    const authors = await t.app.db.selectFrom('notes').select('author_id').where('noteable_id', '=', alert.id).where('noteable_type', '=', 'AlertManagement::Alert').execute();
    assert.ok(authors.every((a) => a.author_id === roles.developer.user.id));
    // A Reporter cannot read alerts, so cannot be assigned; nothing changes.
    for (const ids of [[roles.reporter.user.id], [987654], [roles.nonMember.user.id]]) {
      r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { status: 'triggered', assignee_ids: ids } });
      assert.deepEqual([r.status, r.body], [400, { message: 'Assignee has no permissions' }]);
    }
    r = await call(t.app, 'GET', url, { token: roles.developer.token });
    assert.deepEqual([r.body.status, r.body.assignees.map((u: any) => u.id)], ['resolved', [roles.developer.user.id]]);
    r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { assignee_ids: [] } });
    assert.deepEqual(r.body.assignees, []);
  });

  test('a resolved alert does not reopen beside an open one with its fingerprint', async () => {
    const old = await makeAlert(t.app, project, { fingerprint: 'f'.repeat(40), status: 'resolved' });
    await makeAlert(t.app, project, { fingerprint: 'f'.repeat(40) });
    const url = `/projects/${project.id}/alert_management_alerts/${old.iid}`;
    let r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { status: 'triggered' } });
    assert.deepEqual([r.status, r.body], [400, { message: 'Cannot have multiple unresolved alerts' }]);
    r = await call(t.app, 'GET', url, { token: roles.developer.token });
    assert.equal(r.body.status, 'resolved');
    assert.deepEqual(await notesOf(old.id), []);
  });

  test('create_issue: an incident issue linked to the alert, once', async () => {
    const alert = await makeAlert(t.app, project, { title: 'Needs an issue', severity: 'high', description: 'details here', service: 'checkout' });
    const url = `/projects/${project.id}/alert_management_alerts/${alert.iid}/create_issue`;
    let r = await call(t.app, 'POST', url, { token: roles.developer.token });
    assert.equal(r.status, 201, r.text);
    const issue = await t.app.db.selectFrom('issues').selectAll().where('project_id', '=', project.id).where('iid', '=', r.body.issue_iid).executeTakeFirstOrThrow();
    assert.deepEqual([issue.title, issue.issue_type, issue.author_id], ['Needs an issue', 'incident', roles.developer.user.id]);
    assert.equal(issue.description, '**Start time:** 2026-06-01T12:00:00.000Z\n**Severity:** high\n**Service:** checkout\n\ndetails here');
    assert.deepEqual(await notesOf(alert.id), [`created issue #${issue.iid}`]);
    const issuesBefore = (await t.app.db.selectFrom('issues').select('id').where('project_id', '=', project.id).execute()).length;
    r = await call(t.app, 'POST', url, { token: roles.developer.token });
    assert.deepEqual([r.status, r.body], [422, { message: 'An issue already exists' }]);
    assert.equal((await t.app.db.selectFrom('issues').select('id').where('project_id', '=', project.id).execute()).length, issuesBefore);
  });

  test('Developer and up read and act (the reference\'s Developer block)', async () => {
    const alert = await makeAlert(t.app, project, { title: 'Roles' });
    const priv = await makeProject(t.app, { visibility: 0 });
    const privRoles = await castRoles(t.app, priv);
    const privAlert = await makeAlert(t.app, priv);
    const read: Array<[keyof RoleCast, number, number]> = [
      ['anonymous', 403, 404], ['nonMember', 403, 404], ['guest', 403, 403], ['reporter', 403, 403],
      ['developer', 200, 200], ['maintainer', 200, 200], ['owner', 200, 200], ['admin', 200, 200],
    ];
    for (const [role, pub, prv] of read) {
      assert.equal((await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts`, { token: roles[role]?.token })).status, pub, `${role} list`);
      assert.equal((await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts/${alert.iid}`, { token: roles[role]?.token })).status, pub, `${role} get`);
      assert.equal((await call(t.app, 'GET', `/projects/${priv.id}/alert_management_alerts/${privAlert.iid}`, { token: privRoles[role]?.token })).status, prv, `${role} private`);
      const put = await call(t.app, 'PUT', `/projects/${project.id}/alert_management_alerts/${alert.iid}`, { token: roles[role]?.token, body: { status: 'ignored' } });
      assert.equal(put.status, role === 'anonymous' ? 401 : pub, `${role} put`);
    }
    assert.equal((await alertsOf(project.id)).find((a) => a.id === alert.id)!.status, 'ignored');
  });
});

test('concurrent notifications with one fingerprint make one alert', async () => {
  const project = await makeProject(t.app, { visibility: 0 });
  const owner = await quickUser(t.app, { admin: true });
  const hook = await integration(owner.token, project.id);
  const results = await Promise.all(Array.from({ length: 8 }, () => notify(hook.url, { title: 'Storm', fingerprint: 'same' }, hook.token)));
  assert.ok(results.every((r) => r.status === 200));
  const rows = await alertsOf(project.id);
  assert.deepEqual(rows.map((a) => [a.iid, a.events]), [[1, 8]]);
});
