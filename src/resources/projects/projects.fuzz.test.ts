import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { createProject, makeUser, type TestUser } from '../../../test/support/fixtures.ts';

// Odd input never fails the server: every answer is a well-formed 2xx or 4xx.

let t: TestApp;
let u: TestUser;
before(async () => {
  t = await buildTestApp();
  u = await makeUser(t.app);
  await createProject(t.app, u.token, { name: 'fuzz target', visibility: 'public', description: 'quote " and percent %' });
});
after(async () => { await t.close(); });

test('odd search, topic, order and id values answer 200 or 400, never 500', async () => {
  const values = ['"', '""', '" "', '"unterminated', '%', '_', '\\', 'a"b"c', '***', 'NEAR(a b)', 'x OR y', '-abc', '\u0000abc', 'ä ö ü', '🙂🙂🙂', 'a'.repeat(3000), "'; drop table projects; --"];
  for (const v of values) {
    for (const q of [{ search: v }, { search: v, search_namespaces: 'true' }, { search: v, order_by: 'similarity' }, { topic: v }, { with_programming_language: v }, { repository_storage: v }, { order_by: v }, { id_after: v }, { visibility: v }, { custom_attributes: v }]) {
      const r = await call(t.app, 'GET', '/projects', { token: u.token, query: q as unknown as Record<string, string> });
      assert.ok(r.status === 200 || r.status === 400, `${JSON.stringify(q)} -> ${r.status} ${r.text.slice(0, 200)}`);
    }
  }
  for (const q of ['id_after=99999999999999999999', 'id_before=-99999999999999999999', 'topic_id=99999999999999999999', 'min_access_level=99999999999']) {
    const r = await call(t.app, 'GET', `/projects?${q}`, { token: u.token });
    assert.equal(r.status, 400, q);
  }
  const big = await call(t.app, 'POST', '/projects/1/share', { token: u.token, body: { group_id: 99999999999999999999, group_access: 30 } });
  assert.equal(big.status, 400);
  const r = await call(t.app, 'GET', '/projects', { query: { search: 'percent %' } });
  assert.equal(r.status, 200);
  assert.equal(r.body.length, 1);
  for (const id of ['%2F', 'a%2F', '..%2F..%2Fetc', '99999999999999999999', '-1', '0x10']) {
    const g = await call(t.app, 'GET', `/projects/${id}`, { token: u.token });
    assert.equal(g.status, 404, id);
  }
  for (const body of [{ name: 'x'.repeat(300) }, { name: '../../etc' }, { path: '..' }, { name: 'ok', namespace_id: '../../' }, { name: 'ok', topics: ['t'.repeat(300)] }, { name: 'ok', default_branch: '-x' }, { name: 'ok', default_branch: 'a..b' }, { name: 'ok', description: 'nul\u0000here' }, { name: 'ok', topics: ['a\u0000b'] }, { name: 'nul\u0000name' }]) {
    const c = await call(t.app, 'POST', '/projects', { token: u.token, body });
    assert.ok(c.status === 400 || c.status === 404, `${JSON.stringify(body).slice(0, 80)} -> ${c.status} ${c.text.slice(0, 200)}`);
  }
});

test('a user id beyond the integer range is an unknown user', async () => {
  const r = await call(t.app, 'GET', '/users/99999999999999999999/projects');
  assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
});
