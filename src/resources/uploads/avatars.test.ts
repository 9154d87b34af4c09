import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeGroup, quickUser, castRoles, Role, type TestUser } from '../../../test/support/fixtures.ts';

// Avatars of users, projects and groups: stored under the data dir's uploads, named by the entity's avatar_url,
// served back there with the reference's access checks, removed with `avatar=` and with their record.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const BASE = 'http://bellows.test';
let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

const file = (filename = 'avatar.png', content: Buffer = PNG) => ({ filename, content, type: 'image/png' });
const get = (url: string, token?: string) => t.app.inject({ method: 'GET', url: url.replace(BASE, ''), headers: token ? { 'private-token': token } : {} });
const dir = (...p: string[]) => join(t.dataDir, 'uploads', '-', 'system', ...p);

test('user avatar: stored, served publicly, replaced, removed with avatar= and with the user', async () => {
  let res = await call(t.app, 'POST', '/users', { token: admin.token, multipart: { email: 'av@example.com', username: 'avuser', name: 'Av', password: 's3cret-password', avatar: file('me.png') } });
  assert.equal(res.status, 201, res.text);
  const id = res.body.id;
  assert.equal(res.body.avatar_url, `${BASE}/uploads/-/system/user/avatar/${id}/me.png`);
  let img = await get(res.body.avatar_url);
  assert.equal(img.statusCode, 200);
  assert.equal(img.headers['content-type'], 'image/png');
  assert.deepEqual(img.rawPayload, PNG);
  // Another name replaces the file; the old one is gone.
  res = await call(t.app, 'PUT', `/users/${id}`, { token: admin.token, multipart: { avatar: file('new one.png', Buffer.from('second')) } });
  assert.equal(res.body.avatar_url, `${BASE}/uploads/-/system/user/avatar/${id}/new_one.png`);
  assert.deepEqual(readdirSync(dir('user', 'avatar', String(id))), ['new_one.png']);
  assert.equal((await get(`${BASE}/uploads/-/system/user/avatar/${id}/me.png`)).statusCode, 404);
  assert.equal((await get(res.body.avatar_url)).payload, 'second');
  // Shown wherever the user is embedded.
  const listed = await call(t.app, 'GET', '/users', { token: admin.token, query: { username: 'avuser' } });
  assert.equal(listed.body[0].avatar_url, res.body.avatar_url);
  // A blank avatar removes it.
  res = await call(t.app, 'PUT', `/users/${id}`, { token: admin.token, form: { avatar: '' } });
  assert.equal(res.status, 200);
  assert.equal(res.body.avatar_url, null);
  assert.equal(existsSync(dir('user', 'avatar', String(id))), false);
  // Set again, then the user is deleted: the file goes with it.
  await call(t.app, 'PUT', `/users/${id}`, { token: admin.token, multipart: { avatar: file() } });
  assert.equal(existsSync(dir('user', 'avatar', String(id), 'avatar.png')), true);
  res = await call(t.app, 'DELETE', `/users/${id}`, { token: admin.token });
  assert.equal(res.status, 204);
  assert.equal(existsSync(dir('user', 'avatar', String(id))), false);
});

test('avatar: a format or size the reference refuses is a validation error, nothing changed', async () => {
  let res = await call(t.app, 'POST', '/users', { token: admin.token, multipart: { email: 'bad@example.com', username: 'badav', name: 'Bad', password: 's3cret-password', avatar: file('x.svg') } });
  assert.deepEqual([res.status, res.body], [400, { message: { avatar: ['file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico, webp'] } }]);
  assert.equal((await call(t.app, 'GET', '/users', { token: admin.token, query: { username: 'badav' } })).body.length, 0);
  const g = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'avbig', path: 'avbig' } });
  res = await call(t.app, 'PUT', `/groups/${g.body.id}`, { token: admin.token, multipart: { description: 'changed', avatar: file('a.png', Buffer.alloc(201 * 1024)) } });
  assert.deepEqual([res.status, res.body], [400, { message: { avatar: ['is too big (should be at most 200 KB)'] } }]);
  assert.equal((await call(t.app, 'GET', `/groups/${g.body.id}`, { token: admin.token })).body.description, '');
  // A text value is no file.
  res = await call(t.app, 'PUT', `/groups/${g.body.id}`, { token: admin.token, body: { avatar: 'x.png' } });
  assert.deepEqual([res.status, res.body], [400, { error: 'avatar is invalid' }]);
});

test('project avatar: read access as the project; removed with avatar= and on delete', async () => {
  const owner = await quickUser(t.app);
  let res = await call(t.app, 'POST', '/projects', { token: owner.token, multipart: { name: 'pictured', initialize_with_readme: '1', avatar: file('logo.png') } });
  assert.equal(res.status, 201, res.text);
  const id = res.body.id;
  const url = `${BASE}/uploads/-/system/project/avatar/${id}/logo.png`;
  assert.equal(res.body.avatar_url, url);
  assert.equal(res.body.default_branch, 'main');
  assert.equal((await call(t.app, 'GET', `/projects/${id}`, { token: owner.token })).body.avatar_url, url);
  const cast = await castRoles(t.app, { id });
  const expect = { anonymous: 404, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
  for (const [role, status] of Object.entries(expect)) {
    const u = (cast as any)[role] as TestUser | null;
    assert.equal((await get(url, u?.token)).statusCode, status, role);
  }
  await call(t.app, 'PUT', `/projects/${id}`, { token: owner.token, body: { visibility: 'public' } });
  assert.equal((await get(url)).statusCode, 200);
  // Only Maintainers and up edit the project (and so its avatar).
  res = await call(t.app, 'PUT', `/projects/${id}`, { token: cast.developer.token, form: { avatar: '' } });
  assert.equal(res.status, 403);
  res = await call(t.app, 'PUT', `/projects/${id}`, { token: cast.maintainer.token, form: { avatar: '' } });
  assert.equal(res.body.avatar_url, null);
  assert.equal((await get(url)).statusCode, 404);
  res = await call(t.app, 'PUT', `/projects/${id}`, { token: owner.token, multipart: { avatar: file('logo.png') } });
  assert.equal(res.body.avatar_url, url);
  res = await call(t.app, 'DELETE', `/projects/${id}`, { token: owner.token });
  assert.equal(res.status, 202);
  assert.equal(existsSync(dir('project', 'avatar', String(id))), false);
  assert.equal((await get(url, admin.token)).statusCode, 404);
});

test('group avatar: read access as the group; shown on its projects namespace', async () => {
  const owner = await quickUser(t.app);
  const member = await quickUser(t.app);
  const stranger = await quickUser(t.app);
  await t.app.db.updateTable('users').set({ can_create_group: 1 }).where('id', '=', owner.user.id).execute();
  let res = await call(t.app, 'POST', '/groups', { token: owner.token, multipart: { name: 'Pictures', path: 'pictures', avatar: file('g.png') } });
  assert.equal(res.status, 201, res.text);
  const id = res.body.id;
  const url = `${BASE}/uploads/-/system/group/avatar/${id}/g.png`;
  assert.equal(res.body.avatar_url, url);
  await addMember(t.app, { type: 'Namespace', id }, member.user.id, Role.guest);
  assert.equal((await get(url)).statusCode, 404);
  assert.equal((await get(url, stranger.token)).statusCode, 404);
  assert.equal((await get(url, member.token)).statusCode, 200);
  assert.equal((await get(url, admin.token)).statusCode, 200);
  const p = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'inside', namespace_id: id } });
  assert.equal(p.body.namespace.avatar_url, url);
  res = await call(t.app, 'PUT', `/groups/${id}`, { token: owner.token, multipart: { avatar: '' } });
  assert.equal(res.body.avatar_url, null);
  assert.equal((await get(url, member.token)).statusCode, 404);
  // Unknown records and names that are not the stored one.
  const other = await makeGroup(t.app);
  assert.equal((await get(`/uploads/-/system/group/avatar/${other.id}/g.png`, admin.token)).statusCode, 404);
  assert.equal((await get('/uploads/-/system/user/avatar/99999/a.png')).statusCode, 404);
  assert.equal((await get('/uploads/-/system/user/avatar/0x1/a.png')).statusCode, 404);
});
