import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeMergeRequest, makeProject, makeLabel, makeMilestone, quickUser, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from '../repository/repository.common.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const MR_FIELDS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'merged_by', 'merge_user', 'merged_at',
  'closed_by', 'closed_at', 'target_branch', 'source_branch', 'user_notes_count', 'upvotes', 'downvotes', 'author', 'assignees', 'assignee',
  'reviewers', 'source_project_id', 'target_project_id', 'labels', 'draft', 'work_in_progress', 'milestone', 'merge_when_pipeline_succeeds',
  'merge_status', 'detailed_merge_status', 'sha', 'merge_commit_sha', 'squash_commit_sha', 'discussion_locked', 'should_remove_source_branch',
  'force_remove_source_branch', 'reference', 'references', 'web_url', 'time_stats', 'squash', 'task_completion_status', 'has_conflicts',
  'blocking_discussions_resolved', 'subscribed', 'changes_count', 'latest_build_started_at', 'latest_build_finished_at',
  'first_deployed_to_production_at', 'pipeline', 'head_pipeline', 'diff_refs', 'merge_error', 'first_contribution', 'user'];

const count = async (table: 'merge_requests' | 'merge_request_diffs' | 'label_links') =>
  Number((await t.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/** A project with `main` (one file) and `feature` (two commits on top, one changed and one new file). */
async function projectWithBranches(visibility = 0): Promise<{ project: ProjectRow; base: string; head: string }> {
  const project = await makeProject(t.app, { visibility, repository: true });
  const base = await commitFiles(t.app, project, 'main', { 'README.md': '# hello\n' });
  await commitFiles(t.app, project, 'feature', { 'README.md': '# hello, world\n' }, { from: 'main' });
  const head = await commitFiles(t.app, project, 'feature', { 'src/a.txt': 'a\n' });
  return { project, base, head };
}

describe('merge requests: access by role', () => {
  let priv: ProjectRow;
  let pub: ProjectRow;
  let rolesPriv: RoleCast;
  let rolesPub: RoleCast;
  let n = 0;
  before(async () => {
    priv = (await projectWithBranches(0)).project;
    pub = (await projectWithBranches(20)).project;
    rolesPriv = await castRoles(t.app, priv);
    rolesPub = await castRoles(t.app, pub);
  });
  const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
  // Each create needs branches of its own: a new source branch per request.
  const create = async (p: ProjectRow) => {
    const branch = `topic-${++n}`;
    await commitFiles(t.app, p, branch, { [`f${n}.txt`]: 'x\n' }, { from: 'main' });
    return { method: 'POST', url: `/projects/${p.id}/merge_requests`, body: { source_branch: branch, target_branch: 'main', title: 'x' } };
  };
  const one = async (p: ProjectRow, roles: RoleCast) => {
    const branch = `read-${++n}`;
    await commitFiles(t.app, p, branch, { [`r${n}.txt`]: 'x\n' }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, roles.owner.token, p, { source_branch: branch, target_branch: 'main' });
    return { method: 'GET', url: `/projects/${p.id}/merge_requests/${mr.iid}` };
  };
  const table: Array<[string, 'private' | 'public', (p: ProjectRow, roles: RoleCast) => Promise<{ method: string; url: string; body?: any }>, number[]]> = [
    ['create', 'private', create, [401, 404, 403, 403, 201, 201, 201, 201]],
    ['create', 'public', create, [401, 403, 403, 403, 201, 201, 201, 201]],
    ['read one', 'private', one, [404, 404, 403, 200, 200, 200, 200, 200]],
    ['read one', 'public', one, [200, 200, 200, 200, 200, 200, 200, 200]],
  ];
  for (const [what, vis, req, statuses] of table) {
    CALLERS.forEach((caller, i) => {
      test(`${caller}: ${what} on a ${vis} project answers ${statuses[i]}`, async () => {
        const p = vis === 'private' ? priv : pub;
        const roles = vis === 'private' ? rolesPriv : rolesPub;
        const r = await req(p, roles);
        const before = await count('merge_requests');
        const res = await call(t.app, r.method as any, r.url, { token: roles[caller]?.token, body: r.body });
        assert.equal(res.status, statuses[i], JSON.stringify(res.body));
        if (res.status === 404) assert.match(res.body.message, /^404 (Project|Not found)/);
        if (res.status === 403) assert.deepEqual(res.body, { message: '403 Forbidden' });
        if (r.method === 'POST') assert.equal(await count('merge_requests'), before + (res.status === 201 ? 1 : 0));
      });
    });
  }
});

describe('merge requests: create and read', () => {
  let project: ProjectRow;
  let base: string;
  let head: string;
  let roles: RoleCast;
  before(async () => {
    ({ project, base, head } = await projectWithBranches(0));
    roles = await castRoles(t.app, project);
  });

  test('create answers the full entity in the reference order, writes the head ref and the first diff version', async () => {
    const label = await makeLabel(t.app, { projectId: project.id, title: 'review' });
    const milestone = await makeMilestone(t.app, { projectId: project.id, title: 'v1' });
    const r = await call(t.app, 'POST', `/projects/${project.id}/merge_requests`, {
      token: roles.developer.token,
      body: {
        source_branch: 'feature', target_branch: 'main', title: 'Draft: Add a', description: '- [ ] check\n- [x] write',
        labels: `${label.title},fresh`, assignee_ids: [roles.maintainer.user.id], reviewer_ids: [roles.owner.user.id, roles.reporter.user.id],
        milestone_id: milestone.id, remove_source_branch: true, squash: true,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body), MR_FIELDS);
    const b = r.body;
    assert.equal(b.iid, 1);
    assert.equal(b.project_id, project.id);
    assert.equal(b.state, 'opened');
    assert.equal(b.draft, true);
    assert.equal(b.work_in_progress, true);
    assert.equal(b.sha, head);
    assert.deepEqual(b.diff_refs, { base_sha: base, head_sha: head, start_sha: base });
    assert.equal(b.changes_count, '2');
    assert.deepEqual(b.labels, ['fresh', 'review']);
    assert.equal(b.milestone.id, milestone.id);
    assert.equal(b.author.id, roles.developer.user.id);
    assert.deepEqual(b.assignees.map((u: any) => u.id), [roles.maintainer.user.id]);
    assert.equal(b.assignee.id, roles.maintainer.user.id);
    assert.deepEqual(b.reviewers.map((u: any) => u.id).sort(), [roles.owner.user.id, roles.reporter.user.id].sort());
    assert.equal(b.force_remove_source_branch, true);
    assert.equal(b.squash, true);
    // The reference answers before its mergeability check runs: `checking` comes before every other status.
    assert.equal(b.merge_status, 'checking');
    assert.equal(b.detailed_merge_status, 'checking');
    assert.equal(b.has_conflicts, false);
    assert.equal(b.subscribed, true);
    assert.deepEqual(b.references, { short: '!1', relative: '!1', full: `${project.full_path}!1` });
    assert.equal(b.reference, '!1');
    assert.equal(b.web_url, `${t.app.config.externalUrl}/${project.full_path}/-/merge_requests/1`);
    assert.deepEqual(b.task_completion_status, { count: 2, completed_count: 1 });
    assert.deepEqual(b.user, { can_merge: true });
    assert.equal('allow_collaboration' in b, false);
    // git: the head ref, and one version with the three commits.
    assert.equal(await repoFor(t.app.config, project).revParse('refs/merge-requests/1/head'), head);
    const diffs = await t.app.db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', '=', b.id).execute();
    assert.equal(diffs.length, 1);
    assert.deepEqual([diffs[0].base_commit_sha, diffs[0].start_commit_sha, diffs[0].head_commit_sha, diffs[0].commits_count, diffs[0].real_size, diffs[0].state],
      [base, base, head, 2, '2', 'collected']);
    const row = await t.app.db.selectFrom('merge_requests').selectAll().where('id', '=', b.id).executeTakeFirstOrThrow();
    assert.equal(row.latest_diff_id, diffs[0].id);
    // Read back: the same entity; a Reporter may read but not merge.
    const got = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/1`, { token: roles.reporter.token });
    assert.equal(got.status, 200);
    // The first read checks the pair: a draft shows so once checked.
    assert.deepEqual([got.body.merge_status, got.body.detailed_merge_status], ['can_be_merged', 'draft_status']);
    assert.deepEqual({ ...got.body, subscribed: true, user: { can_merge: true }, merge_status: 'checking', detailed_merge_status: 'checking' }, b);
    assert.equal(got.body.subscribed, true);
    assert.deepEqual(got.body.user, { can_merge: false });
    const extra = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/1`, { token: roles.reporter.token, query: { include_diverged_commits_count: 'true', include_rebase_in_progress: 'true' } });
    assert.equal(extra.body.rebase_in_progress, false);
    assert.equal(typeof extra.body.diverged_commits_count, 'number');
  });

  test('the refusals: same branch 422, missing branches 422, a second open one 409, a blank title 400; nothing is written', async () => {
    const token = roles.developer.token;
    const before = [await count('merge_requests'), await count('merge_request_diffs')];
    const cases: Array<[Record<string, unknown>, number, unknown]> = [
      [{ source_branch: 'main', target_branch: 'main', title: 'x' }, 422, { message: ["You can't use same project/branch for source and target"] }],
      [{ source_branch: 'nope', target_branch: 'main', title: 'x' }, 422, { message: ['Source branch "nope" does not exist'] }],
      [{ source_branch: 'feature', target_branch: 'gone', title: 'x' }, 422, { message: ['Target branch "gone" does not exist'] }],
      [{ source_branch: '-x', target_branch: 'main', title: 'x' }, 422, { message: ['Source branch "-x" does not exist'] }],
      [{ source_branch: 'feature', target_branch: 'main', title: 'Again' }, 409, { message: ['Another open merge request already exists for this source branch: !1'] }],
      [{ source_branch: 'feature', target_branch: 'main', title: ' ' }, 400, { message: { title: ["can't be blank"] } }],
      [{ source_branch: 'feature', target_branch: 'main' }, 400, { message: '400 (Bad request) "title" not given' }],
    ];
    for (const [body, status, answer] of cases) {
      const r = await call(t.app, 'POST', `/projects/${project.id}/merge_requests`, { token, body });
      assert.equal(r.status, status, JSON.stringify([body, r.body]));
      assert.deepEqual(r.body, answer);
    }
    assert.deepEqual([await count('merge_requests'), await count('merge_request_diffs')], before);
  });

  test('a missing merge request is 404 Not found', async () => {
    for (const iid of [999, 2 ** 40]) {
      const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${iid}`, { token: roles.owner.token });
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, { message: '404 Not found' });
    }
  });

  test('a guest or outsider cannot set labels, assignees or milestones by creating (metadata needs Developer)', async () => {
    const pub = (await projectWithBranches(20)).project;
    const cast = await castRoles(t.app, pub);
    const r = await call(t.app, 'POST', `/projects/${pub.id}/merge_requests`, {
      token: cast.developer.token, body: { source_branch: 'feature', target_branch: 'main', title: 'Fine', labels: 'x', assignee_ids: [cast.owner.user.id] },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.labels, ['x']);
    assert.equal(r.body.draft, false);
    assert.equal(r.body.detailed_merge_status, 'checking');
  });

  test('a creation answers `checking` without checking the pair; the first read checks it: mergeable, or conflict', async () => {
    const { project: p } = await projectWithBranches(0);
    await commitFiles(t.app, p, 'clash', { 'main.txt': 'clash\n' }, { from: 'main' });
    await commitFiles(t.app, p, 'main', { 'main.txt': 'main\n' });
    const pairs = () => t.app.db.selectFrom('merge_request_mergeability').select('source_sha').where('project_id', '=', p.id).execute();
    const token = (await castRoles(t.app, p)).developer.token;
    const expected = { feature: ['can_be_merged', 'mergeable', false], clash: ['cannot_be_merged', 'conflict', true] };
    for (const [branch, after] of Object.entries(expected)) {
      const made = await call(t.app, 'POST', `/projects/${p.id}/merge_requests`, { token, body: { source_branch: branch, target_branch: 'main', title: branch } });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.deepEqual([made.body.merge_status, made.body.detailed_merge_status, made.body.has_conflicts, made.body.blocking_discussions_resolved], ['checking', 'checking', false, true]);
      assert.equal((await pairs()).some((r) => r.source_sha === made.body.sha), false);
      const read = await call(t.app, 'GET', `/projects/${p.id}/merge_requests/${made.body.iid}`, { token });
      assert.deepEqual([read.body.merge_status, read.body.detailed_merge_status, read.body.has_conflicts], after);
      assert.equal((await pairs()).some((r) => r.source_sha === made.body.sha), true);
    }
  });
});

describe('merge requests: from a fork', () => {
  test('the source branch is fetched into the target repository; the merge request lives in the target project', async () => {
    const { project: upstream, base } = await projectWithBranches(20);
    const owner = await quickUser(t.app);
    const fork = await makeProject(t.app, { owner: owner.user, visibility: 20, repository: true });
    await t.app.db.updateTable('projects').set({ forked_from_project_id: upstream.id }).where('id', '=', fork.id).execute();
    fork.forked_from_project_id = upstream.id;
    // The fork starts as a copy of upstream's main, then gets a branch of its own.
    await repoFor(t.app.config, fork).fetchBranchInto(repoFor(t.app.config, upstream).path, 'main', 'refs/heads/main');
    await t.app.db.updateTable('projects').set({ default_branch: 'main', empty_repo: 0 }).where('id', '=', fork.id).execute();
    const head = await commitFiles(t.app, fork, 'fix', { 'fix.txt': 'fixed\n' }, { from: 'main' });
    const r = await call(t.app, 'POST', `/projects/${fork.id}/merge_requests`, {
      token: owner.token, body: { source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: upstream.id, allow_collaboration: true },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.project_id, upstream.id);
    assert.equal(r.body.source_project_id, fork.id);
    assert.equal(r.body.target_project_id, upstream.id);
    assert.equal(r.body.allow_collaboration, true);
    assert.equal(r.body.allow_maintainer_to_push, true);
    assert.deepEqual(r.body.diff_refs, { base_sha: base, head_sha: head, start_sha: base });
    assert.equal(await repoFor(t.app.config, upstream).revParse(`refs/merge-requests/${r.body.iid}/head`), head);
    assert.equal(r.body.user.can_merge, false);
    // The fork's author reads it in the upstream project.
    const got = await call(t.app, 'GET', `/projects/${upstream.id}/merge_requests/${r.body.iid}`, { token: owner.token });
    assert.equal(got.status, 200);
    assert.equal(got.body.sha, head);
    // A project outside the fork network is refused.
    const stranger = (await projectWithBranches(20)).project;
    const refused = await call(t.app, 'POST', `/projects/${fork.id}/merge_requests`, {
      token: owner.token, body: { source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: stranger.id },
    });
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body, { message: ['Source project is not a fork of the target project'] });
  });
});
