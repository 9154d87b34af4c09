import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { addMember, insertGroup } from '../../../test/support/instance-settings-rows.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { activeBroadcastMessages, matchesTargetPath } from './broadcast-messages.service.ts';
import { broadcastBannersHtml } from './broadcast-messages.presenter.ts';

let t: TestApp;
let admin: TestUser;
let user: TestUser;
const T0 = Date.parse('2026-06-01T12:00:00Z');
const clock = () => t.clock as ManualClock;
const count = async () => (await t.app.db.selectFrom('broadcast_messages').select('id').execute()).length;
const create = async (body: Record<string, unknown>) => {
  const r = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
};

before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true });
  user = await makeUser(t.app);
});
after(async () => { await t.close(); });
beforeEach(async () => {
  clock().set(T0);
  await t.app.db.deleteFrom('broadcast_messages').execute();
  await t.app.db.deleteFrom('feature_gates').execute();
});

test('POST with only a message uses the default window, font and type, in the spec field order', async () => {
  const r = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'Maintenance tonight' } });
  assert.equal(r.status, 201);
  assert.equal(r.headers['content-type'], 'application/json', 'exactly, as python-gitlab expects');
  assert.deepEqual(Object.keys(r.body), ['id', 'message', 'starts_at', 'ends_at', 'font', 'active', 'target_access_levels', 'target_path', 'broadcast_type', 'dismissable']);
  assert.deepEqual(r.body, {
    id: r.body.id, message: 'Maintenance tonight', starts_at: '2026-06-01T12:00:00.000Z', ends_at: '2026-06-01T13:00:00.000Z',
    font: '#FFFFFF', active: true, target_access_levels: [], target_path: null, broadcast_type: 'banner', dismissable: null,
  });
  assert.equal('color' in r.body, false);
});

test('POST takes every parameter, as JSON or as a form; levels as a comma list or an array', async () => {
  const a = await create({
    message: 'Hello', starts_at: '2026-06-01T11:00:00Z', ends_at: '2026-06-02T11:00:00+02:00', font: '#abc',
    target_access_levels: '10, 30', target_path: '*/issues', broadcast_type: 'notification', dismissable: true,
  });
  assert.deepEqual(a, {
    id: a.id, message: 'Hello', starts_at: '2026-06-01T11:00:00.000Z', ends_at: '2026-06-02T09:00:00.000Z', font: '#abc', active: true,
    target_access_levels: [10, 30], target_path: '*/issues', broadcast_type: 'notification', dismissable: true,
  });
  const b = await create({ message: 'x', target_access_levels: [50, 20, 20], dismissable: false });
  assert.deepEqual(b.target_access_levels, [20, 50]);
  assert.equal(b.dismissable, false);
  const f = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, form: { message: 'form', 'target_access_levels[]': '40', color: '#000000' } });
  assert.equal(f.status, 201);
  assert.deepEqual(f.body.target_access_levels, [40]);
  assert.equal('color' in f.body, false);
  const q = await call(t.app, 'POST', '/broadcast_messages?target_access_levels[]=10&target_access_levels[]=20', { token: admin.token, form: { message: 'q' } });
  assert.deepEqual(q.body.target_access_levels, [10, 20]);
});

test('reads are open to everyone; writes need an administrator (401 anonymous, 403 others, read_api refused)', async () => {
  const m = await create({ message: 'm' });
  const anonList = await call(t.app, 'GET', '/broadcast_messages');
  assert.equal(anonList.status, 200);
  assert.equal(anonList.body.length, 1);
  assert.equal((await call(t.app, 'GET', `/broadcast_messages/${m.id}`)).status, 200);
  assert.equal((await call(t.app, 'GET', '/broadcast_messages', { token: user.token })).status, 200);
  assert.deepEqual((await call(t.app, 'GET', '/broadcast_messages', { token: 'nope' })).body, { message: '401 Unauthorized' });

  const owner = await makeUser(t.app);
  const g = await insertGroup(t.app);
  await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, 50);
  const readApi = await makeToken(t.app, admin.user, ['read_api']);
  const writes: Array<[string, string, Record<string, unknown>]> = [
    ['POST', '/broadcast_messages', { message: 'no' }],
    ['PUT', `/broadcast_messages/${m.id}`, { message: 'no' }],
    ['DELETE', `/broadcast_messages/${m.id}`, {}],
  ];
  for (const [method, url, body] of writes) {
    const anon = await call(t.app, method, url, { body });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.body, { message: '401 Unauthorized' });
    for (const who of [user, owner]) {
      const r = await call(t.app, method, url, { token: who.token, body });
      assert.equal(r.status, 403);
      assert.deepEqual(r.body, { message: '403 Forbidden' });
    }
    const scoped = await call(t.app, method, url, { token: readApi, body });
    assert.equal(scoped.status, 403);
    assert.equal(scoped.body.error, 'insufficient_scope');
  }
  assert.equal(await count(), 1);
  assert.equal((await call(t.app, 'GET', `/broadcast_messages/${m.id}`)).body.message, 'm');
});

test('bad input answers the reference bodies and creates nothing', async () => {
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{}, { message: '400 (Bad request) "message" not given' }],
    [{ message: '  ' }, { message: { message: ["can't be blank"] } }],
    [{ message: 'x', starts_at: '2026-06-02T00:00:00Z', ends_at: '2026-06-01T00:00:00Z' }, { message: { ends_at: ['must be after starts_at'] } }],
    [{ message: 'x', starts_at: '2026-06-02T00:00:00Z', ends_at: '2026-06-02T00:00:00Z' }, { message: { ends_at: ['must be after starts_at'] } }],
    [{ message: 'x', ends_at: '2026-06-01T11:00:00Z' }, { message: { ends_at: ['must be after starts_at'] } }],
    [{ message: 'x', font: 'white' }, { message: { font: ['must be a valid color code'] } }],
    [{ message: '', font: '#12' }, { message: { message: ["can't be blank"], font: ['must be a valid color code'] } }],
    [{ message: 'x', broadcast_type: 'popup' }, { error: 'broadcast_type does not have a valid value' }],
    [{ message: 'x', target_access_levels: '10,15' }, { error: 'target_access_levels does not have a valid value' }],
    [{ message: 'x', target_access_levels: [60] }, { error: 'target_access_levels does not have a valid value' }],
    [{ message: 'x', target_access_levels: 'guest' }, { error: 'target_access_levels is invalid' }],
    [{ message: 'x', starts_at: 'tomorrow' }, { error: 'starts_at is invalid' }],
    [{ message: 'x', ends_at: '2026-02-31T00:00:00Z' }, { error: 'ends_at is invalid' }],
    [{ message: 'x', dismissable: 'yes' }, { error: 'dismissable is invalid' }],
    [{ message: { text: 'x' } }, { error: 'message is invalid' }],
  ];
  for (const [body, expected] of cases) {
    const r = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, expected, JSON.stringify(body));
  }
  assert.equal(await count(), 0);
});

test('list is newest first and paginated; GET one; unknown ids', async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await create({ message: `m${i}` })).id);
  const r = await call(t.app, 'GET', '/broadcast_messages', { query: { per_page: '2' } });
  assert.deepEqual(r.body.map((m: any) => m.id), [ids[2], ids[1]]);
  assert.equal(r.headers['x-total'], '3');
  assert.equal(r.headers['x-next-page'], '2');
  const p2 = await call(t.app, 'GET', '/broadcast_messages', { query: { per_page: '2', page: '2' } });
  assert.deepEqual(p2.body.map((m: any) => m.id), [ids[0]]);
  const one = await call(t.app, 'GET', `/broadcast_messages/${ids[1]}`);
  assert.equal(one.body.message, 'm1');
  assert.deepEqual((await call(t.app, 'GET', '/broadcast_messages/999999')).body, { message: '404 Not found' });
  assert.equal((await call(t.app, 'GET', '/broadcast_messages/999999')).status, 404);
  const bad = await call(t.app, 'GET', '/broadcast_messages/abc');
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, { error: 'id is invalid' });
});

test('active follows the window and the clock', async () => {
  const now = await create({ message: 'now' });
  const later = await create({ message: 'later', starts_at: '2026-06-01T13:00:00Z', ends_at: '2026-06-01T15:00:00Z' });
  const get = async (id: number) => (await call(t.app, 'GET', `/broadcast_messages/${id}`)).body.active;
  assert.equal(await get(now.id), true);
  assert.equal(await get(later.id), false);
  clock().set(Date.parse('2026-06-01T13:00:00Z'));
  assert.equal(await get(now.id), true, 'the end instant is still inside the window');
  assert.equal(await get(later.id), true);
  clock().set(Date.parse('2026-06-01T13:00:00.001Z'));
  assert.equal(await get(now.id), false);
  clock().set(Date.parse('2026-06-01T15:00:01Z'));
  assert.equal(await get(later.id), false);
});

test('PUT changes only what is given; validation failures change nothing; unknown id is 404', async () => {
  const m = await create({ message: 'old', target_access_levels: '10', target_path: '/a', dismissable: true, font: '#000' });
  clock().advance(1000);
  const r = await call(t.app, 'PUT', `/broadcast_messages/${m.id}`, { token: admin.token, body: { message: 'new', broadcast_type: 'notification', ends_at: '2026-06-01T18:00:00Z' } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ...m, message: 'new', broadcast_type: 'notification', ends_at: '2026-06-01T18:00:00.000Z' });
  const f = await call(t.app, 'PUT', `/broadcast_messages/${m.id}`, { token: admin.token, form: { target_access_levels: '', target_path: '', dismissable: 'false', font: '#ABCDEF' } });
  assert.equal(f.status, 200);
  assert.deepEqual([f.body.target_access_levels, f.body.target_path, f.body.dismissable, f.body.font], [[], '', false, '#ABCDEF']);
  const before = (await call(t.app, 'GET', `/broadcast_messages/${m.id}`)).body;
  const bad = await call(t.app, 'PUT', `/broadcast_messages/${m.id}`, { token: admin.token, body: { message: 'changed', starts_at: '2026-06-01T19:00:00Z' } });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, { message: { ends_at: ['must be after starts_at'] } });
  assert.deepEqual((await call(t.app, 'GET', `/broadcast_messages/${m.id}`)).body, before);
  const blank = await call(t.app, 'PUT', `/broadcast_messages/${m.id}`, { token: admin.token, body: { message: '' } });
  assert.deepEqual(blank.body, { message: { message: ["can't be blank"] } });
  const missing = await call(t.app, 'PUT', '/broadcast_messages/999999', { token: admin.token, body: { message: 'x' } });
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { message: '404 Not found' });
});

test('DELETE answers 204 and removes the message; honours If-Unmodified-Since; unknown id is 404', async () => {
  const m = await create({ message: 'bye' });
  const stale = await call(t.app, 'DELETE', `/broadcast_messages/${m.id}`, { token: admin.token, headers: { 'if-unmodified-since': new Date(T0 - 1000).toUTCString() } });
  assert.equal(stale.status, 412);
  assert.deepEqual(stale.body, { message: '412 Precondition Failed' });
  assert.equal(await count(), 1);
  const ok = await call(t.app, 'DELETE', `/broadcast_messages/${m.id}`, { token: admin.token, headers: { 'if-unmodified-since': new Date(T0 + 1000).toUTCString() } });
  assert.equal(ok.status, 204);
  assert.equal(ok.text, '');
  assert.equal(await count(), 0);
  assert.equal((await call(t.app, 'GET', `/broadcast_messages/${m.id}`)).status, 404);
  const again = await call(t.app, 'DELETE', `/broadcast_messages/${m.id}`, { token: admin.token });
  assert.equal(again.status, 404);
  assert.deepEqual(again.body, { message: '404 Not found' });
  const m2 = await create({ message: 'plain' });
  const plain = await call(t.app, 'DELETE', `/broadcast_messages/${m2.id}`, { token: admin.token, headers: { 'content-type': 'application/json' } });
  assert.equal(plain.status, 204);
});

test('target_path wildcard matching', () => {
  assert.equal(matchesTargetPath(null, '/anything'), true);
  assert.equal(matchesTargetPath('', null), true);
  assert.equal(matchesTargetPath('/users/sign_in', null), false);
  assert.equal(matchesTargetPath('/users/sign_in', '/users/sign_in'), true);
  assert.equal(matchesTargetPath('/users/sign_in', 'users/sign_in'), true, 'a leading slash is added');
  assert.equal(matchesTargetPath('/Users/*', '/users/sign_in'), true, 'case-insensitive');
  assert.equal(matchesTargetPath('/users/sign_in', '/users/sign_in/extra'), false, 'anchored');
  assert.equal(matchesTargetPath('*/issues', '/group/project/issues'), true);
  assert.equal(matchesTargetPath('*/issues', '/group/project/issues/1'), false);
  assert.equal(matchesTargetPath('/a.b', '/axb'), false, 'dots are literal');
  assert.equal(matchesTargetPath('/oauth/*', '/oauth/authorize'), true);
});

test('activeBroadcastMessages: the window, the path, and roles only when the flag is on', async () => {
  const everywhere = await create({ message: 'all' });
  const signIn = await create({ message: 'sign-in', target_path: '/users/sign_in' });
  const devs = await create({ message: 'devs', target_access_levels: '30,40' });
  await create({ message: 'future', starts_at: '2026-06-02T00:00:00Z', ends_at: '2026-06-03T00:00:00Z' });
  await create({ message: 'note', broadcast_type: 'notification' });
  const ids = async (v: Parameters<typeof activeBroadcastMessages>[1]) => (await activeBroadcastMessages(t.app, v)).map((m) => m.message);

  assert.deepEqual(await ids({ path: '/users/sign_in' }), ['all', 'sign-in', 'devs', 'note']);
  assert.deepEqual(await ids({ path: '/oauth/authorize', broadcastType: 'banner' }), ['all', 'devs']);
  assert.deepEqual(await ids({ path: null, broadcastType: 'banner' }), ['all', 'devs']);

  const on = await call(t.app, 'POST', '/features/role_targeted_broadcast_messages', { token: admin.token, body: { value: true } });
  assert.equal(on.status, 201);
  assert.deepEqual(await ids({ path: '/users/sign_in', broadcastType: 'banner' }), ['all', 'sign-in']);
  assert.deepEqual(await ids({ path: '/users/sign_in', userAccessLevel: 30, broadcastType: 'banner' }), ['all', 'sign-in', 'devs']);
  assert.deepEqual(await ids({ path: '/users/sign_in', userAccessLevel: 20, broadcastType: 'banner' }), ['all', 'sign-in']);

  clock().set(Date.parse('2026-06-02T12:00:00Z'));
  assert.deepEqual(await ids({ path: '/' }), ['future']);
  assert.ok(everywhere.id < signIn.id && signIn.id < devs.id);
});

test('banners for HTML pages are escaped text in their colour', async () => {
  const m = await create({ message: '<script>alert("x")</script> & more', font: '#123456', broadcast_type: 'notification' });
  const html = broadcastBannersHtml(await activeBroadcastMessages(t.app, { path: '/users/sign_in' }));
  assert.equal(html, `<div class="broadcast-message broadcast-notification" role="alert" data-id="${m.id}" style="color: #123456">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more</div>`);
  assert.equal(broadcastBannersHtml([]), '');
});
