import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { quickUser } from '../../../test/support/fixtures.ts';
import { SIGNER_PUBLIC_KEY } from '../../../test/support/gpg-fixtures.ts';

// Removing a GPG key answers 204; revoking one answers 202 without a body, as the reference does. Both remove it.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const keys = async (userId: number) => (await t.app.db.selectFrom('gpg_keys').select('id').where('user_id', '=', userId).execute()).length;

test('delete answers 204, revoke 202 with no body; the key is gone either way', async () => {
  const u = await quickUser(t.app);
  const admin = await quickUser(t.app, { admin: true });
  const add = () => call(t.app, 'POST', '/user/gpg_keys', { token: u.token, body: { key: SIGNER_PUBLIC_KEY } });
  let k = await add();
  assert.equal(k.status, 201);
  let r = await call(t.app, 'DELETE', `/user/gpg_keys/${k.body.id}`, { token: u.token });
  assert.deepEqual([r.status, r.text], [204, '']);
  assert.equal(await keys(u.user.id), 0);
  k = await add();
  r = await call(t.app, 'POST', `/user/gpg_keys/${k.body.id}/revoke`, { token: u.token });
  assert.deepEqual([r.status, r.text], [202, '']);
  assert.equal(await keys(u.user.id), 0);
  k = await add();
  r = await call(t.app, 'POST', `/users/${u.user.id}/gpg_keys/${k.body.id}/revoke`, { token: u.token });
  assert.equal(r.status, 403);
  r = await call(t.app, 'POST', `/users/${u.user.id}/gpg_keys/${k.body.id}/revoke`, { token: admin.token });
  assert.deepEqual([r.status, r.text], [202, '']);
  assert.equal(await keys(u.user.id), 0);
  r = await call(t.app, 'POST', `/user/gpg_keys/${k.body.id}/revoke`, { token: u.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 GPG Key Not Found' }]);
});
