import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { ed25519Key } from '../../../test/support/ssh-key-fixtures.ts';

// Who may call the users-area endpoints: anonymous, another user, the user themself, an administrator, and
// tokens with only read_user.
let t: TestApp;
let admin: TestUser;
let alice: TestUser;
let bob: TestUser;
let readUser: string;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'root2', admin: true });
  alice = await makeUser(t.app, { username: 'alice' });
  bob = await makeUser(t.app, { username: 'bob' });
  readUser = await makeToken(t.app, alice.user, ['read_user']);
});
after(async () => { await t.close(); });

type Who = 'anonymous' | 'other' | 'self' | 'admin' | 'read_user';
const token = (w: Who) => ({ anonymous: undefined, other: bob.token, self: alice.token, admin: admin.token, read_user: readUser })[w];

describe('users area: access', () => {
  // [method, path, body, expected status for anonymous, other, self, admin, read_user token]
  const table: Array<[string, string, Record<string, unknown> | undefined, [number, number, number, number, number]]> = [
    ['GET', '/version', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/metadata', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/user/keys', undefined, [401, 200, 200, 200, 200]],
    ['POST', '/user/keys', { title: 'k', key: 'FRESH' }, [401, 201, 201, 201, 403]],
    ['GET', '/users/:alice/keys', undefined, [200, 200, 200, 200, 200]],
    ['POST', '/users/:alice/keys', { title: 'k', key: 'FRESH' }, [401, 403, 403, 201, 403]],
    ['GET', '/keys?fingerprint=SHA256:nothing', undefined, [401, 403, 403, 404, 403]],
    ['GET', '/user/emails', undefined, [401, 200, 200, 200, 200]],
    ['GET', '/users/:alice/emails', undefined, [401, 403, 403, 200, 403]],
    ['GET', '/user/status', undefined, [401, 200, 200, 200, 200]],
    ['PUT', '/user/status', { message: 'hi' }, [401, 200, 200, 200, 403]],
    ['GET', '/users/:alice/status', undefined, [200, 200, 200, 200, 200]],
    ['GET', '/users/:alice/custom_attributes', undefined, [401, 403, 403, 200, 403]],
    ['PUT', '/users/:alice/custom_attributes/k', { value: 'v' }, [401, 403, 403, 200, 403]],
    ['GET', '/users/:alice/memberships', undefined, [401, 403, 403, 200, 403]],
    ['POST', '/users/:bob/ban', undefined, [401, 403, 403, 201, 403]],
  ];
  const whos: Who[] = ['anonymous', 'other', 'self', 'admin', 'read_user'];
  for (const [method, pattern, body, statuses] of table) {
    const path = () => pattern.replace(':alice', String(alice.user.id)).replace(':bob', String(bob.user.id));
    test(`${method} ${pattern}`, async () => {
      for (const [i, who] of whos.entries()) {
        const b = body && body.key === 'FRESH' ? { ...body, key: ed25519Key() } : body;
        const r = await call(t.app, method, path(), { token: token(who), body: b });
        assert.equal(r.status, statuses[i], `${who}: ${JSON.stringify(r.body)}`);
        if (method === 'POST' && path().endsWith('/ban') && r.status === 201) await call(t.app, 'POST', path().replace('/ban', '/unban'), { token: admin.token });
      }
    });
  }
});

describe('users area: bad input changes nothing', () => {
  const keyCount = async () => (await t.app.db.selectFrom('ssh_keys').select('id').execute()).length;
  test('SSH keys: missing, invalid, duplicate, expired, bad usage type', async () => {
    const before = await keyCount();
    const key = ed25519Key();
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{ title: 'k' }, 400, { message: '400 (Bad request) "key" not given' }],
      [{ key, title: 'k', usage_type: 'both' }, 400, { error: 'usage_type does not have a valid value' }],
      [{ key: 'ssh-rsa nonsense', title: 'k' }, 400, { message: { key: ['is invalid'], fingerprint_sha256: ['cannot be generated'] } }],
      [{ key, title: 'k', expires_at: '2000-01-01T00:00:00Z' }, 400, { message: { key: ['has expired'] } }],
    ];
    for (const [body, status, answer] of cases) {
      const r = await call(t.app, 'POST', '/user/keys', { token: alice.token, body });
      assert.equal(r.status, status, JSON.stringify(body));
      assert.deepEqual(r.body, answer, JSON.stringify(body));
    }
    assert.equal(await keyCount(), before);
    assert.equal((await call(t.app, 'POST', '/user/keys', { token: alice.token, body: { key, title: 'k' } })).status, 201);
    const dup = await call(t.app, 'POST', '/user/keys', { token: bob.token, body: { key, title: 'k' } });
    assert.deepEqual([dup.status, dup.body], [400, { message: { fingerprint_sha256: ['has already been taken'] } }]);
    assert.equal(await keyCount(), before + 1);
  });

  test("another user's key, e-mail or attribute is 404 through /user", async () => {
    const k = await call(t.app, 'POST', '/user/keys', { token: bob.token, body: { key: ed25519Key(), title: 'bob' } });
    for (const m of ['GET', 'DELETE']) {
      const r = await call(t.app, m, `/user/keys/${k.body.id}`, { token: alice.token });
      assert.deepEqual([r.status, r.body], [404, { message: '404 Key Not Found' }]);
    }
    const e = await call(t.app, 'POST', '/user/emails', { token: bob.token, body: { email: 'bob2@example.com' } });
    assert.equal(e.status, 201);
    const r = await call(t.app, 'DELETE', `/user/emails/${e.body.id}`, { token: alice.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Email Not Found' }]);
    const a = await call(t.app, 'GET', `/users/${alice.user.id}/custom_attributes/nope`, { token: admin.token });
    assert.deepEqual([a.status, a.body], [404, { message: '404 Custom Attribute Not Found' }]);
  });

  test('status: too long a message and an unknown availability are refused and change nothing', async () => {
    await call(t.app, 'PUT', '/user/status', { token: bob.token, body: { message: 'kept' } });
    const long = await call(t.app, 'PUT', '/user/status', { token: bob.token, body: { message: 'x'.repeat(101) } });
    assert.deepEqual([long.status, long.body], [400, { message: { message: ['is too long (maximum is 100 characters)'] } }]);
    const avail = await call(t.app, 'PUT', '/user/status', { token: bob.token, body: { availability: 'away' } });
    assert.deepEqual([avail.status, avail.body], [400, { error: 'availability does not have a valid value' }]);
    const now = await call(t.app, 'GET', '/users/bob/status', { token: alice.token });
    assert.equal(now.body.message, 'kept');
    // Nothing left to show removes the status.
    await call(t.app, 'PUT', '/user/status', { token: bob.token, body: {} });
    assert.equal((await call(t.app, 'GET', `/users/${bob.user.id}/status`, {})).body.message, null);
  });
});
