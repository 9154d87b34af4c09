import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castGroupRoles, castRoles, makeGroup, makeIssue, makeProject, quickUser, type RoleCast } from '../../../test/support/fixtures.ts';

// The test clock stands at 2026-06-01T12:00:00Z, a Monday: "today" is 2026-06-01.
let t: TestApp;
let admin: string;
before(async () => {
  t = await buildTestApp();
  admin = (await quickUser(t.app, { admin: true })).token;
});
after(async () => { await t.close(); });

const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const FIELDS = ['id', 'iid', 'sequence', 'group_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'start_date', 'due_date', 'web_url'];
const iterationCount = async () => Number((await t.app.db.selectFrom('iterations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const cadenceCount = async () => Number((await t.app.db.selectFrom('iteration_cadences').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function dates(groupId: number, query: Record<string, string> = {}) {
  const r = await call(t.app, 'GET', `/groups/${groupId}/iterations`, { token: admin, query });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.map((i: any) => [i.start_date, i.due_date, i.state]);
}

describe('iterations: access', () => {
  const table: Array<[string, number, string, string]> = [
    ['private group', 0, '404 404 200 200 200 200 200 200', '401 404 403 201 201 201 201 201'],
    ['public group', 20, '200 200 200 200 200 200 200 200', '401 403 403 201 201 201 201 201'],
  ];
  for (const [name, visibility, readRow, writeRow] of table) {
    test(`${name}: list ${readRow}; create a cadence ${writeRow}`, async () => {
      const group = await makeGroup(t.app, { visibility });
      const roles = await castGroupRoles(t.app, group);
      const reads = readRow.split(' ').map(Number);
      const writes = writeRow.split(' ').map(Number);
      for (const [i, role] of ROLES.entries()) {
        const token = roles[role]?.token;
        assert.equal((await call(t.app, 'GET', `/groups/${group.id}/iterations`, { token })).status, reads[i], `${role} list`);
        assert.equal((await call(t.app, 'GET', `/groups/${group.id}/iteration_cadences`, { token })).status, reads[i], `${role} cadences`);
        const before = await cadenceCount();
        const r = await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, { token, body: { title: `c-${role}`, automatic: false } });
        assert.equal(r.status, writes[i], `${role} create`);
        assert.equal(await cadenceCount(), before + (r.status === 201 ? 1 : 0));
      }
    });
  }

  test('a project lists its group\'s iterations to whoever reads the project', async () => {
    const group = await makeGroup(t.app, { visibility: 0 });
    const project = await makeProject(t.app, { namespace: group, visibility: 0 });
    const roles = await castRoles(t.app, project);
    const c = await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, { token: admin, body: { title: 'c', start_date: '2026-06-01', duration_in_weeks: 1, iterations_in_advance: 1 } });
    assert.equal(c.status, 201);
    const expected = [404, 404, 200, 200, 200, 200, 200, 200];
    for (const [i, role] of ROLES.entries()) {
      const r = await call(t.app, 'GET', `/projects/${project.id}/iterations`, { token: roles[role]?.token });
      assert.equal(r.status, expected[i], role);
      if (r.status === 200) assert.equal(r.body.length, 2);
    }
    const personal = await makeProject(t.app, { visibility: 20 });
    const none = await call(t.app, 'GET', `/projects/${personal.id}/iterations`);
    assert.deepEqual([none.status, none.body], [200, []]);
  });

  test('the cadence routes are documented as Bellows extensions', async () => {
    const doc = (await call(t.app, 'GET', '/api/v4/openapi.json')).body;
    assert.deepEqual(doc.paths['/api/v4/groups/{id}/iteration_cadences'].post.tags, ['iterations', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/groups/{id}/iterations'].post.tags, ['iterations', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/groups/{id}/iterations'].get.tags, ['iterations']);
  });
});

describe('iterations: automatic cadences', () => {
  test('creation schedules the current iteration and the upcoming ones', async () => {
    const group = await makeGroup(t.app);
    const r = await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, {
      token: admin, body: { title: 'Sprints', start_date: '2026-06-01', duration_in_weeks: 2, iterations_in_advance: 2, roll_over: true, description: 'two weeks' },
    });
    assert.equal(r.status, 201);
    assert.deepEqual({ ...r.body, id: 0 }, {
      id: 0, group_id: group.id, title: 'Sprints', description: 'two weeks', automatic: true, start_date: '2026-06-01', duration_in_weeks: 2,
      iterations_in_advance: 2, roll_over: true, created_at: '2026-06-01T12:00:00.000Z', updated_at: '2026-06-01T12:00:00.000Z',
    });
    const list = await call(t.app, 'GET', `/groups/${group.id}/iterations`, { token: admin });
    assert.deepEqual(Object.keys(list.body[0]), FIELDS);
    assert.deepEqual(list.body.map((i: any) => [i.iid, i.sequence, i.title, i.start_date, i.due_date, i.state]), [
      [1, 1, null, '2026-06-01', '2026-06-14', 2],
      [2, 2, null, '2026-06-15', '2026-06-28', 1],
      [3, 3, null, '2026-06-29', '2026-07-12', 1],
    ]);
    assert.equal(list.body[0].web_url, `${t.app.config.externalUrl}/groups/${group.full_path}/-/iterations/${list.body[0].id}`);

    // More in advance: the schedule goes on after the latest iteration.
    const more = await call(t.app, 'PUT', `/groups/${group.id}/iteration_cadences/${r.body.id}`, { token: admin, body: { iterations_in_advance: 3 } });
    assert.equal(more.status, 200);
    assert.deepEqual((await dates(group.id)).map((d: string[]) => d[0]), ['2026-06-01', '2026-06-15', '2026-06-29', '2026-07-13']);
    // A new start date after the current iteration moves the upcoming ones onto the new schedule; none is deleted.
    const moved = await call(t.app, 'PUT', `/groups/${group.id}/iteration_cadences/${r.body.id}`, { token: admin, body: { start_date: '2026-06-17', duration_in_weeks: 1 } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual(await dates(group.id), [
      ['2026-06-01', '2026-06-14', 2], ['2026-06-17', '2026-06-23', 1], ['2026-06-24', '2026-06-30', 1], ['2026-07-01', '2026-07-07', 1],
    ]);
    const early = await call(t.app, 'PUT', `/groups/${group.id}/iteration_cadences/${r.body.id}`, { token: admin, body: { start_date: '2026-06-14' } });
    assert.deepEqual([early.status, early.body], [400, { message: { base: ['The automation start date must come after the active iteration Jun 1, 2026 - Jun 14, 2026.'] } }]);
    // Made manual, it forgets its automation and keeps its iterations.
    const manual = await call(t.app, 'PUT', `/groups/${group.id}/iteration_cadences/${r.body.id}`, { token: admin, body: { automatic: false } });
    assert.deepEqual([manual.body.automatic, manual.body.duration_in_weeks, manual.body.iterations_in_advance, manual.body.roll_over], [false, null, null, false]);
    assert.equal((await dates(group.id)).length, 4);
  });

  test('a future start schedules upcoming iterations only; a start too far back is refused', async () => {
    const group = await makeGroup(t.app);
    const base = `/groups/${group.id}/iteration_cadences`;
    assert.equal((await call(t.app, 'POST', base, { token: admin, body: { title: 'f', start_date: '2026-06-10', duration_in_weeks: 1, iterations_in_advance: 2 } })).status, 201);
    assert.deepEqual(await dates(group.id), [['2026-06-10', '2026-06-16', 1], ['2026-06-17', '2026-06-23', 1]]);
    const before = [await cadenceCount(), await iterationCount()];
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ title: 'p', start_date: '2026-05-18', duration_in_weeks: 2, iterations_in_advance: 1 },
        { message: { base: ['The automation start date would retroactively create a past iteration. 2026-05-19 is the earliest possible start date.'] } }],
      [{ title: 'x', start_date: '2026-06-01', duration_in_weeks: 5, iterations_in_advance: 1 }, { message: { duration_in_weeks: ['is not included in the list'] } }],
      [{ title: 'x', start_date: '2026-06-01', duration_in_weeks: 1, iterations_in_advance: 11 }, { message: { iterations_in_advance: ['is not included in the list'] } }],
      [{ title: 'x' }, { message: { start_date: ["can't be blank"], duration_in_weeks: ["can't be blank"], iterations_in_advance: ["can't be blank"] } }],
      [{ title: ' ', automatic: false }, { message: { title: ["can't be blank"] } }],
      [{ automatic: false }, { message: '400 (Bad request) "title" not given' }],
      [{ title: 'x', automatic: 'yes' }, { error: 'automatic is invalid' }],
      [{ title: 'x', start_date: 'tomorrow', duration_in_weeks: 1, iterations_in_advance: 1 }, { error: 'start_date is invalid' }],
    ];
    for (const [body, answer] of cases) {
      const r = await call(t.app, 'POST', base, { token: admin, body });
      assert.deepEqual([r.status, r.body], [400, answer], JSON.stringify(body));
    }
    assert.deepEqual([await cadenceCount(), await iterationCount()], before);
    const earliest = await call(t.app, 'POST', base, { token: admin, body: { title: 'e', start_date: '2026-05-19', duration_in_weeks: 2, iterations_in_advance: 1 } });
    assert.equal(earliest.status, 201);
  });
});

describe('iterations: manual cadences and the list', () => {
  test('iterations added by hand; overlaps refused; filters, order, ancestors', async () => {
    const top = await makeGroup(t.app);
    const group = await makeGroup(t.app, { parent: top });
    const roles = await castGroupRoles(t.app, group);
    const token = roles.reporter.token;
    const manual = (await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, { token, body: { title: 'Manual', automatic: false } })).body;
    const add = (body: Record<string, unknown>) => call(t.app, 'POST', `/groups/${group.id}/iterations`, { token, body: { cadence_id: manual.id, ...body } });
    const first = await add({ title: 'Past', start_date: '2026-05-01', due_date: '2026-05-10', description: 'old' });
    assert.equal(first.status, 201);
    assert.deepEqual({ ...first.body, id: 0, web_url: '' }, {
      id: 0, iid: 1, sequence: 1, group_id: group.id, title: 'Past', description: 'old', state: 3,
      created_at: '2026-06-01T12:00:00.000Z', updated_at: '2026-06-01T12:00:00.000Z', start_date: '2026-05-01', due_date: '2026-05-10', web_url: '',
    });
    const now = await add({ title: 'Now', start_date: '2026-06-01', due_date: '2026-06-01' });
    assert.deepEqual([now.status, now.body.state, now.body.sequence], [201, 2, 2]);
    // Added before the others, it takes the first place in the cadence.
    const earlier = await add({ title: 'Earlier', start_date: '2026-04-01', due_date: '2026-04-02' });
    assert.equal(earlier.body.sequence, 1);
    const next = await add({ title: 'Next', start_date: '2026-06-20', due_date: '2026-06-30' });
    assert.equal(next.body.state, 1);

    const before = await iterationCount();
    const refused: Array<[Record<string, unknown>, number, unknown]> = [
      [{ title: 'Overlap', start_date: '2026-06-25', due_date: '2026-07-05' }, 400, { message: { base: ['Dates cannot overlap with other existing Iterations within this iterations cadence'] } }],
      [{ title: 'Backwards', start_date: '2026-08-02', due_date: '2026-08-01' }, 400, { message: { due_date: ['must be greater than start date'] } }],
      [{ title: 'Now', start_date: '2026-09-01', due_date: '2026-09-02' }, 400, { message: { title: ['has already been taken'] } }],
      [{ start_date: '2026-09-01' }, 400, { message: '400 (Bad request) "due_date" not given' }],
      [{ cadence_id: 999999, start_date: '2026-09-01', due_date: '2026-09-02' }, 404, { message: '404 Iteration cadence Not Found' }],
    ];
    for (const [body, status, answer] of refused) {
      const r = await add(body);
      assert.deepEqual([r.status, r.body], [status, answer], JSON.stringify(body));
    }
    const auto = (await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, { token, body: { title: 'Auto', start_date: '2026-07-06', duration_in_weeks: 1, iterations_in_advance: 1 } })).body;
    const onAuto = await call(t.app, 'POST', `/groups/${group.id}/iterations`, { token, body: { cadence_id: auto.id, start_date: '2026-09-01', due_date: '2026-09-02' } });
    assert.deepEqual([onAuto.status, onAuto.body], [400, { message: { base: ['Iterations cannot be manually added to cadences that use automatic scheduling'] } }]);
    assert.equal(await iterationCount(), before + 1);
    const guest = await call(t.app, 'POST', `/groups/${group.id}/iterations`, { token: roles.guest.token, body: { cadence_id: manual.id, start_date: '2026-09-01', due_date: '2026-09-02' } });
    assert.equal(guest.status, 403);

    const topCadence = (await call(t.app, 'POST', `/groups/${top.id}/iteration_cadences`, { token: admin, body: { title: 'Top cadence', automatic: false } })).body;
    await call(t.app, 'POST', `/groups/${top.id}/iterations`, { token: admin, body: { cadence_id: topCadence.id, title: 'Top one', start_date: '2026-06-02', due_date: '2026-06-09' } });

    const titles = async (query: Record<string, string> = {}) => {
      const r = await call(t.app, 'GET', `/groups/${group.id}/iterations`, { token: roles.guest.token, query });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.map((i: any) => i.title ?? `#${i.sequence}`);
    };
    assert.deepEqual(await titles(), ['Earlier', 'Past', 'Now', 'Top one', 'Next', '#1']);
    assert.deepEqual(await titles({ include_ancestors: 'false' }), ['Earlier', 'Past', 'Now', 'Next', '#1']);
    assert.deepEqual(await titles({ state: 'closed' }), ['Earlier', 'Past']);
    assert.deepEqual(await titles({ state: 'current' }), ['Now']);
    assert.deepEqual(await titles({ state: 'started' }), ['Now']);
    assert.deepEqual(await titles({ state: 'upcoming' }), ['Top one', 'Next', '#1']);
    assert.deepEqual(await titles({ state: 'opened' }), ['Now', 'Top one', 'Next', '#1']);
    assert.deepEqual(await titles({ search: 'ow' }), ['Now']);
    assert.deepEqual(await titles({ search: 'manual', 'in[]': 'cadence_title' }), ['Earlier', 'Past', 'Now', 'Next']);
    const both = await call(t.app, 'GET', `/groups/${group.id}/iterations?search=auto&in[]=title&in[]=cadence_title`, { token });
    assert.deepEqual(both.body.map((i: any) => i.sequence), [1]);
    const bad = await call(t.app, 'GET', `/groups/${group.id}/iterations`, { token, query: { state: 'active' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'state does not have a valid value' }]);
    const badIn = await call(t.app, 'GET', `/groups/${group.id}/iterations`, { token, query: { search: 'x', in: 'body' } });
    assert.deepEqual([badIn.status, badIn.body], [400, { error: 'in[0] does not have a valid value' }]);

    // Deleting the cadence takes its iterations; issues keep going without one.
    const project = await makeProject(t.app, { namespace: group });
    const issue = await makeIssue(t.app, project, { iterationId: now.body.id });
    const del = await call(t.app, 'DELETE', `/groups/${group.id}/iteration_cadences/${manual.id}`, { token });
    assert.deepEqual([del.status, del.text], [204, '']);
    assert.deepEqual(await titles({ include_ancestors: 'false' }), ['#1']);
    assert.equal((await t.app.db.selectFrom('issues').select('iteration_id').where('id', '=', issue.id).executeTakeFirstOrThrow()).iteration_id, null);
    assert.equal((await call(t.app, 'GET', `/groups/${group.id}/iteration_cadences/${manual.id}`, { token })).status, 404);
    const one = await call(t.app, 'GET', `/groups/${group.id}/iteration_cadences/${auto.id}`, { token: roles.guest.token });
    assert.deepEqual([one.status, one.body.title], [200, 'Auto']);
  });
});
