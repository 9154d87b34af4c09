import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';

// Probes, request ids, structured logs and the OpenAPI document.

let t: TestApp;
let lines: Array<Record<string, unknown>> = [];
before(async () => {
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  t = await buildTestApp({ logger: { level: 'info', stream } });
});
after(async () => { await t.close(); });

describe('health probes', () => {
  test('/-/health answers plain text without touching the database', async () => {
    const r = await call(t.app, 'GET', '/-/health');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'Bellows OK');
    assert.match(String(r.headers['content-type']), /^text\/plain/);
  });

  test('/-/liveness and /-/readiness in the reference shapes', async () => {
    const live = await call(t.app, 'GET', '/-/liveness');
    assert.deepEqual([live.status, live.body], [200, { status: 'ok' }]);
    const ready = await call(t.app, 'GET', '/-/readiness');
    assert.deepEqual([ready.status, ready.body], [200, { status: 'ok', master_check: [{ status: 'ok' }] }]);
    const all = await call(t.app, 'GET', '/-/readiness?all=1');
    assert.deepEqual(all.body, { status: 'ok', master_check: [{ status: 'ok' }], db_check: [{ status: 'ok' }] });
  });

  test('probes answer an empty 404 to addresses outside the monitoring allowlist', async () => {
    for (const url of ['/-/health', '/-/liveness', '/-/readiness']) {
      const r = await t.app.inject({ method: 'GET', url, remoteAddress: '203.0.113.7' });
      assert.equal(r.statusCode, 404, url);
      assert.equal(r.body, '');
    }
    const v6 = await t.app.inject({ method: 'GET', url: '/-/health', remoteAddress: '::1' });
    assert.equal(v6.statusCode, 200);
  });

  test('readiness answers 503 when the database is gone', async () => {
    const down = await buildTestApp();
    try {
      await down.app.database.close();
      const r = await call(down.app, 'GET', '/-/readiness');
      assert.equal(r.status, 503);
      assert.equal(r.body.status, 'failed');
      assert.equal(r.body.master_check.length, 1);
      assert.equal(r.body.master_check[0].status, 'failed');
      assert.equal(typeof r.body.master_check[0].message, 'string');
      assert.deepEqual((await call(down.app, 'GET', '/-/liveness')).body, { status: 'ok' });
    } finally {
      await down.close();
    }
  });
});

describe('request ids and logs', () => {
  test('X-Request-Id is echoed when sane and generated otherwise', async () => {
    const given = await call(t.app, 'GET', '/-/liveness', { headers: { 'x-request-id': 'abc-123.XYZ_9' } });
    assert.equal(given.headers['x-request-id'], 'abc-123.XYZ_9');
    const generated = await call(t.app, 'GET', '/api/v4/nothing');
    assert.match(String(generated.headers['x-request-id']), /^[0-9A-F]{26}$/);
    const hostile = await call(t.app, 'GET', '/-/liveness', { headers: { 'x-request-id': 'bad id\u00e9<script>' } });
    assert.match(String(hostile.headers['x-request-id']), /^[0-9A-F]{26}$/);
    const other = await call(t.app, 'GET', '/-/liveness');
    assert.notEqual(other.headers['x-request-id'], generated.headers['x-request-id']);
  });

  test('one JSON log line per request carries the request id, the route and the user, never the query string', async () => {
    const u = await makeUser(t.app);
    lines = [];
    const r = await call(t.app, 'GET', `/users/${u.user.id}?private_token=${u.token}`, { headers: { 'x-request-id': 'req-log-1' } });
    assert.equal(r.status, 200);
    const line = lines.find((l) => l.request_id === 'req-log-1');
    assert.ok(line, 'a line with the request id');
    assert.equal(line.msg, 'request completed');
    assert.equal(line.path, `/api/v4/users/${u.user.id}`);
    assert.equal(line.route, '/api/v4/users/:id');
    assert.equal(line.status, 200);
    assert.equal(line.user_id, u.user.id);
    assert.equal(line.username, u.user.username);
    assert.equal(line.token_type, 'personal');
    assert.equal(typeof line.duration_s, 'number');
    assert.ok(!JSON.stringify(lines).includes(u.token), 'the token is not logged');
  });

  test('a 500 is logged with its error under the same request id', async () => {
    const down = await buildTestApp({ logger: { level: 'info', stream: new Writable({ write(c, _e, d) { for (const l of String(c).split('\n').filter(Boolean)) lines.push(JSON.parse(l)); d(); } }) } });
    try {
      const u = await makeUser(down.app);
      await down.app.database.close();
      lines = [];
      const r = await call(down.app, 'GET', '/user', { token: u.token, headers: { 'x-request-id': 'req-500' } });
      assert.equal(r.status, 500);
      const err = lines.find((l) => l.request_id === 'req-500' && l.level === 50);
      assert.ok(err, 'an error line');
      assert.equal(err.msg, 'request failed');
      assert.ok(err.err, 'with the error');
      assert.ok(!r.text.includes('destroyed') && !r.text.includes('stack'));
    } finally {
      await down.close();
    }
  });
});

describe('OpenAPI document', () => {
  test('/api/v4/openapi.json is a valid OpenAPI 3 document listing the routes', async () => {
    const r = await call(t.app, 'GET', '/api/v4/openapi.json');
    assert.equal(r.status, 200);
    const doc = r.body;
    assert.match(doc.openapi, /^3\./);
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
    const paths = Object.keys(doc.paths);
    for (const p of ['/api/v4/user', '/api/v4/users', '/api/v4/users/{id}', '/api/v4/users/{id}/block', '/api/v4/personal_access_tokens/self', '/api/v4/users/{user_id}/impersonation_tokens/{id}']) {
      assert.ok(paths.includes(p), `${p} is listed`);
    }
    assert.ok(!paths.some((p) => p.startsWith('/-/') || p.endsWith('openapi.json')), 'probes and the document itself are hidden');
    // GET routes answer HEAD too; the document describes their GET alone.
    assert.deepEqual(paths.filter((p) => 'head' in doc.paths[p]), []);
    const list = doc.paths['/api/v4/users'].get;
    assert.equal(list.summary, 'List users');
    const names = list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    for (const n of ['query:username', 'query:search', 'query:active', 'query:blocked', 'query:page', 'query:per_page']) assert.ok(names.includes(n), n);
    const create = doc.paths['/api/v4/users'].post;
    assert.ok(create.requestBody, 'POST parameters are a request body');
    const one = doc.paths['/api/v4/users/{id}'].get;
    assert.deepEqual(one.parameters.filter((p: { in: string }) => p.in === 'path').map((p: { name: string; required: boolean }) => [p.name, p.required]), [['id', true]]);
  });
});
