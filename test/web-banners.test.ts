import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from './support/app.ts';
import { makeUser, type TestUser } from './support/factories.ts';

let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

test('the sign-in page shows active banners for its path, escaped, and not the others', async () => {
  const ok = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'Upgrade <b>tonight</b>', target_path: '/users/*' } });
  assert.equal(ok.status, 201);
  await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'only on projects', target_path: '/projects/*' } });
  await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'a notification', broadcast_type: 'notification' } });
  const page = await t.app.inject({ method: 'GET', url: '/users/sign_in' });
  assert.equal(page.statusCode, 200);
  const text = page.body;
  assert.match(text, /class="broadcast-message broadcast-banner" role="alert"[^>]*>Upgrade &lt;b&gt;tonight&lt;\/b&gt;<\/div>/);
  assert.doesNotMatch(text, /only on projects/);
  assert.doesNotMatch(text, /a notification/);
});
