import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, castRoles, makeGroup, makeProject, quickUser, Role, type RoleCast } from '../../../test/support/fixtures.ts';
import { makeIssue, makeIteration, makeLabel, makeMilestone } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { parseDuration, formatDuration } from './durations.ts';
import { dialectOf, indexedTermIsCommon } from '../../platform/db/dialect.ts';
import { AccessLevel } from '../../platform/membership.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { createIssue } from './issues.service.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const ISSUE_FIELDS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels',
  'milestone', 'assignees', 'author', 'type', 'assignee', 'user_notes_count', 'merge_requests_count', 'upvotes', 'downvotes', 'due_date',
  'confidential', 'discussion_locked', 'issue_type', 'web_url', 'time_stats', 'task_completion_status', 'weight', 'blocking_issues_count',
  'iteration', 'has_tasks', '_links', 'references', 'severity', 'subscribed', 'moved_to_id', 'service_desk_reply_to'];

const count = async (table: 'issues' | 'labels' | 'label_links' | 'resource_label_events' | 'award_emoji') =>
  Number((await t.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

describe('issues: durations', () => {
  test('human durations read with 8-hour days and 5-day weeks', () => {
    assert.equal(parseDuration('3h30m'), 3 * 3600 + 1800);
    assert.equal(parseDuration('1w2d'), 7 * 8 * 3600);
    assert.equal(parseDuration('1h 30m'), 5400);
    assert.equal(parseDuration('2'), 7200);
    assert.equal(parseDuration('-30m'), -1800);
    assert.equal(parseDuration('1mo'), 20 * 8 * 3600);
    assert.equal(parseDuration('abc'), null);
    assert.equal(parseDuration('3x'), null);
    assert.equal(parseDuration(''), null);
    assert.equal(formatDuration(7 * 8 * 3600 + 5400), '1w 2d 1h 30m');
    assert.equal(formatDuration(0), null);
  });
});

describe('issues: access by role', () => {
  let priv: ProjectRow;
  let pub: ProjectRow;
  let rolesPriv: RoleCast;
  let rolesPub: RoleCast;
  before(async () => {
    priv = await makeProject(t.app, { visibility: 0 });
    pub = await makeProject(t.app, { visibility: 20 });
    rolesPriv = await castRoles(t.app, priv);
    rolesPub = await castRoles(t.app, pub);
  });
  const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;

  const table: Array<[string, 'private' | 'public', (p: ProjectRow, author: number) => Promise<{ method: string; url: string; body?: any }>, number[]]> = [
    ['list', 'private', async (p) => ({ method: 'GET', url: `/projects/${p.id}/issues` }), [404, 404, 200, 200, 200, 200, 200, 200]],
    ['create', 'private', async (p) => ({ method: 'POST', url: `/projects/${p.id}/issues`, body: { title: 'x' } }), [401, 404, 201, 201, 201, 201, 201, 201]],
    ['create', 'public', async (p) => ({ method: 'POST', url: `/projects/${p.id}/issues`, body: { title: 'x' } }), [401, 201, 201, 201, 201, 201, 201, 201]],
    ['read a confidential issue', 'public', async (p, a) => ({ method: 'GET', url: `/projects/${p.id}/issues/${(await makeIssue(t.app, p, { authorId: a, confidential: true })).iid}` }),
      [404, 404, 404, 200, 200, 200, 200, 200]],
    ['edit', 'public', async (p, a) => ({ method: 'PUT', url: `/projects/${p.id}/issues/${(await makeIssue(t.app, p, { authorId: a })).iid}`, body: { title: 'y' } }),
      [401, 403, 403, 200, 200, 200, 200, 200]],
    ['delete', 'public', async (p, a) => ({ method: 'DELETE', url: `/projects/${p.id}/issues/${(await makeIssue(t.app, p, { authorId: a })).iid}` }),
      [401, 403, 403, 403, 403, 403, 204, 204]],
  ];
  for (const [what, vis, req, statuses] of table) {
    CALLERS.forEach((caller, i) => {
      test(`${caller}: ${what} on a ${vis} project answers ${statuses[i]}`, async () => {
        const p = vis === 'private' ? priv : pub;
        const roles = vis === 'private' ? rolesPriv : rolesPub;
        const r = await req(p, roles.owner.user.id);
        const before = await count('issues');
        const res = await call(t.app, r.method as any, r.url, { token: roles[caller]?.token, body: r.body });
        assert.equal(res.status, statuses[i], JSON.stringify(res.body));
        if (res.status === 404) assert.match(res.body.message, /^404 (Project|Not found)/);
        if (r.method === 'POST') assert.equal(await count('issues'), before + (res.status === 201 ? 1 : 0));
        if (r.method === 'DELETE') assert.equal(await count('issues'), before - (res.status === 204 ? 1 : 0));
      });
    });
  }

  test("the author edits their own issue but cannot delete it; a guest's labels are ignored", async () => {
    const guest = rolesPub.guest;
    const created = await call(t.app, 'POST', `/projects/${pub.id}/issues`, { token: guest.token, body: { title: 'mine', labels: 'bug', milestone_id: 1 } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.labels, []);
    const edit = await call(t.app, 'PUT', `/projects/${pub.id}/issues/${created.body.iid}`, { token: guest.token, body: { title: 'still mine' } });
    assert.equal(edit.status, 200);
    assert.equal(edit.body.title, 'still mine');
    const del = await call(t.app, 'DELETE', `/projects/${pub.id}/issues/${created.body.iid}`, { token: guest.token });
    assert.equal(del.status, 403);
  });
});

describe('issues: create, read, update, delete', () => {
  let project: ProjectRow;
  let roles: RoleCast;
  let group: Awaited<ReturnType<typeof makeGroup>>;
  before(async () => {
    group = await makeGroup(t.app, { visibility: 0 });
    const sub = await makeGroup(t.app, { visibility: 0, parent: group });
    project = await makeProject(t.app, { namespace: sub, visibility: 0 });
    roles = await castRoles(t.app, project);
  });

  test('create gives the full entity in the reference order with labels found in ancestor groups or created', async () => {
    await makeLabel(t.app, { groupId: group.id, title: 'group-label', color: '#ff0000' });
    const milestone = await makeMilestone(t.app, { groupId: group.id, title: 'g1' });
    const labelsBefore = await count('labels');
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, {
      token: roles.reporter.token,
      body: {
        title: 'First', description: '- [x] one\n- [ ] two', labels: 'group-label,new-label', assignee_ids: [roles.developer.user.id],
        milestone_id: milestone.id, due_date: '2026-07-01', confidential: true,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    // task_status comes with a task list only.
    assert.deepEqual(Object.keys(r.body), [...ISSUE_FIELDS.slice(0, 31), 'task_status', ...ISSUE_FIELDS.slice(31)]);
    assert.equal(r.body.task_status, '1 of 2 checklist items completed');
    assert.equal(r.body.iid, 1);
    assert.deepEqual(r.body.labels, ['group-label', 'new-label']);
    assert.equal(await count('labels'), labelsBefore + 1);
    const created = await t.app.db.selectFrom('labels').selectAll().where('title', '=', 'new-label').executeTakeFirstOrThrow();
    // The open event carries the new issue's label and assignee ids (what it was created with).
    const labelIds = (await t.app.db.selectFrom('labels').select('id').where('title', 'in', ['group-label', 'new-label']).orderBy('id').execute()).map((l) => l.id);
    const job = await t.app.db.selectFrom('jobs').select('args').where('kind', 'like', 'events.%').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const event = JSON.parse(job.args);
    assert.equal(event.issueId, r.body.id);
    assert.deepEqual(event.changes.label_ids, { previous: [], current: labelIds });
    assert.deepEqual(event.changes.assignee_ids, { previous: [], current: [roles.developer.user.id] });
    assert.equal(created.project_id, project.id);
    assert.equal(created.color, '#6699cc');
    assert.equal(r.body.milestone.id, milestone.id);
    assert.equal(r.body.milestone.group_id, group.id);
    assert.equal(r.body.assignee.id, roles.developer.user.id);
    assert.equal(r.body.author.id, roles.reporter.user.id);
    assert.equal(r.body.due_date, '2026-07-01');
    assert.equal(r.body.confidential, true);
    assert.equal(r.body.state, 'opened');
    assert.equal(r.body.subscribed, true);
    assert.equal(r.body.type, 'ISSUE');
    assert.deepEqual(r.body.task_completion_status, { count: 2, completed_count: 1 });
    assert.deepEqual(r.body.references, { short: '#1', relative: '#1', full: `${project.full_path}#1` });
    assert.equal(r.body.web_url, `${t.app.config.externalUrl}/${project.full_path}/-/issues/1`);
    assert.deepEqual(r.body.time_stats, { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null });
    // Label and milestone events were written.
    const events = await call(t.app, 'GET', `/projects/${project.id}/issues/1/resource_label_events`, { token: roles.reporter.token });
    assert.deepEqual(events.body.map((e: any) => [e.label.name, e.action]), [['group-label', 'add'], ['new-label', 'add']]);
    const ms = await call(t.app, 'GET', `/projects/${project.id}/issues/1/resource_milestone_events`, { token: roles.reporter.token });
    assert.deepEqual(ms.body.map((e: any) => [e.milestone.id, e.action, e.state]), [[milestone.id, 'add', 'opened']]);
  });

  test('the answer to a create is the issue as it reads afterwards, for the author, an assignee or neither', async () => {
    const milestone = await makeMilestone(t.app, { projectId: project.id, title: 'answer-m' });
    await makeLabel(t.app, { groupId: group.id, title: 'Zeta', color: '#00ff00' });
    const cases: Array<[Exclude<keyof RoleCast, 'anonymous'>, Record<string, unknown>]> = [
      ['reporter', { title: 'a1', labels: 'zz-new,Zeta,alpha', assignee_ids: [roles.developer.user.id, roles.reporter.user.id], milestone_id: milestone.id, description: '- [ ] t' }],
      ['developer', { title: 'a2', assignee_ids: [roles.maintainer.user.id], confidential: true, due_date: '2026-08-01', weight: 3 }],
      ['guest', { title: 'a3', labels: 'ignored', assignee_ids: [roles.guest.user.id] }],
      ['admin', { title: 'a4', discussion_locked: true, issue_type: 'incident' }],
      // Every label already there (a group's and the project's of one title: the project's), given out of title order.
      ['maintainer', { title: 'a5', labels: 'zz-new,Omega,Zeta,alpha' }],
    ];
    await makeLabel(t.app, { groupId: group.id, title: 'Omega', color: '#0000ff' });
    await makeLabel(t.app, { projectId: project.id, title: 'Omega', color: '#00ffff' });
    for (const [who, body] of cases) {
      const made = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles[who].token, body });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const read = await call(t.app, 'GET', `/projects/${project.id}/issues/${made.body.iid}`, { token: roles[who].token });
      assert.deepEqual(made.body, read.body, who);
      // As another member sees it: only the subscription is the caller's own.
      const other = await call(t.app, 'GET', `/projects/${project.id}/issues/${made.body.iid}`, { token: roles.owner.token });
      assert.deepEqual({ ...made.body, subscribed: other.body.subscribed }, other.body, who);
    }
    const a5 = await t.app.db.selectFrom('issues').select('id').where('project_id', '=', project.id).where('title', '=', 'a5').executeTakeFirstOrThrow();
    const linked = await t.app.db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id').select(['labels.title', 'labels.project_id'])
      .where('label_links.target_type', '=', 'Issue').where('label_links.target_id', '=', a5.id).orderBy('labels.title').execute();
    assert.deepEqual(linked, [{ title: 'Omega', project_id: project.id }, { title: 'Zeta', project_id: null }, { title: 'alpha', project_id: project.id }, { title: 'zz-new', project_id: project.id }]);
  });

  test('with_labels_details gives label objects', async () => {
    const r = await call(t.app, 'GET', `/projects/${project.id}/issues/1`, { token: roles.reporter.token, query: { with_labels_details: 'true' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.labels.map((l: any) => [l.name, l.color, l.text_color]), [['group-label', '#ff0000', '#FFFFFF'], ['new-label', '#6699cc', '#FFFFFF']]);
  });

  test('update: labels, add/remove, state_event close and reopen, with their events', async () => {
    const url = `/projects/${project.id}/issues/1`;
    const token = roles.developer.token;
    let r = await call(t.app, 'PUT', url, { token, body: { add_labels: 'third', remove_labels: 'group-label' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.labels, ['new-label', 'third']);
    r = await call(t.app, 'PUT', url, { token, body: { state_event: 'close' } });
    assert.equal(r.body.state, 'closed');
    assert.equal(r.body.closed_by.id, roles.developer.user.id);
    assert.equal(r.body.closed_at, new Date(t.app.clock.now()).toISOString());
    r = await call(t.app, 'PUT', url, { token, body: { state_event: 'reopen', milestone_id: 0 } });
    assert.equal(r.body.state, 'opened');
    assert.equal(r.body.closed_at, null);
    assert.equal(r.body.closed_by, null);
    assert.equal(r.body.milestone, null);
    const states = await call(t.app, 'GET', `${url}/resource_state_events`, { token });
    assert.deepEqual(states.body.map((e: any) => e.state), ['closed', 'reopened']);
    const one = await call(t.app, 'GET', `${url}/resource_state_events/${states.body[0].id}`, { token });
    assert.equal(one.status, 200);
    assert.equal(one.body.state, 'closed');
    assert.equal((await call(t.app, 'GET', `${url}/resource_state_events/999999`, { token })).status, 404);
    const ms = await call(t.app, 'GET', `${url}/resource_milestone_events`, { token });
    assert.deepEqual(ms.body.map((e: any) => e.action), ['add', 'remove']);
  });

  test("a milestone of another project clears the milestone; unknown assignees are dropped; titles are stripped", async () => {
    const elsewhere = await makeMilestone(t.app, { projectId: (await makeProject(t.app)).id, title: 'foreign' });
    const own = await makeMilestone(t.app, { projectId: project.id, title: 'own' });
    const url = `/projects/${project.id}/issues/1`;
    let r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { milestone_id: own.id, title: '  Spaced  ' } });
    assert.equal(r.body.milestone.id, own.id);
    assert.equal(r.body.milestone.project_id, project.id);
    assert.equal(r.body.title, 'Spaced');
    r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { milestone_id: elsewhere.id, assignee_ids: [999999, roles.guest.user.id] } });
    assert.equal(r.body.milestone, null);
    assert.deepEqual(r.body.assignees.map((u: any) => u.id), [roles.guest.user.id]);
    r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { assignee_id: 0 } });
    assert.deepEqual(r.body.assignees, []);
    assert.equal(r.body.assignee, null);
  });

  test('update without any attribute is 400 and changes nothing', async () => {
    const r = await call(t.app, 'PUT', `/projects/${project.id}/issues/1`, { token: roles.developer.token, body: {} });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /at least one parameter must be provided/);
  });

  test('bad input: a blank or long title is 400, nothing created', async () => {
    const before = await count('issues');
    const blank = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: '  ' } });
    assert.equal(blank.status, 400);
    assert.deepEqual(blank.body, { message: { title: ["can't be blank"] } });
    const long = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: 'x'.repeat(256) } });
    assert.equal(long.status, 400);
    const missing = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: {} });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { message: '400 (Bad request) "title" not given' });
    const date = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: 'd', due_date: '2026-13-01' } });
    assert.equal(date.status, 400);
    assert.equal(await count('issues'), before);
  });

  test('created_at is taken from owners and ignored from developers', async () => {
    const at = '2020-01-02T03:04:05.000Z';
    const own = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.owner.token, body: { title: 'old', created_at: at } });
    assert.equal(own.body.created_at, at);
    const dev = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: 'new', created_at: at } });
    assert.equal(dev.body.created_at, new Date(t.app.clock.now()).toISOString());
    const later = '2021-05-06T07:08:09.000Z';
    const devEdit = await call(t.app, 'PUT', `/projects/${project.id}/issues/${dev.body.iid}`, { token: roles.developer.token, body: { created_at: later, updated_at: later } });
    assert.equal(devEdit.body.created_at, dev.body.created_at);
    assert.equal(devEdit.body.updated_at, new Date(t.app.clock.now()).toISOString());
    const ownEdit = await call(t.app, 'PUT', `/projects/${project.id}/issues/${dev.body.iid}`, { token: roles.owner.token, body: { created_at: later, updated_at: later } });
    assert.equal(ownEdit.body.created_at, later);
    assert.equal(ownEdit.body.updated_at, later);
  });

  test('iid is taken from owners (the counter follows), ignored from developers, refused when taken', async () => {
    const p = await makeProject(t.app);
    const owner = await quickUser(t.app);
    const dev = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Project', id: p.id }, dev.user.id, Role.developer);
    const set = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: owner.token, body: { title: 'ten', iid: 10 } });
    assert.equal(set.body.iid, 10);
    const next = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: dev.token, body: { title: 'next', iid: 3 } });
    assert.equal(next.body.iid, 11);
    const before = await count('issues');
    const taken = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: owner.token, body: { title: 'again', iid: 10 } });
    assert.equal(taken.status, 400);
    assert.deepEqual(taken.body, { message: { iid: ['has already been taken'] } });
    assert.equal(await count('issues'), before);
  });

  test('deleting or moving a missing or hidden issue answers "404 Issue Not Found"', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const stranger = await quickUser(t.app);
    const hidden = await makeIssue(t.app, p, { confidential: true });
    for (const iid of [hidden.iid, 999]) {
      const del = await call(t.app, 'DELETE', `/projects/${p.id}/issues/${iid}`, { token: stranger.token });
      assert.equal(del.status, 404);
      assert.deepEqual(del.body, { message: '404 Issue Not Found' });
      const move = await call(t.app, 'POST', `/projects/${p.id}/issues/${iid}/move`, { token: stranger.token, body: { to_project_id: p.id } });
      assert.deepEqual([move.status, move.body], [404, { message: '404 Issue Not Found' }]);
    }
    assert.ok(await t.app.db.selectFrom('issues').select('id').where('id', '=', hidden.id).executeTakeFirst());
  });

  test('concurrent creates get distinct iids', async () => {
    const p = await makeProject(t.app, { owner: roles.owner.user });
    const owner = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      call(t.app, 'POST', `/projects/${p.id}/issues`, { token: owner.token, body: { title: `c${i}` } })));
    assert.ok(results.every((r) => r.status === 201));
    assert.deepEqual(results.map((r) => r.body.iid).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8]);
    // Concurrent creates naming the same new label make it once.
    const labelled = await Promise.all(Array.from({ length: 4 }, (_, i) =>
      call(t.app, 'POST', `/projects/${p.id}/issues`, { token: owner.token, body: { title: `l${i}`, labels: 'fresh' } })));
    assert.ok(labelled.every((r) => r.status === 201 && r.body.labels[0] === 'fresh'));
    const fresh = await t.app.db.selectFrom('labels').select('id').where('project_id', '=', p.id).where('title', '=', 'fresh').execute();
    assert.equal(fresh.length, 1);
  });

  test('a create does not wait for another create\'s transaction in the project on PostgreSQL; a failed create leaves a gap there', async () => {
    const p = await makeProject(t.app, { owner: roles.owner.user });
    const scope = { actor: { user: roles.owner.user, admin: false, token: null, via: 'none', sudo: false } as Actor, project: p, level: AccessLevel.OWNER };
    const postgres = dialectOf(t.app.db) === 'postgres';
    // A create holding its transaction open once its issue is written.
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let written!: () => void;
    const inside = new Promise<void>((r) => { written = r; });
    const slow = createIssue(t.app, scope, { title: 'slow' }, async () => { written(); await held; });
    await inside;
    if (postgres) {
      // Its iid was taken before its transaction: another create in the project answers meanwhile, with the next one.
      const pending = call(t.app, 'POST', `/projects/${p.id}/issues`, { token: roles.owner.token, body: { title: 'quick' } });
      const answered = await Promise.race([pending.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]);
      release();
      assert.ok(answered, 'the create waited for the other create\'s transaction');
      const quick = await pending;
      assert.equal(quick.status, 201);
      assert.equal(quick.body.iid, 2);
      assert.equal((await slow).issue.iid, 1);
    } else {
      // SQLite: the transaction holds the database's write lock; the next create runs after it.
      const quick = call(t.app, 'POST', `/projects/${p.id}/issues`, { token: roles.owner.token, body: { title: 'quick' } });
      release();
      assert.equal((await slow).issue.iid, 1);
      assert.equal((await quick).body.iid, 2);
    }
    // A create failing inside its transaction writes nothing; on PostgreSQL its number stays used (a gap), on SQLite
    // the counter rolls back with it.
    await assert.rejects(createIssue(t.app, scope, { title: 'fails' }, async () => { throw new Error('refused'); }), /refused/);
    const after = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: roles.owner.token, body: { title: 'after' } });
    assert.equal(after.body.iid, postgres ? 4 : 3);
    const titles = await t.app.db.selectFrom('issues').select(['iid', 'title']).where('project_id', '=', p.id).orderBy('iid').execute();
    assert.deepEqual(titles, [{ iid: 1, title: 'slow' }, { iid: 2, title: 'quick' }, { iid: postgres ? 4 : 3, title: 'after' }]);
  });

  test('delete honours If-Unmodified-Since', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.owner.token, body: { title: 'guarded' } });
    const stale = new Date(t.app.clock.now() - 3_600_000).toUTCString();
    const refused = await call(t.app, 'DELETE', `/projects/${project.id}/issues/${r.body.iid}`, { token: roles.owner.token, headers: { 'if-unmodified-since': stale } });
    assert.equal(refused.status, 412);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/issues/${r.body.iid}`, { token: roles.owner.token })).status, 200);
  });

  test('a cached issue answer carries the tag of its own body; a matching If-None-Match answers 304 until the issue changes', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.owner.token, body: { title: 'tagged' } });
    const url = `/projects/${project.id}/issues/${r.body.iid}`;
    const tagOfText = (text: string) => `W/"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
    const first = await call(t.app, 'GET', url, { token: roles.developer.token });
    // The second read is served from the answer cache, with the tag kept beside the answer.
    const second = await call(t.app, 'GET', url, { token: roles.developer.token });
    assert.equal(second.text, first.text);
    assert.equal(first.headers.etag, tagOfText(first.text));
    assert.equal(second.headers.etag, first.headers.etag);
    const same = await call(t.app, 'GET', url, { token: roles.developer.token, headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(same.status, 304);
    assert.equal(same.text, '');
    await call(t.app, 'PUT', url, { token: roles.owner.token, body: { title: 'tagged again' } });
    const changed = await call(t.app, 'GET', url, { token: roles.developer.token, headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.title, 'tagged again');
    assert.equal(changed.headers.etag, tagOfText(changed.text));
  });

  test('task lists: checked, unchecked and inapplicable items', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, {
      token: roles.owner.token, body: { title: 'tasks', description: '* [x] a\n1. [ ] b\n- [~] c\n- [X] d\nnot - [ ] e' },
    });
    assert.deepEqual(r.body.task_completion_status, { count: 3, completed_count: 2 });
    assert.equal(r.body.has_tasks, true);
    assert.equal(r.body.task_status, '2 of 3 checklist items completed');
  });

  test('delete removes the issue and what hangs on it; the iid is not reused', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.owner.token, body: { title: 'gone', labels: 'third' } });
    await call(t.app, 'POST', `/projects/${project.id}/issues/${r.body.iid}/award_emoji`, { token: roles.owner.token, body: { name: 'thumbsup' } });
    const links = await count('label_links');
    const awards = await count('award_emoji');
    const del = await call(t.app, 'DELETE', `/projects/${project.id}/issues/${r.body.iid}`, { token: roles.owner.token });
    assert.equal(del.status, 204);
    assert.equal(await count('label_links'), links - 1);
    assert.equal(await count('award_emoji'), awards - 1);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/issues/${r.body.iid}`, { token: roles.owner.token })).status, 404);
    const next = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.owner.token, body: { title: 'after' } });
    assert.equal(next.body.iid, r.body.iid + 1);
  });

  test('the project shows its open issues as the caller may count them', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const owner = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
    await makeIssue(t.app, p, { authorId: owner.user.id });
    await makeIssue(t.app, p, { authorId: owner.user.id, confidential: true });
    await makeIssue(t.app, p, { authorId: owner.user.id, state: 'closed' });
    const stranger = await quickUser(t.app);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count, 2);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}`, { token: stranger.token })).body.open_issues_count, 1);
  });
});

describe('issues: confidential issues never leak', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let secretIid: number;
  before(async () => {
    p = await makeProject(t.app, { visibility: 20 });
    roles = await castRoles(t.app, p);
    await makeIssue(t.app, p, { authorId: roles.owner.user.id, title: 'public one' });
    secretIid = (await makeIssue(t.app, p, { authorId: roles.owner.user.id, title: 'secret', confidential: true, assigneeIds: [roles.developer.user.id] })).iid;
  });

  for (const who of ['anonymous', 'nonMember', 'guest'] as const) {
    test(`${who} sees neither the issue nor its count`, async () => {
      const token = roles[who]?.token;
      const list = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token });
      assert.deepEqual(list.body.map((i: any) => i.title), ['public one']);
      assert.equal(list.headers['x-total'], '1');
      const all = await call(t.app, 'GET', '/issues', { token, query: { scope: 'all', search: 'secret' } });
      assert.deepEqual(all.body, []);
      const one = await call(t.app, 'GET', `/projects/${p.id}/issues/${secretIid}`, { token });
      assert.equal(one.status, 404);
      assert.deepEqual(one.body, { message: '404 Not found' });
      const parts = await call(t.app, 'GET', `/projects/${p.id}/issues/${secretIid}/participants`, { token });
      assert.equal(parts.status, 404);
      const shown = (await call(t.app, 'GET', `/projects/${p.id}`, { token })).body;
      if (who !== 'anonymous') assert.equal(shown.open_issues_count, 1);
      else assert.equal(shown.open_issues_count, undefined); // anonymous callers get the simple form
    });
  }

  test('the assignee (a Guest) and Reporters see it; participants are those who may read it', async () => {
    const guestAssignee = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, guestAssignee.user.id, Role.guest);
    const issue = await makeIssue(t.app, p, { authorId: roles.owner.user.id, title: 'assigned secret', confidential: true, assigneeIds: [guestAssignee.user.id] });
    const mine = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: guestAssignee.token });
    assert.deepEqual(mine.body.map((i: any) => i.title).sort(), ['assigned secret', 'public one']);
    const rep = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: roles.reporter.token });
    assert.equal(rep.body.length, 3);
    const parts = await call(t.app, 'GET', `/projects/${p.id}/issues/${issue.iid}/participants`, { token: roles.reporter.token });
    assert.deepEqual(parts.body.map((u: any) => u.id), [roles.owner.user.id, guestAssignee.user.id]);
  });

  test('a confidential issue in the group list is hidden from a non-member of the public group', async () => {
    const g = await makeGroup(t.app, { visibility: 20 });
    const gp = await makeProject(t.app, { namespace: g, visibility: 20 });
    const member = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, member.user.id, Role.reporter);
    await makeIssue(t.app, gp, { authorId: member.user.id, title: 'g open' });
    await makeIssue(t.app, gp, { authorId: member.user.id, title: 'g secret', confidential: true });
    const stranger = await quickUser(t.app);
    const seen = await call(t.app, 'GET', `/groups/${g.id}/issues`, { token: stranger.token });
    assert.deepEqual(seen.body.map((i: any) => i.title), ['g open']);
    assert.equal(seen.body[0].references.relative, `${gp.path}#1`);
    const all = await call(t.app, 'GET', `/groups/${g.id}/issues`, { token: member.token });
    assert.deepEqual(all.body.map((i: any) => i.title).sort(), ['g open', 'g secret']);
  });

  test('issues of a private project never reach /issues of a stranger; of a members-only feature neither', async () => {
    const hidden = await makeProject(t.app, { visibility: 0 });
    await makeIssue(t.app, hidden, { title: 'private project issue' });
    const membersOnly = await makeProject(t.app, { visibility: 20 });
    await t.app.db.updateTable('projects').set({ issues_access_level: 10 }).where('id', '=', membersOnly.id).execute();
    await makeIssue(t.app, membersOnly, { title: 'members-only issue' });
    const stranger = await quickUser(t.app);
    const r = await call(t.app, 'GET', '/issues', { token: stranger.token, query: { scope: 'all', search: 'issue' } });
    assert.deepEqual(r.body.map((i: any) => i.title).filter((x: string) => x.includes('project issue') || x.includes('members-only')), []);
  });

  test('an administrator lists every issue, but none of a project whose issues are disabled', async () => {
    const admin = await quickUser(t.app, { admin: true });
    const off = await makeProject(t.app, { visibility: 0 });
    await makeIssue(t.app, off, { title: 'feature off' });
    const on = await makeProject(t.app, { visibility: 0 });
    await makeIssue(t.app, on, { title: 'feature on', confidential: true });
    await t.app.db.updateTable('projects').set({ issues_access_level: 0 }).where('id', '=', off.id).execute();
    const r = await call(t.app, 'GET', '/issues', { token: admin.token, query: { scope: 'all', search: 'feature' } });
    assert.deepEqual(r.body.map((i: any) => i.title), ['feature on']);
  });

  test('GET /issues/:id is for administrators only', async () => {
    const admin = await quickUser(t.app, { admin: true });
    const row = await t.app.db.selectFrom('issues').select(['id', 'iid']).where('project_id', '=', p.id).where('iid', '=', secretIid).executeTakeFirstOrThrow();
    const r = await call(t.app, 'GET', `/issues/${row.id}`, { token: admin.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.title, 'secret');
    assert.equal((await call(t.app, 'GET', `/issues/${row.id}`, { token: roles.owner.token })).status, 403);
    assert.equal((await call(t.app, 'GET', `/issues/${row.id}`)).status, 401);
    assert.deepEqual((await call(t.app, 'GET', '/issues/99999999', { token: admin.token })).body, { message: '404 Not found' });
  });

  test('/issues without a token needs scope=all', async () => {
    assert.equal((await call(t.app, 'GET', '/issues')).status, 401);
    assert.equal((await call(t.app, 'GET', '/issues', { query: { scope: 'all' } })).status, 200);
  });
});

describe('issues: list filters', () => {
  let p: ProjectRow;
  let owner: { user: { id: number; username: string }; token: string };
  let other: { user: { id: number; username: string }; token: string };
  const iid: Record<string, number> = {};
  const iterationIds: Record<string, number> = {};
  before(async () => {
    const g = await makeGroup(t.app, { visibility: 20 });
    p = await makeProject(t.app, { namespace: g, visibility: 20 });
    owner = await quickUser(t.app);
    other = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
    const bug = await makeLabel(t.app, { groupId: g.id, title: 'bug' });
    const ui = await makeLabel(t.app, { projectId: p.id, title: 'ui' });
    await t.app.db.insertInto('label_priorities').values([{ project_id: p.id, label_id: ui.id, priority: 1 }, { project_id: p.id, label_id: bug.id, priority: 5 }]).execute();
    const now = t.app.clock.now();
    const DAY = 86_400_000;
    const today = Math.floor(now / DAY) * DAY;
    const past = await makeMilestone(t.app, { projectId: p.id, title: 'past', startDate: today - 30 * DAY, dueDate: today - 10 * DAY });
    const future = await makeMilestone(t.app, { projectId: p.id, title: 'future', startDate: today + 5 * DAY, dueDate: today + 20 * DAY });
    const mk = async (key: string, o: Parameters<typeof makeIssue>[2]) => { (t.app.clock as any).advance(1000); iid[key] = (await makeIssue(t.app, p, o)).iid; };
    await mk('a', { authorId: owner.user.id, title: 'alpha crash', labels: [bug.id], milestoneId: past.id, dueDate: today });
    await mk('b', { authorId: other.user.id, title: 'beta', description: 'a crash inside', labels: [bug.id, ui.id], assigneeIds: [owner.user.id], milestoneId: future.id });
    await mk('c', { authorId: owner.user.id, title: 'gamma', state: 'closed', dueDate: today - 3 * DAY });
    await mk('d', { authorId: other.user.id, title: 'delta', labels: [ui.id], confidential: true, assigneeIds: [other.user.id] });
    const current = await makeIteration(t.app, { groupId: g.id, title: 'sprint now', startDate: today - DAY, dueDate: today + 5 * DAY });
    const done = await makeIteration(t.app, { groupId: g.id, title: 'sprint done', startDate: today - 20 * DAY, dueDate: today - 10 * DAY });
    const idOf = async (k: string) => (await t.app.db.selectFrom('issues').select('id').where('project_id', '=', p.id).where('iid', '=', iid[k]).executeTakeFirstOrThrow()).id;
    await t.app.db.updateTable('issues').set({ iteration_id: current.id }).where('id', '=', await idOf('b')).execute();
    await t.app.db.updateTable('issues').set({ iteration_id: done.id }).where('id', '=', await idOf('c')).execute();
    await t.app.db.updateTable('issues').set({ weight: 3, relative_position: 10, updated_at: now + 60_000 }).where('id', '=', await idOf('a')).execute();
    await t.app.db.updateTable('issues').set({ weight: 0, relative_position: 5 }).where('id', '=', await idOf('d')).execute();
    await t.app.db.updateTable('issues').set({ issue_type: 'incident' }).where('id', '=', await idOf('c')).execute();
    iterationIds.current = current.id;
    await t.app.db.insertInto('award_emoji').values({ name: 'thumbsup', user_id: owner.user.id, awardable_type: 'Issue', awardable_id: (await t.app.db.selectFrom('issues').select('id').where('project_id', '=', p.id).where('iid', '=', iid.b).executeTakeFirstOrThrow()).id, created_at: now, updated_at: now }).execute();
  });
  const titles = async (query: Record<string, string>, token = owner.token, url = `/projects/${p.id}/issues`) => {
    const r = await call(t.app, 'GET', url, { token, query });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.map((i: any) => i.title);
  };
  const cases: Array<[string, Record<string, string>, string[]]> = [
    ['default order: newest first', {}, ['delta', 'gamma', 'beta', 'alpha crash']],
    ['state=opened', { state: 'opened' }, ['delta', 'beta', 'alpha crash']],
    ['state=closed', { state: 'closed' }, ['gamma']],
    ['labels=bug (a group label)', { labels: 'bug' }, ['beta', 'alpha crash']],
    ['labels=bug,ui (all of them)', { labels: 'bug,ui' }, ['beta']],
    ['labels=None', { labels: 'None' }, ['gamma']],
    ['labels=Any', { labels: 'Any' }, ['delta', 'beta', 'alpha crash']],
    ['not[labels]=bug', { 'not[labels]': 'bug' }, ['delta', 'gamma']],
    ['not[labels]=bug,ui (none of them)', { 'not[labels]': 'bug,ui' }, ['gamma']],
    ['not[assignee_id]=Any', { 'not[assignee_id]': 'Any' }, ['gamma', 'alpha crash']],
    ['not[iids][]', { 'not[iids][]': '1' }, ['delta', 'gamma', 'beta']],
    ['labels=bug&state=opened&search=crash together', { labels: 'bug', state: 'opened', search: 'crash' }, ['beta', 'alpha crash']],
    ['milestone=past', { milestone: 'past' }, ['alpha crash']],
    ['milestone=None', { milestone: 'None' }, ['delta', 'gamma']],
    ['milestone=Any', { milestone: 'Any' }, ['beta', 'alpha crash']],
    ['milestone=Upcoming', { milestone: 'Upcoming' }, ['beta']],
    ['milestone=Started', { milestone: 'Started' }, []],
    ['milestone_id=Upcoming', { milestone_id: 'Upcoming' }, ['beta']],
    ['milestone_id=None', { milestone_id: 'None' }, ['delta', 'gamma']],
    ['not[milestone]=future', { 'not[milestone]': 'future' }, ['delta', 'gamma', 'alpha crash']],
    ['iids[]', { 'iids[]': '1' }, ['alpha crash']],
    ['scope=created_by_me', { scope: 'created_by_me' }, ['gamma', 'alpha crash']],
    ['scope=assigned_to_me', { scope: 'assigned_to_me' }, ['beta']],
    ['assignee_id=None', { assignee_id: 'None' }, ['gamma', 'alpha crash']],
    ['assignee_id=Any', { assignee_id: 'Any' }, ['delta', 'beta']],
    ['my_reaction_emoji=thumbsup', { my_reaction_emoji: 'thumbsup' }, ['beta']],
    ['my_reaction_emoji=None', { my_reaction_emoji: 'None' }, ['delta', 'gamma', 'alpha crash']],
    ['search (title or description)', { search: 'crash' }, ['beta', 'alpha crash']],
    ['search in=title', { search: 'crash', in: 'title' }, ['alpha crash']],
    ['confidential=true', { confidential: 'true' }, ['delta']],
    ['due_date=overdue', { due_date: 'overdue' }, ['gamma']],
    ['due_date=today', { due_date: 'today' }, ['alpha crash']],
    ['due_date=0', { due_date: '0' }, ['delta', 'beta']],
    ['order_by=title sort=asc', { order_by: 'title', sort: 'asc' }, ['alpha crash', 'beta', 'delta', 'gamma']],
    ['order_by=label_priority asc', { order_by: 'label_priority', sort: 'asc' }, ['beta', 'delta', 'alpha crash', 'gamma']],
    ['order_by=milestone_due asc', { order_by: 'milestone_due', sort: 'asc' }, ['alpha crash', 'beta', 'gamma', 'delta']],
    ['order_by=popularity', { order_by: 'popularity' }, ['beta', 'delta', 'gamma', 'alpha crash']],
    ['iteration_id=None', { iteration_id: 'None' }, ['delta', 'alpha crash']],
    ['iteration_id=Any', { iteration_id: 'Any' }, ['gamma', 'beta']],
    ['iteration_id=Current', { iteration_id: 'Current' }, ['beta']],
    ['iteration_title', { iteration_title: 'sprint done' }, ['gamma']],
    ['not[iteration_title]', { 'not[iteration_title]': 'sprint done' }, ['delta', 'beta', 'alpha crash']],
    ['weight=3', { weight: '3' }, ['alpha crash']],
    ['weight=None', { weight: 'None' }, ['gamma', 'beta']],
    ['not[weight]=0', { 'not[weight]': '0' }, ['gamma', 'beta', 'alpha crash']],
    ['issue_type=incident', { issue_type: 'incident' }, ['gamma']],
    ['my_reaction_emoji=Any', { my_reaction_emoji: 'Any' }, ['beta']],
    ['not[my_reaction_emoji]=thumbsup', { 'not[my_reaction_emoji]': 'thumbsup' }, ['delta', 'gamma', 'alpha crash']],
    ['assignee_username=None', { assignee_username: 'None' }, ['gamma', 'alpha crash']],
    ['order_by=updated_at', { order_by: 'updated_at' }, ['alpha crash', 'delta', 'gamma', 'beta']],
    ['order_by=relative_position asc', { order_by: 'relative_position', sort: 'asc' }, ['delta', 'alpha crash', 'beta', 'gamma']],
    ['order_by=priority asc (milestone due, then label priority)', { order_by: 'priority', sort: 'asc' }, ['alpha crash', 'beta', 'delta', 'gamma']],
    ['order_by=due_date asc', { order_by: 'due_date', sort: 'asc' }, ['gamma', 'alpha crash', 'beta', 'delta']],
  ];
  for (const [name, query, expected] of cases) {
    test(name, async () => assert.deepEqual(await titles(query), expected));
  }
  test('author_username and author_id agree; both together are 400', async () => {
    assert.deepEqual(await titles({ author_username: other.user.username }), ['delta', 'beta']);
    assert.deepEqual(await titles({ author_id: String(other.user.id) }), ['delta', 'beta']);
    const r = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: owner.token, query: { author_id: '1', author_username: 'x' } });
    assert.equal(r.status, 400);
  });
  test('iteration_id by id', async () => assert.deepEqual(await titles({ iteration_id: String(iterationIds.current) }), ['beta']));
  test('updated_after', async () => {
    const later = new Date(t.app.clock.now() + 30_000).toISOString();
    assert.deepEqual(await titles({ updated_after: later }), ['alpha crash']);
    assert.deepEqual(await titles({ updated_before: later }), ['delta', 'gamma', 'beta']);
  });
  test('/issues: created_by_me by default, assigned_to_me, and all with the group list agreeing', async () => {
    assert.deepEqual(await titles({}, owner.token, '/issues'), ['gamma', 'alpha crash']);
    assert.deepEqual(await titles({ scope: 'assigned_to_me' }, owner.token, '/issues'), ['beta']);
    assert.deepEqual(await titles({ scope: 'assigned-to-me' }, owner.token, '/issues'), ['beta']);
    const group = (await t.app.db.selectFrom('projects').select('namespace_id').where('id', '=', p.id).executeTakeFirstOrThrow()).namespace_id;
    assert.deepEqual(await titles({ labels: 'bug' }, owner.token, `/groups/${group}/issues`), ['beta', 'alpha crash']);
  });
  test('assignee_username', async () => assert.deepEqual(await titles({ assignee_username: owner.user.username }), ['beta']));
  test('created_after / created_before', async () => {
    const all = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: owner.token, query: { order_by: 'created_at', sort: 'asc' } });
    const after = all.body[2].created_at;
    assert.deepEqual(await titles({ created_after: after }), ['delta', 'gamma']);
    assert.deepEqual(await titles({ created_before: all.body[1].created_at }), ['beta', 'alpha crash']);
  });
  test('pagination headers', async () => {
    const r = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: owner.token, query: { per_page: '2', page: '2' } });
    assert.equal(r.headers['x-total'], '4');
    assert.equal(r.headers['x-total-pages'], '2');
    assert.deepEqual(r.body.map((i: any) => i.title), ['beta', 'alpha crash']);
  });
  test('the confidential issue is filtered out for a stranger even with matching filters', async () => {
    const stranger = await quickUser(t.app);
    assert.deepEqual(await titles({ labels: 'ui' }, stranger.token), ['beta']);
  });
  test('an invalid assignee_id is 400', async () => {
    const r = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token: owner.token, query: { assignee_id: 'x' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'assignee_id is invalid' });
  });
});

describe('issues: label filters over a root namespace', () => {
  // As the reference's label filter: in a project's or a group's list, `labels` and `not[labels]` name the labels of
  // the context's root namespace (its groups' and its projects' labels, whichever project or subgroup holds them);
  // the instance-wide list matches any label so titled.
  let p: ProjectRow;
  let root: Awaited<ReturnType<typeof makeGroup>>;
  let owner: { user: { id: number; username: string }; token: string };
  before(async () => {
    root = await makeGroup(t.app, { visibility: 20 });
    const sub = await makeGroup(t.app, { visibility: 20, parent: root });
    const elsewhere = await makeGroup(t.app, { visibility: 20 });
    p = await makeProject(t.app, { namespace: sub, visibility: 20 });
    const sibling = await makeProject(t.app, { namespace: root, visibility: 20 });
    owner = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: root.id }, owner.user.id, Role.owner);
    const area = await makeLabel(t.app, { groupId: root.id, title: 'area' });
    const subTeam = await makeLabel(t.app, { groupId: sub.id, title: 'team' });
    const projectTeam = await makeLabel(t.app, { projectId: p.id, title: 'team' });
    const siblings = await makeLabel(t.app, { projectId: sibling.id, title: 'sibling' });
    // A label of another root namespace linked to this project's issue (a transfer re-creates such labels, but older rows may hold one).
    const foreignArea = await makeLabel(t.app, { groupId: elsewhere.id, title: 'area' });
    const mk = async (title: string, labels: number[]) => { (t.app.clock as any).advance(1000); await makeIssue(t.app, p, { title, labels }); };
    await mk('root area', [area.id]);
    await mk('subgroup team', [subTeam.id]);
    await mk('project team', [projectTeam.id]);
    await mk('sibling label', [siblings.id]);
    await mk('foreign area', [foreignArea.id]);
    await mk('none', []);
    await mk('area and team', [area.id, projectTeam.id]);
  });
  const titles = async (url: string, query: Record<string, string>) => {
    const r = await call(t.app, 'GET', url, { token: owner.token, query });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers['x-total'], String(r.body.length));
    return r.body.map((i: any) => i.title);
  };
  const cases: Array<[string, Record<string, string>, string[]]> = [
    ['labels=area: the root group\'s label, not another root\'s', { labels: 'area' }, ['area and team', 'root area']],
    ['labels=team: the subgroup\'s and the project\'s labels of that title', { labels: 'team' }, ['area and team', 'project team', 'subgroup team']],
    ['labels=sibling: a label of another project under the root', { labels: 'sibling' }, ['sibling label']],
    ['labels=area,team: both', { labels: 'area,team' }, ['area and team']],
    ['labels=missing: no label so titled, nothing', { labels: 'missing' }, []],
    ['labels=area,missing: nothing', { labels: 'area,missing' }, []],
    ['not[labels]=team', { 'not[labels]': 'team' }, ['none', 'foreign area', 'sibling label', 'root area']],
    ['not[labels]=area,sibling', { 'not[labels]': 'area,sibling' }, ['none', 'foreign area', 'project team', 'subgroup team']],
    ['not[labels]=missing: no filter', { 'not[labels]': 'missing' }, ['area and team', 'none', 'foreign area', 'sibling label', 'project team', 'subgroup team', 'root area']],
    ['labels=team&search=and', { labels: 'team', search: 'and' }, ['area and team']],
  ];
  for (const [name, query, expected] of cases) {
    test(`project: ${name}`, async () => assert.deepEqual(await titles(`/projects/${p.id}/issues`, query), expected));
    test(`group: ${name}`, async () => assert.deepEqual(await titles(`/groups/${root.id}/issues`, query), expected));
  }
  test('the instance-wide list matches any label so titled', async () => {
    const all = await titles('/issues', { scope: 'all', labels: 'area' });
    assert.deepEqual(all.filter((x: string) => ['area and team', 'foreign area', 'root area'].includes(x)), ['area and team', 'foreign area', 'root area']);
  });
});

describe('issues: a search word the index holds for many rows, in one project', () => {
  // Over 5,000 indexed rows hold "overheat": in one project the word is matched on the project's rows (SQLite),
  // and the answer is the one the index gives.
  let p: ProjectRow;
  let roles: RoleCast;
  before(async () => {
    const filler = await makeProject(t.app, { visibility: 20 });
    const now = t.app.clock.now();
    for (let from = 0; from < 5_100; from += 300) {
      await t.app.db.insertInto('issues').values(Array.from({ length: 300 }, (_, k) => ({
        project_id: filler.id, iid: from + k + 1, title: `overheat ${from + k}`, description: null, author_id: null, confidential: 0, state: 'opened',
        created_at: now, updated_at: now,
      }))).execute();
    }
    p = await makeProject(t.app, { visibility: 20 });
    roles = await castRoles(t.app, p);
    const hot = await makeLabel(t.app, { projectId: p.id, title: 'hot' });
    const at = (k: number) => t.app.db.updateTable('issues').set({ created_at: now + k * 1000 }).where('project_id', '=', p.id).where('iid', '=', k).execute();
    await makeIssue(t.app, p, { title: 'OVERHEAT upper case', labels: [hot.id] });
    await makeIssue(t.app, p, { title: 'in the description', description: 'it Overheats', labels: [hot.id] });
    await makeIssue(t.app, p, { title: 'closed overheat', state: 'closed', labels: [hot.id] });
    await makeIssue(t.app, p, { title: 'overheat without the label' });
    await makeIssue(t.app, p, { title: 'secret overheat', confidential: true, labels: [hot.id] });
    await makeIssue(t.app, p, { title: 'over heat, apart', labels: [hot.id] });
    for (let k = 1; k <= 6; k++) await at(k);
  });
  const titles = async (query: Record<string, string>, token: string) => {
    const r = await call(t.app, 'GET', `/projects/${p.id}/issues`, { token, query });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { titles: r.body.map((i: any) => i.title), total: r.headers['x-total'] };
  };
  test('the word is common in the index (the per-row match is the one taken on SQLite)', async () => {
    const index = { table: 'issues', columns: ['title', 'description'] };
    assert.equal(await indexedTermIsCommon(t.app.db, index, 'overheat', 5_000), dialectOf(t.app.db) === 'sqlite');
    assert.equal(await indexedTermIsCommon(t.app.db, index, 'upper case', 5_000), false);
  });
  test('labels + state + search: title and description, any case; confidential only to those who may see it', async () => {
    assert.deepEqual(await titles({ labels: 'hot', state: 'opened', search: 'overheat' }, roles.maintainer.token),
      { titles: ['secret overheat', 'in the description', 'OVERHEAT upper case'], total: '3' });
    assert.deepEqual(await titles({ labels: 'hot', state: 'opened', search: 'overheat' }, roles.guest.token),
      { titles: ['in the description', 'OVERHEAT upper case'], total: '2' });
    assert.deepEqual(await titles({ search: 'OverHeat', in: 'title' }, roles.developer.token),
      { titles: ['secret overheat', 'overheat without the label', 'closed overheat', 'OVERHEAT upper case'], total: '4' });
    assert.deepEqual(await titles({ search: 'overheat upper', state: 'opened' }, roles.developer.token), { titles: ['OVERHEAT upper case'], total: '1' });
    assert.deepEqual(await titles({ search: '"overheat upper"' }, roles.developer.token), { titles: ['OVERHEAT upper case'], total: '1' });
    assert.deepEqual(await titles({ search: 'heat, apart' }, roles.developer.token), { titles: ['over heat, apart'], total: '1' });
  });
});

describe('issues: the other routes by role, on a private project', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let iid: number;
  let secret: number;
  before(async () => {
    p = await makeProject(t.app, { visibility: 0 });
    roles = await castRoles(t.app, p);
    iid = (await makeIssue(t.app, p, { authorId: roles.owner.user.id })).iid;
    secret = (await makeIssue(t.app, p, { authorId: roles.owner.user.id, confidential: true })).iid;
  });
  const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
  const rows: Array<[string, string, string, Record<string, string> | undefined, number[], number[]]> = [
    // name, method, path after the issue, body, statuses on an open issue, statuses on a confidential one
    ['participants', 'GET', '/participants', undefined, [404, 404, 200, 200, 200, 200, 200, 200], [404, 404, 404, 200, 200, 200, 200, 200]],
    ['resource_state_events', 'GET', '/resource_state_events', undefined, [404, 404, 200, 200, 200, 200, 200, 200], [404, 404, 404, 200, 200, 200, 200, 200]],
    ['time_stats', 'GET', '/time_stats', undefined, [404, 404, 200, 200, 200, 200, 200, 200], [404, 404, 404, 200, 200, 200, 200, 200]],
    ['subscribe', 'POST', '/subscribe', undefined, [401, 404, 201, 201, 201, 201, 304, 201], [401, 404, 404, 201, 201, 201, 304, 201]],
    ['time_estimate', 'POST', '/time_estimate', { duration: '1h' }, [401, 404, 403, 200, 200, 200, 200, 200], [401, 404, 403, 200, 200, 200, 200, 200]],
    ['award emoji', 'POST', '/award_emoji', { name: 'tada' }, [401, 404, 201, 201, 201, 201, 201, 201], [401, 404, 404, 201, 201, 201, 201, 201]],
    ['award emoji list', 'GET', '/award_emoji', undefined, [401, 404, 200, 200, 200, 200, 200, 200], [401, 404, 404, 200, 200, 200, 200, 200]],
  ];
  for (const [name, method, path, body, open, confidential] of rows) {
    CALLERS.forEach((caller, i) => {
      test(`${caller}: ${name} answers ${open[i]}, on a confidential issue ${confidential[i]}`, async () => {
        const token = roles[caller]?.token;
        const a = await call(t.app, method as any, `/projects/${p.id}/issues/${iid}${path}`, { token, body });
        assert.equal(a.status, open[i], JSON.stringify(a.body));
        const b = await call(t.app, method as any, `/projects/${p.id}/issues/${secret}${path}`, { token, body });
        assert.equal(b.status, confidential[i], JSON.stringify(b.body));
        if (b.status === 404) assert.deepEqual(b.body, { message: ['anonymous', 'nonMember'].includes(caller) ? '404 Project Not Found' : '404 Not found' });
      });
    });
  }
});

describe('issues: subscriptions, time tracking, award emoji, move', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let url: string;
  before(async () => {
    p = await makeProject(t.app, { visibility: 20 });
    roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, { authorId: roles.owner.user.id });
    url = `/projects/${p.id}/issues/${issue.iid}`;
  });

  test('subscribe answers 201 then 304; the author is subscribed already', async () => {
    const token = roles.developer.token;
    const first = await call(t.app, 'POST', `${url}/subscribe`, { token });
    assert.equal(first.status, 201);
    assert.equal(first.body.subscribed, true);
    const again = await call(t.app, 'POST', `${url}/subscribe`, { token });
    assert.equal(again.status, 304);
    assert.equal((await call(t.app, 'POST', `${url}/subscribe`, { token: roles.owner.token })).status, 304);
    const off = await call(t.app, 'POST', `${url}/unsubscribe`, { token });
    assert.equal(off.status, 201);
    assert.equal(off.body.subscribed, false);
    assert.equal((await call(t.app, 'POST', `${url}/unsubscribe`, { token })).status, 304);
  });

  test('time tracking', async () => {
    const token = roles.reporter.token;
    let r = await call(t.app, 'POST', `${url}/time_estimate`, { token, body: { duration: '3h30m' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { time_estimate: 12600, total_time_spent: 0, human_time_estimate: '3h 30m', human_total_time_spent: null });
    r = await call(t.app, 'POST', `${url}/add_spent_time`, { token, body: { duration: '1w2d' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.total_time_spent, 7 * 8 * 3600);
    assert.equal(r.body.human_total_time_spent, '1w 2d');
    r = await call(t.app, 'POST', `${url}/add_spent_time`, { token, body: { duration: '-1d' } });
    assert.equal(r.body.total_time_spent, 6 * 8 * 3600);
    const over = await call(t.app, 'POST', `${url}/add_spent_time`, { token, body: { duration: '-10w' } });
    assert.equal(over.status, 400);
    const bad = await call(t.app, 'POST', `${url}/time_estimate`, { token, body: { duration: 'soon' } });
    assert.equal(bad.status, 400);
    r = await call(t.app, 'GET', `${url}/time_stats`, { token });
    assert.deepEqual(r.body, { time_estimate: 12600, total_time_spent: 6 * 8 * 3600, human_time_estimate: '3h 30m', human_total_time_spent: '1w 1d' });
    r = await call(t.app, 'POST', `${url}/reset_spent_time`, { token });
    assert.equal(r.status, 200);
    assert.equal(r.body.total_time_spent, 0);
    r = await call(t.app, 'POST', `${url}/reset_time_estimate`, { token });
    assert.equal(r.body.time_estimate, 0);
    assert.equal((await call(t.app, 'POST', `${url}/time_estimate`, { token: roles.guest.token, body: { duration: '1h' } })).status, 403);
  });

  test('award emoji: votes count, duplicates refused, only the owner removes', async () => {
    const up = await call(t.app, 'POST', `${url}/award_emoji`, { token: roles.guest.token, body: { name: 'thumbsup' } });
    assert.equal(up.status, 201);
    assert.deepEqual(Object.keys(up.body), ['id', 'name', 'user', 'created_at', 'updated_at', 'awardable_id', 'awardable_type', 'url']);
    await call(t.app, 'POST', `${url}/award_emoji`, { token: roles.reporter.token, body: { name: 'thumbsdown' } });
    const dup = await call(t.app, 'POST', `${url}/award_emoji`, { token: roles.guest.token, body: { name: 'thumbsup' } });
    assert.equal(dup.status, 404);
    assert.deepEqual(dup.body, { message: '404 Award Emoji Name has already been taken Not Found' });
    const issue = await call(t.app, 'GET', url, { token: roles.guest.token });
    assert.equal(issue.body.upvotes, 1);
    assert.equal(issue.body.downvotes, 1);
    const list = await call(t.app, 'GET', `${url}/award_emoji`, { token: roles.guest.token });
    assert.equal(list.body.length, 2);
    const one = await call(t.app, 'GET', `${url}/award_emoji/${up.body.id}`, { token: roles.guest.token });
    assert.equal(one.body.name, 'thumbsup');
    assert.equal((await call(t.app, 'DELETE', `${url}/award_emoji/${up.body.id}`, { token: roles.reporter.token })).status, 401);
    assert.equal((await call(t.app, 'DELETE', `${url}/award_emoji/${up.body.id}`, { token: roles.guest.token })).status, 204);
    assert.equal((await call(t.app, 'GET', url, { token: roles.guest.token })).body.upvotes, 0);
  });

  test('move: to another project with its labels matched; errors as the reference', async () => {
    const target = await makeProject(t.app, { visibility: 20 });
    await addMember(t.app, { type: 'Project', id: target.id }, roles.maintainer.user.id, Role.maintainer);
    await makeLabel(t.app, { projectId: target.id, title: 'keep' });
    const src = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: roles.maintainer.token, body: { title: 'travel', labels: 'keep,drop' } });
    await call(t.app, 'POST', `/projects/${p.id}/issues/${src.body.iid}/award_emoji`, { token: roles.guest.token, body: { name: 'thumbsup' } });
    await call(t.app, 'POST', `/projects/${p.id}/issues/${src.body.iid}/add_spent_time`, { token: roles.maintainer.token, body: { duration: '2h' } });
    const same = await call(t.app, 'POST', `/projects/${p.id}/issues/${src.body.iid}/move`, { token: roles.maintainer.token, body: { to_project_id: p.id } });
    assert.equal(same.status, 400);
    assert.deepEqual(same.body, { message: 'Cannot move issue to project it originates from!' });
    const denied = await call(t.app, 'POST', `/projects/${p.id}/issues/${src.body.iid}/move`, { token: roles.developer.token, body: { to_project_id: target.id } });
    assert.equal(denied.status, 400);
    assert.deepEqual(denied.body, { message: 'Cannot move issue due to insufficient permissions!' });
    const moved = await call(t.app, 'POST', `/projects/${p.id}/issues/${src.body.iid}/move`, { token: roles.maintainer.token, body: { to_project_id: target.id } });
    assert.equal(moved.status, 201, JSON.stringify(moved.body));
    assert.equal(moved.body.project_id, target.id);
    assert.equal(moved.body.iid, 1);
    assert.deepEqual(moved.body.labels, ['keep']);
    assert.equal(moved.body.upvotes, 1);
    assert.equal(moved.body.time_stats.total_time_spent, 7200);
    const old = await call(t.app, 'GET', `/projects/${p.id}/issues/${src.body.iid}`, { token: roles.maintainer.token });
    assert.equal(old.body.state, 'closed');
    assert.equal(old.body.moved_to_id, moved.body.id);
  });
});
