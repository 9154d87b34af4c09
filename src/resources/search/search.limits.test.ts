import { test, before, after, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeGroup, makeProject, makeToken, quickUser, type TestUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { dialectOf } from '../../platform/db/dialect.ts';

// The reference's search_rate_limit (lib/api/search.rb: `authenticate!` then `check_rate_limit!(:search_rate_limit,
// scope: [current_user], users_allowlist: ...)` in a `before` block, then Grape's parameter validation, then the
// group or project lookup in the endpoint) and the order of the refusals: 401, 429, 400, 404.

let t: TestApp;
let admin: TestUser;
const MINUTE = 60_000;
const THROTTLED = { message: { error: 'This endpoint has been requested too many times. Try again later.' } };

before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

const clock = () => t.clock as ManualClock;
/** The start of the next minute, plus `s` seconds: every test counts in a window of its own. */
function nextWindow(s = 0) {
  const now = clock().now();
  clock().set(Math.floor(now / MINUTE) * MINUTE + MINUTE + s * 1000);
}
async function settings(body: Record<string, unknown>) {
  const r = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}
const search = (url: string, token: string | undefined, query: Record<string, string> = { scope: 'projects', search: 'zz' }) =>
  call(t.app, 'GET', url, { token, query });

beforeEach(async () => {
  await settings({ search_rate_limit: 30, search_rate_limit_allowlist: [] });
  nextWindow();
});

describe('search_rate_limit', () => {
  test('the settings: defaults 30 and 10, changed by PUT, negative values refused', async () => {
    await t.app.db.deleteFrom('application_settings').execute();
    const r = await call(t.app, 'GET', '/application/settings', { token: admin.token });
    assert.deepEqual([r.body.search_rate_limit, r.body.search_rate_limit_unauthenticated, r.body.search_rate_limit_allowlist], [30, 10, []]);
    const bad = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body: { search_rate_limit: -1 } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'search_rate_limit does not have a valid value' }]);
    await settings({ search_rate_limit: 5, search_rate_limit_unauthenticated: 2, search_rate_limit_allowlist: ['Alice'] });
    const after = await call(t.app, 'GET', '/application/settings', { token: admin.token });
    assert.deepEqual([after.body.search_rate_limit, after.body.search_rate_limit_unauthenticated, after.body.search_rate_limit_allowlist], [5, 2, ['Alice']]);
  });

  test('per user, shared by two of their tokens, at every level, refusals counted too; 429 with Retry-After; the next minute is new', async () => {
    await settings({ search_rate_limit: 4 });
    nextWindow(15);
    const u = await quickUser(t.app);
    const second = await makeToken(t.app, u.user, ['read_api']);
    const p = await makeProject(t.app, { visibility: 20 });
    const g = await makeGroup(t.app, { visibility: 20 });
    assert.equal((await search('/search', u.token)).status, 200);
    assert.equal((await search(`/groups/${g.id}/search`, second)).status, 200);
    assert.equal((await search(`/projects/${p.id}/search`, u.token, { scope: 'issues', search: 'zz' })).status, 200);
    assert.equal((await search('/search', second, { scope: 'nope', search: 'zz' })).status, 400);
    for (const [url, token] of [['/search', u.token], [`/projects/${p.id}/search`, second], ['/search', second]] as const) {
      const r = await search(url, token, { scope: url === '/search' ? 'projects' : 'issues', search: 'zz' });
      assert.equal(r.status, 429, url);
      assert.deepEqual(r.body, THROTTLED);
      assert.equal(r.headers['retry-after'], '45');
      assert.equal(r.headers['x-search-type'], undefined);
    }
    // Another user has their own count; other endpoints are not limited by it.
    const other = await quickUser(t.app);
    assert.equal((await search('/search', other.token)).status, 200);
    assert.equal((await call(t.app, 'GET', '/projects', { token: u.token })).status, 200);
    clock().set(clock().now() + 45_000);
    assert.equal((await search('/search', u.token)).status, 200);
  });

  test('the allowlist (any case) and 0 turn it off', async () => {
    await settings({ search_rate_limit: 1 });
    const listed = await quickUser(t.app);
    await settings({ search_rate_limit_allowlist: [listed.user.username.toUpperCase()] });
    for (let i = 0; i < 3; i++) assert.equal((await search('/search', listed.token)).status, 200);
    const u = await quickUser(t.app);
    assert.equal((await search('/search', u.token)).status, 200);
    assert.equal((await search('/search', u.token)).status, 429);
    await settings({ search_rate_limit: 0 });
    for (let i = 0; i < 3; i++) assert.equal((await search('/search', u.token)).status, 200);
  });

  test('counted where the database says: in PostgreSQL for every process, in the process on SQLite', async () => {
    await settings({ search_rate_limit: 3 });
    const u = await quickUser(t.app);
    assert.equal((await search('/search', u.token)).status, 200);
    const key = `n:search_rate_limit:${u.user.id}`;
    const rows = () => t.app.db.selectFrom('rate_limit_counters').select('count').where('key', '=', key).execute();
    if (dialectOf(t.app.db) === 'postgres') {
      assert.deepEqual((await rows()).map((r) => Number(r.count)), [1]);
      // Two searches another process counted in the same window: this one's third request is over the limit.
      await t.app.db.updateTable('rate_limit_counters').set({ count: 3 }).where('key', '=', key).execute();
      assert.equal((await search('/search', u.token)).status, 429);
    } else {
      assert.deepEqual(await rows(), []);
      assert.equal((await search('/search', u.token)).status, 200);
      assert.equal((await search('/search', u.token)).status, 200);
      assert.equal((await search('/search', u.token)).status, 429);
    }
  });
});

describe('the order of refusals: 401, then 429, then 400, then 404', () => {
  test('each pair at once', async () => {
    const u = await quickUser(t.app);
    const hiddenProject = await makeProject(t.app, { visibility: 0 });
    const hiddenGroup = await makeGroup(t.app, { visibility: 0 });
    const P = `/projects/${hiddenProject.id}/search`;
    const G = `/groups/${hiddenGroup.id}/search`;
    // Anonymous: 401 whatever else is wrong.
    for (const [url, query] of [[P, { scope: 'nope' }], [G, {}], ['/search', { scope: 'nope', search: 'x' }]] as const) {
      const r = await search(url, undefined, query);
      assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }], url);
    }
    // A parameter error before the invisible group or project.
    const cases: Array<[string, Record<string, string>, string]> = [
      [P, { scope: 'nope', search: 'x' }, 'scope does not have a valid value'],
      [P, { search: 'x' }, 'scope is missing, scope does not have a valid value'],
      [P, { scope: 'issues', search: 'x', confidential: 'maybe' }, 'confidential is invalid'],
      [G, { scope: 'snippet_titles', search: 'x' }, 'scope does not have a valid value'],
      [G, { scope: 'issues' }, 'search is missing'],
    ];
    for (const [url, query, text] of cases) {
      const r = await search(url, u.token, query);
      assert.deepEqual([r.status, r.body], [400, { error: text }], `${url} ${JSON.stringify(query)}`);
    }
    // Good parameters: the group or project is not found.
    const rp = await search(P, u.token, { scope: 'issues', search: 'x' });
    assert.deepEqual([rp.status, rp.body], [404, { message: '404 Project Not Found' }]);
    const rg = await search(G, u.token, { scope: 'issues', search: 'x' });
    assert.deepEqual([rg.status, rg.body], [404, { message: '404 Group Not Found' }]);
    // Over the limit: 429 before the parameters and the lookup.
    await settings({ search_rate_limit: 1 });
    nextWindow();
    const v = await quickUser(t.app);
    assert.equal((await search(P, v.token, { scope: 'issues', search: 'x' })).status, 404);
    for (const [url, query] of [[P, { scope: 'nope', search: 'x' }], [G, { scope: 'issues', search: 'x' }], ['/search', {}]] as const) {
      const r = await search(url, v.token, query);
      assert.deepEqual([r.status, r.body], [429, THROTTLED], url);
    }
    // Anonymous still 401 (search needs a signed-in caller; nothing is counted per address).
    assert.equal((await search('/search', undefined)).status, 401);
  });
});
