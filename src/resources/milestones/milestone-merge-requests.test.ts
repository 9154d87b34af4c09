import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castGroupRoles, castRoles, commitFiles, makeGroup, makeLabel, makeMergeRequest, makeMilestone, makeProject, quickUser, type RoleCast } from '../../../test/support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];

/** A project with branches `b1`..`bn` off `main`, each one commit ahead. */
async function projectWithBranches(o: Parameters<typeof makeProject>[1], n: number) {
  const project = await makeProject(t.app, o);
  await commitFiles(t.app, project, 'main', { 'README.md': '# hello\n' });
  for (let i = 1; i <= n; i++) await commitFiles(t.app, project, `b${i}`, { [`b${i}.txt`]: `${i}\n` }, { from: 'main' });
  return project;
}

describe('milestone merge requests', () => {
  test('project: the milestone\'s merge requests of every state as MergeRequestBasic, label priority first', async () => {
    const project = await projectWithBranches({ visibility: 20 }, 4);
    const roles = await castRoles(t.app, project);
    const m = await makeMilestone(t.app, { projectId: project.id, title: 'v1' });
    const other = await makeMilestone(t.app, { projectId: project.id, title: 'v2' });
    const urgent = await makeLabel(t.app, { projectId: project.id, title: 'urgent' });
    await t.app.db.insertInto('label_priorities').values({ project_id: project.id, label_id: urgent.id, priority: 1 }).execute();
    const mk = (branch: string, body: Record<string, unknown>) =>
      makeMergeRequest(t.app, roles.developer.token, project, { source_branch: branch, target_branch: 'main', ...body });
    const plain = await mk('b1', { milestone_id: m.id });
    const prio = await mk('b2', { milestone_id: m.id, labels: 'urgent' });
    const closed = await mk('b3', { milestone_id: m.id });
    await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${closed.iid}`, { token: roles.developer.token, body: { state_event: 'close' } });
    await mk('b4', { milestone_id: other.id });

    const url = `/projects/${project.id}/milestones/${m.id}/merge_requests`;
    const r = await call(t.app, 'GET', url, { token: roles.reporter.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], '3');
    assert.deepEqual(r.body.map((x: any) => x.iid), [prio.iid, plain.iid, closed.iid]);
    assert.deepEqual(r.body.map((x: any) => [x.state, x.milestone.title, x.labels]), [['opened', 'v1', ['urgent']], ['opened', 'v1', []], ['closed', 'v1', []]]);
    // The same entity as the project's merge request list.
    const listed = await call(t.app, 'GET', `/projects/${project.id}/merge_requests?milestone=v1&state=all&order_by=label_priority&sort=asc`, { token: roles.reporter.token });
    assert.deepEqual(r.body, listed.body);

    const missing = await call(t.app, 'GET', `/projects/${project.id}/milestones/${m.id + 1000}/merge_requests`, { token: roles.reporter.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
  });

  test('project: role table on a private project; a caller who reads milestones but not merge requests gets an empty list', async () => {
    const project = await projectWithBranches({ visibility: 0 }, 1);
    const roles = await castRoles(t.app, project);
    const m = await makeMilestone(t.app, { projectId: project.id });
    await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'b1', target_branch: 'main', milestone_id: m.id });
    // Merge requests of a private project are for Reporters and up; Guests read the milestone (through issues) only.
    const expected = [[401], [404], [200, 0], [200, 1], [200, 1], [200, 1], [200, 1], [200, 1]];
    for (const [i, role] of ROLES.entries()) {
      const r = await call(t.app, 'GET', `/projects/${project.id}/milestones/${m.id}/merge_requests`, { token: roles[role]?.token });
      assert.equal(r.status, expected[i][0], role);
      if (r.status === 200) assert.equal(r.body.length, expected[i][1], role);
    }
    // Merge requests private to members on a public project: a non-member reads the milestone, not its merge requests.
    const pub = await projectWithBranches({ visibility: 20 }, 1);
    const owner = (await castRoles(t.app, pub)).owner;
    const pm = await makeMilestone(t.app, { projectId: pub.id });
    await makeMergeRequest(t.app, owner.token, pub, { source_branch: 'b1', target_branch: 'main', milestone_id: pm.id });
    await t.app.db.updateTable('projects').set({ merge_requests_access_level: 10 }).where('id', '=', pub.id).execute();
    const stranger = await quickUser(t.app);
    const r = await call(t.app, 'GET', `/projects/${pub.id}/milestones/${pm.id}/merge_requests`, { token: stranger.token });
    assert.deepEqual([r.status, r.body, r.headers['x-total']], [200, [], '0']);
  });

  test('group: merge requests of the group\'s readable projects with the milestone', async () => {
    const group = await makeGroup(t.app, { visibility: 20 });
    const roles = await castGroupRoles(t.app, group);
    const pub = await projectWithBranches({ namespace: group, visibility: 20 }, 1);
    const priv = await projectWithBranches({ namespace: group, visibility: 0 }, 1);
    const m = await makeMilestone(t.app, { groupId: group.id, title: 'Q3' });
    const a = await makeMergeRequest(t.app, roles.owner.token, pub, { source_branch: 'b1', target_branch: 'main', milestone_id: m.id });
    const b = await makeMergeRequest(t.app, roles.owner.token, priv, { source_branch: 'b1', target_branch: 'main', milestone_id: m.id });
    const url = `/groups/${group.id}/milestones/${m.id}/merge_requests`;
    const ids = async (token: string | undefined) => (await call(t.app, 'GET', url, { token })).body.map((x: any) => x.id).sort();
    assert.deepEqual(await ids(roles.reporter.token), [a.id, b.id].sort());
    assert.deepEqual(await ids((await quickUser(t.app)).token), [a.id]);
    assert.equal((await call(t.app, 'GET', url)).status, 401);
  });
});
