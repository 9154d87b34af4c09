import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createGroup, makeProject, quickUser, type TestUser } from '../../../test/support/fixtures.ts';

/** Users of these tests hold `api` and `read_user` tokens (administrators also `sudo`). */
const makeUser = (app: Parameters<typeof quickUser>[0], o: { admin?: boolean; username?: string } = {}) =>
  quickUser(app, { ...o, scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])] });

let t: TestApp;
let owner: TestUser, maintainer: TestUser, developer: TestUser, stranger: TestUser, admin: TestUser;
let group: any;
let project: { id: number; full_path: string };
let other: { id: number; full_path: string };

before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  [maintainer, developer, stranger] = await Promise.all([1, 2, 3].map(() => makeUser(t.app)));
  admin = await makeUser(t.app, { admin: true });
  group = await createGroup(t.app, owner.token, { name: 'Tokens', path: 'tokens' });
  await addMember(t.app, { type: 'Namespace', id: group.id }, maintainer.user.id, 40);
  await addMember(t.app, { type: 'Namespace', id: group.id }, developer.user.id, 30);
  project = await makeProject(t.app, { namespace: { id: group.id, full_path: group.full_path }, path: 'app' });
  const elsewhere = await createGroup(t.app, owner.token, { name: 'Elsewhere', path: 'elsewhere' });
  other = await makeProject(t.app, { namespace: { id: elsewhere.id, full_path: elsewhere.full_path }, path: 'other' });
});
after(async () => { await t.close(); });

test('group access token: Owner creates it, a group_bot member holds its role, the token reads the private group', async () => {
  let r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'ci', scopes: ['read_api'], expires_at: '2026-12-31', access_level: 20 } });
  assert.equal(r.status, 201);
  assert.deepEqual(Object.keys(r.body), ['id', 'name', 'revoked', 'created_at', 'description', 'scopes', 'user_id', 'last_used_at', 'active', 'expires_at', 'last_used_ips', 'access_level', 'resource_type', 'resource_id', 'token']);
  assert.deepEqual([r.body.name, r.body.scopes, r.body.access_level, r.body.resource_type, r.body.resource_id, r.body.expires_at, r.body.active, r.body.revoked],
    ['ci', ['read_api'], 20, 'group', group.id, '2026-12-31', true, false]);
  assert.match(r.body.token, /^glpat-/);
  const bot = await t.app.db.selectFrom('users').selectAll().where('id', '=', r.body.user_id).executeTakeFirstOrThrow();
  assert.equal(bot.user_type, 'group_bot');
  assert.match(bot.username, new RegExp(`^group_${group.id}_bot_[0-9a-f]{32}$`));
  const m = await t.app.db.selectFrom('members').selectAll().where('user_id', '=', bot.id).execute();
  assert.deepEqual(m.map((x) => [x.source_type, x.source_id, x.access_level]), [['Namespace', group.id, 20]]);
  const stored = await t.app.db.selectFrom('personal_access_tokens').select('token_digest').where('id', '=', r.body.id).executeTakeFirstOrThrow();
  assert.notEqual(stored.token_digest, r.body.token);

  const secret = r.body.token;
  let g = await call(t.app, 'GET', `/groups/${group.id}`, { token: secret });
  assert.equal(g.status, 200);
  g = await call(t.app, 'GET', `/groups/${group.id}/members`, { headers: { authorization: `Bearer ${secret}` } });
  assert.equal(g.status, 200);
  assert.ok(g.body.some((x: any) => x.id === bot.id && x.access_level === 20));
  g = await call(t.app, 'PUT', `/groups/${group.id}`, { token: secret, body: { description: 'x' } });
  assert.equal(g.status, 403);
  // The list and the single token.
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens`, { token: owner.token });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.map((x: any) => [x.name, x.access_level, 'token' in x]), [['ci', 20, false]]);
  const id = r.body[0].id;
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens/${id}`, { token: admin.token });
  assert.deepEqual([r.status, r.body.id, r.body.resource_id], [200, id, group.id]);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens/999999`, { token: owner.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 group Access Token Not Found' }]);

  // Revoking blocks the bot, removes its membership and kills the token.
  r = await call(t.app, 'DELETE', `/groups/${group.id}/access_tokens/${id}`, { token: owner.token });
  assert.deepEqual([r.status, r.text], [204, '']);
  g = await call(t.app, 'GET', `/groups/${group.id}`, { token: secret });
  assert.equal(g.status, 401);
  assert.equal(g.body.error, 'invalid_token');
  const after = await t.app.db.selectFrom('users').select('state').where('id', '=', bot.id).executeTakeFirstOrThrow();
  assert.equal(after.state, 'blocked');
  assert.deepEqual(await t.app.db.selectFrom('members').select('id').where('user_id', '=', bot.id).execute(), []);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens?state=inactive`, { token: owner.token });
  assert.deepEqual(r.body.map((x: any) => [x.id, x.revoked, x.active, x.access_level]), [[id, true, false, 20]]);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens?state=active`, { token: owner.token });
  assert.deepEqual(r.body, []);
});

test('group access tokens: roles and validation', async () => {
  let r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: maintainer.token, body: { name: 'm', scopes: ['api'] } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - User does not have permission to create group access token' }]);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens`, { token: developer.token });
  assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens`, { token: stranger.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Group Not Found' }]);
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens`);
  assert.equal(r.status, 401);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'x', scopes: ['sudo'] } });
  assert.deepEqual([r.status, r.body], [400, { error: 'scopes[0] does not have a valid value' }]);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'x', scopes: ['api'], access_level: 45 } });
  assert.deepEqual([r.status, r.body], [400, { error: 'access_level does not have a valid value' }]);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { scopes: ['api'] } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "name" not given' }]);
  const before = await t.app.db.selectFrom('users').select('id').execute();
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'x', scopes: ['api'], expires_at: '2020-01-01' } });
  assert.deepEqual([r.status, r.body], [400, { message: { expires_at: ['must be in the future'] } }]);
  assert.equal((await t.app.db.selectFrom('users').select('id').execute()).length, before.length);
  // An Owner-level bot does not count as a human Owner of the group.
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'own', scopes: ['api'], access_level: 50 } });
  assert.equal(r.status, 201);
  const del = await call(t.app, 'DELETE', `/groups/${group.id}/members/${owner.user.id}`, { token: owner.token });
  assert.equal(del.status, 403);
  // Only Owners may revoke.
  r = await call(t.app, 'DELETE', `/groups/${group.id}/access_tokens/${r.body.id}`, { token: maintainer.token });
  assert.equal(r.status, 400);
  assert.match(r.body.message, /^400 Bad request - .+ cannot delete own$/);
});

test('project access token: Maintainer creates it; it reads its private project and not another', async () => {
  let r = await call(t.app, 'POST', `/projects/${project.id}/access_tokens`, { token: developer.token, body: { name: 'p', scopes: ['api'] } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - User does not have permission to create project access token' }]);
  r = await call(t.app, 'POST', `/projects/${project.id}/access_tokens`, { token: maintainer.token, body: { name: 'p', scopes: ['api'], access_level: 50 } });
  assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - Could not provision owner access to project access token' }]);
  r = await call(t.app, 'POST', `/projects/${encodeURIComponent(project.full_path)}/access_tokens`, { token: maintainer.token, body: { name: 'deploy', scopes: ['api', 'read_repository'] } });
  assert.equal(r.status, 201);
  assert.deepEqual([r.body.access_level, r.body.resource_type, r.body.resource_id], [40, 'project', project.id]);
  const bot = await t.app.db.selectFrom('users').selectAll().where('id', '=', r.body.user_id).executeTakeFirstOrThrow();
  assert.equal(bot.user_type, 'project_bot');
  const secret = r.body.token;
  let g = await call(t.app, 'GET', `/projects/${project.id}/members`, { token: secret });
  assert.equal(g.status, 200);
  g = await call(t.app, 'GET', `/projects/${other.id}/members`, { token: secret });
  assert.deepEqual([g.status, g.body], [404, { message: '404 Project Not Found' }]);
  g = await call(t.app, 'GET', `/groups/${group.id}`, { token: secret });
  assert.equal(g.status, 404);
  r = await call(t.app, 'GET', `/projects/${project.id}/access_tokens`, { token: maintainer.token });
  assert.deepEqual(r.body.map((x: any) => x.name), ['deploy']);
  r = await call(t.app, 'GET', `/projects/${project.id}/access_tokens`, { token: developer.token });
  assert.equal(r.status, 401);
  const list = await call(t.app, 'GET', `/projects/${project.id}/access_tokens`, { token: owner.token });
  // A project's token is not one of its group's tokens.
  r = await call(t.app, 'GET', `/groups/${group.id}/access_tokens/${list.body[0].id}`, { token: owner.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 group Access Token Not Found' }]);
  r = await call(t.app, 'DELETE', `/projects/${project.id}/access_tokens/${list.body[0].id}`, { token: maintainer.token });
  assert.equal(r.status, 204);
  g = await call(t.app, 'GET', `/projects/${project.id}/members`, { token: secret });
  assert.equal(g.status, 401);
  r = await call(t.app, 'DELETE', `/projects/${project.id}/access_tokens/abc`, { token: maintainer.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 project Access Token Not Found' }]);
});

test('rotating a token revokes it and returns a new one for the same bot', async () => {
  let r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens`, { token: owner.token, body: { name: 'rot', scopes: ['read_api'], access_level: 30 } });
  const first = r.body;
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens/${first.id}/rotate`, { token: maintainer.token });
  assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens/999999/rotate`, { token: admin.token });
  assert.deepEqual([r.status, r.body], [404, { message: '404 Not Found' }]);
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens/${first.id}/rotate`, { token: owner.token });
  assert.equal(r.status, 200);
  assert.deepEqual([r.body.name, r.body.scopes, r.body.access_level, r.body.user_id, r.body.expires_at], ['rot', ['read_api'], 30, first.user_id, '2026-06-08']);
  assert.notEqual(r.body.id, first.id);
  assert.notEqual(r.body.token, first.token);
  let g = await call(t.app, 'GET', `/groups/${group.id}`, { token: first.token });
  assert.deepEqual([g.status, g.body.error], [401, 'invalid_token']);
  g = await call(t.app, 'GET', `/groups/${group.id}`, { token: r.body.token });
  assert.equal(g.status, 200);
  const m = await t.app.db.selectFrom('members').select(['access_level', 'expires_at']).where('user_id', '=', first.user_id).executeTakeFirstOrThrow();
  assert.deepEqual(m, { access_level: 30, expires_at: null });
  r = await call(t.app, 'POST', `/groups/${group.id}/access_tokens/${first.id}/rotate`, { token: owner.token });
  assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - Token already revoked' }]);
});
