import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';

// Offset pagination headers and Link URLs, the count cap, and conditional GET.

const BASE = 'http://bellows.test/api/v4';

let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'boss', admin: true });
  for (let i = 0; i < 4; i++) await makeUser(t.app, { username: `member${i}` });
});
after(async () => { await t.close(); });

const pageHeaders = (h: Record<string, unknown>) => ({
  page: h['x-page'], perPage: h['x-per-page'], next: h['x-next-page'], prev: h['x-prev-page'], total: h['x-total'], totalPages: h['x-total-pages'],
});

describe('offset pagination', () => {
  test('a middle page: every header, Link in the order prev, next, first, last, other parameters kept in alphabetical order', async () => {
    const r = await call(t.app, 'GET', `/users?zeta=z&per_page=2&page=2&active=true&private_token=${admin.token}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 2);
    assert.deepEqual(pageHeaders(r.headers), { page: '2', perPage: '2', next: '3', prev: '1', total: '5', totalPages: '3' });
    const url = (page: number) => `${BASE}/users?active=true&order_by=id&page=${page}&per_page=2&sort=desc&zeta=z`;
    assert.equal(r.headers.link, [
      `<${url(1)}>; rel="prev"`, `<${url(3)}>; rel="next"`, `<${url(1)}>; rel="first"`, `<${url(3)}>; rel="last"`,
    ].join(', '));
    assert.ok(!String(r.headers.link).includes(admin.token), 'the token is never repeated in links');
  });

  test('pages walk the whole list once, newest first by default', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const r = await call(t.app, 'GET', `/users?per_page=2&page=${page}`, { token: admin.token });
      seen.push(...r.body.map((u: { id: number }) => u.id));
    }
    const all = (await t.app.db.selectFrom('users').select('id').orderBy('id', 'desc').execute()).map((u) => u.id);
    assert.deepEqual(seen, all);
  });

  test('the first and the last page', async () => {
    const first = await call(t.app, 'GET', '/users?per_page=2', { token: admin.token });
    assert.deepEqual(pageHeaders(first.headers), { page: '1', perPage: '2', next: '2', prev: '', total: '5', totalPages: '3' });
    assert.equal(first.headers.link, `<${BASE}/users?order_by=id&page=2&per_page=2&sort=desc>; rel="next", <${BASE}/users?order_by=id&page=1&per_page=2&sort=desc>; rel="first", <${BASE}/users?order_by=id&page=3&per_page=2&sort=desc>; rel="last"`);
    const last = await call(t.app, 'GET', '/users?per_page=2&page=3', { token: admin.token });
    assert.equal(last.body.length, 1);
    assert.deepEqual(pageHeaders(last.headers), { page: '3', perPage: '2', next: '', prev: '2', total: '5', totalPages: '3' });
  });

  test('an empty collection: total 0, one page, first and last both page 1', async () => {
    const r = await call(t.app, 'GET', '/users?username=nobody', { token: admin.token });
    assert.deepEqual(r.body, []);
    assert.deepEqual(pageHeaders(r.headers), { page: '1', perPage: '20', next: '', prev: '', total: '0', totalPages: '1' });
    const url = `${BASE}/users?order_by=id&page=1&per_page=20&sort=desc&username=nobody`;
    assert.equal(r.headers.link, `<${url}>; rel="first", <${url}>; rel="last"`);
  });

  test('a page past the end: empty, both next and prev empty, only first and last links', async () => {
    const r = await call(t.app, 'GET', '/users?per_page=2&page=10', { token: admin.token });
    assert.deepEqual(r.body, []);
    assert.deepEqual(pageHeaders(r.headers), { page: '10', perPage: '2', next: '', prev: '', total: '5', totalPages: '3' });
    assert.equal(r.headers.link, `<${BASE}/users?order_by=id&page=1&per_page=2&sort=desc>; rel="first", <${BASE}/users?order_by=id&page=3&per_page=2&sort=desc>; rel="last"`);
  });

  test('per_page above 100 is clamped; a negative per_page or page falls back to the default', async () => {
    let r = await call(t.app, 'GET', '/users?per_page=1000', { token: admin.token });
    assert.equal(r.headers['x-per-page'], '100');
    assert.match(String(r.headers.link), /per_page=100&sort=desc>; rel="first"/);
    r = await call(t.app, 'GET', '/users?per_page=-5&page=-2', { token: admin.token });
    assert.equal(r.headers['x-per-page'], '20');
    assert.equal(r.headers['x-page'], '1');
  });

  test('links use the configured external URL, a path prefix included', async () => {
    const other = await buildTestApp({ config: { externalUrl: 'https://code.example.org/bellows/' } });
    try {
      const u = await makeUser(other.app, { admin: true });
      const r = await call(other.app, 'GET', '/users?per_page=1', { token: u.token });
      assert.equal(r.headers.link, '<https://code.example.org/bellows/api/v4/users?order_by=id&page=1&per_page=1&sort=desc>; rel="first", <https://code.example.org/bellows/api/v4/users?order_by=id&page=1&per_page=1&sort=desc>; rel="last"');
    } finally {
      await other.close();
    }
  });

  test('array parameters are repeated in links as name[]=value', async () => {
    const u = await makeUser(t.app);
    const r = await call(t.app, 'GET', `/personal_access_tokens?tags[]=b&tags[]=a`, { token: u.token });
    assert.equal(r.status, 200);
    assert.match(String(r.headers.link), /\?page=1&per_page=20&tags%5B%5D=b&tags%5B%5D=a>; rel="first"/);
  });
});

test('above 10,000 matches the totals and the last link are left out', async () => {
  const big = await buildTestApp();
  try {
    const u = await makeUser(big.app, { admin: true });
    const now = big.clock.now();
    // One statement inserts 10,000 more users (10,001 with the administrator).
    await sql`INSERT INTO users (username, name, email, state, admin, user_type, created_at, updated_at)
      WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10000)
      SELECT 'bulk' || n, 'Bulk ' || n, 'bulk' || n || '@example.com', 'active', 0, 'human', ${now}, ${now} FROM seq`.execute(big.app.db);
    let r = await call(big.app, 'GET', '/users?per_page=100&page=2', { token: u.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 100);
    assert.equal(r.headers['x-total'], undefined);
    assert.equal(r.headers['x-total-pages'], undefined);
    assert.deepEqual([r.headers['x-page'], r.headers['x-next-page'], r.headers['x-prev-page']], ['2', '3', '1']);
    assert.equal(r.headers.link, [
      `<${BASE}/users?order_by=id&page=1&per_page=100&sort=desc>; rel="prev"`,
      `<${BASE}/users?order_by=id&page=3&per_page=100&sort=desc>; rel="next"`,
      `<${BASE}/users?order_by=id&page=1&per_page=100&sort=desc>; rel="first"`,
    ].join(', '));
    // The last page is found by the extra row: no next page there.
    r = await call(big.app, 'GET', '/users?per_page=100&page=101', { token: u.token });
    assert.equal(r.body.length, 1);
    assert.deepEqual([r.headers['x-next-page'], r.headers['x-prev-page'], r.headers['x-total']], ['', '100', undefined]);
    // Exactly 10,000 matches still has totals.
    await big.app.db.deleteFrom('users').where('username', '=', 'bulk1').execute();
    r = await call(big.app, 'GET', '/users?per_page=100', { token: u.token });
    assert.deepEqual([r.headers['x-total'], r.headers['x-total-pages']], ['10000', '100']);
    assert.match(String(r.headers.link), /rel="last"$/);
  } finally {
    await big.close();
  }
});

describe('conditional GET', () => {
  test('a weak ETag on JSON GET responses; a matching If-None-Match answers 304 without a body', async () => {
    const r = await call(t.app, 'GET', '/user', { token: admin.token });
    const etag = String(r.headers.etag);
    assert.match(etag, /^W\/"[A-Za-z0-9_-]+"$/);
    assert.equal(r.headers['cache-control'], 'max-age=0, private, must-revalidate');
    const again = await call(t.app, 'GET', '/user', { token: admin.token, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const listed = await call(t.app, 'GET', '/user', { token: admin.token, headers: { 'if-none-match': `W/"other", ${etag}` } });
    assert.equal(listed.status, 304);
    const stale = await call(t.app, 'GET', '/user', { token: admin.token, headers: { 'if-none-match': 'W/"stale"' } });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.username, 'boss');
  });

  test('the ETag changes with the content', async () => {
    const u = await makeUser(t.app);
    const before = await call(t.app, 'GET', '/user', { token: u.token });
    await call(t.app, 'PUT', `/users/${u.user.id}`, { token: admin.token, body: { bio: 'changed' } });
    const after = await call(t.app, 'GET', '/user', { token: u.token, headers: { 'if-none-match': String(before.headers.etag) } });
    assert.equal(after.status, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  test('no ETag on errors or writes', async () => {
    const r = await call(t.app, 'GET', '/users/999999', { token: admin.token });
    assert.equal(r.status, 404);
    assert.equal(r.headers.etag, undefined);
    const w = await call(t.app, 'PUT', `/users/${admin.user.id}`, { token: admin.token, body: { bio: 'x' } });
    assert.equal(w.headers.etag, undefined);
  });
});
