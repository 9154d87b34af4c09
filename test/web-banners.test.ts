import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from './support/app.ts';
import { makeUser, type TestUser } from './support/fixtures.ts';
import { signIn } from './oauth/helpers.ts';

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

test('the OAuth consent page shows the banners targeted at /oauth/*', async () => {
  await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'Consent notice', target_path: '/oauth/*' } });
  const b = await signIn(t.app, admin.user.username);
  const page = await t.app.inject({ method: 'GET', url: '/oauth/authorize?client_id=unknown', headers: { cookie: b.cookie } });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /class="broadcast-message broadcast-banner" role="alert"[^>]*>Consent notice<\/div>/);
});
