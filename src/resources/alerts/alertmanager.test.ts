import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject } from '../../../test/support/fixtures.ts';

// A real Prometheus Alertmanager (Debian package prometheus-alertmanager) on loopback, with a webhook receiver
// pointing at Bellows and the integration's token as its bearer credential: an alert fired through its API
// (POST /api/v2/alerts) arrives as a Bellows alert, and its resolution resolves it.

const binary = ['prometheus-alertmanager', 'alertmanager'].find((b) => spawnSync(b, ['--version'], { stdio: 'ignore' }).status === 0);
const skip = binary ? false : 'prometheus-alertmanager is not installed (apt-get install -y prometheus-alertmanager)';

let t: TestApp;
let am: ChildProcess | null = null;
let amUrl = '';
let dir = '';
let amLog = '';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\nalertmanager log:\n${amLog.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

before(async () => {
  if (!binary) return;
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'bellows-am-'));
});
after(async () => {
  if (am && am.exitCode === null) {
    am.kill('SIGTERM');
    await new Promise((r) => am!.once('exit', r));
  }
  if (t) await t.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('Prometheus Alertmanager fires and resolves an alert through its webhook', { skip, timeout: 90_000 }, async () => {
  const port = (t.app.server.address() as AddressInfo).port;
  const project = await makeProject(t.app, { visibility: 0 });
  const roles = await castRoles(t.app, project);
  const made = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, {
    token: roles.maintainer.token, body: { name: 'Alertmanager', type: 'prometheus' },
  });
  assert.equal(made.status, 201);
  const webhook = made.body.url.replace('http://bellows.test', `http://127.0.0.1:${port}`);

  const amPort = await freePort();
  amUrl = `http://127.0.0.1:${amPort}`;
  writeFileSync(join(dir, 'alertmanager.yml'), [
    'route:',
    '  receiver: bellows',
    "  group_by: ['alertname']",
    '  group_wait: 1s',
    '  group_interval: 1s',
    '  repeat_interval: 1h',
    'receivers:',
    '  - name: bellows',
    '    webhook_configs:',
    `      - url: '${webhook}'`,
    '        send_resolved: true',
    '        http_config:',
    '          authorization:',
    '            type: Bearer',
    `            credentials: '${made.body.token}'`,
    '',
  ].join('\n'));
  am = spawn(binary!, [
    `--config.file=${join(dir, 'alertmanager.yml')}`, `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address=', '--log.level=debug',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  am.stdout!.on('data', (d) => { amLog += d; });
  am.stderr!.on('data', (d) => { amLog += d; });
  await until('Alertmanager to be ready', async () => (await fetch(`${amUrl}/-/ready`)).ok);

  const startsAt = new Date(Date.now() - 60_000).toISOString();
  const alert = {
    labels: { alertname: 'HighLatency', severity: 'critical', job: 'web', instance: 'web-1:9100' },
    annotations: { summary: 'High request latency', description: 'p99 latency above 2s for 5 minutes' },
    startsAt, generatorURL: 'http://prometheus.example.com/graph',
  };
  const fire = await fetch(`${amUrl}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([alert]) });
  assert.equal(fire.status, 200, await fire.text());

  const rowOf = () => t.app.db.selectFrom('alert_management_alerts').selectAll().where('project_id', '=', project.id).executeTakeFirst();
  const opened = await until('the alert to arrive in Bellows', rowOf);
  assert.deepEqual([opened.iid, opened.title, opened.description, opened.severity, opened.status, opened.monitoring_tool, opened.service, opened.hosts],
    [1, 'High request latency', 'p99 latency above 2s for 5 minutes', 'critical', 'triggered', 'Prometheus', 'web', '["web-1:9100"]']);
  assert.equal(opened.started_at, Date.parse(startsAt));
  const listed = await call(t.app, 'GET', `/projects/${project.id}/alert_management_alerts`, { token: roles.developer.token });
  assert.deepEqual(listed.body.map((a: any) => [a.iid, a.status, a.title]), [[1, 'triggered', 'High request latency']]);

  // Resolved: the same alert with an end time in the past.
  const resolve = await fetch(`${amUrl}/api/v2/alerts`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ ...alert, endsAt: new Date(Date.now() - 1000).toISOString() }]),
  });
  assert.equal(resolve.status, 200);
  const resolved = await until('the alert to be resolved', async () => ((await rowOf())?.status === 'resolved' ? rowOf() : null));
  assert.equal(resolved.id, opened.id);
  assert.ok(resolved.ended_at !== null);
  const all = await t.app.db.selectFrom('alert_management_alerts').select('id').where('project_id', '=', project.id).execute();
  assert.equal(all.length, 1, 'the recovery resolved the alert instead of opening another');
  const notes = await t.app.db.selectFrom('notes').select('body').where('noteable_type', '=', 'AlertManagement::Alert').where('noteable_id', '=', opened.id).orderBy('id').execute();
  assert.deepEqual(notes.map((n) => n.body), [
    'logged an alert from **Prometheus**', 'logged a recovery alert from **Prometheus**', 'changed the status to **Resolved** by recovery alert notification',
  ]);
});

test('the Prometheus endpoint over real HTTP refuses a wrong token and stores nothing', { skip, timeout: 60_000 }, async () => {
  const port = (t.app.server.address() as AddressInfo).port;
  const project = await makeProject(t.app, { visibility: 0 });
  const roles = await castRoles(t.app, project);
  const made = await call(t.app, 'POST', `/projects/${project.id}/alert_management/http_integrations`, {
    token: roles.maintainer.token, body: { name: 'Alertmanager', type: 'prometheus' },
  });
  // Bellows answers Alertmanager's own request shape with 401 for a wrong token; a real request proves it end to end.
  const res = await fetch(made.body.url.replace('http://bellows.test', `http://127.0.0.1:${port}`), {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' },
    body: JSON.stringify({ version: '4', status: 'firing', alerts: [{ status: 'firing', labels: { alertname: 'X' }, annotations: {}, startsAt: new Date().toISOString() }] }),
  });
  assert.equal(res.status, 401);
  assert.deepEqual(await res.json(), { message: '401 Unauthorized' });
  assert.equal((await t.app.db.selectFrom('alert_management_alerts').select('id').where('project_id', '=', project.id).execute()).length, 0);
});
