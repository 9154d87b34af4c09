import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, type RoleCast, makeToken } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { searchWords, validUserXids, XIDS_INVALID } from './feature-flag-user-lists.service.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const FIELDS = ['name', 'user_xids', 'id', 'iid', 'project_id', 'created_at', 'updated_at'];

async function setup(visibility = 0) {
  const project = await makeProject(t.app, { visibility });
  return { project, roles: await castRoles(t.app, project) };
}

const rows = (projectId: number) => t.app.db.selectFrom('feature_flag_user_lists').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
const base = (projectId: number) => `/projects/${projectId}/feature_flags_user_lists`;

describe('feature-flag user lists: access', () => {
  let project: { id: number };
  let roles: RoleCast;
  let iid: number;
  before(async () => {
    ({ project, roles } = await setup(0));
    iid = (await call(t.app, 'POST', base(project.id), { token: roles.owner.token, body: { name: 'fixture', user_xids: 'a' } })).body.iid;
  });

  const expected: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 403],
    ['developer', 200], ['maintainer', 200], ['owner', 200], ['admin', 200],
  ];
  for (const [role, status] of expected) {
    test(`${role} gets ${status} on every route`, async () => {
      const token = roles[role]?.token;
      const before = (await rows(project.id)).length;
      const list = await call(t.app, 'GET', base(project.id), { token });
      const one = await call(t.app, 'GET', `${base(project.id)}/${iid}`, { token });
      const put = await call(t.app, 'PUT', `${base(project.id)}/${iid}`, { token, body: { user_xids: `by-${role}` } });
      const post = await call(t.app, 'POST', base(project.id), { token, body: { name: `by-${role}`, user_xids: 'x' } });
      assert.deepEqual([list.status, one.status, put.status, post.status], status === 200 ? [200, 200, 200, 201] : [status, status, status, status]);
      const body = { 401: { message: '401 Unauthorized' }, 404: { message: '404 Project Not Found' }, 403: { message: '403 Forbidden' } }[status as 401];
      if (body) for (const r of [list, one, put, post]) assert.deepEqual(r.body, body);
      const after = await rows(project.id);
      assert.equal(after.length, before + (status === 200 ? 1 : 0));
      if (status === 200) {
        assert.equal(after.find((r) => r.iid === iid)!.user_xids, `by-${role}`);
        const created = after.find((r) => r.name === `by-${role}`)!;
        const del = await call(t.app, 'DELETE', `${base(project.id)}/${created.iid}`, { token });
        assert.equal(del.status, 204);
      } else {
        assert.equal(after.find((r) => r.iid === iid)!.user_xids.startsWith(`by-${role}`), false);
        assert.equal((await call(t.app, 'DELETE', `${base(project.id)}/${iid}`, { token })).status, status);
      }
    });
  }

  test('a public project still needs Developer: non-members get 403', async () => {
    const { project: pub, roles: r } = await setup(20);
    const res = await call(t.app, 'GET', base(pub.id), { token: r.nonMember.token });
    assert.deepEqual([res.status, res.body], [403, { message: '403 Forbidden' }]);
  });

  test('a read_api token reads but cannot write', async () => {
    const token = await makeToken(t.app, roles.developer.user, ['read_api']);
    assert.equal((await call(t.app, 'GET', base(project.id), { token })).status, 200);
    const before = (await rows(project.id)).length;
    const r = await call(t.app, 'POST', base(project.id), { token, body: { name: 'ro', user_xids: 'x' } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    assert.equal((await call(t.app, 'DELETE', `${base(project.id)}/${iid}`, { token })).status, 403);
    assert.equal((await rows(project.id)).length, before);
  });
});

describe('feature-flag user lists: behaviour', () => {
  test('create answers 201 with every field in order; iids count per project from 1', async () => {
    const { project, roles } = await setup();
    const other = await makeProject(t.app);
    const r = await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'beta testers', user_xids: 'user1,user2' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), FIELDS);
    assert.deepEqual({ ...r.body, id: 0 }, {
      name: 'beta testers', user_xids: 'user1,user2', id: 0, iid: 1, project_id: project.id,
      created_at: new Date(t.clock.now()).toISOString(), updated_at: new Date(t.clock.now()).toISOString(),
    });
    const second = await call(t.app, 'POST', base(project.id), { token: roles.developer.token, form: { name: 'second', user_xids: 'u' } });
    assert.equal(second.body.iid, 2);
    const elsewhere = await call(t.app, 'POST', base(other.id), { token: roles.admin.token, body: { name: 'beta testers', user_xids: 'user1' } });
    assert.deepEqual([elsewhere.status, elsewhere.body.iid], [201, 1]);
    const got = await call(t.app, 'GET', `${base(project.id)}/1`, { token: roles.developer.token });
    assert.deepEqual([got.status, got.body], [200, r.body]);
  });

  test('iids are never reused, even after the newest list is deleted', async () => {
    const { project, roles } = await setup();
    const a = (await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'a', user_xids: 'x' } })).body;
    assert.equal((await call(t.app, 'DELETE', `${base(project.id)}/${a.iid}`, { token: roles.developer.token })).status, 204);
    const b = (await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'b', user_xids: 'x' } })).body;
    assert.equal(b.iid, a.iid + 1);
  });

  test('concurrent creates get distinct iids; a concurrent duplicate name fails cleanly', async () => {
    const { project, roles } = await setup();
    const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: `l${i}`, user_xids: 'x' } })));
    for (const r of rs) assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(rs.map((r) => r.body.iid).sort((x, y) => x - y), [1, 2, 3, 4, 5, 6, 7, 8]);
    const dup = await Promise.all([1, 2, 3].map(() => call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'same', user_xids: 'x' } })));
    assert.deepEqual(dup.map((r) => r.status).sort(), [201, 400, 400]);
    for (const r of dup.filter((x) => x.status === 400)) assert.deepEqual(r.body, { message: ['Name has already been taken'] });
    assert.equal((await rows(project.id)).length, 9);
  });

  test('GET one: unknown or non-numeric iids are 404 Not found, ids of other projects too', async () => {
    const { project, roles } = await setup();
    const other = await setup();
    const foreign = (await call(t.app, 'POST', base(other.project.id), { token: other.roles.owner.token, body: { name: 'f', user_xids: 'x' } })).body;
    for (const iid of ['99', 'abc', '-1', '3000000000', '99999999999999999999', String(foreign.id + 1000)]) {
      const r = await call(t.app, 'GET', `${base(project.id)}/${iid}`, { token: roles.developer.token });
      assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
    }
    const r = await call(t.app, 'GET', `${base(project.id)}/${foreign.iid}`, { token: roles.developer.token });
    assert.equal(r.status, 404);
  });

  test('list: id order, 20 per page by default, search by words in the name', async () => {
    const { project, roles } = await setup();
    const names = Array.from({ length: 22 }, (_, i) => `list_${String(i).padStart(2, '0')}`);
    names.push('Test List', 'test_list', 'other 100%');
    for (const name of names) await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name, user_xids: 'x' } });
    const first = await call(t.app, 'GET', base(project.id), { token: roles.developer.token });
    assert.equal(first.status, 200);
    assert.equal(first.body.length, 20);
    assert.deepEqual(first.body.map((l: any) => l.name), names.slice(0, 20));
    assert.equal(first.headers['x-per-page'], '20');
    assert.equal(first.headers['x-total'], '25');
    assert.equal(first.headers['x-total-pages'], '2');
    assert.equal(first.headers['x-next-page'], '2');
    assert.match(String(first.headers.link), /rel="next"/);
    const second = await call(t.app, 'GET', base(project.id), { token: roles.developer.token, query: { page: '2' } });
    assert.deepEqual(second.body.map((l: any) => l.name), names.slice(20));

    const search = async (s: string) => (await call(t.app, 'GET', base(project.id), { token: roles.developer.token, query: { search: s } })).body.map((l: any) => l.name);
    assert.deepEqual(await search('TEST'), ['Test List', 'test_list']);
    assert.deepEqual(await search('test list'), ['Test List', 'test_list']);
    assert.deepEqual(await search('"test list"'), ['Test List']);
    assert.deepEqual(await search('_1'), ['list_10', 'list_11', 'list_12', 'list_13', 'list_14', 'list_15', 'list_16', 'list_17', 'list_18', 'list_19']);
    assert.deepEqual(await search('100%'), ['other 100%']);
    assert.deepEqual(await search('nothing'), []);
    const nul = await call(t.app, 'GET', `${base(project.id)}?search=a%00b`, { token: roles.developer.token });
    assert.deepEqual([nul.status, nul.body], [400, { message: 'search is invalid' }]);
    assert.equal((await search('')).length, 20);
    const bad = await call(t.app, 'GET', base(project.id), { token: roles.developer.token, query: { per_page: 'x' } });
    assert.deepEqual([bad.status, bad.body], [400, { message: 'per_page is invalid' }]);
  });

  test('PUT updates what is given, keeps the rest; an empty body changes nothing', async () => {
    const { project, roles } = await setup();
    const created = (await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'n', user_xids: 'a,b' } })).body;
    (t.clock as ManualClock).advance(60_000);
    const r = await call(t.app, 'PUT', `${base(project.id)}/${created.iid}`, { token: roles.developer.token, body: { user_xids: 'c' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { ...created, user_xids: 'c', updated_at: new Date(t.clock.now()).toISOString() });
    const renamed = await call(t.app, 'PUT', `${base(project.id)}/${created.iid}`, { token: roles.developer.token, body: { name: 'renamed' } });
    assert.deepEqual([renamed.body.name, renamed.body.user_xids], ['renamed', 'c']);
    const same = await call(t.app, 'PUT', `${base(project.id)}/${created.iid}`, { token: roles.developer.token, body: { name: 'renamed' } });
    assert.equal(same.status, 200);
    const empty = await call(t.app, 'PUT', `${base(project.id)}/${created.iid}`, { token: roles.developer.token, body: {} });
    assert.deepEqual([empty.status, empty.body], [200, renamed.body]);
    const missing = await call(t.app, 'PUT', `${base(project.id)}/77`, { token: roles.developer.token, body: { name: 'x' } });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
  });

  test('DELETE answers 204 with no body and removes the list', async () => {
    const { project, roles } = await setup();
    const created = (await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'gone', user_xids: 'a' } })).body;
    const keep = (await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'kept', user_xids: 'a' } })).body;
    const r = await call(t.app, 'DELETE', `${base(project.id)}/${created.iid}`, { token: roles.developer.token });
    assert.deepEqual([r.status, r.text], [204, '']);
    assert.deepEqual((await rows(project.id)).map((l) => l.id), [keep.id]);
    const again = await call(t.app, 'DELETE', `${base(project.id)}/${created.iid}`, { token: roles.developer.token });
    assert.deepEqual([again.status, again.body], [404, { message: '404 Not found' }]);
  });
});

describe('feature-flag user lists: validation', () => {
  let project: { id: number };
  let roles: RoleCast;
  before(async () => {
    ({ project, roles } = await setup());
    await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'taken', user_xids: 'a' } });
    await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body: { name: 'editable', user_xids: 'a' } });
  });

  const invalid: Array<[string, Record<string, unknown>, unknown]> = [
    ['no name', { user_xids: 'a' }, { message: 'name is missing' }],
    ['no user_xids', { name: 'n' }, { message: 'user_xids is missing' }],
    ['an empty name', { name: '', user_xids: 'a' }, { message: ["Name can't be blank", 'Name is too short (minimum is 1 character)'] }],
    ['a blank name', { name: '   ', user_xids: 'a' }, { message: ["Name can't be blank"] }],
    ['a name over 255 characters', { name: 'n'.repeat(256), user_xids: 'a' }, { message: ['Name is too long (maximum is 255 characters)'] }],
    ['a taken name', { name: 'taken', user_xids: 'a' }, { message: ['Name has already been taken'] }],
    ['a taken name and bad ids', { name: 'taken', user_xids: 'a,,b' }, { message: ['Name has already been taken', XIDS_INVALID] }],
    ['empty user_xids', { name: 'n', user_xids: '' }, { message: [XIDS_INVALID] }],
    ['a trailing comma', { name: 'n', user_xids: 'a,' }, { message: [XIDS_INVALID] }],
    ['spaces around an id', { name: 'n', user_xids: 'a, b' }, { message: [XIDS_INVALID] }],
    ['a duplicate id', { name: 'n', user_xids: 'a,b,a' }, { message: [XIDS_INVALID] }],
    ['a line break', { name: 'n', user_xids: 'a\nb' }, { message: [XIDS_INVALID] }],
    ['an id over 256 characters', { name: 'n', user_xids: `a,${'x'.repeat(257)}` }, { message: [XIDS_INVALID] }],
    ['a NUL character in the name', { name: 'a\u0000b', user_xids: 'a' }, { message: 'name is invalid' }],
    ['an array for user_xids', { name: 'n', user_xids: ['a', 'b'] }, { message: 'user_xids is invalid' }],
  ];
  for (const [name, body, expected] of invalid) {
    test(`POST with ${name} is refused with 400 and changes nothing`, async () => {
      const before = await rows(project.id);
      const r = await call(t.app, 'POST', base(project.id), { token: roles.developer.token, body });
      assert.deepEqual([r.status, r.body], [400, expected]);
      assert.deepEqual(await rows(project.id), before);
    });
  }

  test('PUT validates the same way and changes nothing on failure', async () => {
    const before = await rows(project.id);
    const editable = before.find((l) => l.name === 'editable')!;
    const url = `${base(project.id)}/${editable.iid}`;
    for (const [body, expected] of [
      [{ name: 'taken' }, ['Name has already been taken']],
      [{ name: '' }, ["Name can't be blank", 'Name is too short (minimum is 1 character)']],
      [{ user_xids: 'a,,b' }, [XIDS_INVALID]],
      [{ name: 'fine', user_xids: ' a' }, [XIDS_INVALID]],
    ] as const) {
      const r = await call(t.app, 'PUT', url, { token: roles.developer.token, body });
      assert.deepEqual([r.status, r.body], [400, { message: expected }]);
    }
    assert.deepEqual(await rows(project.id), before);
  });

  test('the user_xids rule and search words', () => {
    assert.equal(validUserXids('a'), true);
    assert.equal(validUserXids('a,b,c'), true);
    assert.equal(validUserXids('x'.repeat(256)), true);
    assert.equal(validUserXids('x'.repeat(257)), false);
    assert.equal(validUserXids(',a'), false);
    assert.equal(validUserXids('a\tb'), false);
    assert.equal(validUserXids('a\rb'), false);
    assert.equal(validUserXids(5), false);
    assert.deepEqual(searchWords('  one "two three"  four '), ['one', 'four', 'two three']);
    assert.deepEqual(searchWords(''), []);
  });
});
