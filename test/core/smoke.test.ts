import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/factories.ts';

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
