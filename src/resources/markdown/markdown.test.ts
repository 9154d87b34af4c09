import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, makeToken } from '../../../test/support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const roles = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;

test('POST /markdown renders with the one renderer, raw HTML escaped and script links dropped', async () => {
  const { nonMember } = await castRoles(t.app, await makeProject(t.app, { visibility: 20 }));
  const r = await call(t.app, 'POST', '/markdown', { token: nonMember.token, body: { text: '# Hi\n\n<script>alert(1)</script> [x](javascript:alert(1)) [y](https://e.x)', gfm: true } });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, {
    html: '<h1>Hi</h1>\n<p>&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1)) <a href="https://e.x" rel="nofollow noreferrer noopener">y</a></p>',
  });
  const form = await call(t.app, 'POST', '/markdown', { token: nonMember.token, form: { text: '*a*' } });
  assert.equal(form.status, 201);
  assert.deepEqual(form.body, { html: '<p><em>a</em></p>' });
  // A read_api token may render (a read-only operation); a read_user token may not.
  const readApi = await makeToken(t.app, nonMember.user, ['read_api']);
  assert.equal((await call(t.app, 'POST', '/markdown', { token: readApi, body: { text: 'x' } })).status, 201);
  const readUser = await makeToken(t.app, nonMember.user, ['read_user']);
  assert.equal((await call(t.app, 'POST', '/markdown', { token: readUser, body: { text: 'x' } })).status, 403);
});

test('POST /markdown: text is required; anonymous callers are refused', async () => {
  const { nonMember } = await castRoles(t.app, await makeProject(t.app, { visibility: 20 }));
  const missing = await call(t.app, 'POST', '/markdown', { token: nonMember.token, body: {} });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { message: '400 (Bad request) "text" not given' });
  const anon = await call(t.app, 'POST', '/markdown', { body: { text: 'x' } });
  assert.equal(anon.status, 401);
  assert.deepEqual(anon.body, { message: '401 Unauthorized' });
});

test('POST /markdown with a project: the caller must read it (role table, private project)', async () => {
  const p = await makeProject(t.app, { visibility: 0 });
  const cast = await castRoles(t.app, p);
  const expected = { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 };
  for (const role of roles) {
    const r = await call(t.app, 'POST', '/markdown', { token: role === 'anonymous' ? undefined : cast[role].token, body: { text: 'x', project: p.full_path } });
    assert.equal(r.status, expected[role], role);
    if (r.status === 404) assert.deepEqual(r.body, { message: '404 Project Not Found' });
  }
  const none = await call(t.app, 'POST', '/markdown', { token: cast.admin.token, body: { text: 'x', project: 'no/such' } });
  assert.equal(none.status, 404);
});
