import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/factories.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

test('smoke', async () => {
  const u = await makeUser(t.app);
  let r = await call(t.app, 'POST', '/projects', { token: u.token, body: { name: 'My Project', initialize_with_readme: true, topics: ['a', 'b'], visibility: 'public' } });
  console.log(r.status, JSON.stringify(r.body, null, 1).slice(0, 4000));
  r = await call(t.app, 'GET', '/projects', {});
  console.log(r.status, r.headers, JSON.stringify(r.body));
  r = await call(t.app, 'GET', '/projects?statistics=true', { token: u.token });
  console.log(r.status, JSON.stringify(r.body[0].statistics));
  assert.ok(true);
});
