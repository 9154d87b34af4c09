import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeProject, quickUser } from '../support/fixtures.ts';
import { scratch, startServer } from './processes.ts';

// GET /-/metrics: Prometheus text, answered to the monitoring allowlist only (like the probes), counting requests
// by route and status with latency, job runs and the queue's depth, git operations and the database pool; with
// two workers, the sum over both.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const scrape = async () => {
  const r = await t.app.inject({ method: 'GET', url: '/-/metrics', remoteAddress: '127.0.0.1' });
  assert.equal(r.statusCode, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return r.body;
};
/** The value of one sample line, e.g. `bellows_http_requests_total{method="GET",...}`; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const got = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v) && Object.keys(got).length === Object.keys(labels).length) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

test('refused outside the monitoring allowlist (empty 404), like the probes', async () => {
  const r = await t.app.inject({ method: 'GET', url: '/-/metrics', remoteAddress: '203.0.113.7' });
  assert.deepEqual([r.statusCode, r.body], [404, '']);
});

test('requests by route pattern and status, with a latency histogram', async () => {
  const user = await quickUser(t.app);
  const project = await makeProject(t.app, { visibility: 20 });
  const route = '/api/v4/projects/:id';
  const before = await scrape();
  const n0 = sample(before, 'bellows_http_requests_total', { method: 'GET', route, status: '200' });
  const m0 = sample(before, 'bellows_http_requests_total', { method: 'GET', route, status: '404' });
  for (let i = 0; i < 3; i++) assert.equal((await call(t.app, 'GET', `/projects/${project.id}`, { token: user.token })).status, 200);
  assert.equal((await call(t.app, 'GET', '/projects/999999', { token: user.token })).status, 404);
  await call(t.app, 'GET', '/no/such/path/at/all');
  // HEAD is routed through the GET route, but counted as what it was.
  const h0 = sample(before, 'bellows_http_requests_total', { method: 'HEAD', route, status: '200' });
  assert.equal((await call(t.app, 'HEAD', `/projects/${project.id}`, { token: user.token })).status, 200);
  const text = await scrape();
  assert.equal(sample(text, 'bellows_http_requests_total', { method: 'HEAD', route, status: '200' }), h0 + 1);
  assert.equal(sample(text, 'bellows_http_requests_total', { method: 'GET', route, status: '200' }), n0 + 3);
  assert.equal(sample(text, 'bellows_http_requests_total', { method: 'GET', route, status: '404' }), m0 + 1);
  assert.equal(sample(text, 'bellows_http_request_duration_seconds_count', { method: 'GET', route, status: '200' }), n0 + 3);
  assert.equal(sample(text, 'bellows_http_request_duration_seconds_bucket', { method: 'GET', route, status: '200', le: '+Inf' }), n0 + 3);
  assert.ok(sample(text, 'bellows_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
  assert.ok(!text.includes('/no/such/path'), 'unmatched URLs are not labels');
});

test('job queue depth by kind and state, runs by kind and outcome', async () => {
  t.app.jobs.define('metrics_ok', { run: async () => {} });
  t.app.jobs.define('metrics_fail', { maxAttempts: 1, run: async () => { throw new Error('no'); } });
  for (let i = 0; i < 3; i++) await t.app.jobs.enqueue(t.app.db, 'metrics_ok', {});
  await t.app.jobs.enqueue(t.app.db, 'metrics_fail', {});
  let text = await scrape();
  assert.equal(sample(text, 'bellows_jobs', { kind: 'metrics_ok', state: 'queued' }), 3);
  assert.equal(sample(text, 'bellows_jobs', { kind: 'metrics_fail', state: 'queued' }), 1);
  await t.app.jobs.drain();
  text = await scrape();
  assert.equal(sample(text, 'bellows_jobs', { kind: 'metrics_ok', state: 'queued' }), 0);
  assert.equal(sample(text, 'bellows_jobs', { kind: 'metrics_fail', state: 'dead' }), 1);
  assert.equal(sample(text, 'bellows_job_runs_total', { kind: 'metrics_ok', outcome: 'succeeded' }), 3);
  assert.equal(sample(text, 'bellows_job_runs_total', { kind: 'metrics_fail', outcome: 'dead' }), 1);
  assert.equal(sample(text, 'bellows_job_run_duration_seconds_count', { kind: 'metrics_ok' }), 3);
});

test('git operations by subcommand, the database pool, the process', async () => {
  const admin = await quickUser(t.app, { admin: true });
  const before = sample(await scrape(), 'bellows_git_operations_total', { command: 'init', result: 'ok' });
  assert.equal((await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'metrics-git' } })).status, 201);
  const text = await scrape();
  assert.equal(sample(text, 'bellows_git_operations_total', { command: 'init', result: 'ok' }), before + 1);
  assert.ok(sample(text, 'bellows_git_operation_duration_seconds_count', { command: 'init' }) >= 1);
  const pg = !!process.env.DATABASE_URL;
  assert.equal(sample(text, 'bellows_db_pool_connections', { state: 'max' }), pg ? 10 : 1);
  assert.ok(sample(text, 'bellows_db_pool_connections', { state: 'total' }) >= 1);
  // Requests waiting for a connection: present, a count (the scrape's own queries may be waiting at that moment).
  assert.match(text, /^bellows_db_pool_connections\{state="waiting"\} \d+$/m);
  assert.match(text, /^bellows_process_cpu_user_seconds_total [\d.]+$/m);
});

function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    }).on('error', reject);
  });
}

test('two workers: one scrape answers the sum over both', async () => {
  const sc = await scratch();
  const server = await startServer({ ...sc.env, BELLOWS_WORKERS: '2' });
  try {
    for (let i = 0; i < 10; i++) assert.equal((await get(`${server.url}/-/liveness`)).status, 200);
    // Every scrape, whichever worker answers, counts the ten (and the readiness polls of the start) once.
    for (let i = 0; i < 3; i++) {
      const m = await get(`${server.url}/-/metrics`);
      assert.equal(m.status, 200);
      assert.equal(sample(m.text, 'bellows_http_requests_total', { method: 'GET', route: '/-/liveness', status: '200' }), 10);
    }
  } finally {
    await server.stop();
    await sc.cleanup();
  }
});
