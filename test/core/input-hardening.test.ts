import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { createProject, makeUser, type TestUser } from '../support/fixtures.ts';

// Ids are decimal digits and nothing else; text is well-formed and NUL-free. Nothing else reaches a service.

let t: TestApp;
let admin: TestUser;
let victim: TestUser;
let projectId: number;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
  victim = await makeUser(t.app);
  projectId = (await createProject(t.app, admin.token, { name: 'hardening' })).id;
});
after(async () => { await t.close(); });

const LOOSE = (id: number) => [`${id}.0`, `0x${id.toString(16)}`, `${id}e0`, `%2B${id}`, `0${id}`, `${id}%20`, `%20${id}`, `${id}.`];

test('an integer path id written any other way than plain digits is refused, and changes nothing', async () => {
  const id = victim.user.id;
  for (const raw of LOOSE(id)) {
    const g = await call(t.app, 'GET', `/users/${raw}`, { token: admin.token });
    assert.deepEqual([g.status, g.body], [400, { error: 'id is invalid' }], `GET /users/${raw}`);
    const b = await call(t.app, 'POST', `/users/${raw}/block`, { token: admin.token });
    assert.deepEqual([b.status, b.body], [400, { error: 'id is invalid' }], `POST /users/${raw}/block`);
  }
  const after = await call(t.app, 'GET', `/users/${id}`, { token: admin.token });
  assert.equal(after.body.state, 'active');
  assert.equal((await call(t.app, 'GET', `/users/${id}`, { token: admin.token })).status, 200);
});

test('a personal access token cannot be revoked through a loosely written id', async () => {
  const list = await call(t.app, 'GET', '/personal_access_tokens', { token: victim.token });
  const tokenId = list.body[0].id as number;
  for (const raw of [`${tokenId}.0`, `0x${tokenId.toString(16)}`, `${tokenId}e0`, `%2B${tokenId}`, `0${tokenId}`]) {
    const r = await call(t.app, 'DELETE', `/personal_access_tokens/${raw}`, { token: victim.token });
    assert.deepEqual([r.status, r.body], [400, { error: 'id is invalid' }], raw);
  }
  assert.equal((await call(t.app, 'GET', '/user', { token: victim.token })).status, 200);
});

test('a project id or path with leading zeros or a sign is a path, which names no project', async () => {
  for (const raw of [`0${projectId}`, `%2B${projectId}`, `${projectId}.0`, `0x${projectId.toString(16)}`]) {
    const r = await call(t.app, 'GET', `/projects/${raw}`, { token: admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }], raw);
  }
  assert.equal((await call(t.app, 'GET', `/projects/${projectId}`, { token: admin.token })).status, 200);
});

test('integer query and body parameters are decimal: hex, floats and exponents are invalid', async () => {
  for (const v of ['0x1', '1.0', '1e0', ' 1']) {
    const r = await call(t.app, 'GET', '/projects', { token: admin.token, query: { per_page: v } });
    assert.deepEqual([r.status, r.body], [400, { error: 'per_page is invalid' }], v);
  }
  const ok = await call(t.app, 'GET', '/projects', { token: admin.token, query: { per_page: '5', id_after: '-1' } });
  assert.equal(ok.status, 200);
  const share = await call(t.app, 'POST', `/projects/${projectId}/share`, { token: admin.token, form: { group_id: '1', group_access: '0x1e' } });
  assert.deepEqual([share.status, share.body], [400, { error: 'group_access is invalid' }]);
});

const LONE = ['\ud800x', 'x\udc00', '\udfff', 'a\u0000b'];

test('a lone surrogate or a NUL in a protected branch or tag name, topics or a name is an invalid parameter', async () => {
  for (const bad of LONE) {
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      ['POST', `/projects/${projectId}/protected_branches`, { name: bad }, 'name'],
      ['POST', `/projects/${projectId}/protected_tags`, { name: bad }, 'name'],
      ['PUT', `/projects/${projectId}`, { topics: [bad] }, 'topics'],
      ['POST', '/projects', { name: 'ok', topics: [bad] }, 'topics'],
      ['PUT', `/projects/${projectId}`, { description: bad }, 'description'],
      ['PUT', `/users/${victim.user.id}`, { name: bad }, 'name'],
      ['POST', '/groups', { name: bad, path: 'grp' }, 'name'],
    ];
    for (const [method, url, body, param] of cases) {
      const r = await call(t.app, method, url, { token: admin.token, body });
      assert.deepEqual([r.status, r.body], [400, { error: `${param} is invalid` }], `${method} ${url} ${JSON.stringify(body)}`);
    }
  }
  const p = await call(t.app, 'GET', `/projects/${projectId}`, { token: admin.token });
  assert.deepEqual(p.body.topics, []);
  assert.equal((await call(t.app, 'GET', `/projects/${projectId}/protected_branches`, { token: admin.token })).body.length, 0);
  // A pair of surrogates is one well-formed character and is accepted.
  const fine = await call(t.app, 'PUT', `/projects/${projectId}`, { token: admin.token, body: { topics: ['\ud83d\ude00'] } });
  assert.equal(fine.status, 200);
  assert.deepEqual(fine.body.topics, ['\u{1F600}']);
});
