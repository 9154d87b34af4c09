import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeToken, makeUser, type TestUser } from '../support/fixtures.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';
import type { ManualClock } from '../../src/platform/clock.ts';

// Every credential form of the spec, token validity, scopes and sudo.

const UNAUTHORIZED = { message: '401 Unauthorized' };
const wwwAuth = (d: string) => `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${d}"`;
const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const IMPERSONATION_OFF = 'Token is an impersonation token but impersonation was disabled.';
const scopeBody = (scope: string) => ({
  error: 'insufficient_scope',
  error_description: 'The request requires higher privileges than provided by the access token.',
  scope,
});

let t: TestApp;
let admin: TestUser;
let alice: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'root', admin: true });
  alice = await makeUser(t.app, { username: 'Alice' });
});
after(async () => { await t.close(); });

async function newSession(userId: number, o: { expiresAt?: number } = {}): Promise<{ cookie: string; csrf: string }> {
  const cookie = `sess-${Math.random().toString(36).slice(2)}`;
  const csrf = `csrf-${Math.random().toString(36).slice(2)}`;
  const now = t.clock.now();
  await t.app.db.insertInto('sessions').values({
    user_id: userId, digest: digest(cookie), csrf_digest: digest(csrf), created_at: now, last_seen_at: now,
    expires_at: o.expiresAt ?? now + 86_400_000, ip: null, user_agent: null,
  }).execute();
  return { cookie: `_service_session=${cookie}`, csrf };
}

describe('credential forms', () => {
  test('PRIVATE-TOKEN header, private_token query, Bearer, access_token query all authenticate a personal token', async () => {
    const forms: Array<[string, { url: string; headers?: Record<string, string> }]> = [
      ['PRIVATE-TOKEN', { url: '/user', headers: { 'private-token': alice.token } }],
      ['private_token', { url: `/user?private_token=${alice.token}` }],
      ['Bearer', { url: '/user', headers: { authorization: `Bearer ${alice.token}` } }],
      ['bearer (any case)', { url: '/user', headers: { authorization: `bearer ${alice.token}` } }],
      ['access_token', { url: `/user?access_token=${alice.token}` }],
    ];
    for (const [name, f] of forms) {
      const r = await call(t.app, 'GET', f.url, { headers: f.headers });
      assert.equal(r.status, 200, name);
      assert.equal(r.body.username, 'Alice', name);
    }
    const body = await call(t.app, 'POST', `/users/${alice.user.id}/personal_access_tokens`, { body: { private_token: admin.token, name: 'via-body', scopes: ['api'] } });
    assert.equal(body.status, 201, 'a token in the JSON body counts as the private_token parameter');
  });

  test('an unknown token answers 401 in every form, even on a public route', async () => {
    const forms: Array<{ url: string; headers?: Record<string, string> }> = [
      { url: '/users?username=Alice', headers: { 'private-token': 'glpat-nope' } },
      { url: '/users?username=Alice&private_token=glpat-nope' },
      { url: '/users?username=Alice', headers: { authorization: 'Bearer glpat-nope' } },
      { url: '/users?username=Alice&access_token=glpat-nope' },
    ];
    for (const f of forms) {
      const r = await call(t.app, 'GET', f.url, { headers: f.headers });
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], f.url);
      assert.equal(r.headers['www-authenticate'], undefined);
    }
    const anon = await call(t.app, 'GET', '/users?username=Alice');
    assert.equal(anon.status, 200, 'the same route works without credentials');
  });

  test('no credentials on an authenticated route: 401 without WWW-Authenticate', async () => {
    const r = await call(t.app, 'GET', '/user');
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    assert.equal(r.headers['www-authenticate'], undefined);
  });

  test('the _service_session cookie: GET works; a write needs X-CSRF-Token, otherwise the caller is anonymous', async () => {
    const s = await newSession(admin.user.id);
    const me = await call(t.app, 'GET', '/user', { headers: { cookie: s.cookie } });
    assert.equal(me.status, 200);
    assert.equal(me.body.username, 'root');
    const target = await makeUser(t.app);
    let r = await call(t.app, 'POST', `/users/${target.user.id}/block`, { headers: { cookie: s.cookie } });
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    r = await call(t.app, 'POST', `/users/${target.user.id}/block`, { headers: { cookie: s.cookie, 'x-csrf-token': 'wrong' } });
    assert.equal(r.status, 401);
    assert.equal((await t.app.db.selectFrom('users').select('state').where('id', '=', target.user.id).executeTakeFirstOrThrow()).state, 'active');
    r = await call(t.app, 'POST', `/users/${target.user.id}/block`, { headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    assert.equal(r.status, 201);
    assert.equal((await t.app.db.selectFrom('users').select('state').where('id', '=', target.user.id).executeTakeFirstOrThrow()).state, 'blocked');
  });

  test('an unknown or expired session cookie is no session', async () => {
    const expired = await newSession(alice.user.id, { expiresAt: t.clock.now() - 1 });
    for (const cookie of [expired.cookie, '_service_session=made-up']) {
      const r = await call(t.app, 'GET', '/user', { headers: { cookie } });
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    }
  });

  test('a token beats the cookie when both are sent', async () => {
    const s = await newSession(admin.user.id);
    const r = await call(t.app, 'GET', '/user', { token: alice.token, headers: { cookie: s.cookie } });
    assert.equal(r.body.username, 'Alice');
  });
});

describe('token validity', () => {
  test('an expired token: 401 invalid_token with the exact WWW-Authenticate', async () => {
    const clock = t.clock as ManualClock;
    const token = await makeToken(t.app, alice.user, ['api'], { expiresAt: '2026-06-03' });
    assert.equal((await call(t.app, 'GET', '/user', { token })).status, 200);
    const saved = clock.now();
    clock.set(Date.parse('2026-06-03T00:00:00Z'));
    try {
      const r = await call(t.app, 'GET', '/user', { token });
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { error: 'invalid_token', error_description: EXPIRED });
      assert.equal(r.headers['www-authenticate'], wwwAuth(EXPIRED));
      assert.match(String(r.headers['content-type']), /^application\/json/);
      const pub = await call(t.app, 'GET', `/users?username=Alice&private_token=${token}`);
      assert.equal(pub.status, 401, 'also on a public route');
    } finally {
      clock.set(saved);
    }
  });

  test('a revoked token: 401 invalid_token', async () => {
    const token = await makeToken(t.app, alice.user, ['api']);
    assert.equal((await call(t.app, 'DELETE', '/personal_access_tokens/self', { token })).status, 204);
    const r = await call(t.app, 'GET', '/user', { token });
    assert.deepEqual([r.status, r.body], [401, { error: 'invalid_token', error_description: REVOKED }]);
    assert.equal(r.headers['www-authenticate'], wwwAuth(REVOKED));
  });

  test('impersonation tokens work while impersonation is enabled and are refused when it is off', async () => {
    const token = await makeToken(t.app, alice.user, ['api'], { impersonation: true });
    const ok = await call(t.app, 'GET', '/personal_access_tokens/self', { token });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.impersonation, true);
    const off = await buildTestApp({ config: { impersonationEnabled: false } });
    try {
      const u = await makeUser(off.app);
      const imp = await makeToken(off.app, u.user, ['api'], { impersonation: true });
      const r = await call(off.app, 'GET', '/user', { token: imp });
      assert.deepEqual([r.status, r.body], [401, { error: 'invalid_token', error_description: IMPERSONATION_OFF }]);
      assert.equal(r.headers['www-authenticate'], wwwAuth(IMPERSONATION_OFF));
      assert.equal((await call(off.app, 'GET', '/user', { token: u.token })).status, 200, 'personal tokens still work');
      const a = await makeUser(off.app, { admin: true });
      const create = await call(off.app, 'POST', `/users/${u.user.id}/impersonation_tokens`, { token: a.token, body: { name: 'x', scopes: ['api'] } });
      assert.deepEqual([create.status, create.body], [403, { message: '403 Forbidden - Impersonation has been disabled' }]);
    } finally {
      await off.close();
    }
  });

  test('a blocked user cannot authenticate: 403 with the reference text', async () => {
    const blocked = await makeUser(t.app, { state: 'blocked' });
    for (const url of ['/user', `/users?username=${blocked.user.username}`]) {
      const r = await call(t.app, 'GET', url, { token: blocked.token });
      assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden - Your account has been blocked.' }]);
    }
    const s = await newSession(blocked.user.id);
    const r = await call(t.app, 'GET', '/user', { headers: { cookie: s.cookie } });
    assert.equal(r.status, 403, 'nor with a session');
  });

  test('last_used_at is recorded when a token is used', async () => {
    const u = await makeUser(t.app);
    await call(t.app, 'GET', '/user', { token: u.token });
    const row = await t.app.db.selectFrom('personal_access_tokens').select('last_used_at').where('user_id', '=', u.user.id).executeTakeFirstOrThrow();
    assert.equal(row.last_used_at, t.clock.now());
  });
});

describe('scopes', () => {
  test('read_api reads but cannot write: 403 insufficient_scope naming the scopes a write accepts', async () => {
    const readApi = await makeToken(t.app, admin.user, ['read_api']);
    assert.equal((await call(t.app, 'GET', '/users', { token: readApi })).status, 200);
    const target = await makeUser(t.app);
    const r = await call(t.app, 'POST', `/users/${target.user.id}/block`, { token: readApi });
    assert.deepEqual([r.status, r.body], [403, scopeBody('api')]);
    assert.equal(r.headers['www-authenticate'], undefined);
    assert.equal((await t.app.db.selectFrom('users').select('state').where('id', '=', target.user.id).executeTakeFirstOrThrow()).state, 'active');
  });

  test('read_user is accepted on user routes only', async () => {
    const readUser = await makeToken(t.app, alice.user, ['read_user']);
    assert.equal((await call(t.app, 'GET', '/user', { token: readUser })).status, 200);
    assert.equal((await call(t.app, 'GET', '/users', { token: readUser })).status, 200);
    assert.equal((await call(t.app, 'GET', `/users/${admin.user.id}`, { token: readUser })).status, 200);
    const r = await call(t.app, 'GET', '/personal_access_tokens', { token: readUser });
    assert.deepEqual([r.status, r.body], [403, scopeBody('api read_api')]);
    const w = await call(t.app, 'DELETE', '/personal_access_tokens/self', { token: readUser });
    assert.deepEqual([w.status, w.body], [403, scopeBody('api')]);
  });

  test('read_repository alone opens no API route', async () => {
    const repo = await makeToken(t.app, alice.user, ['read_repository', 'write_repository']);
    const r = await call(t.app, 'GET', '/user', { token: repo });
    assert.deepEqual([r.status, r.body], [403, scopeBody('api read_api read_user')]);
  });

  test('with admin mode on, an administrator needs the admin_mode scope for admin rights', async () => {
    const am = await buildTestApp({ config: { adminMode: true } });
    try {
      const a = await makeUser(am.app, { admin: true });
      let r = await call(am.app, 'GET', '/personal_access_tokens?user_id=1', { token: a.token });
      assert.equal(r.status, 200);
      r = await call(am.app, 'POST', '/users', { token: a.token, body: { email: 'n@example.com', name: 'N', username: 'n1', password: 'password123' } });
      assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
      const sudoNoMode = await makeToken(am.app, a.user, ['api', 'sudo']);
      r = await call(am.app, 'GET', '/user', { token: sudoNoMode, headers: { sudo: String(a.user.id) } });
      assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden - Must be admin to use sudo' }]);
      const sudoWithMode = await makeToken(am.app, a.user, ['api', 'sudo', 'admin_mode']);
      r = await call(am.app, 'GET', '/user', { token: sudoWithMode, headers: { sudo: String(a.user.id) } });
      assert.equal(r.status, 200);
      const withScope = await makeToken(am.app, a.user, ['api', 'admin_mode']);
      r = await call(am.app, 'POST', '/users', { token: withScope, body: { email: 'n@example.com', name: 'N', username: 'n1', password: 'password123' } });
      assert.equal(r.status, 201);
      assert.equal(r.body.is_admin, false);
    } finally {
      await am.close();
    }
  });
});

describe('sudo', () => {
  test('header or parameter, id or username in any case: the request runs as the target', async () => {
    const cases: Array<{ url: string; headers?: Record<string, string> }> = [
      { url: '/user', headers: { sudo: String(alice.user.id) } },
      { url: '/user', headers: { sudo: 'alice' } },
      { url: `/user?sudo=${alice.user.id}` },
      { url: '/user?sudo=ALICE' },
      { url: '/user?sudo=alice', headers: { sudo: 'root' } },
    ];
    for (const c of cases) {
      const r = await call(t.app, 'GET', c.url, { token: admin.token, headers: c.headers });
      assert.equal(r.status, 200, c.url);
      assert.equal(r.body.username, 'Alice', `${c.url} ${JSON.stringify(c.headers)}`);
      assert.equal(r.body.is_admin, undefined, 'the target is no administrator, so no admin fields');
    }
    const target = await makeUser(t.app);
    const r = await call(t.app, 'POST', `/users/${target.user.id}/block`, { token: admin.token, headers: { sudo: 'alice' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }], 'with the target\'s rights, not the administrator\'s');
  });

  test('sudo by a non-administrator: 403 Must be admin', async () => {
    const withSudo = await makeToken(t.app, alice.user, ['api', 'sudo']);
    const r = await call(t.app, 'GET', '/user', { token: withSudo, headers: { sudo: 'root' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden - Must be admin to use sudo' }]);
  });

  test('sudo with a token lacking the sudo scope: 403 insufficient_scope, scope "sudo"', async () => {
    const noSudo = await makeToken(t.app, admin.user, ['api']);
    const r = await call(t.app, 'GET', '/user', { token: noSudo, headers: { sudo: 'alice' } });
    assert.deepEqual([r.status, r.body], [403, scopeBody('sudo')]);
  });

  test('sudo to an unknown user: 404 with the exact text', async () => {
    let r = await call(t.app, 'GET', '/user?sudo=ghost', { token: admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: "404 User with ID or username 'ghost' Not Found" }]);
    r = await call(t.app, 'GET', '/user', { token: admin.token, headers: { sudo: '999999' } });
    assert.deepEqual([r.status, r.body], [404, { message: "404 User with ID or username '999999' Not Found" }]);
  });

  test('sudo without credentials is 401; with a session it is 403', async () => {
    const r = await call(t.app, 'GET', '/user?sudo=alice');
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    const s = await newSession(admin.user.id);
    const bySession = await call(t.app, 'GET', '/user?sudo=alice', { headers: { cookie: s.cookie } });
    assert.deepEqual([bySession.status, bySession.body], [403, { message: '403 Forbidden - Must be authenticated using an OAuth or personal access token to use sudo' }]);
  });

  test('with sudo the route\'s own scope check is skipped', async () => {
    const sudoOnly = await makeToken(t.app, admin.user, ['sudo']);
    const r = await call(t.app, 'GET', '/user', { token: sudoOnly, headers: { sudo: 'alice' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.username, 'Alice');
  });
});
