import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

test('GET /user returns the token owner', async () => {
  const u = await makeUser(t.app);
  const r = await call(t.app, 'GET', '/user', { token: u.token });
  assert.equal(r.status, 200);
  assert.equal(r.body.username, u.user.username);
  assert.equal(r.headers['x-request-id']?.length! > 0, true);
});

test('integers beyond the id columns: a path id names nothing (404), a filter is invalid (no database error)', async () => {
  const u = await makeUser(t.app);
  const big = await call(t.app, 'GET', '/users/99999999999', { token: u.token });
  assert.equal(big.status, 404);
  assert.deepEqual(big.body, { message: '404 User Not Found' });
  const list = await call(t.app, 'GET', '/personal_access_tokens?user_id=99999999999', { token: u.token });
  assert.equal(list.status, 400);
  assert.deepEqual(list.body, { error: 'user_id is invalid' });
});
