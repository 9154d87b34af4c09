import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import { installErrorHandler }  from '../../src/http/errors.ts';
import { contentDisposition } from '../../src/http/content-disposition.ts';
import { makeProject } from '../../src/resources/repository/testing.ts';

// Whatever fails, the framework included, the client reads a v4 error body, never the framework's own.

let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

const FRAMEWORK_KEYS = ['statusCode', 'code'];
function assertV4(body: unknown, what: string) {
  assert.ok(body && typeof body === 'object', `${what}: a JSON object`);
  const keys = Object.keys(body as object);
  assert.ok(keys.includes('message') || keys.includes('error'), `${what}: ${JSON.stringify(body)}`);
  for (const k of FRAMEWORK_KEYS) assert.ok(!keys.includes(k), `${what}: no framework field ${k}: ${JSON.stringify(body)}`);
}

test('a body over the limit answers 413 in v4 words', async () => {
  // The declared length is enough for the refusal; the body is never read.
  const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': 'application/json', 'content-length': String(11 * 1024 * 1024) }, payload: '{}' });
  assert.deepEqual([r.statusCode, JSON.parse(r.body)], [413, { message: '413 Request Entity Too Large' }]);
});

test('a body shorter than its Content-Length answers 400', async () => {
  const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': 'application/json', 'content-length': '50' }, payload: '{}' });
  assert.equal(r.statusCode, 400);
  assertV4(JSON.parse(r.body), 'content-length');
});

test('an unsupported media type and malformed JSON (also in a form or with a charset) answer v4 bodies', async () => {
  for (const [type, payload, status] of [['application/xml', '<a/>', 415], ['application/json; charset=utf-8', '{', 400], ['application/json', '[1,', 400], ['text/html', 'x', 415]] as const) {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': type }, payload });
    assert.equal(r.statusCode, status, type);
    assertV4(JSON.parse(r.body), type);
  }
});

test('a path segment over the router limit answers 414, broken percent-encoding 400', async () => {
  // Room for the longest project path (21 segments of 255 characters, URL-encoded as one); past that, 414.
  let r = await call(t.app, 'GET', `/projects/${Array.from({ length: 21 }, () => 'a'.repeat(255)).join('%2F')}`, { token: admin.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
  r = await call(t.app, 'GET', `/projects/${'a'.repeat(9000)}`, { token: admin.token });
  assert.deepEqual([r.status, r.body], [414, { message: '414 Request-URI Too Large' }]);
  r = await call(t.app, 'GET', '/projects/%E0%A4%A/repository/tree', { token: admin.token });
  assert.deepEqual([r.status, r.body], [400, { error: '400 Bad Request' }]);
});

test('a header value Node refuses fails into a v4 500, not the framework body; the handler headers go', async () => {
  const app = Fastify();
  installErrorHandler(app);
  app.get('/bad', async (_req, reply) => {
    reply.header('content-disposition', 'inline; filename="☃.txt"').header('x-kept', 'yes');
    return reply.send(Buffer.from('x'));
  });
  const r = await app.inject({ url: '/bad' });
  assert.deepEqual([r.statusCode, JSON.parse(r.body)], [500, { message: '500 Internal Server Error' }]);
  assert.equal(r.headers['content-disposition'], undefined);
  assert.equal(r.headers['x-kept'], 'yes');
  await app.close();
});

test('a plugin refusal with its own status keeps the status, in v4 words', async () => {
  const app = Fastify();
  installErrorHandler(app);
  app.get('/limit', async () => { throw Object.assign(new Error('reach files limit'), { code: 'FST_FILES_LIMIT', statusCode: 413 }); });
  app.get('/accept', async () => { throw Object.assign(new Error('not acceptable'), { statusCode: 406 }); });
  app.get('/boom', async () => { throw new TypeError('x is undefined'); });
  let r = await app.inject({ url: '/limit' });
  assert.deepEqual([r.statusCode, JSON.parse(r.body)], [413, { message: '413 Request Entity Too Large' }]);
  r = await app.inject({ url: '/accept' });
  assert.deepEqual([r.statusCode, JSON.parse(r.body)], [406, { message: '406 Not Acceptable' }]);
  r = await app.inject({ url: '/boom' });
  assert.deepEqual([r.statusCode, JSON.parse(r.body)], [500, { message: '500 Internal Server Error' }]);
  await app.close();
});

async function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(request));
    let out = '';
    s.on('data', (d) => { out += d.toString(); });
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

test('requests Node refuses before routing (malformed, headers too large) answer v4 bodies', async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as { port: number }).port;
  let out = await rawExchange(port, 'GET /api/v4/version HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
  assert.match(out, /^HTTP\/1.1 400 Bad Request\r\n/);
  assert.deepEqual(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)), { error: '400 Bad Request' });
  out = await rawExchange(port, `GET /api/v4/version HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
  assert.match(out, /^HTTP\/1.1 431 /);
  assert.deepEqual(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)), { message: '431 Request Header Fields Too Large' });
});

test('Content-Disposition: an ASCII fallback and the UTF-8 name percent-encoded (RFC 6266, RFC 5987)', () => {
  assert.equal(contentDisposition('README.md'), `inline; filename="README.md"; filename*=UTF-8''README.md`);
  assert.equal(contentDisposition('☃.txt'), `inline; filename="_.txt"; filename*=UTF-8''%E2%98%83.txt`);
  assert.equal(contentDisposition('a "b"\\c d.txt', 'attachment'), `attachment; filename="a _b__c d.txt"; filename*=UTF-8''a%20%22b%22%5Cc%20d.txt`);
  assert.equal(contentDisposition('x\r\ny'), `inline; filename="x__y"; filename*=UTF-8''x%0D%0Ay`);
  assert.equal(contentDisposition('\ud800'), `inline; filename="_"; filename*=UTF-8''%EF%BF%BD`);
});

test('a raw download of a file with a non-ASCII name carries both names', async () => {
  const p = await makeProject(t.app, admin.user);
  const files = (path: string) => `/projects/${p.id}/repository/files/${encodeURIComponent(path)}`;
  const c = await call(t.app, 'POST', files('dir/☃ snow.txt'), { token: admin.token, body: { branch: 'main', content: 'cold', commit_message: 'add' } });
  assert.equal(c.status, 201, c.text);
  const r = await t.app.inject({ url: `/api/v4${files('dir/☃ snow.txt')}/raw?ref=main`, headers: { 'private-token': admin.token } });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.body, 'cold');
  assert.equal(r.headers['content-disposition'], `inline; filename="_ snow.txt"; filename*=UTF-8''%E2%98%83%20snow.txt`);
});
