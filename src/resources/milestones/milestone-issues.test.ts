import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { addMember, castGroupRoles, castRoles, makeGroup, makeIssue, makeLabel, makeMilestone, makeProject, quickUser, Role, type RoleCast } from '../../../test/support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const BASIC_FIELDS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels',
  'milestone', 'assignees', 'author', 'type', 'assignee', 'user_notes_count', 'merge_requests_count', 'upvotes', 'downvotes', 'due_date',
  'confidential', 'discussion_locked', 'issue_type', 'web_url', 'time_stats', 'task_completion_status', 'weight', 'blocking_issues_count', 'iteration'];

describe('milestone issues', () => {
  test('project: the milestone\'s issues as IssueBasic, label priority first; confidential ones for those who may see them', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const roles = await castRoles(t.app, project);
    const m = await makeMilestone(t.app, { projectId: project.id, title: 'v1' });
    const other = await makeMilestone(t.app, { projectId: project.id, title: 'v2' });
    const urgent = await makeLabel(t.app, { projectId: project.id, title: 'urgent' });
    await t.app.db.insertInto('label_priorities').values({ project_id: project.id, label_id: urgent.id, priority: 1 }).execute();
    const plain = await makeIssue(t.app, project, { milestoneId: m.id, authorId: roles.owner.user.id });
    const prio = await makeIssue(t.app, project, { milestoneId: m.id, labels: [urgent.id] });
    const closed = await makeIssue(t.app, project, { milestoneId: m.id, state: 'closed' });
    const secret = await makeIssue(t.app, project, { milestoneId: m.id, confidential: true, authorId: roles.guest.user.id });
    await makeIssue(t.app, project, { milestoneId: other.id });
    await makeIssue(t.app, project, {});
    const url = `/projects/${project.id}/milestones/${m.id}/issues`;
    const r = await call(t.app, 'GET', url, { token: roles.reporter.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], '4');
    assert.deepEqual(Object.keys(r.body[0]), BASIC_FIELDS);
    // Label priority ascending (issues without a prioritised label last), then id.
    assert.deepEqual(r.body.map((i: any) => i.iid), [prio.iid, plain.iid, closed.iid, secret.iid]);
    assert.deepEqual({ ...r.body.find((i: any) => i.iid === prio.iid), id: 0, created_at: 0, updated_at: 0, milestone: r.body[0].milestone.title, time_stats: 0 }, {
      id: 0, iid: prio.iid, project_id: project.id, title: prio.title, description: null, state: 'opened', created_at: 0, updated_at: 0,
      closed_at: null, closed_by: null, labels: ['urgent'], milestone: 'v1', assignees: [], author: null, type: 'ISSUE', assignee: null,
      user_notes_count: 0, merge_requests_count: 0, upvotes: 0, downvotes: 0, due_date: null, confidential: false, discussion_locked: null,
      issue_type: 'issue', web_url: `${t.app.config.externalUrl}/${project.full_path}/-/issues/${prio.iid}`, time_stats: 0,
      task_completion_status: { count: 0, completed_count: 0 }, weight: null, blocking_issues_count: 0, iteration: null,
    });
    // The guest authored the confidential issue; the developer did not and is a Developer (sees it); a non-member does not.
    const seen = async (token: string | undefined) => (await call(t.app, 'GET', url, { token })).body.map((i: any) => i.iid).sort();
    assert.deepEqual(await seen(roles.guest.token), [plain.iid, prio.iid, closed.iid, secret.iid].sort());
    assert.deepEqual(await seen(roles.nonMember.token), [plain.iid, prio.iid, closed.iid].sort());
    const nm = await call(t.app, 'GET', url, { token: roles.nonMember.token });
    assert.equal(nm.headers['x-total'], '3');
    const missing = await call(t.app, 'GET', `/projects/${project.id}/milestones/${m.id + 1000}/issues`, { token: roles.reporter.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
    const foreign = await makeMilestone(t.app, { projectId: (await makeProject(t.app)).id });
    const f = await call(t.app, 'GET', `/projects/${project.id}/milestones/${foreign.id}/issues`, { token: roles.reporter.token });
    assert.deepEqual([f.status, f.body], [404, { message: '404 Not found' }]);
  });

  test('project: role table on a private project; issues hidden from a caller who may read milestones but not issues', async () => {
    const project = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, project);
    const m = await makeMilestone(t.app, { projectId: project.id });
    await makeIssue(t.app, project, { milestoneId: m.id });
    await makeIssue(t.app, project, { milestoneId: m.id, confidential: true });
    const expected = [[401], [404], [200, 1], [200, 2], [200, 2], [200, 2], [200, 2], [200, 2]];
    for (const [i, role] of ROLES.entries()) {
      const r = await call(t.app, 'GET', `/projects/${project.id}/milestones/${m.id}/issues`, { token: roles[role]?.token });
      assert.equal(r.status, expected[i][0], role);
      if (r.status === 200) assert.equal(r.body.length, expected[i][1], role);
    }
    // Issues private to members, merge requests open: a non-member of a public project reads the milestone, not its issues.
    const pub = await makeProject(t.app, { visibility: 20 });
    await t.app.db.updateTable('projects').set({ issues_access_level: 10 }).where('id', '=', pub.id).execute();
    const pm = await makeMilestone(t.app, { projectId: pub.id });
    await makeIssue(t.app, pub, { milestoneId: pm.id });
    const stranger = await quickUser(t.app);
    const r = await call(t.app, 'GET', `/projects/${pub.id}/milestones/${pm.id}/issues`, { token: stranger.token });
    assert.deepEqual([r.status, r.body, r.headers['x-total']], [200, [], '0']);
  });

  test('group: issues of the group\'s own projects with the milestone, not of subgroups\' projects; readable ones only', async () => {
    const group = await makeGroup(t.app, { visibility: 20 });
    const sub = await makeGroup(t.app, { visibility: 20, parent: group });
    const roles = await castGroupRoles(t.app, group);
    const pub = await makeProject(t.app, { namespace: group, visibility: 20 });
    const priv = await makeProject(t.app, { namespace: group, visibility: 0 });
    const deep = await makeProject(t.app, { namespace: sub, visibility: 20 });
    const m = await makeMilestone(t.app, { groupId: group.id, title: 'Q3' });
    const a = await makeIssue(t.app, pub, { milestoneId: m.id });
    const b = await makeIssue(t.app, priv, { milestoneId: m.id });
    const c = await makeIssue(t.app, pub, { milestoneId: m.id, confidential: true });
    await makeIssue(t.app, deep, { milestoneId: m.id });
    await makeIssue(t.app, pub, {});
    const url = `/groups/${group.id}/milestones/${m.id}/issues`;
    const ids = async (token: string | undefined) => {
      const r = await call(t.app, 'GET', url, { token });
      return r.status === 200 ? r.body.map((i: any) => i.id).sort((x: number, y: number) => x - y) : r.status;
    };
    const all = [a.id, b.id, c.id].sort((x, y) => x - y);
    assert.deepEqual(await ids(roles.reporter.token), all);
    assert.deepEqual(await ids(roles.guest.token), [a.id, b.id].sort((x, y) => x - y));
    assert.deepEqual(await ids(roles.nonMember.token), [a.id]);
    assert.deepEqual(await ids(roles.admin.token), all);
    assert.deepEqual(await ids(undefined), 401);
    const r = await call(t.app, 'GET', url, { token: roles.reporter.token });
    assert.deepEqual(r.body.find((i: any) => i.id === a.id).milestone.title, 'Q3');
  });
});

describe('milestone promotion', () => {
  test('a project milestone becomes the group\'s, taking the issues of its title in the group\'s projects', async () => {
    const group = await makeGroup(t.app);
    const project = await makeProject(t.app, { namespace: group });
    const sibling = await makeProject(t.app, { namespace: group });
    const roles = await castRoles(t.app, project);
    await addMember(t.app, { type: 'Namespace', id: group.id }, roles.reporter.user.id, Role.reporter);
    const m = await t.app.db.updateTable('milestones').set({ description: 'the first', start_date: Date.UTC(2026, 5, 1), due_date: Date.UTC(2026, 5, 30) })
      .where('id', '=', (await makeMilestone(t.app, { projectId: project.id, title: 'v1' })).id).returningAll().executeTakeFirstOrThrow();
    const twin = await makeMilestone(t.app, { projectId: sibling.id, title: 'v1', state: 'closed' });
    const keep = await makeMilestone(t.app, { projectId: project.id, title: 'v2' });
    const i1 = await makeIssue(t.app, project, { milestoneId: m.id });
    const i2 = await makeIssue(t.app, sibling, { milestoneId: twin.id });
    const i3 = await makeIssue(t.app, project, { milestoneId: keep.id });
    await call(t.app, 'PUT', `/projects/${project.id}/issues/${i3.iid}`, { token: roles.reporter.token, body: { milestone_id: m.id } });
    const r = await call(t.app, 'POST', `/projects/${project.id}/milestones/${m.id}/promote`, { token: roles.reporter.token });
    assert.deepEqual([r.status, r.body], [200, 200]);
    const made = await t.app.db.selectFrom('milestones').selectAll().where('group_id', '=', group.id).executeTakeFirstOrThrow();
    assert.deepEqual({ ...made, id: 0, created_at: 0, updated_at: 0 }, {
      id: 0, iid: 1, project_id: null, group_id: group.id, title: 'v1', description: 'the first', state: 'active',
      start_date: Date.UTC(2026, 5, 1), due_date: Date.UTC(2026, 5, 30), created_at: 0, updated_at: 0,
    });
    const left = await t.app.db.selectFrom('milestones').select('id').where('id', 'in', [m.id, twin.id, keep.id]).execute();
    assert.deepEqual(left.map((x) => x.id), [keep.id]);
    const issues = await t.app.db.selectFrom('issues').select(['id', 'milestone_id']).where('id', 'in', [i1.id, i2.id, i3.id]).orderBy('id').execute();
    assert.deepEqual(issues.map((x) => x.milestone_id), [made.id, made.id, made.id]);
    const events = await t.app.db.selectFrom('resource_milestone_events').select('milestone_id').where('target_id', '=', i3.id).execute();
    assert.deepEqual(events.map((e) => e.milestone_id), [made.id]);
    const listed = await call(t.app, 'GET', `/groups/${group.id}/milestones/${made.id}/issues`, { token: roles.admin.token });
    assert.equal(listed.headers['x-total'], '3');
  });

  test('refusals: no group (403), Reporter of the project only (403), unknown (404), a title taken in the hierarchy (400, nothing changed)', async () => {
    const user = await quickUser(t.app);
    const personal = await makeProject(t.app, { owner: user.user });
    await addMember(t.app, { type: 'Project', id: personal.id }, user.user.id, Role.owner);
    const pm = await makeMilestone(t.app, { projectId: personal.id });
    let r = await call(t.app, 'POST', `/projects/${personal.id}/milestones/${pm.id}/promote`, { token: user.token });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);

    const group = await makeGroup(t.app);
    const sub = await makeGroup(t.app, { parent: group });
    const project = await makeProject(t.app, { namespace: group });
    const deep = await makeProject(t.app, { namespace: sub });
    const roles = await castRoles(t.app, project);
    const m = await makeMilestone(t.app, { projectId: project.id, title: 'shared' });
    await makeMilestone(t.app, { projectId: deep.id, title: 'shared' });
    const expected = [401, 404, 403, 403, 403, 403, 403, 400];
    for (const [i, role] of ROLES.entries()) {
      r = await call(t.app, 'POST', `/projects/${project.id}/milestones/${m.id}/promote`, { token: roles[role]?.token });
      assert.equal(r.status, expected[i], `${role}: ${JSON.stringify(r.body)}`);
    }
    assert.deepEqual(r.body, { message: 'Promotion failed - Title already being used for another group or project milestone.' });
    assert.ok(await t.app.db.selectFrom('milestones').select('id').where('id', '=', m.id).executeTakeFirst());
    assert.equal((await t.app.db.selectFrom('milestones').select('id').where('group_id', '=', group.id).execute()).length, 0);
    r = await call(t.app, 'POST', `/projects/${project.id}/milestones/${m.id + 1000}/promote`, { token: roles.admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Not found' }]);
    // A group Reporter who is the project's Reporter promotes.
    await addMember(t.app, { type: 'Namespace', id: group.id }, roles.developer.user.id, Role.reporter);
    const free = await makeMilestone(t.app, { projectId: project.id, title: 'free' });
    r = await call(t.app, 'POST', `/projects/${project.id}/milestones/${free.id}/promote`, { token: roles.developer.token });
    assert.deepEqual([r.status, r.body], [200, 200]);
  });
});

test('python-gitlab: milestone.issues() and milestone.promote()', { skip: pythonSkip }, async () => {
  const base = await listening(t);
  const group = await makeGroup(t.app);
  const project = await makeProject(t.app, { namespace: group });
  const owner = await quickUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, Role.owner);
  const m = await makeMilestone(t.app, { projectId: project.id, title: 'py' });
  const issue = await makeIssue(t.app, project, { milestoneId: m.id, title: 'from the milestone' });
  const out = await pythonGitlab(base, owner.token, `
p = gl.projects.get(${project.id})
m = p.milestones.get(${m.id})
out["issues"] = [i.title for i in m.issues()]
out["promoted"] = m.promote()
g = gl.groups.get(${group.id})
gm = g.milestones.list()[0]
out["group"] = [gm.title, [i.iid for i in gm.issues()]]
`);
  assert.deepEqual(out, { issues: ['from the milestone'], promoted: 200, group: ['py', [issue.iid]] });
});
