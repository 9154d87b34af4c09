import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castGroupRoles, castRoles, makeGroup, makeIssue, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';

// The test clock stands at 2026-06-01T12:00:00Z.
let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const count = async () => Number((await t.app.db.selectFrom('milestones').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const FIELDS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'due_date', 'start_date', 'expired', 'web_url'];

describe('milestones: access', () => {
  const table: Array<[string, 'project' | 'group', number, string, string]> = [
    ['private project', 'project', 0, '401 404 200 200 200 200 200 200', '401 404 403 201 201 201 201 201'],
    ['public project', 'project', 20, '401 200 200 200 200 200 200 200', '401 403 403 201 201 201 201 201'],
    ['private group', 'group', 0, '401 404 200 200 200 200 200 200', '401 404 403 201 201 201 201 201'],
    ['public group', 'group', 20, '401 200 200 200 200 200 200 200', '401 403 403 201 201 201 201 201'],
  ];
  for (const [name, kind, visibility, readRow, writeRow] of table) {
    test(`${name}: list ${readRow}; create ${writeRow}`, async () => {
      const owner = kind === 'project' ? await makeProject(t.app, { visibility }) : await makeGroup(t.app, { visibility });
      const roles = kind === 'project' ? await castRoles(t.app, owner) : await castGroupRoles(t.app, owner);
      const base = `/${kind}s/${owner.id}/milestones`;
      const reads = readRow.split(' ').map(Number);
      const writes = writeRow.split(' ').map(Number);
      for (const [i, role] of ROLES.entries()) {
        const token = roles[role]?.token;
        const r = await call(t.app, 'GET', base, { token });
        assert.equal(r.status, reads[i], `${role} list`);
        const before = await count();
        const c = await call(t.app, 'POST', base, { token, body: { title: `m-${role}` } });
        assert.equal(c.status, writes[i], `${role} create: ${JSON.stringify(c.body)}`);
        if (c.status === 404) assert.deepEqual(c.body, { message: `404 ${kind === 'project' ? 'Project' : 'Group'} Not Found` });
        assert.equal(await count(), before + (c.status === 201 ? 1 : 0));
      }
    });
  }
});

describe('milestones: project', () => {
  test('create, read, update, close, reopen, delete; iids per project', async () => {
    const project = await makeProject(t.app);
    const roles = await castRoles(t.app, project);
    const token = roles.reporter.token;
    const base = `/projects/${project.id}/milestones`;
    const c = await call(t.app, 'POST', base, { token, body: { title: ' v1.0 ', description: 'first', start_date: '2026-05-01', due_date: '2026-05-31' } });
    assert.equal(c.status, 201);
    assert.deepEqual(Object.keys(c.body), FIELDS);
    assert.deepEqual({ ...c.body, id: 0 }, {
      id: 0, iid: 1, project_id: project.id, title: 'v1.0', description: 'first', state: 'active',
      created_at: '2026-06-01T12:00:00.000Z', updated_at: '2026-06-01T12:00:00.000Z', due_date: '2026-05-31', start_date: '2026-05-01',
      expired: true, web_url: `http://localhost/${project.full_path}/-/milestones/1`.replace('http://localhost', t.app.config.externalUrl),
    });
    const c2 = await call(t.app, 'POST', base, { token, form: { title: 'v2.0', due_date: '2026-06-01T23:00:00Z' } });
    assert.deepEqual([c2.body.iid, c2.body.due_date, c2.body.expired, c2.body.start_date], [2, '2026-06-01', false, null]);
    const other = await makeProject(t.app);
    const o = await call(t.app, 'POST', `/projects/${other.id}/milestones`, { token: roles.admin.token, body: { title: 'v1.0' } });
    assert.deepEqual([o.status, o.body.iid], [201, 1]);

    const got = await call(t.app, 'GET', `${base}/${c.body.id}`, { token: roles.guest.token });
    assert.deepEqual([got.status, got.body], [200, c.body]);
    const elsewhere = await call(t.app, 'GET', `${base}/${o.body.id}`, { token: roles.admin.token });
    assert.deepEqual([elsewhere.status, elsewhere.body], [404, { message: '404 Not found' }]);

    (t.clock as ManualClock).advance(60_000);
    const closed = await call(t.app, 'PUT', `${base}/${c.body.id}`, { token, body: { state_event: 'close', description: 'done' } });
    assert.deepEqual([closed.status, closed.body.state, closed.body.description, closed.body.updated_at], [200, 'closed', 'done', '2026-06-01T12:01:00.000Z']);
    const cleared = await call(t.app, 'PUT', `${base}/${c.body.id}`, { token, body: { due_date: '' } });
    assert.deepEqual([cleared.body.due_date, cleared.body.expired, cleared.body.start_date], [null, false, '2026-05-01']);
    const reopened = await call(t.app, 'PUT', `${base}/${c.body.id}`, { token, form: { state_event: 'activate', title: 'v1.0.1' } });
    assert.deepEqual([reopened.body.state, reopened.body.title], ['active', 'v1.0.1']);

    const issue = await makeIssue(t.app, project, { milestoneId: c.body.id });
    const del = await call(t.app, 'DELETE', `${base}/${c.body.id}`, { token });
    assert.deepEqual([del.status, del.text], [204, '']);
    assert.equal((await call(t.app, 'GET', `${base}/${c.body.id}`, { token })).status, 404);
    const row = await t.app.db.selectFrom('issues').select('milestone_id').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(row.milestone_id, null);
    // An iid is not handed out again after a deletion.
    const c3 = await call(t.app, 'POST', base, { token, body: { title: 'v3.0' } });
    assert.equal(c3.body.iid, 3);
  });

  test('bad input answers as the reference and changes nothing', async () => {
    const group = await makeGroup(t.app);
    const project = await makeProject(t.app, { namespace: group });
    const roles = await castRoles(t.app, project);
    const token = roles.maintainer.token;
    const base = `/projects/${project.id}/milestones`;
    await call(t.app, 'POST', base, { token, body: { title: 'taken' } });
    await call(t.app, 'POST', `/groups/${group.id}/milestones`, { token: roles.admin.token, body: { title: 'group-taken' } });
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{}, { message: '400 (Bad request) "title" not given' }],
      [{ title: '  ' }, { message: 'Failed to create milestone {:title=>["can\'t be blank"]}' }],
      [{ title: 'taken' }, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }],
      [{ title: 'group-taken' }, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }],
      [{ title: 'x', start_date: '2026-06-02', due_date: '2026-06-02' }, { message: 'Failed to create milestone {:due_date=>["must be greater than start date"]}' }],
      [{ title: 'x', due_date: 'soon' }, { error: 'due_date is invalid' }],
      [{ title: 'x'.repeat(256) }, { message: 'Failed to create milestone {:title=>["is too long (maximum is 255 characters)"]}' }],
    ];
    for (const [body, answer] of cases) {
      const before = await count();
      const r = await call(t.app, 'POST', base, { token, body });
      assert.deepEqual([r.status, r.body], [400, answer], JSON.stringify(body));
      assert.equal(await count(), before);
    }
    const m = (await call(t.app, 'POST', base, { token, body: { title: 'free' } })).body;
    const none = await call(t.app, 'PUT', `${base}/${m.id}`, { token, body: {} });
    assert.deepEqual([none.status, none.body], [400, { error: 'title, description, start_date, due_date, state_event are missing, at least one parameter must be provided' }]);
    const bad = await call(t.app, 'PUT', `${base}/${m.id}`, { token, body: { state_event: 'reopen' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'state_event does not have a valid value' }]);
    const clash = await call(t.app, 'PUT', `${base}/${m.id}`, { token, body: { title: 'taken' } });
    assert.deepEqual([clash.status, clash.body], [400, { message: 'Failed to update milestone {:title=>["already being used for another group or project milestone."]}' }]);
    const same = await call(t.app, 'PUT', `${base}/${m.id}`, { token, body: { title: 'free', description: 'd' } });
    assert.equal(same.status, 200);
    // A group milestone may not take a title one of its projects uses.
    const g = await call(t.app, 'POST', `/groups/${group.id}/milestones`, { token: roles.admin.token, body: { title: 'taken' } });
    assert.deepEqual([g.status, g.body], [400, { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' }]);
  });

  test('filters: state, iids, title, search, updated_before/after, include_parent_milestones; order by due date', async () => {
    const top = await makeGroup(t.app);
    const sub = await makeGroup(t.app, { parent: top });
    const project = await makeProject(t.app, { namespace: sub });
    const roles = await castRoles(t.app, project);
    const token = roles.admin.token;
    const base = `/projects/${project.id}/milestones`;
    const mk = async (path: string, body: Record<string, unknown>) => (await call(t.app, 'POST', path, { token, body })).body;
    const a = await mk(base, { title: 'Alpha', due_date: '2026-07-01' });
    (t.clock as ManualClock).advance(1000);
    const b = await mk(base, { title: 'Beta', description: 'the second one', due_date: '2026-06-15' });
    (t.clock as ManualClock).advance(1000);
    const c = await mk(base, { title: 'Gamma' });
    await call(t.app, 'PUT', `${base}/${c.id}`, { token, body: { state_event: 'close' } });
    const gTop = await mk(`/groups/${top.id}/milestones`, { title: 'Top', due_date: '2026-06-10' });
    const gSub = await mk(`/groups/${sub.id}/milestones`, { title: 'Sub' });
    const titles = async (query: Record<string, string> = {}) => (await call(t.app, 'GET', base, { token: roles.guest.token, query })).body.map((m: any) => m.title);
    assert.deepEqual(await titles(), ['Beta', 'Alpha', 'Gamma']);
    assert.deepEqual(await titles({ state: 'active' }), ['Beta', 'Alpha']);
    assert.deepEqual(await titles({ state: 'closed' }), ['Gamma']);
    assert.deepEqual(await titles({ 'iids[]': String(a.iid) }), ['Alpha']);
    assert.deepEqual(await titles({ iids: `${a.iid},${c.iid}` }), ['Alpha', 'Gamma']);
    assert.deepEqual(await titles({ title: 'beta' }), []);
    assert.deepEqual(await titles({ title: 'Beta' }), ['Beta']);
    assert.deepEqual(await titles({ search: 'SECOND' }), ['Beta']);
    const between = new Date(Date.parse(a.updated_at) + 500).toISOString();
    assert.deepEqual(await titles({ updated_before: between }), ['Alpha']);
    assert.deepEqual(await titles({ updated_after: between }), ['Beta', 'Gamma']);
    assert.deepEqual(await titles({ include_parent_milestones: 'true' }), ['Top', 'Beta', 'Alpha', 'Gamma', 'Sub']);
    assert.deepEqual(await titles({ include_ancestors: 'true', state: 'active' }), ['Top', 'Beta', 'Alpha', 'Sub']);
    const bad = await call(t.app, 'GET', base, { token, query: { state: 'opened' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'state does not have a valid value' }]);

    const g = await call(t.app, 'GET', `/groups/${sub.id}/milestones`, { token: roles.admin.token });
    assert.deepEqual(g.body.map((m: any) => m.title), ['Sub']);
    assert.deepEqual(Object.keys(g.body[0]), FIELDS.map((f) => (f === 'project_id' ? 'group_id' : f)));
    assert.equal(g.body[0].web_url, `${t.app.config.externalUrl}/groups/${sub.full_path}/-/milestones/${gSub.iid}`);
    const up = await call(t.app, 'GET', `/groups/${sub.id}/milestones`, { token: roles.admin.token, query: { include_parent_milestones: 'true' } });
    assert.deepEqual(up.body.map((m: any) => m.id), [gTop.id, gSub.id]);
    const down = await call(t.app, 'GET', `/groups/${top.id}/milestones`, { token: roles.admin.token, query: { include_descendants: 'true' } });
    assert.deepEqual(down.body.map((m: any) => m.title), ['Top', 'Beta', 'Alpha', 'Gamma', 'Sub']);
    assert.equal(b.iid, 2);
  });
});

describe('milestones: concurrency', () => {
  test('concurrent creates in one project and one group get distinct iids', async () => {
    const group = await makeGroup(t.app);
    const project = await makeProject(t.app, { namespace: group });
    const roles = await castRoles(t.app, project);
    for (const base of [`/projects/${project.id}/milestones`, `/groups/${group.id}/milestones`]) {
      const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => call(t.app, 'POST', base, { token: roles.admin.token, body: { title: `${base}-${i}` } })));
      assert.deepEqual(rs.map((r) => r.status), Array(8).fill(201));
      assert.deepEqual(rs.map((r) => r.body.iid).sort((x, y) => x - y), [1, 2, 3, 4, 5, 6, 7, 8]);
    }
  });
});
