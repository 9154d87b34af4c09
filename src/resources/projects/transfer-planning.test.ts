import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import {
  addMember, castRoles, commitFiles, makeGroup, makeIssue, makeLabel, makeMergeRequest, makeMilestone, makeProject, makeUser, Role, userNamespace, type RoleCast,
} from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// Moving a project (PUT /projects/:id/transfer) or a group above it (POST /groups/:id/transfer) to another place: the
// labels and milestones of the groups left behind that its issues and merge requests carry are re-created in the
// project (or replaced by the ones of that title it can use in its new place), as the reference does.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d);

/**
 * `old-root/old-sub/app` with issues and a merge request carrying labels and milestones of both old groups, a project
 * label clashing with one of them, and `new-root` holding a label and a milestone of titles the project uses.
 */
async function scene(tag: string) {
  const oldRoot = await makeGroup(t.app, { path: `old-root-${tag}`, visibility: 0 });
  const oldSub = await makeGroup(t.app, { path: 'old-sub', parent: oldRoot, visibility: 0 });
  const newRoot = await makeGroup(t.app, { path: `new-root-${tag}`, visibility: 0 });
  const project = await makeProject(t.app, { namespace: oldSub, path: 'app', visibility: 0 });
  const sibling = await makeProject(t.app, { namespace: oldRoot, path: 'stays', visibility: 0 });
  const bug = await makeLabel(t.app, { groupId: oldRoot.id, title: 'bug', color: '#FF0000', description: 'broken' });
  const feature = await makeLabel(t.app, { groupId: oldSub.id, title: 'feature', color: '#00FF00' });
  const shared = await makeLabel(t.app, { groupId: oldSub.id, title: 'shared', color: '#0000FF' });
  const own = await makeLabel(t.app, { projectId: project.id, title: 'shared', color: '#123456' });
  const newFeature = await makeLabel(t.app, { groupId: newRoot.id, title: 'feature', color: '#ABCDEF' });
  await t.app.db.insertInto('label_priorities').values({ project_id: project.id, label_id: bug.id, priority: 3 }).execute();
  const v1 = await makeMilestone(t.app, { groupId: oldRoot.id, title: 'v1', startDate: day(2026, 5, 1), dueDate: day(2026, 6, 30), state: 'closed' });
  await t.app.db.updateTable('milestones').set({ description: 'first' }).where('id', '=', v1.id).execute();
  const v2 = await makeMilestone(t.app, { groupId: oldSub.id, title: 'v2' });
  const newV2 = await makeMilestone(t.app, { groupId: newRoot.id, title: 'v2' });
  const one = await makeIssue(t.app, project, { title: 'one', labels: [bug.id, feature.id, shared.id, own.id], milestoneId: v1.id });
  const two = await makeIssue(t.app, project, { title: 'two', labels: [shared.id], milestoneId: v2.id });
  const three = await makeIssue(t.app, project, { title: 'three' });
  const elsewhere = await makeIssue(t.app, sibling, { title: 'elsewhere', labels: [bug.id], milestoneId: v1.id });
  return { oldRoot, oldSub, newRoot, project, sibling, bug, feature, shared, own, newFeature, v1, v2, newV2, one, two, three, elsewhere };
}

type Scene = Awaited<ReturnType<typeof scene>>;

/** What the project's planning records are: its labels by title, each issue's label ids and milestone id, priorities. */
async function state(s: Scene) {
  const db = t.app.db;
  const labels = await db.selectFrom('labels').select(['id', 'title', 'color', 'description']).where('project_id', '=', s.project.id).orderBy('title').execute();
  const links = await db.selectFrom('label_links').select(['target_id', 'label_id']).where('target_type', '=', 'Issue')
    .where('target_id', 'in', [s.one.id, s.two.id, s.three.id, s.elsewhere.id]).orderBy('target_id').orderBy('label_id').execute();
  const issues = await db.selectFrom('issues').select(['id', 'milestone_id']).where('id', 'in', [s.one.id, s.two.id, s.three.id, s.elsewhere.id]).orderBy('id').execute();
  const priorities = await db.selectFrom('label_priorities').select(['label_id', 'priority']).where('project_id', '=', s.project.id).orderBy('label_id').execute();
  const milestones = await db.selectFrom('milestones').selectAll().where('project_id', '=', s.project.id).orderBy('id').execute();
  const groupLabels = await db.selectFrom('labels').selectAll().where('group_id', 'in', [s.oldRoot.id, s.oldSub.id, s.newRoot.id]).orderBy('id').execute();
  const groupMilestones = await db.selectFrom('milestones').selectAll().where('group_id', 'in', [s.oldRoot.id, s.oldSub.id, s.newRoot.id]).orderBy('id').execute();
  return { labels, links, issues, priorities, milestones, groupLabels, groupMilestones };
}

describe('PUT /projects/:id/transfer', () => {
  test('only the Owner and an administrator move it; a refused move changes nothing', async () => {
    const s = await scene('roles');
    const roles = await castRoles(t.app, s.project);
    for (const r of ROLES) {
      const u = roles[r];
      if (u && r !== 'admin') await addMember(t.app, { type: 'Namespace', id: s.newRoot.id }, u.user.id, Role.maintainer);
    }
    const before = await state(s);
    const expected: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 };
    for (const [role, status] of Object.entries(expected)) {
      const u = roles[role as keyof RoleCast];
      const r = await call(t.app, 'PUT', `/projects/${s.project.id}/transfer`, { token: u?.token, body: { namespace: s.newRoot.full_path } });
      assert.equal(r.status, status, role);
      assert.deepEqual(await state(s), before, role);
    }
    const r = await call(t.app, 'PUT', `/projects/${s.project.id}/transfer`, { token: roles.owner.token, body: { namespace: s.newRoot.full_path } });
    assert.equal(r.status, 200);
    assert.equal(r.body.path_with_namespace, `${s.newRoot.full_path}/app`);
    assert.notDeepEqual((await state(s)).labels, before.labels);
    // Back into the old subgroup, by an administrator: the labels it re-created stay the project's own.
    const back = await call(t.app, 'PUT', `/projects/${s.project.id}/transfer`, { token: roles.admin.token, body: { namespace: s.oldSub.id } });
    assert.equal(back.status, 200);
    assert.equal(back.body.path_with_namespace, `${s.oldSub.full_path}/app`);
  });

  test('the issues keep their label names and milestone titles, now the project\'s own; the groups are untouched', async () => {
    const s = await scene('state');
    const owner = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: s.project.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Namespace', id: s.newRoot.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Namespace', id: s.sibling.namespace_id }, owner.user.id, Role.reporter);
    const before = await state(s);
    // The group labels' events stay as written.
    await call(t.app, 'PUT', `/projects/${s.project.id}/issues/${s.three.iid}`, { token: owner.token, body: { add_labels: 'bug' } });
    const events = await t.app.db.selectFrom('resource_label_events').select(['label_id', 'action']).where('target_type', '=', 'Issue').where('target_id', '=', s.three.id).execute();
    assert.deepEqual(events, [{ label_id: s.bug.id, action: 'add' }]);

    const r = await call(t.app, 'PUT', `/projects/${s.project.id}/transfer`, { token: owner.token, body: { namespace: s.newRoot.id } });
    assert.equal(r.status, 200);

    const after = await state(s);
    // bug: re-created with its colour and description; feature: new-root's; shared: the project's own, reused.
    assert.deepEqual(after.labels.map((l) => [l.title, l.color, l.description]), [['bug', '#FF0000', 'broken'], ['shared', '#123456', null]]);
    const newBug = after.labels.find((l) => l.title === 'bug')!.id;
    const ids = (issueId: number) => after.links.filter((l) => l.target_id === issueId).map((l) => l.label_id).sort((a, b) => a - b);
    assert.deepEqual(ids(s.one.id), [s.own.id, s.newFeature.id, newBug].sort((a, b) => a - b));
    assert.deepEqual(ids(s.two.id), [s.own.id]);
    assert.deepEqual(ids(s.three.id), [newBug]);
    assert.deepEqual(ids(s.elsewhere.id), [s.bug.id]);
    assert.deepEqual(after.priorities, [{ label_id: newBug, priority: 3 }]);
    assert.deepEqual(events, await t.app.db.selectFrom('resource_label_events').select(['label_id', 'action']).where('target_type', '=', 'Issue').where('target_id', '=', s.three.id).execute());
    // v1: a new project milestone with its title, description, dates and state; v2: new-root's.
    assert.equal(after.milestones.length, 1);
    const m = after.milestones[0];
    assert.deepEqual([m.iid, m.title, m.description, m.state, m.start_date, m.due_date], [1, 'v1', 'first', 'closed', s.v1.start_date, s.v1.due_date]);
    assert.deepEqual(after.issues.map((i) => i.milestone_id), [m.id, s.newV2.id, null, s.v1.id]);
    // The groups' own labels and milestones are as they were.
    assert.deepEqual(after.groupLabels, before.groupLabels);
    assert.deepEqual(after.groupMilestones, before.groupMilestones);

    // Through the API: the same names, and the label filter finds them in the new place.
    const one = await call(t.app, 'GET', `/projects/${s.project.id}/issues/${s.one.iid}`, { token: owner.token });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body.labels, ['bug', 'feature', 'shared']);
    assert.deepEqual([one.body.milestone.title, one.body.milestone.project_id, one.body.milestone.state, one.body.milestone.start_date, one.body.milestone.due_date],
      ['v1', s.project.id, 'closed', '2026-05-01', '2026-06-30']);
    const two = await call(t.app, 'GET', `/projects/${s.project.id}/issues/${s.two.iid}`, { token: owner.token });
    assert.deepEqual([two.body.labels, two.body.milestone.id, two.body.milestone.group_id], [['shared'], s.newV2.id, s.newRoot.id]);
    const titles = async (url: string, query: Record<string, string>) => {
      const res = await call(t.app, 'GET', url, { token: owner.token, query });
      assert.equal(res.status, 200);
      return res.body.map((i: any) => i.title).sort();
    };
    assert.deepEqual(await titles(`/projects/${s.project.id}/issues`, { labels: 'bug' }), ['one', 'three']);
    assert.deepEqual(await titles(`/projects/${s.project.id}/issues`, { labels: 'feature' }), ['one']);
    assert.deepEqual(await titles(`/projects/${s.project.id}/issues`, { labels: 'shared' }), ['one', 'two']);
    assert.deepEqual(await titles(`/groups/${s.newRoot.id}/issues`, { labels: 'bug,feature' }), ['one']);
    assert.deepEqual(await titles(`/projects/${s.project.id}/issues`, { milestone: 'v1' }), ['one']);
    assert.deepEqual(await titles(`/projects/${s.project.id}/issues`, { milestone: 'v2' }), ['two']);
    // The project's label list shows the re-created label as its own, with the priority.
    const labels = await call(t.app, 'GET', `/projects/${s.project.id}/labels`, { token: owner.token });
    assert.deepEqual(labels.body.map((l: any) => [l.name, l.is_project_label, l.priority]), [['bug', true, 3], ['feature', false, null], ['shared', true, null]]);
    // The project left behind in the old root still carries the group label.
    assert.deepEqual(await titles(`/groups/${s.oldRoot.id}/issues`, { labels: 'bug' }), ['elsewhere']);
  });

  test('merge requests are re-pointed too', async () => {
    const group = await makeGroup(t.app, { path: 'mr-old', visibility: 0 });
    const target = await makeGroup(t.app, { path: 'mr-new', visibility: 0 });
    const owner = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Namespace', id: target.id }, owner.user.id, Role.owner);
    const project = await makeProject(t.app, { namespace: group, path: 'mr', visibility: 0 });
    await commitFiles(t.app, project, 'main', { 'README.md': '# hi\n' });
    await commitFiles(t.app, project, 'topic', { 'a.txt': 'a\n' }, { from: 'main' });
    const label = await makeLabel(t.app, { groupId: group.id, title: 'review' });
    const milestone = await makeMilestone(t.app, { groupId: group.id, title: 'sprint' });
    const mr = await makeMergeRequest(t.app, owner.token, project, { source_branch: 'topic', target_branch: 'main', labels: 'review', milestone_id: milestone.id });
    assert.deepEqual([mr.labels, mr.milestone.id], [['review'], milestone.id]);
    const r = await call(t.app, 'PUT', `/projects/${project.id}/transfer`, { token: owner.token, body: { namespace: target.id } });
    assert.equal(r.status, 200);
    const after = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}`, { token: owner.token });
    assert.deepEqual([after.body.labels, after.body.milestone.title, after.body.milestone.project_id], [['review'], 'sprint', project.id]);
    const created = await t.app.db.selectFrom('labels').select('id').where('project_id', '=', project.id).where('title', '=', 'review').executeTakeFirstOrThrow();
    assert.notEqual(created.id, label.id);
    const list = await call(t.app, 'GET', `/projects/${project.id}/merge_requests`, { token: owner.token, query: { labels: 'review' } });
    assert.deepEqual(list.body.map((m: any) => m.iid), [mr.iid]);
  });

  test('within the same hierarchy, labels and milestones it can still use are kept', async () => {
    const root = await makeGroup(t.app, { path: 'same-root', visibility: 0 });
    const sub = await makeGroup(t.app, { path: 'sub', parent: root, visibility: 0 });
    const admin = await makeUser(t.app, { admin: true });
    const project = await makeProject(t.app, { namespace: sub, path: 'p', visibility: 0 });
    const rootLabel = await makeLabel(t.app, { groupId: root.id, title: 'kept' });
    const subLabel = await makeLabel(t.app, { groupId: sub.id, title: 'left' });
    const rootMilestone = await makeMilestone(t.app, { groupId: root.id, title: 'kept-m' });
    const issue = await makeIssue(t.app, project, { labels: [rootLabel.id, subLabel.id], milestoneId: rootMilestone.id });
    const r = await call(t.app, 'PUT', `/projects/${project.id}/transfer`, { token: admin.token, body: { namespace: root.id } });
    assert.equal(r.status, 200);
    const links = await t.app.db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
      .select(['labels.id', 'labels.title', 'labels.project_id']).where('target_type', '=', 'Issue').where('target_id', '=', issue.id).orderBy('labels.title').execute();
    assert.deepEqual(links.map((l) => [l.title, l.project_id]), [['kept', null], ['left', project.id]]);
    assert.equal(links[0].id, rootLabel.id);
    const after = await t.app.db.selectFrom('issues').select('milestone_id').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(after.milestone_id, rootMilestone.id);
    assert.equal((await t.app.db.selectFrom('milestones').select('id').where('project_id', '=', project.id).execute()).length, 0);
  });
});

test('PUT /projects/:id/transfer to a personal namespace: every group label and the group milestone become the project\'s own', async () => {
  const group = await makeGroup(t.app, { path: 'to-user', visibility: 0 });
  const owner = await makeUser(t.app);
  await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, Role.owner);
  const project = await makeProject(t.app, { namespace: group, path: 'mine', visibility: 0 });
  const a = await makeLabel(t.app, { groupId: group.id, title: 'a' });
  const b = await makeLabel(t.app, { groupId: group.id, title: 'b' });
  const m = await makeMilestone(t.app, { groupId: group.id, title: 'm' });
  await makeMilestone(t.app, { projectId: project.id, title: 'earlier' });
  const issue = await makeIssue(t.app, project, { labels: [a.id, b.id], milestoneId: m.id });
  const home = await userNamespace(t.app, owner.user.id);
  const r = await call(t.app, 'PUT', `/projects/${project.id}/transfer`, { token: owner.token, body: { namespace: home.full_path } });
  assert.equal(r.status, 200);
  const got = await call(t.app, 'GET', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token });
  assert.deepEqual([got.body.labels, got.body.milestone.title, got.body.milestone.iid, got.body.milestone.project_id], [['a', 'b'], 'm', 2, project.id]);
  const own = await t.app.db.selectFrom('labels').select('title').where('project_id', '=', project.id).orderBy('title').execute();
  assert.deepEqual(own.map((l) => l.title), ['a', 'b']);
});

// A label of the title a moved project re-creates, written in the project meanwhile. The old group's label of that
// title is in the project's reach until the move commits, so a creation through the API is refused (409) before and
// after it; a writer that got its row in first is waited for (the project row) and its label reused.
describe('PUT /projects/:id/transfer while a label of the same title is created in the project', () => {
  async function racing(tag: string) {
    const from = await makeGroup(t.app, { path: `race-from-${tag}`, visibility: 0 });
    const to = await makeGroup(t.app, { path: `race-to-${tag}`, visibility: 0 });
    const owner = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: from.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Namespace', id: to.id }, owner.user.id, Role.owner);
    const project = await makeProject(t.app, { namespace: from, path: 'raced', visibility: 0 });
    const groupLabel = await makeLabel(t.app, { groupId: from.id, title: 'contested', color: '#FF0000' });
    const issue = await makeIssue(t.app, project, { title: 'carries it', labels: [groupLabel.id] });
    const create = () => call(t.app, 'POST', `/projects/${project.id}/labels`, { token: owner.token, body: { name: 'contested', color: '#00FF00', priority: 1 } });
    const transfer = () => call(t.app, 'PUT', `/projects/${project.id}/transfer`, { token: owner.token, body: { namespace: to.id } });
    /** The project's one label of that title, and that the issue carries it (and nothing else). */
    const settled = async () => {
      const own = await t.app.db.selectFrom('labels').select(['id', 'color']).where('project_id', '=', project.id).where('title', '=', 'contested').execute();
      assert.equal(own.length, 1);
      const got = await call(t.app, 'GET', `/projects/${project.id}/issues/${issue.iid}`, { token: owner.token });
      assert.deepEqual(got.body.labels, ['contested']);
      const links = await t.app.db.selectFrom('label_links').select('label_id').where('target_type', '=', 'Issue').where('target_id', '=', issue.id).execute();
      assert.deepEqual(links, [{ label_id: own[0].id }]);
      return own[0];
    };
    return { project, create, transfer, settled };
  }

  test('a label of that title written in the project by another writer, not yet committed: the transfer waits for it and reuses it', {
    skip: !process.env.DATABASE_URL && 'the two writers overlap only on PostgreSQL: on SQLite the transfer holds the write lock from its first read',
  }, async () => {
    const r = await racing('pg');
    // The writer's row holds the project row against a change of its key (the row's reference to it); the transfer
    // changes the project's path, so it waits there, before it reads the project's labels, and then finds the label.
    const other = new pg.Client({ connectionString: t.config.databaseUrl! });
    await other.connect();
    let open = false;
    try {
      await other.query('begin');
      open = true;
      const { rows: [written] } = await other.query(
        `insert into labels (title, color, description, project_id, group_id, created_at, updated_at) values ('contested', '#00FF00', null, $1, null, 0, 0) returning id`,
        [r.project.id]);
      const transferred = r.transfer();
      let waited = false;
      for (let i = 0; i < 400 && !waited; i++) {
        const { rows } = await other.query(`select count(*)::int as n from pg_locks where locktype = 'transactionid' and transactionid = pg_current_xact_id()::text::xid and not granted`);
        waited = rows[0].n > 0;
        if (!waited) await new Promise((res) => setTimeout(res, 25));
      }
      assert.ok(waited, 'the transfer never waited for the other writer');
      await other.query('commit');
      open = false;
      const m = await transferred;
      assert.equal(m.status, 200);
      const own = await r.settled();
      assert.deepEqual(own, { id: written.id, color: '#00FF00' });
    } finally {
      if (open) await other.query('rollback');
      await other.end();
    }
  });

  test('a creation through the API meanwhile answers 409, before or after the transfer', async () => {
    for (const tag of ['a', 'b', 'c']) {
      const r = await racing(`both-${tag}`);
      const [c, m] = await Promise.all([r.create(), r.transfer()]);
      assert.equal(m.status, 200);
      // Before the transfer commits, the old group's label of that title is the project's to use; after, its copy.
      assert.deepEqual([c.status, c.body], [409, { message: 'Label already exists' }]);
      assert.equal((await r.settled()).color, '#FF0000');
    }
  });
});

describe('POST /groups/:id/transfer', () => {
  test('the projects below re-create the labels of the groups left behind; the moved groups\' own labels stay', async () => {
    const oldRoot = await makeGroup(t.app, { path: 'g-old', visibility: 0 });
    const moving = await makeGroup(t.app, { path: 'moving', parent: oldRoot, visibility: 0 });
    const inner = await makeGroup(t.app, { path: 'inner', parent: moving, visibility: 0 });
    const newRoot = await makeGroup(t.app, { path: 'g-new', visibility: 0 });
    const owner = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: oldRoot.id }, owner.user.id, Role.owner);
    await addMember(t.app, { type: 'Namespace', id: newRoot.id }, owner.user.id, Role.owner);
    const project = await makeProject(t.app, { namespace: inner, path: 'deep', visibility: 0 });
    const rootLabel = await makeLabel(t.app, { groupId: oldRoot.id, title: 'from-root', color: '#111111', description: 'root' });
    const clash = await makeLabel(t.app, { groupId: oldRoot.id, title: 'clash' });
    const newClash = await makeLabel(t.app, { groupId: newRoot.id, title: 'clash' });
    const movingLabel = await makeLabel(t.app, { groupId: moving.id, title: 'moving-own' });
    const rootMilestone = await makeMilestone(t.app, { groupId: oldRoot.id, title: 'root-m' });
    const issue = await makeIssue(t.app, project, { title: 'deep issue', labels: [rootLabel.id, clash.id, movingLabel.id], milestoneId: rootMilestone.id });
    const quiet = await makeProject(t.app, { namespace: moving, path: 'quiet', visibility: 0 });
    const quietIssue = await makeIssue(t.app, quiet, { title: 'quiet issue', labels: [movingLabel.id] });

    const r = await call(t.app, 'POST', `/groups/${moving.id}/transfer`, { token: owner.token, body: { group_id: newRoot.id } });
    assert.equal(r.status, 201);
    const created = await t.app.db.selectFrom('labels').select(['id', 'title', 'color', 'description']).where('project_id', '=', project.id).execute();
    assert.deepEqual(created.map((l) => [l.title, l.color, l.description]), [['from-root', '#111111', 'root']]);
    const links = (await t.app.db.selectFrom('label_links').select('label_id').where('target_type', '=', 'Issue').where('target_id', '=', issue.id).execute()).map((l) => l.label_id).sort((a, b) => a - b);
    assert.deepEqual(links, [created[0].id, newClash.id, movingLabel.id].sort((a, b) => a - b));
    // A project carrying only labels of the moved groups has nothing to re-create.
    assert.deepEqual(await t.app.db.selectFrom('labels').select('id').where('project_id', '=', quiet.id).execute(), []);
    assert.deepEqual(await t.app.db.selectFrom('label_links').select('label_id').where('target_type', '=', 'Issue').where('target_id', '=', quietIssue.id).execute(), [{ label_id: movingLabel.id }]);
    // As the reference's group transfer, milestones stay as they are.
    const after = await t.app.db.selectFrom('issues').select('milestone_id').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(after.milestone_id, rootMilestone.id);
    const oldLabels = await t.app.db.selectFrom('labels').select('id').where('group_id', '=', oldRoot.id).orderBy('id').execute();
    assert.deepEqual(oldLabels.map((l) => l.id), [rootLabel.id, clash.id]);
    const found = await call(t.app, 'GET', `/groups/${newRoot.id}/issues`, { token: owner.token, query: { labels: 'moving-own', order_by: 'title', sort: 'asc' } });
    assert.deepEqual(found.body.map((i: any) => i.title), ['deep issue', 'quiet issue']);
    const both = await call(t.app, 'GET', `/groups/${newRoot.id}/issues`, { token: owner.token, query: { labels: 'from-root,clash,moving-own' } });
    assert.deepEqual(both.body.map((i: any) => i.title), ['deep issue']);
  });

  test('a refused group transfer changes no label', async () => {
    const oldRoot = await makeGroup(t.app, { path: 'g-old-2', visibility: 0 });
    const moving = await makeGroup(t.app, { path: 'moving', parent: oldRoot, visibility: 0 });
    const newRoot = await makeGroup(t.app, { path: 'g-new-2', visibility: 0 });
    const project = await makeProject(t.app, { namespace: moving, path: 'p', visibility: 0 });
    const label = await makeLabel(t.app, { groupId: oldRoot.id, title: 'stay' });
    await makeIssue(t.app, project, { labels: [label.id] });
    const maintainer = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: oldRoot.id }, maintainer.user.id, Role.maintainer);
    await addMember(t.app, { type: 'Namespace', id: newRoot.id }, maintainer.user.id, Role.owner);
    const r = await call(t.app, 'POST', `/groups/${moving.id}/transfer`, { token: maintainer.token, body: { group_id: newRoot.id } });
    assert.equal(r.status, 403);
    assert.equal((await t.app.db.selectFrom('labels').select('id').where('project_id', '=', project.id).execute()).length, 0);
    // To the top level, by an administrator: the root's label is re-created.
    const admin = await makeUser(t.app, { admin: true });
    const top = await call(t.app, 'POST', `/groups/${moving.id}/transfer`, { token: admin.token });
    assert.equal(top.status, 201);
    const created = await t.app.db.selectFrom('labels').select('title').where('project_id', '=', project.id).execute();
    assert.deepEqual(created, [{ title: 'stay' }]);
  });
});

describe('python-gitlab', () => {
  const server = pythonServer();
  test('project.transfer(), then project.issues.list(labels=[...])', { skip: pythonSkip }, async () => {
    const app = server.t.app;
    const admin = await makeUser(app, { admin: true });
    const out = await pythonGitlab(server.url, admin.token, `
old = gl.groups.create({"name": "Py Old", "path": "py-old"})
new = gl.groups.create({"name": "Py New", "path": "py-new"})
p = gl.projects.create({"name": "moved", "namespace_id": old.id})
old.labels.create({"name": "py-bug", "color": "#FF0000"})
m = old.milestones.create({"title": "py-v1"})
p.issues.create({"title": "labelled", "labels": ["py-bug"], "milestone_id": m.id})
p.issues.create({"title": "plain"})
p.transfer(new.id)
p = gl.projects.get(p.id)
out["path"] = p.path_with_namespace
out["found"] = [[i.title, i.labels, i.milestone["title"]] for i in p.issues.list(labels=["py-bug"])]
out["labels"] = [[l.name, l.is_project_label] for l in p.labels.list()]
out["old"] = [l.name for l in old.labels.list()]
`);
    assert.deepEqual(out, {
      path: 'py-new/moved',
      found: [['labelled', ['py-bug'], 'py-v1']],
      labels: [['py-bug', true]],
      old: ['py-bug'],
    });
  });
});
