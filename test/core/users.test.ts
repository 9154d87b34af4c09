import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import { verifyPassword } from '../../src/platform/crypto/passwords.ts';

// The users endpoints: filters, entities by caller, administrator-only writes, validation texts.

const BASIC_KEYS = ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url'];

let t: TestApp;
let admin: TestUser;
let dana: TestUser;
let erin: TestUser;
let blocked: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { username: 'chief', admin: true });
  dana = await makeUser(t.app, { username: 'dana' });
  erin = await makeUser(t.app, { username: 'Erin' });
  blocked = await makeUser(t.app, { username: 'mallory', state: 'blocked' });
  await t.app.db.updateTable('users').set({ name: 'Dana Scully' }).where('id', '=', dana.user.id).execute();
});
after(async () => { await t.close(); });

const names = (body: Array<{ username: string }>) => body.map((u) => u.username);

describe('GET /users', () => {
  test('filters: username (any case), search, active, blocked', async () => {
    const by = async (q: string) => names((await call(t.app, 'GET', `/users?${q}`, { token: admin.token })).body);
    assert.deepEqual(await by('username=erin'), ['Erin']);
    assert.deepEqual(await by('username=nobody'), []);
    assert.deepEqual(await by('search=scul'), ['dana']);
    assert.deepEqual(await by('search=DAN'), ['dana']);
    assert.deepEqual(await by('search=mallory%40example.com'), ['mallory']);
    assert.deepEqual(await by('search=%25'), [], 'LIKE wildcards are literal');
    assert.deepEqual(await by('active=true'), ['Erin', 'dana', 'chief']);
    assert.deepEqual(await by('blocked=true'), ['mallory']);
    assert.deepEqual(await by('active=false'), ['mallory', 'Erin', 'dana', 'chief']);
    assert.deepEqual(await by('order_by=username&sort=asc'), ['Erin', 'chief', 'dana', 'mallory'].sort((a, b) => (a < b ? -1 : 1)));
  });

  test('administrators get the admin entity; others the basic one', async () => {
    const asAdmin = await call(t.app, 'GET', '/users?username=dana', { token: admin.token });
    assert.equal(asAdmin.body[0].is_admin, false);
    assert.equal(asAdmin.body[0].email, 'dana@example.com');
    assert.equal(typeof asAdmin.body[0].namespace_id, 'number');
    const asUser = await call(t.app, 'GET', '/users?username=dana', { token: erin.token });
    assert.deepEqual(Object.keys(asUser.body[0]), BASIC_KEYS);
    assert.deepEqual(asUser.body[0], {
      id: dana.user.id, username: 'dana', name: 'Dana Scully', state: 'active', locked: false, avatar_url: null,
      web_url: 'http://bellows.test/dana',
    });
  });

  test('anonymous callers may only look one user up by username', async () => {
    const r = await call(t.app, 'GET', '/users');
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden - Not authorized to access /api/v4/users' }]);
    const one = await call(t.app, 'GET', '/users?username=dana');
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.body[0]), BASIC_KEYS);
  });

  test('non-administrators cannot reorder or filter by creation time', async () => {
    const r = await call(t.app, 'GET', '/users?order_by=username&sort=asc&created_after=2099-01-01T00:00:00Z', { token: erin.token });
    assert.deepEqual(names(r.body), ['mallory', 'Erin', 'dana', 'chief']);
    const a = await call(t.app, 'GET', '/users?created_after=2099-01-01T00:00:00%2B02:00', { token: admin.token });
    assert.deepEqual(a.body, []);
  });
});

describe('GET /users/:id and /user', () => {
  test('another user: the public entity; an administrator sees the admin fields', async () => {
    const r = await call(t.app, 'GET', `/users/${dana.user.id}`, { token: erin.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.username, 'dana');
    assert.equal(r.body.created_at, '2026-06-01T12:00:00.000Z');
    assert.equal(r.body.email, undefined);
    assert.equal(r.body.is_admin, undefined);
    const a = await call(t.app, 'GET', `/users/${dana.user.id}`, { token: admin.token });
    assert.equal(a.body.is_admin, false);
    assert.equal(a.body.email, 'dana@example.com');
  });

  test('unknown user 404, anonymous 403', async () => {
    const r = await call(t.app, 'GET', '/users/999999', { token: erin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
    const anon = await call(t.app, 'GET', `/users/${dana.user.id}`);
    assert.deepEqual([anon.status, anon.body], [403, { message: '403 Forbidden - Not authorized!' }]);
  });

  test('/user shows the caller with private fields', async () => {
    const r = await call(t.app, 'GET', '/user', { token: dana.token });
    assert.equal(r.body.id, dana.user.id);
    assert.equal(r.body.email, 'dana@example.com');
    assert.equal(r.body.is_admin, undefined);
    assert.equal(r.body.can_create_group, true);
  });
});

describe('administrator-only writes', () => {
  test('non-administrators get 403, anonymous callers 401, and nothing changes', async () => {
    const calls: Array<[string, string, unknown]> = [
      ['POST', '/users', { email: 'z@example.com', name: 'Z', username: 'zed', password: 'password123' }],
      ['PUT', `/users/${dana.user.id}`, { name: 'Hacked' }],
      ['DELETE', `/users/${dana.user.id}`, undefined],
      ['POST', `/users/${dana.user.id}/block`, undefined],
      ['POST', `/users/${blocked.user.id}/unblock`, undefined],
    ];
    for (const [method, url, body] of calls) {
      const r = await call(t.app, method, url, { token: erin.token, body });
      assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }], `${method} ${url}`);
      const anon = await call(t.app, method, url, { body });
      assert.deepEqual([anon.status, anon.body], [401, { message: '401 Unauthorized' }], `${method} ${url}`);
    }
    const d = await t.app.db.selectFrom('users').selectAll().where('id', '=', dana.user.id).executeTakeFirstOrThrow();
    assert.deepEqual([d.name, d.state], ['Dana Scully', 'active']);
    assert.equal((await t.app.db.selectFrom('users').select('state').where('id', '=', blocked.user.id).executeTakeFirstOrThrow()).state, 'blocked');
    assert.equal(await t.app.db.selectFrom('users').select('id').where('username', '=', 'zed').executeTakeFirst(), undefined);
  });

  test('create: 201 with the admin entity, a personal namespace, a hashed password', async () => {
    const r = await call(t.app, 'POST', '/users', { token: admin.token, body: { email: 'Frank@Example.com', name: 'Frank', username: 'frank', password: 'password123', bio: 'hello', admin: false, can_create_group: false } });
    assert.equal(r.status, 201);
    assert.equal(r.body.username, 'frank');
    assert.equal(r.body.bio, 'hello');
    assert.equal(r.body.is_admin, false);
    assert.equal(r.body.can_create_group, false);
    assert.equal(r.body.state, 'active');
    const ns = await t.app.db.selectFrom('namespaces').selectAll().where('id', '=', r.body.namespace_id).executeTakeFirstOrThrow();
    assert.deepEqual([ns.kind, ns.path, ns.owner_id], ['user', 'frank', r.body.id]);
    const row = await t.app.db.selectFrom('users').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.ok(row.password_digest?.startsWith('$scrypt$'));
    assert.ok(await verifyPassword('password123', row.password_digest));
    const rnd = await call(t.app, 'POST', '/users', { token: admin.token, form: { email: 'g@example.com', name: 'G', username: 'gee', force_random_password: 'true' } });
    assert.equal(rnd.status, 201);
  });

  test('create: validation texts', async () => {
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ email: 'bad', name: 'H', username: 'hhh', password: 'password123' }, { email: ['is invalid'] }],
      [{ email: 'h@example.com', name: 'H', username: 'admin', password: 'password123' }, { username: ['admin is a reserved name'] }],
      [{ email: 'h@example.com', name: 'H', username: 'h.git', password: 'password123' }, { username: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"] }],
      [{ email: 'h@example.com', name: '', username: 'hhh', password: 'password123' }, { name: ["can't be blank"] }],
      [{ email: 'h@example.com', name: 'H', username: 'hhh', password: 'short' }, { password: ['is too short (minimum is 8 characters)'] }],
    ];
    for (const [body, message] of cases) {
      const r = await call(t.app, 'POST', '/users', { token: admin.token, body });
      assert.deepEqual([r.status, r.body], [400, { message }], JSON.stringify(body));
    }
    assert.equal(await t.app.db.selectFrom('users').select('id').where('email', '=', 'h@example.com').executeTakeFirst(), undefined);
  });

  test('update: fields change, the personal namespace follows a new username', async () => {
    const u = await makeUser(t.app, { username: 'ivan' });
    const r = await call(t.app, 'PUT', `/users/${u.user.id}`, { token: admin.token, body: { username: 'ivan2', name: 'Ivan Two', note: 'n', projects_limit: 5, admin: true } });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.username, r.body.name, r.body.note, r.body.projects_limit, r.body.is_admin], ['ivan2', 'Ivan Two', 'n', 5, true]);
    const ns = await t.app.db.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', u.user.id).executeTakeFirstOrThrow();
    assert.deepEqual([ns.path, ns.full_path, ns.name], ['ivan2', 'ivan2', 'Ivan Two']);
    const bad = await call(t.app, 'PUT', `/users/${u.user.id}`, { token: admin.token, body: { email: 'nope' } });
    assert.deepEqual([bad.status, bad.body], [400, { message: { email: ['is invalid'] } }]);
    const missing = await call(t.app, 'PUT', '/users/999999', { token: admin.token, body: { name: 'x' } });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 User Not Found' }]);
  });

  test('block and unblock: 201 true; a blocked user is refused, an unblocked one is back', async () => {
    const u = await makeUser(t.app);
    let r = await call(t.app, 'POST', `/users/${u.user.id}/block`, { token: admin.token });
    assert.deepEqual([r.status, r.body], [201, true]);
    assert.equal((await call(t.app, 'GET', '/user', { token: u.token })).status, 403);
    const listed = await call(t.app, 'GET', `/users?username=${u.user.username}`, { token: admin.token });
    assert.equal(listed.body[0].state, 'blocked');
    r = await call(t.app, 'POST', `/users/${u.user.id}/unblock`, { token: admin.token });
    assert.deepEqual([r.status, r.body], [201, true]);
    assert.equal((await call(t.app, 'GET', '/user', { token: u.token })).status, 200);
    r = await call(t.app, 'POST', '/users/999999/block', { token: admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
  });

  test('delete: 204, the user and their tokens are gone; an administrator cannot delete themselves', async () => {
    const u = await makeUser(t.app);
    const r = await call(t.app, 'DELETE', `/users/${u.user.id}`, { token: admin.token });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    assert.equal(await t.app.db.selectFrom('users').select('id').where('id', '=', u.user.id).executeTakeFirst(), undefined);
    assert.equal((await t.app.db.selectFrom('personal_access_tokens').select('id').where('user_id', '=', u.user.id).execute()).length, 0);
    assert.equal((await call(t.app, 'GET', '/user', { token: u.token })).status, 401);
    const self = await call(t.app, 'DELETE', `/users/${admin.user.id}`, { token: admin.token });
    assert.deepEqual([self.status, self.body], [403, { message: '403 Forbidden - You cannot delete your own account' }]);
    const gone = await call(t.app, 'DELETE', `/users/${u.user.id}`, { token: admin.token });
    assert.deepEqual([gone.status, gone.body], [404, { message: '404 User Not Found' }]);
  });
});

describe('text longer than its column', () => {
  test('a too long profile field is a validation error and changes nothing', async () => {
    const long = 'o'.repeat(256);
    const r = await call(t.app, 'PUT', `/users/${erin.user.id}`, { token: admin.token, body: { organization: long, job_title: 'j'.repeat(201), location: 'Oslo' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: { organization: ['is too long (maximum is 255 characters)'], job_title: ['is too long (maximum is 200 characters)'] } });
    const after = await t.app.db.selectFrom('users').select(['organization', 'job_title', 'location']).where('id', '=', erin.user.id).executeTakeFirstOrThrow();
    assert.deepEqual(after, { organization: '', job_title: '', location: '' });
    const created = await call(t.app, 'POST', '/users', { token: admin.token, body: { username: 'longname', name: 'n'.repeat(256), email: 'long@example.com', password: 'secret-password' } });
    assert.deepEqual([created.status, created.body], [400, { message: { name: ['is too long (maximum is 255 characters)'] } }]);
  });
});
