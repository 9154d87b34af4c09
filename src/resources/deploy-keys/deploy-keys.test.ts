import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, castRoles, quickUser, makeGroup, makeProject, Role, type RoleCast, makeToken } from '../../../test/support/fixtures.ts';
import { DSA_KEY, ed25519Key, rsaKey, skEcdsaKey, skEd25519Key } from '../../../test/support/ssh-key-fixtures.ts';
import { deployKeysOfProject } from './deploy-keys.service.ts';
import type { ManualClock } from '../../platform/clock.ts';

const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGMF5+CZg8IAjNfnDh4GUQzbP6QRibUS12ASzMHIhPTs c@ed25519';
const NOW = '2026-06-01T12:00:00.000Z';
const KEY_FIELDS = ['id', 'title', 'key', 'fingerprint', 'fingerprint_sha256', 'created_at', 'expires_at'];

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const keyCount = async () => Number((await t.app.db.selectFrom('deploy_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const linkCount = async () => Number((await t.app.db.selectFrom('deploy_keys_projects').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function setup(visibility = 0) {
  const project = await makeProject(t.app, { visibility });
  const roles = await castRoles(t.app, project);
  return { project, roles };
}

async function addKey(projectId: number, token: string, body: Record<string, unknown>) {
  return call(t.app, 'POST', `/projects/${projectId}/deploy_keys`, { token, body });
}

describe('project deploy keys: access', () => {
  let project: { id: number };
  let roles: RoleCast;
  before(async () => ({ project, roles } = await setup(0)));

  const expected: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 403], ['developer', 403],
    ['maintainer', 200], ['owner', 200], ['admin', 200],
  ];
  for (const [role, status] of expected) {
    test(`${role} listing a private project's keys gets ${status}`, async () => {
      const u = roles[role];
      const r = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys`, { token: u?.token });
      assert.equal(r.status, status);
      if (status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
      if (status === 404) assert.deepEqual(r.body, { message: '404 Project Not Found' });
      if (status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
      if (status === 200) assert.ok(Array.isArray(r.body));
    });
    test(`${role} adding a key to a private project gets ${status === 200 ? 201 : status}`, async () => {
      const u = roles[role];
      const before = await keyCount();
      const r = await addKey(project.id, u?.token as string, { key: ed25519Key(), title: 'k' });
      assert.equal(r.status, status === 200 ? 201 : status);
      assert.equal(await keyCount(), before + (status === 200 ? 1 : 0));
    });
  }

  test('a non-member of a public project is refused with 403, not 404', async () => {
    const { project: pub, roles: r } = await setup(20);
    const res = await call(t.app, 'GET', `/projects/${pub.id}/deploy_keys`, { token: r.nonMember.token });
    assert.equal(res.status, 403);
    const anon = await call(t.app, 'GET', `/projects/${pub.id}/deploy_keys`);
    assert.equal(anon.status, 401);
  });

  test('a read_api token reads but cannot write', async () => {
    const token = await makeToken(t.app, roles.maintainer.user, ['read_api']);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/deploy_keys`, { token })).status, 200);
    const before = await keyCount();
    const r = await addKey(project.id, token, { key: ed25519Key(), title: 'k' });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, {
      error: 'insufficient_scope',
      error_description: 'The request requires higher privileges than provided by the access token.',
      scope: 'api',
    });
    assert.equal(await keyCount(), before);
  });

  test('a read_user token is refused on every route', async () => {
    const token = await makeToken(t.app, roles.maintainer.user, ['read_user']);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/deploy_keys`, { token })).status, 403);
  });

  test('an unknown project is 404, and a project path works as id', async () => {
    const r = await call(t.app, 'GET', '/projects/999999/deploy_keys', { token: roles.admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
    const p = await t.app.db.selectFrom('projects').select('full_path').where('id', '=', project.id).executeTakeFirstOrThrow();
    const byPath = await call(t.app, 'GET', `/projects/${encodeURIComponent(p.full_path)}/deploy_keys`, { token: roles.maintainer.token });
    assert.equal(byPath.status, 200);
  });

  test('group maintainers manage keys of the group\'s projects', async () => {
    const group = await makeGroup(t.app, { visibility: 0 });
    const sub = await makeGroup(t.app, { parent: group, visibility: 0 });
    const p = await makeProject(t.app, { namespace: sub });
    const gm = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, gm.user.id, Role.maintainer);
    const gd = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, gd.user.id, Role.developer);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/deploy_keys`, { token: gm.token })).status, 200);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/deploy_keys`, { token: gd.token })).status, 403);
  });
});

describe('project deploy keys: create', () => {
  test('creates a key with every field in order, fingerprints as ssh-keygen prints them', async () => {
    const { project, roles } = await setup();
    const r = await addKey(project.id, roles.maintainer.token, { key: ED25519, title: 'Deploy', can_push: true, expires_at: '2030-01-02T03:04:05Z' });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), [...KEY_FIELDS, 'can_push']);
    assert.equal(typeof r.body.id, 'number');
    assert.deepEqual({ ...r.body, id: 0 }, {
      id: 0,
      title: 'Deploy',
      key: ED25519,
      fingerprint: '16:7a:cd:48:22:7e:f0:8e:52:6c:99:7a:e2:c9:9e:a9',
      fingerprint_sha256: 'SHA256:QmzTMsKOA0fohNAznEONvfVUNMopIAQrpnUrSwCZTno',
      created_at: NOW,
      expires_at: '2030-01-02T03:04:05.000Z',
      can_push: true,
    });
    const row = await t.app.db.selectFrom('deploy_keys').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.equal(row.key_type, 'ssh-ed25519');
    assert.equal(row.key_bits, 256);
    assert.equal(row.key_blob, ED25519.split(' ')[1]);
    assert.equal(row.user_id, roles.maintainer.user.id);
    assert.equal(row.public, 0);
    const got = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys/${r.body.id}`, { token: roles.maintainer.token });
    assert.deepEqual([got.status, got.body], [200, r.body]);
    const list = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys`, { token: roles.owner.token });
    assert.deepEqual(list.body, [r.body]);
    assert.equal(list.headers['x-total'], '1');
    assert.deepEqual(await deployKeysOfProject(t.app, project.id), [{ id: r.body.id, title: 'Deploy', can_push: true }]);
    // Clean up the fixed key so that other tests may use it.
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/deploy_keys/${r.body.id}`, { token: roles.maintainer.token })).status, 204);
  });

  test('can_push defaults to false, expires_at to null; form bodies work', async () => {
    const { project, roles } = await setup();
    const r = await call(t.app, 'POST', `/projects/${project.id}/deploy_keys`, { token: roles.maintainer.token, form: { key: ed25519Key(), title: 'f' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.can_push, false);
    assert.equal(r.body.expires_at, null);
  });

  test('accepts RSA of 2048 bits, ECDSA, and both security-key types', async () => {
    const { project, roles } = await setup();
    for (const key of [rsaKey(2048), 'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBBxgNwR61s+tFmIOJpovaqQF+vMH+dqYoOeocUDTsrQFxbPMdvwAILmBwKQM+tFy1/r2zK0jOV36dQhPn23/WDg= c@ecdsab256', skEd25519Key(), skEcdsaKey()]) {
      const r = await addKey(project.id, roles.maintainer.token, { key, title: key.split(' ')[0] });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.key, key);
      assert.match(r.body.fingerprint_sha256, /^SHA256:[A-Za-z0-9+/]{43}$/);
      assert.match(r.body.fingerprint, /^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);
    }
  });

  test('stores the sanitised key: base64 joined, one comment word', async () => {
    const { project, roles } = await setup();
    const key = ed25519Key('me@host');
    const [type, b64] = key.split(' ');
    const r = await addKey(project.id, roles.maintainer.token, { key: `  ${type} ${b64.slice(0, 30)}\n${b64.slice(30)} me@host trailing words \n`, title: 't' });
    assert.equal(r.status, 201);
    assert.equal(r.body.key, `${type} ${b64} me@host`);
  });

  const invalid: Array<[string, () => Record<string, unknown>, unknown]> = [
    ['missing key', () => ({ title: 'x' }), { message: '400 (Bad request) "key" not given' }],
    ['missing title', () => ({ key: ed25519Key() }), { message: '400 (Bad request) "title" not given' }],
    ['can_push not a boolean', () => ({ key: ed25519Key(), title: 'x', can_push: 'maybe' }), { error: 'can_push is invalid' }],
    ['expires_at not a datetime', () => ({ key: ed25519Key(), title: 'x', expires_at: 'soon' }), { error: 'expires_at is invalid' }],
    ['a key that does not parse', () => ({ key: 'ssh-ed25519 bm90IGEga2V5', title: 'x' }),
      { message: { 'deploy_key.key': ['is invalid'], 'deploy_key.fingerprint_sha256': ['cannot be generated'] } }],
    ['an empty key', () => ({ key: '', title: 'x' }),
      { message: { 'deploy_key.key': ["can't be blank", 'is invalid'], 'deploy_key.fingerprint_sha256': ['cannot be generated'] } }],
    ['a blank title', () => ({ key: ed25519Key(), title: '  ' }), { message: { 'deploy_key.title': ["can't be blank"] } }],
    ['a title over 255 characters', () => ({ key: ed25519Key(), title: 'x'.repeat(256) }), { message: { 'deploy_key.title': ['is too long (maximum is 255 characters)'] } }],
    ['an RSA key under 2048 bits', () => ({ key: rsaKey(1024), title: 'x' }), { message: { 'deploy_key.key': ['must be at least 2048 bits'] } }],
    ['a DSA key', () => ({ key: DSA_KEY, title: 'x' }), { message: { 'deploy_key.key': ['type is forbidden. Must be RSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK'] } }],
    ['an expiry in the past', () => ({ key: ed25519Key(), title: 'x', expires_at: '2026-06-01T11:59:59Z' }), { message: { 'deploy_key.key': ['has expired'] } }],
    ['a NUL character in the title', () => ({ key: ed25519Key(), title: 'a\u0000b' }), { error: 'title is invalid' }],
    ['a NUL character in the key', () => ({ key: ed25519Key('c\u0000'), title: 'x' }), { error: 'key is invalid' }],
    ['a key over 5000 characters', () => ({ key: `ssh-rsa ${'A'.repeat(5001)}`, title: 'x' }),
      { message: { 'deploy_key.key': ['is too long (maximum is 5000 characters)', 'is invalid'], 'deploy_key.fingerprint_sha256': ['cannot be generated'] } }],
  ];
  let shared: Awaited<ReturnType<typeof setup>>;
  before(async () => { shared = await setup(); });
  for (const [name, body, expected] of invalid) {
    test(`refuses ${name} with 400 and changes nothing`, async () => {
      const { project, roles } = shared;
      const before = [await keyCount(), await linkCount()];
      const r = await addKey(project.id, roles.maintainer.token, body());
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, expected);
      assert.deepEqual([await keyCount(), await linkCount()], before);
    });
  }
});

describe('project deploy keys: one key, several projects', () => {
  test('the same key on the same project answers the existing link unchanged', async () => {
    const { project, roles } = await setup();
    const key = ed25519Key();
    const first = await addKey(project.id, roles.maintainer.token, { key, title: 'one', can_push: true });
    const again = await addKey(project.id, roles.maintainer.token, { key: key.replace('test@example', 'other'), title: 'two', can_push: false });
    assert.equal(again.status, 201);
    assert.deepEqual(again.body, first.body);
    assert.equal((await deployKeysOfProject(t.app, project.id)).length, 1);
  });

  test('a key of a project the caller can reach is attached with its own can_push', async () => {
    const maint = await quickUser(t.app);
    const a = await makeProject(t.app);
    const b = await makeProject(t.app);
    await addMember(t.app, { type: 'Project', id: a.id }, maint.user.id, Role.maintainer);
    await addMember(t.app, { type: 'Project', id: b.id }, maint.user.id, Role.maintainer);
    const key = ed25519Key();
    const first = await addKey(a.id, maint.token, { key, title: 'shared', can_push: false });
    const keys = await keyCount();
    const second = await addKey(b.id, maint.token, { key, title: 'ignored', can_push: true });
    assert.equal(second.status, 201);
    assert.equal(second.body.id, first.body.id);
    assert.equal(second.body.title, 'shared');
    assert.equal(second.body.can_push, true);
    assert.equal(await keyCount(), keys);
    assert.deepEqual(await deployKeysOfProject(t.app, a.id), [{ id: first.body.id, title: 'shared', can_push: false }]);
    assert.deepEqual(await deployKeysOfProject(t.app, b.id), [{ id: first.body.id, title: 'shared', can_push: true }]);
  });

  test('a key of a project the caller cannot reach is refused as taken', async () => {
    const { project: a, roles: ra } = await setup();
    const { project: b, roles: rb } = await setup();
    const key = ed25519Key();
    assert.equal((await addKey(a.id, ra.maintainer.token, { key, title: 'a' })).status, 201);
    const links = await linkCount();
    const r = await addKey(b.id, rb.maintainer.token, { key, title: 'b' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: { 'deploy_key.fingerprint_sha256': ['has already been taken'] } });
    assert.equal(await linkCount(), links);
    // An administrator may attach it anywhere.
    const admin = await addKey(b.id, rb.admin.token, { key, title: 'b' });
    assert.equal(admin.status, 201);
    assert.equal(admin.body.title, 'a');
  });

  test('concurrent adds of one new key give one key and one link', async () => {
    const { project, roles } = await setup();
    const key = ed25519Key();
    const results = await Promise.all([1, 2, 3].map(() => addKey(project.id, roles.maintainer.token, { key, title: 'race' })));
    for (const r of results) assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
    assert.equal((await deployKeysOfProject(t.app, project.id)).length, 1);
  });
});

describe('project deploy keys: update, delete, enable', () => {
  test('PUT changes title and can_push; needs one of them', async () => {
    const { project, roles } = await setup();
    const k = (await addKey(project.id, roles.maintainer.token, { key: ed25519Key(), title: 'old' })).body;
    (t.clock as ManualClock).advance(1000);
    const r = await call(t.app, 'PUT', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token, body: { title: 'new', can_push: true } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...k, title: 'new', can_push: true });
    const none = await call(t.app, 'PUT', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token, body: {} });
    assert.deepEqual([none.status, none.body], [400, { error: 'title, can_push are missing, at least one parameter must be provided' }]);
    const blank = await call(t.app, 'PUT', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token, body: { title: '' } });
    assert.deepEqual([blank.status, blank.body], [400, { message: { 'deploy_key.title': ["can't be blank"] } }]);
    const missing = await call(t.app, 'PUT', `/projects/${project.id}/deploy_keys/999999`, { token: roles.maintainer.token, body: { title: 'x' } });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
    const dev = await call(t.app, 'PUT', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.developer.token, body: { title: 'x' } });
    assert.equal(dev.status, 403);
    const got = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token });
    assert.equal(got.body.title, 'new');
    assert.equal(got.body.can_push, true);
  });

  test('PUT keeps the title of a key other projects share unless an administrator asks', async () => {
    const maint = await quickUser(t.app);
    const admin = await quickUser(t.app, { admin: true });
    const a = await makeProject(t.app);
    const b = await makeProject(t.app);
    for (const p of [a, b]) await addMember(t.app, { type: 'Project', id: p.id }, maint.user.id, Role.maintainer);
    const key = ed25519Key();
    const k = (await addKey(a.id, maint.token, { key, title: 'shared' })).body;
    await addKey(b.id, maint.token, { key, title: 'shared' });
    const r = await call(t.app, 'PUT', `/projects/${a.id}/deploy_keys/${k.id}`, { token: maint.token, body: { title: 'mine', can_push: true } });
    assert.equal(r.status, 200);
    assert.equal(r.body.title, 'shared');
    assert.equal(r.body.can_push, true);
    const byAdmin = await call(t.app, 'PUT', `/projects/${a.id}/deploy_keys/${k.id}`, { token: admin.token, body: { title: 'renamed' } });
    assert.equal(byAdmin.body.title, 'renamed');
    assert.equal(byAdmin.body.can_push, true);
  });

  test('ids beyond the integer range are simply not found', async () => {
    const { project, roles } = await setup();
    const big = '99999999999999999999';
    const huge = '3000000000';
    const checks: Array<[string, string, unknown]> = [
      ['GET', `/projects/${big}/deploy_keys`, { message: '404 Project Not Found' }],
      ['GET', `/projects/${project.id}/deploy_keys/${huge}`, { message: '404 Not found' }],
      ['PUT', `/projects/${project.id}/deploy_keys/${huge}`, { message: '404 Not found' }],
      ['DELETE', `/projects/${project.id}/deploy_keys/${huge}`, { message: '404 Deploy key Not Found' }],
      ['POST', `/projects/${project.id}/deploy_keys/${huge}/enable`, { message: '404 Deploy key Not Found' }],
      ['GET', `/users/${huge}/project_deploy_keys`, { message: '404 User Not Found' }],
    ];
    const nul = await call(t.app, 'GET', '/users/a%00b/project_deploy_keys', { token: roles.admin.token });
    assert.deepEqual([nul.status, nul.body], [400, { error: 'id_or_username is invalid' }]);
    const nulPath = await call(t.app, 'GET', '/projects/a%2Fb%00/deploy_keys', { token: roles.admin.token });
    assert.deepEqual([nulPath.status, nulPath.body], [400, { error: 'id is invalid' }]);
    for (const [method, url, body] of checks) {
      const r = await call(t.app, method, url, { token: roles.admin.token, body: method === 'PUT' ? { title: 'x' } : undefined });
      assert.deepEqual([r.status, r.body], [404, body], `${method} ${url}`);
    }
  });

  test('GET of a key not on the project is 404 Not found; a bad key_id is a parameter error', async () => {
    const { project, roles } = await setup();
    const r = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys/999999`, { token: roles.maintainer.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
    const bad = await call(t.app, 'GET', `/projects/${project.id}/deploy_keys/abc`, { token: roles.maintainer.token });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'key_id is invalid' }]);
  });

  test('DELETE removes the last use of a key, and only the link of a shared one', async () => {
    const maint = await quickUser(t.app);
    const a = await makeProject(t.app);
    const b = await makeProject(t.app);
    for (const p of [a, b]) await addMember(t.app, { type: 'Project', id: p.id }, maint.user.id, Role.maintainer);
    const key = ed25519Key();
    const k = (await addKey(a.id, maint.token, { key, title: 'shared' })).body;
    await addKey(b.id, maint.token, { key, title: 'shared' });
    const first = await call(t.app, 'DELETE', `/projects/${a.id}/deploy_keys/${k.id}`, { token: maint.token });
    assert.equal(first.status, 204);
    assert.equal(first.text, '');
    assert.deepEqual(await deployKeysOfProject(t.app, a.id), []);
    assert.ok(await t.app.db.selectFrom('deploy_keys').select('id').where('id', '=', k.id).executeTakeFirst());
    const again = await call(t.app, 'DELETE', `/projects/${a.id}/deploy_keys/${k.id}`, { token: maint.token });
    assert.deepEqual([again.status, again.body], [404, { message: '404 Deploy key Not Found' }]);
    assert.equal((await call(t.app, 'DELETE', `/projects/${b.id}/deploy_keys/${k.id}`, { token: maint.token })).status, 204);
    assert.equal(await t.app.db.selectFrom('deploy_keys').select('id').where('id', '=', k.id).executeTakeFirst(), undefined);
  });

  test('DELETE honours If-Unmodified-Since; a public key survives its last link', async () => {
    const { project, roles } = await setup();
    const k = (await addKey(project.id, roles.maintainer.token, { key: ed25519Key(), title: 'k' })).body;
    const stale = await call(t.app, 'DELETE', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token, headers: { 'if-unmodified-since': 'Mon, 01 Jun 2026 11:00:00 GMT' } });
    assert.deepEqual([stale.status, stale.body], [412, { message: '412 Precondition Failed' }]);
    assert.equal((await deployKeysOfProject(t.app, project.id)).length, 1);
    const dev = await call(t.app, 'DELETE', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.developer.token });
    assert.equal(dev.status, 403);
    const ok = await call(t.app, 'DELETE', `/projects/${project.id}/deploy_keys/${k.id}`, { token: roles.maintainer.token, headers: { 'if-unmodified-since': 'Tue, 02 Jun 2026 11:00:00 GMT' } });
    assert.equal(ok.status, 204);

    const pub = await call(t.app, 'POST', '/deploy_keys', { token: roles.admin.token, body: { key: ed25519Key(), title: 'instance' } });
    assert.equal(pub.status, 201);
    await call(t.app, 'POST', `/projects/${project.id}/deploy_keys/${pub.body.id}/enable`, { token: roles.maintainer.token });
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/deploy_keys/${pub.body.id}`, { token: roles.maintainer.token })).status, 204);
    assert.ok(await t.app.db.selectFrom('deploy_keys').select('id').where('id', '=', pub.body.id).executeTakeFirst());
  });

  test('enable attaches a reachable key read-only, idempotently, answering 201 without can_push', async () => {
    const maint = await quickUser(t.app);
    const a = await makeProject(t.app);
    const b = await makeProject(t.app);
    for (const p of [a, b]) await addMember(t.app, { type: 'Project', id: p.id }, maint.user.id, Role.maintainer);
    const k = (await addKey(a.id, maint.token, { key: ed25519Key(), title: 'k', can_push: true })).body;
    const r = await call(t.app, 'POST', `/projects/${b.id}/deploy_keys/${k.id}/enable`, { token: maint.token, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), KEY_FIELDS);
    const { can_push: _c, ...plain } = k;
    assert.deepEqual(r.body, plain);
    const again = await call(t.app, 'POST', `/projects/${b.id}/deploy_keys/${k.id}/enable`, { token: maint.token });
    assert.equal(again.status, 201);
    assert.deepEqual(await deployKeysOfProject(t.app, b.id), [{ id: k.id, title: 'k', can_push: false }]);
  });

  test('enable of a key the caller cannot reach, or of no key, is 404 Deploy key Not Found', async () => {
    const { project: a, roles: ra } = await setup();
    const { project: b, roles: rb } = await setup();
    const k = (await addKey(a.id, ra.maintainer.token, { key: ed25519Key(), title: 'k' })).body;
    for (const id of [k.id, 999999]) {
      const r = await call(t.app, 'POST', `/projects/${b.id}/deploy_keys/${id}/enable`, { token: rb.maintainer.token });
      assert.deepEqual([r.status, r.body], [404, { message: '404 Deploy key Not Found' }]);
    }
    assert.deepEqual(await deployKeysOfProject(t.app, b.id), []);
    const dev = await call(t.app, 'POST', `/projects/${a.id}/deploy_keys/${k.id}/enable`, { token: ra.developer.token });
    assert.equal(dev.status, 403);
    // A Guest of the key's project can reach it.
    await addMember(t.app, { type: 'Project', id: a.id }, rb.maintainer.user.id, Role.guest);
    assert.equal((await call(t.app, 'POST', `/projects/${b.id}/deploy_keys/${k.id}/enable`, { token: rb.maintainer.token })).status, 201);
  });
});

describe('instance deploy keys', () => {
  test('GET /deploy_keys is for administrators: 401, 403, then every key with its projects', async () => {
    const admin = await quickUser(t.app, { admin: true });
    const user = await quickUser(t.app);
    assert.deepEqual((await call(t.app, 'GET', '/deploy_keys')).body, { message: '401 Unauthorized' });
    const forbidden = await call(t.app, 'GET', '/deploy_keys', { token: user.token });
    assert.deepEqual([forbidden.status, forbidden.body], [403, { message: '403 Forbidden' }]);

    const group = await makeGroup(t.app, { path: `grp${Date.now()}` });
    const a = await makeProject(t.app, { namespace: group, description: 'first' });
    const b = await makeProject(t.app, { namespace: group });
    const k = (await addKey(a.id, admin.token, { key: ed25519Key(), title: 'both', can_push: true })).body;
    await addKey(b.id, admin.token, { key: k.key, title: 'both', can_push: false });
    const pub = (await call(t.app, 'POST', '/deploy_keys', { token: admin.token, body: { key: ed25519Key(), title: 'public', expires_at: '2031-01-01T00:00:00Z' } })).body;
    assert.deepEqual(Object.keys(pub), KEY_FIELDS);
    assert.equal(pub.expires_at, '2031-01-01T00:00:00.000Z');

    const all = await call(t.app, 'GET', '/deploy_keys', { token: admin.token, query: { per_page: '100' } });
    assert.equal(all.status, 200);
    const entry = all.body.find((e: any) => e.id === k.id);
    assert.deepEqual(Object.keys(entry), [...KEY_FIELDS, 'projects_with_write_access', 'projects_with_readonly_access']);
    const summary = (p: typeof a) => ({
      id: p.id, description: p.description, name: p.name, name_with_namespace: `${group.full_name} / ${p.name}`, path: p.path,
      path_with_namespace: p.full_path, created_at: new Date(p.created_at).toISOString(),
    });
    assert.deepEqual(entry.projects_with_write_access, [summary(a)]);
    assert.deepEqual(entry.projects_with_readonly_access, [summary(b)]);
    assert.equal(entry.projects_with_write_access[0].description, 'first');
    assert.ok(all.body.some((e: any) => e.id === pub.id));

    const onlyPublic = await call(t.app, 'GET', '/deploy_keys', { token: admin.token, query: { public: 'true' } });
    assert.ok(onlyPublic.body.length >= 1);
    assert.ok(onlyPublic.body.every((e: any) => e.id !== k.id));
    assert.ok(onlyPublic.body.some((e: any) => e.id === pub.id));
    const badBool = await call(t.app, 'GET', '/deploy_keys', { token: admin.token, query: { public: 'yes' } });
    assert.deepEqual([badBool.status, badBool.body], [400, { error: 'public is invalid' }]);

    const paged = await call(t.app, 'GET', '/deploy_keys', { token: admin.token, query: { per_page: '1', page: '2' } });
    assert.equal(paged.body.length, 1);
    assert.equal(paged.headers['x-page'], '2');
    assert.equal(paged.headers['x-per-page'], '1');
  });

  test('POST /deploy_keys: admin only, the same validation without a prefix', async () => {
    const admin = await quickUser(t.app, { admin: true });
    const user = await quickUser(t.app);
    assert.equal((await call(t.app, 'POST', '/deploy_keys', { token: user.token, body: { key: ed25519Key(), title: 'x' } })).status, 403);
    const key = ed25519Key();
    assert.equal((await call(t.app, 'POST', '/deploy_keys', { token: admin.token, body: { key, title: 'x' } })).status, 201);
    const dup = await call(t.app, 'POST', '/deploy_keys', { token: admin.token, body: { key, title: 'x' } });
    assert.deepEqual([dup.status, dup.body], [400, { message: { fingerprint_sha256: ['has already been taken'] } }]);
    const bad = await call(t.app, 'POST', '/deploy_keys', { token: admin.token, body: { key: 'nope', title: '' } });
    assert.deepEqual(bad.body, { message: { title: ["can't be blank"], key: ['is invalid'], fingerprint_sha256: ['cannot be generated'] } });
  });

  test('a public key can be enabled by any project maintainer', async () => {
    const admin = await quickUser(t.app, { admin: true });
    const { project, roles } = await setup();
    const pub = (await call(t.app, 'POST', '/deploy_keys', { token: admin.token, body: { key: ed25519Key(), title: 'public' } })).body;
    const r = await call(t.app, 'POST', `/projects/${project.id}/deploy_keys/${pub.id}/enable`, { token: roles.maintainer.token });
    assert.equal(r.status, 201);
    assert.deepEqual(await deployKeysOfProject(t.app, project.id), [{ id: pub.id, title: 'public', can_push: false }]);
  });
});

describe('GET /users/:id_or_username/project_deploy_keys', () => {
  test('keys of projects both users maintain; 403 without a common project; 404 for no user', async () => {
    const a = await quickUser(t.app);
    const b = await quickUser(t.app);
    const dev = await quickUser(t.app);
    const shared = await makeProject(t.app);
    const onlyA = await makeProject(t.app);
    await addMember(t.app, { type: 'Project', id: shared.id }, a.user.id, Role.maintainer);
    await addMember(t.app, { type: 'Project', id: shared.id }, b.user.id, Role.owner);
    await addMember(t.app, { type: 'Project', id: shared.id }, dev.user.id, Role.developer);
    await addMember(t.app, { type: 'Project', id: onlyA.id }, a.user.id, Role.maintainer);
    const k1 = (await addKey(shared.id, a.token, { key: ed25519Key(), title: 'shared' })).body;
    const k2 = (await addKey(onlyA.id, a.token, { key: ed25519Key(), title: 'private' })).body;

    const own = await call(t.app, 'GET', `/users/${a.user.id}/project_deploy_keys`, { token: a.token });
    assert.equal(own.status, 200);
    assert.deepEqual(own.body.map((k: any) => k.id), [k1.id, k2.id]);
    assert.deepEqual(Object.keys(own.body[0]), KEY_FIELDS);
    assert.equal(own.headers['x-total'], '2');

    const common = await call(t.app, 'GET', `/users/${a.user.username}/project_deploy_keys`, { token: b.token });
    assert.deepEqual(common.body.map((k: any) => k.id), [k1.id]);

    const denied = await call(t.app, 'GET', `/users/${a.user.id}/project_deploy_keys`, { token: dev.token });
    assert.deepEqual([denied.status, denied.body], [403, { message: '403 Forbidden - No common authorized project found' }]);
    const missing = await call(t.app, 'GET', '/users/no-such-user-x/project_deploy_keys', { token: a.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 User Not Found' }]);
    assert.equal((await call(t.app, 'GET', `/users/${a.user.id}/project_deploy_keys`)).status, 401);
  });

  test('group maintainers share the group\'s projects', async () => {
    const group = await makeGroup(t.app);
    const p = await makeProject(t.app, { namespace: group });
    const a = await quickUser(t.app);
    const b = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, a.user.id, Role.maintainer);
    await addMember(t.app, { type: 'Namespace', id: group.id }, b.user.id, Role.owner);
    const k = (await addKey(p.id, a.token, { key: ed25519Key(), title: 'g' })).body;
    const r = await call(t.app, 'GET', `/users/${a.user.id}/project_deploy_keys`, { token: b.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x: any) => x.id), [k.id]);
  });
});
