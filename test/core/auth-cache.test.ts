import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp({ config: { authCacheMs: 60_000 } }); });
after(async () => { await t.close(); });

test('cached credentials are reused on reads and forgotten by any state-changing request', async () => {
  const u = await makeUser(t.app);
  assert.equal((await call(t.app, 'GET', '/user', { token: u.token })).status, 200);
  // Changed behind the server's back: the cache still answers for reads...
  await t.app.db.updateTable('personal_access_tokens').set({ revoked: 1 }).where('user_id', '=', u.user.id).execute();
  assert.equal((await call(t.app, 'GET', '/user', { token: u.token })).status, 200);
  // ...until a write passes through this process, after which the revocation applies at once.
  await call(t.app, 'POST', '/projects', { token: u.token, body: {} });
  const r = await call(t.app, 'GET', '/user', { token: u.token });
  assert.deepEqual([r.status, r.body.error], [401, 'invalid_token']);
});

test('revoking through the API takes effect on the next request', async () => {
  const u = await makeUser(t.app);
  const self = await call(t.app, 'GET', '/personal_access_tokens/self', { token: u.token });
  assert.equal(self.status, 200);
  const del = await call(t.app, 'DELETE', `/personal_access_tokens/${self.body.id}`, { token: u.token });
  assert.equal(del.status, 204);
  const r = await call(t.app, 'GET', '/user', { token: u.token });
  assert.deepEqual([r.status, r.body.error], [401, 'invalid_token']);
});
