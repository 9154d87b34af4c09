import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { installHeadAnswers } from '../../src/http/plumbing.ts';
import { makeProject, makeToken, makeUser, type TestUser } from '../support/fixtures.ts';
import type { ManualClock } from '../../src/platform/clock.ts';

// Every error rule of the v4 conventions, each with its exact status, body and headers.

let t: TestApp;
let admin: TestUser;
let bob: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'admin1', admin: true });
  bob = await makeUser(t.app, { username: 'bob' });
});
after(async () => { await t.close(); });

describe('routing', () => {
  test('an unknown route answers 404 {"error":"404 Not Found"} for any method', async () => {
    for (const [method, url] of [['GET', '/api/v4/nothing'], ['POST', '/api/v4/users/1/nothing'], ['DELETE', '/nowhere'], ['GET', '/api/v4/users/1/2']]) {
      const r = await call(t.app, method, url, { token: admin.token });
      assert.equal(r.status, 404, `${method} ${url}`);
      assert.deepEqual(r.body, { error: '404 Not Found' });
      assert.equal(r.headers['content-type'], 'application/json', 'exactly, as clients compare it');
    }
    const ok = await call(t.app, 'GET', '/user', { token: bob.token });
    assert.equal(ok.headers['content-type'], 'application/json');
  });

  test('a known path with another method answers 405 with Allow', async () => {
    let r = await call(t.app, 'POST', '/user', { token: admin.token });
    assert.equal(r.status, 405);
    assert.deepEqual(r.body, { error: '405 Not Allowed' });
    assert.equal(r.headers.allow, 'OPTIONS, GET, HEAD');
    r = await call(t.app, 'PATCH', `/users/${bob.user.id}`, { token: admin.token });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, 'OPTIONS, GET, HEAD, PUT, DELETE');
  });

  test('OPTIONS on a known path answers 204 with Allow and no body', async () => {
    const r = await call(t.app, 'OPTIONS', '/users');
    assert.equal(r.status, 204);
    assert.equal(r.headers.allow, 'OPTIONS, GET, HEAD, POST');
    assert.equal(r.text, '');
    const unknown = await call(t.app, 'OPTIONS', '/nothing');
    assert.equal(unknown.status, 404);
  });

  test('CORS: API answers are readable from any origin, and a preflight is answered', async () => {
    const r = await call(t.app, 'GET', '/user', { token: bob.token, headers: { origin: 'https://app.example' } });
    assert.equal(r.headers['access-control-allow-origin'], '*');
    assert.match(String(r.headers['access-control-expose-headers']), /Link, X-Total, X-Total-Pages/);
    const pre = await call(t.app, 'OPTIONS', '/users', { headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'private-token' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(String(pre.headers['access-control-allow-headers']), /PRIVATE-TOKEN/);
    assert.equal(pre.headers['access-control-allow-credentials'], undefined, 'never with cookies');
  });

  test('repeated and trailing slashes are routed as if single', async () => {
    const r = await call(t.app, 'GET', `/api/v4//users//${bob.user.id}/`, { token: admin.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.username, 'bob');
  });

  test('HEAD works on GET routes and API answers carry the security headers', async () => {
    const r = await call(t.app, 'HEAD', '/user', { token: bob.token });
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
    assert.equal(r.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
  });

  test('HEAD on a GET route answers the GET answer\'s status and headers, its length and tag included, without the body', async () => {
    const perRequest = new Set(['date', 'x-request-id']);
    const headersOf = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => !perRequest.has(k)));
    const one = await makeProject(t.app, { owner: admin.user, path: 'head-one' });
    await makeProject(t.app, { owner: admin.user, path: 'head-two' });
    for (const [url, query] of [[`/projects/${one.id}`, undefined], ['/projects', { per_page: '1', order_by: 'id', sort: 'asc' }], ['/projects/999999', undefined]] as const) {
      const get = await call(t.app, 'GET', url, { token: admin.token, query });
      const head = await call(t.app, 'HEAD', url, { token: admin.token, query });
      assert.equal(head.status, get.status, url);
      assert.equal(head.text, '', url);
      assert.ok(get.text.length > 0, url);
      assert.deepEqual(headersOf(head.headers), headersOf(get.headers), url);
      assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.text)), url);
    }
    const list = await call(t.app, 'HEAD', '/projects', { token: admin.token, query: { per_page: '1' } });
    assert.equal(list.headers['x-total'], '2');
    assert.equal(list.headers['x-next-page'], '2');
    assert.match(String(list.headers.etag), /^W\//);
    const same = await call(t.app, 'HEAD', `/projects/${one.id}`, { token: admin.token, headers: { 'if-none-match': String((await call(t.app, 'GET', `/projects/${one.id}`, { token: admin.token })).headers.etag) } });
    assert.equal(same.status, 304);
    assert.equal(same.text, '');
  });

  test('HEAD is answered by the GET route: a route declaring HEAD itself is refused as it is added', async () => {
    const app = Fastify({ exposeHeadRoutes: false });
    installHeadAnswers(app);
    assert.throws(() => app.route({ method: 'HEAD', url: '/x', handler: async () => '' }), /HEAD is answered by the GET route/);
    assert.throws(() => app.route({ method: ['GET', 'HEAD'], url: '/y', handler: async () => '' }), /declare GET only/);
    await app.close();
  });
});

describe('parameters', () => {
  test('a missing required parameter names the first one in declaration order (spec rule 2)', async () => {
    let r = await call(t.app, 'POST', '/users', { token: admin.token, body: {} });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: '400 (Bad request) "email" not given' });
    r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'x@example.com', password: 'password123' } });
    assert.deepEqual(r.body, { message: '400 (Bad request) "name" not given' });
    r = await call(t.app, 'POST', '/users', { token: admin.token, form: { email: 'x@example.com', name: 'X', password: 'password123' } });
    assert.deepEqual(r.body, { message: '400 (Bad request) "username" not given' });
    assert.equal((await t.app.db.selectFrom('users').select('id').where('email', '=', 'x@example.com').execute()).length, 0);
  });

  test('a validation failure lists every property with its texts (spec rule 3)', async () => {
    const r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'not-an-email', name: 'X', username: '-bad', password: 'short' } });
    assert.equal(r.status, 400);
    assert.equal(r.text, JSON.stringify({
      message: {
        username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"],
        email: ['is invalid'],
        password: ['is too short (minimum is 8 characters)'],
      },
    }));
  });

  test('a rule over several parameters uses the reference wording under "error"', async () => {
    const r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'y@example.com', name: 'Y', username: 'yy' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'password, reset_password, force_random_password are missing, at least one parameter must be provided' });
  });

  test('type errors: "is invalid", "has a value not allowed", "does not have a valid value", all problems at once', async () => {
    const cases: Array<[string, string]> = [
      ['per_page=abc', 'per_page is invalid'],
      ['per_page=0', 'per_page has a value not allowed'],
      ['page=1.5', 'page is invalid'],
      ['page=abc&per_page=abc', 'page is invalid, per_page is invalid'],
      ['sort=sideways', 'sort does not have a valid value'],
      ['order_by=size&per_page=x', 'order_by does not have a valid value, per_page is invalid'],
      ['created_after=yesterday', 'created_after is invalid'],
      ['username[]=a', 'username is invalid'],
    ];
    for (const [query, error] of cases) {
      const r = await call(t.app, 'GET', `/users?${query}`, { token: admin.token });
      assert.equal(r.status, 400, query);
      assert.deepEqual(r.body, { error }, query);
    }
    const r = await call(t.app, 'GET', '/users/abc', { token: admin.token });
    assert.deepEqual([r.status, r.body], [400, { error: 'id is invalid' }]);
  });

  test('booleans accept only true and false, from the query string and from JSON', async () => {
    for (const v of ['1', '0', 'yes', 't', 'on', 'truee']) {
      const r = await call(t.app, 'GET', `/users?active=${v}`, { token: admin.token });
      assert.deepEqual([r.status, r.body], [400, { error: 'active is invalid' }], v);
    }
    for (const v of [1, 0, 'yes']) {
      const r = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, body: { admin: v } });
      assert.deepEqual([r.status, r.body], [400, { error: 'admin is invalid' }], String(v));
    }
    const after = await t.app.db.selectFrom('users').select('admin').where('id', '=', bob.user.id).executeTakeFirstOrThrow();
    assert.equal(after.admin, 0);
    assert.equal((await call(t.app, 'GET', '/users?active=true', { token: admin.token })).status, 200);
    assert.equal((await call(t.app, 'GET', '/users?active=false', { token: admin.token })).status, 200);
    // Compared case-insensitively: python-gitlab sends Python's True and False.
    for (const v of ['TRUE', 'True', 'False']) assert.equal((await call(t.app, 'GET', `/users?active=${v}`, { token: admin.token })).status, 200, v);
    const form = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, form: { private_profile: 'false' } });
    assert.equal(form.status, 200);
    assert.equal(form.body.private_profile, false);
  });

  test('an empty value for a non-string parameter counts as not given', async () => {
    const r = await call(t.app, 'GET', '/users?per_page=&page=&active=', { token: admin.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-per-page'], '20');
  });

  test('malformed JSON answers 400 with the reference text', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': 'application/json' }, payload: '{"email":' });
    assert.equal(r.statusCode, 400);
    assert.deepEqual(JSON.parse(r.body), { error: "\nProblem:\n  message body does not match declared format\nResolution:\n  when specifying application/json as content-type, you must pass valid application/json in the request's 'body' " });
  });

  test('an unsupported content type answers 415', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': 'image/png' }, payload: Buffer.from([137, 80, 78, 71]) });
    assert.equal(r.statusCode, 415);
    assert.deepEqual(JSON.parse(r.body), { error: "The provided content-type 'image/png' is not supported." });
  });

  test('an empty JSON body on DELETE and on a bodiless POST means no parameters', async () => {
    const victim = await makeUser(t.app);
    let r = await t.app.inject({ method: 'POST', url: `/api/v4/users/${victim.user.id}/block`, headers: { 'private-token': admin.token, 'content-type': 'application/json' }, payload: '' });
    assert.equal(r.statusCode, 201);
    assert.equal(r.body, 'true');
    r = await t.app.inject({ method: 'DELETE', url: `/api/v4/users/${victim.user.id}`, headers: { 'private-token': admin.token, 'content-type': 'application/json' } });
    assert.equal(r.statusCode, 204);
    assert.equal(await t.app.db.selectFrom('users').select('id').where('id', '=', victim.user.id).executeTakeFirst(), undefined);
  });

  test('parameters from query, JSON body and path merge: body over query, path over both', async () => {
    const r = await call(t.app, 'PUT', `/users/${bob.user.id}?bio=from-query&id=999`, { token: admin.token, body: { bio: 'from-body', id: 12345 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, bob.user.id);
    assert.equal(r.body.bio, 'from-body');
  });
});

describe('hostile input is a 4xx, never a 500', () => {
  test('broken encoding, NUL characters, integers beyond 32 bits, hashes for scalars', async () => {
    const cases: Array<[string, number, unknown]> = [
      ['/api/v4/users/%E0%A4%A', 400, { error: '400 Bad Request' }],
      ['/api/v4/users/99999999999999999999', 404, { message: '404 User Not Found' }],
      ['/api/v4/users/2147483648', 404, { message: '404 User Not Found' }],
      ['/api/v4/users?page=99999999999999999999', 400, { error: 'page is invalid' }],
      ['/api/v4/users?search=a%00b', 400, { error: 'search is invalid' }],
      ['/api/v4/users/%00', 400, { error: 'id is invalid' }],
      ['/api/v4/users?page[a]=1', 400, { error: 'page is invalid' }],
      ['/api/v4/users?sudo=99999999999999999999', 404, { message: "404 User with ID or username '99999999999999999999' Not Found" }],
      ['/api/v4/users?sudo=a%00', 404, { message: "404 User with ID or username 'a\u0000' Not Found" }],
    ];
    for (const [url, status, body] of cases) {
      const r = await call(t.app, 'GET', url, { token: admin.token });
      assert.deepEqual([r.status, r.body], [status, body], url);
    }
    const r = await call(t.app, 'GET', '/users?username=%FF%FE', { token: admin.token });
    assert.deepEqual([r.status, r.body], [200, []]);
    const nul = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, body: { bio: 'x\u0000y' } });
    assert.deepEqual([nul.status, nul.body], [400, { error: 'bio is invalid' }]);
  });

  test('a JSON body that is not an object carries no parameters', async () => {
    for (const payload of ['[1,2]', '"text"', '42', 'null']) {
      const r = await t.app.inject({ method: 'POST', url: '/api/v4/users', headers: { 'private-token': admin.token, 'content-type': 'application/json' }, payload });
      assert.deepEqual([r.statusCode, JSON.parse(r.body)], [400, { message: '400 (Bad request) "email" not given' }], payload);
    }
  });
});

describe('conflicts and preconditions', () => {
  test('409 for an email or username that another user has', async () => {
    let r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'BOB@example.com', name: 'B2', username: 'bob2', password: 'password123' } });
    assert.deepEqual([r.status, r.body], [409, { message: 'Email has already been taken' }]);
    r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'bob2@example.com', name: 'B2', username: 'BOB', password: 'password123' } });
    assert.deepEqual([r.status, r.body], [409, { message: 'Username has already been taken' }]);
    r = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, body: { username: 'Admin1' } });
    assert.deepEqual([r.status, r.body], [409, { message: 'Username has already been taken' }]);
    r = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, body: { username: 'bob', email: 'bob@example.com' } });
    assert.equal(r.status, 200, 'keeping one\'s own name is no conflict');
  });

  test('412 when the user changed after If-Unmodified-Since; nothing is deleted', async () => {
    const victim = await makeUser(t.app);
    const created = victim.user.updated_at;
    let r = await call(t.app, 'DELETE', `/users/${victim.user.id}`, { token: admin.token, headers: { 'if-unmodified-since': new Date(created - 3_600_000).toUTCString() } });
    assert.deepEqual([r.status, r.body], [412, { message: '412 Precondition Failed' }]);
    assert.ok(await t.app.db.selectFrom('users').select('id').where('id', '=', victim.user.id).executeTakeFirst());
    r = await call(t.app, 'DELETE', `/users/${victim.user.id}`, { token: admin.token, headers: { 'if-unmodified-since': 'not a date' } });
    assert.equal(r.status, 204, 'an unparseable header is ignored');
    const other = await makeUser(t.app);
    r = await call(t.app, 'DELETE', `/users/${other.user.id}`, { token: admin.token, headers: { 'if-unmodified-since': new Date(created + 3_600_000).toUTCString() } });
    assert.equal(r.status, 204);
    assert.equal(await t.app.db.selectFrom('users').select('id').where('id', '=', other.user.id).executeTakeFirst(), undefined);
  });
});

describe('limits', () => {
  test('414 with a JSON body for a query string over the limit; the same parameters fit in a body', async () => {
    const long = 'x'.repeat(t.config.maxQueryStringBytes);
    const r = await call(t.app, 'GET', `/users?search=${long}`, { token: admin.token });
    assert.equal(r.status, 414);
    assert.deepEqual(r.body, { message: '414 Request-URI Too Large' });
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const justFits = await call(t.app, 'GET', `/users?search=${'x'.repeat(t.config.maxQueryStringBytes - 'search='.length)}`, { token: admin.token });
    assert.equal(justFits.status, 200);
    const body = await call(t.app, 'PUT', `/users/${bob.user.id}`, { token: admin.token, body: { bio: 'b'.repeat(20_000) } });
    assert.equal(body.status, 200);
    assert.equal(body.body.bio.length, 20_000);
  });

  test('429 with Retry-After and RateLimit-* for anonymous and authenticated callers, separately', async () => {
    const rl = await buildTestApp({ config: { rateLimit: { authenticatedPerPeriod: 2, unauthenticatedPerPeriod: 1, periodSeconds: 60 } } });
    try {
      const clock = rl.clock as ManualClock;
      clock.set(Date.parse('2026-06-01T12:00:10Z'));
      const u = await makeUser(rl.app);
      const v = await makeUser(rl.app);
      assert.equal((await call(rl.app, 'GET', `/users?username=${u.user.username}`)).status, 200);
      const anon = await call(rl.app, 'GET', `/users?username=${u.user.username}`);
      assert.equal(anon.status, 429);
      assert.equal(anon.text, 'Retry later\n');
      assert.match(String(anon.headers['content-type']), /^text\/plain/);
      const reset = Date.parse('2026-06-01T12:01:00Z') / 1000;
      assert.deepEqual(
        ['ratelimit-name', 'ratelimit-limit', 'ratelimit-observed', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-resettime', 'retry-after'].map((h) => anon.headers[h]),
        ['throttle_unauthenticated_api', '1', '2', '0', String(reset), 'Mon, 01 Jun 2026 12:01:00 GMT', '50'],
      );
      // Authenticated callers have their own limit, per user, whatever token or form they use.
      const second = await makeToken(rl.app, u.user, ['api']);
      assert.equal((await call(rl.app, 'GET', '/user', { token: u.token })).status, 200);
      assert.equal((await call(rl.app, 'GET', `/user?private_token=${second}`)).status, 200);
      const over = await call(rl.app, 'GET', '/user', { headers: { authorization: `Bearer ${u.token}` } });
      assert.equal(over.status, 429);
      assert.equal(over.text, 'Retry later\n');
      assert.equal(over.headers['ratelimit-name'], 'throttle_authenticated_api');
      assert.equal(over.headers['ratelimit-limit'], '2');
      assert.equal(over.headers['ratelimit-observed'], '3');
      assert.equal(over.headers['retry-after'], '50');
      assert.equal((await call(rl.app, 'GET', '/user', { token: v.token })).status, 200, 'another user is not affected');
      // A token that authenticates nobody counts against the address, which is already over its limit.
      const bogus = await call(rl.app, 'GET', '/user', { token: 'glpat-bogus' });
      assert.equal(bogus.status, 429);
      assert.equal(bogus.headers['ratelimit-name'], 'throttle_unauthenticated_api');
      // The window resets at the period boundary.
      clock.set(Date.parse('2026-06-01T12:01:00Z'));
      assert.equal((await call(rl.app, 'GET', '/user', { token: u.token })).status, 200);
      assert.equal((await call(rl.app, 'GET', `/users?username=${u.user.username}`)).status, 200);
      assert.equal((await call(rl.app, 'GET', '/user', { token: 'glpat-bogus' })).status, 429, 'the second address request of the new window');
    } finally {
      await rl.close();
    }
  });

  test('rate limits are off by default', async () => {
    assert.equal(t.config.rateLimit.authenticatedPerPeriod, 0);
    assert.equal(t.config.rateLimit.unauthenticatedPerPeriod, 0);
    for (let i = 0; i < 30; i++) assert.equal((await call(t.app, 'GET', '/users?username=bob')).status, 200);
  });
});

test('a failure inside answers 500 without internals; the database failing also fails readiness', async () => {
  const broken = await buildTestApp();
  try {
    const u = await makeUser(broken.app, { admin: true });
    await broken.app.database.close();
    const r = await call(broken.app, 'GET', '/users', { token: u.token });
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, { message: '500 Internal Server Error' });
    const ready = await call(broken.app, 'GET', '/-/readiness');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'failed');
    assert.equal(ready.body.master_check[0].status, 'failed');
  } finally {
    await broken.close();
  }
});
