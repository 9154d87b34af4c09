import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeFork, makeIssue, makeMergeRequest, makeProject, makeToken, quickUser, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { Repository } from '../../platform/git/repository.ts';
import { gitInvocationCount } from '../../platform/git/command.ts';
import { REPOSITORY_FACTS_DELAY_MS, repoFor } from '../repository/repository.common.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { fillTemplate, closingIssueIids } from './merge.service.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const git = async (p: ProjectRow, args: string[]) => (await repoFor(t.app.config, p).git(args)).stdout.toString().trim();
/** `git rev-list --parents -n 1 <rev>`: the commit then its parents. */
const parents = async (p: ProjectRow, rev: string) => (await git(p, ['rev-list', '--parents', '-n', '1', rev])).split(' ');
const setSettings = (p: ProjectRow, s: Record<string, unknown>) =>
  t.app.db.updateTable('projects').set({ settings: JSON.stringify(s) }).where('id', '=', p.id).execute();
const row = (id: number) => t.app.db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

let n = 0;
/** A private project with `main` and a branch two commits ahead; a merge request from it, made by the Developer. */
async function setup(o: { settings?: Record<string, unknown>; title?: string; description?: string } = {}) {
  const project = await makeProject(t.app, { visibility: 0, repository: true });
  const roles = await castRoles(t.app, project);
  if (o.settings) await setSettings(project, o.settings);
  const base = await commitFiles(t.app, project, 'main', { 'README.md': 'one\ntwo\nthree\n' });
  const branch = `feature-${++n}`;
  await commitFiles(t.app, project, branch, { 'a.txt': 'a\n' }, { from: 'main', message: 'Add a' });
  const head = await commitFiles(t.app, project, branch, { 'b.txt': 'b\n' }, { message: 'Add b\n\nwith a body' });
  const mr = await makeMergeRequest(t.app, roles.developer.token, project, {
    source_branch: branch, target_branch: 'main', title: o.title ?? 'Add a and b', description: o.description,
  });
  return { project, roles, base, head, branch, mr, url: `/projects/${project.id}/merge_requests/${mr.iid}` };
}

describe('mergeability', () => {
  test('a clean merge request is mergeable; the answer is kept per head pair and follows a moving target', async () => {
    const s = await setup();
    const got = await call(t.app, 'GET', s.url, { token: s.roles.reporter.token, query: { include_diverged_commits_count: 'true' } });
    assert.equal(got.status, 200);
    assert.deepEqual([got.body.merge_status, got.body.detailed_merge_status, got.body.has_conflicts, got.body.diverged_commits_count, got.body.blocking_discussions_resolved],
      ['can_be_merged', 'mergeable', false, 0, true]);
    const kept = await t.app.db.selectFrom('merge_request_mergeability').selectAll().where('project_id', '=', s.project.id).execute();
    assert.deepEqual(kept.map((k) => [k.target_sha, k.source_sha, k.merge_base_sha, k.has_conflicts]), [[s.base, s.head, s.base, 0]]);
    // The target moves on with a change to the same line: a new pair, a conflict.
    const moved = await commitFiles(t.app, s.project, 'main', { 'a.txt': 'other a\n' });
    t.app.caches.voidAll(); // as a push does
    const after = await call(t.app, 'GET', s.url, { token: s.roles.reporter.token, query: { include_diverged_commits_count: 'true' } });
    assert.deepEqual([after.body.merge_status, after.body.detailed_merge_status, after.body.has_conflicts, after.body.diverged_commits_count],
      ['cannot_be_merged', 'conflict', true, 1]);
    const pairs = await t.app.db.selectFrom('merge_request_mergeability').select(['target_sha', 'has_conflicts', 'conflict_paths']).where('project_id', '=', s.project.id).orderBy('checked_at').execute();
    assert.deepEqual(pairs.find((p) => p.target_sha === moved), { target_sha: moved, has_conflicts: 1, conflict_paths: '["a.txt"]' });
    // The merge is refused and nothing moves.
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, { message: 'Branch cannot be merged' });
    assert.equal(await git(s.project, ['rev-parse', 'main']), moved);
    assert.equal((await row(s.mr.id)).state, 'opened');
  });

  test('need_rebase under ff; discussions_not_resolved when the project asks and a thread is open; draft_status', async () => {
    const s = await setup({ settings: { merge_method: 'ff', only_allow_merge_if_all_discussions_are_resolved: true } });
    await commitFiles(t.app, s.project, 'main', { 'c.txt': 'c\n' });
    // Each read after a change made behind the server's back (as a push or a write would void the answers).
    const get = async () => { t.app.caches.voidAll(); return (await call(t.app, 'GET', s.url, { token: s.roles.reporter.token })).body; };
    assert.equal((await get()).detailed_merge_status, 'need_rebase');
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.deepEqual([r.status, r.body], [422, { message: 'Branch cannot be merged' }]);
    await setSettings(s.project, { only_allow_merge_if_all_discussions_are_resolved: true });
    const now = t.app.clock.now();
    await t.app.db.insertInto('notes').values({
      noteable_type: 'MergeRequest', noteable_id: s.mr.id, project_id: s.project.id, author_id: s.roles.owner.user.id, body: 'why?', system: 0,
      internal: 0, resolvable: 1, type: 'DiscussionNote', discussion_id: 'd'.repeat(40), created_at: now, updated_at: now,
    }).execute();
    const b = await get();
    assert.deepEqual([b.detailed_merge_status, b.blocking_discussions_resolved, b.merge_status], ['discussions_not_resolved', false, 'can_be_merged']);
    const refused = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.deepEqual([refused.status, refused.body], [405, { message: '405 Method Not Allowed' }]);
    await t.app.db.updateTable('notes').set({ resolved_at: now, resolved_by_id: s.roles.owner.user.id }).where('noteable_id', '=', s.mr.id).execute();
    assert.equal((await get()).detailed_merge_status, 'mergeable');
    await t.app.db.updateTable('merge_requests').set({ draft: 1 }).where('id', '=', s.mr.id).execute();
    assert.equal((await get()).detailed_merge_status, 'draft_status');
    const draft = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.deepEqual([draft.status, draft.body], [405, { message: '405 Method Not Allowed' }]);
  });
});

describe('merge', () => {
  test('merge method "merge": a merge commit with the default message; the row, the issues it closes, the source branch removed', async () => {
    const s = await setup({ description: 'Closes #1 and fixes #2' });
    const [i1, i2] = [await makeIssue(t.app, s.project), await makeIssue(t.app, s.project)];
    const other = await makeIssue(t.app, s.project);
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { should_remove_source_branch: true, sha: s.head } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const main = await git(s.project, ['rev-parse', 'main']);
    assert.deepEqual(await parents(s.project, main), [main, s.base, s.head]);
    assert.equal(await git(s.project, ['log', '-1', '--format=%B', main]),
      `Merge branch '${s.branch}' into 'main'\n\nAdd a and b\n\nCloses #1 and #2\n\nSee merge request ${s.project.full_path}!${s.mr.iid}`);
    assert.equal(await git(s.project, ['log', '-1', '--format=%an <%ae>', main]), `${s.roles.maintainer.user.name} <${s.roles.maintainer.user.email}>`);
    const b = r.body;
    assert.deepEqual([b.state, b.merge_commit_sha, b.squash_commit_sha, b.merged_by.id, b.merge_user.id, b.should_remove_source_branch, b.detailed_merge_status],
      ['merged', main, null, s.roles.maintainer.user.id, s.roles.maintainer.user.id, true, 'not_open']);
    assert.equal(b.merged_at, new Date(t.app.clock.now()).toISOString());
    const saved = await row(s.mr.id);
    assert.equal(saved.in_progress_merge_commit_sha, null);
    assert.equal(await repoFor(t.app.config, s.project).resolveCommit(`refs/heads/${s.branch}`), null);
    const states = await t.app.db.selectFrom('issues').select(['id', 'state', 'closed_by_id']).where('id', 'in', [i1.id, i2.id, other.id]).orderBy('id').execute();
    assert.deepEqual(states.map((i) => [i.state, i.closed_by_id]), [['closed', s.roles.maintainer.user.id], ['closed', s.roles.maintainer.user.id], ['opened', null]]);
    const events = await t.app.db.selectFrom('resource_state_events').select(['target_type', 'state']).where('target_id', 'in', [s.mr.id, i1.id]).execute();
    assert.ok(events.some((e) => e.target_type === 'MergeRequest' && e.state === 'merged'));
    // Merging again: not open.
    const again = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.deepEqual([again.status, again.body], [405, { message: '405 Method Not Allowed' }]);
  });

  test('merges one after another into one branch: each a merge commit on the one before, one git process each, the housekeeping queued once', async () => {
    const s = await setup();
    const branches = ['one', 'two', 'three'];
    const heads: string[] = [];
    const mrs = [];
    for (const b of branches) {
      heads.push(await commitFiles(t.app, s.project, `seq-${b}`, { [`${b}.txt`]: `${b}\n` }, { from: 'main', message: `Add ${b}` }));
      mrs.push(await makeMergeRequest(t.app, s.roles.developer.token, s.project, { source_branch: `seq-${b}`, target_branch: 'main', title: `Add ${b}` }));
    }
    const repo = repoFor(t.app.config, s.project);
    const merges: string[] = [];
    for (const [i, mr] of mrs.entries()) {
      const before = gitInvocationCount(repo.path);
      const r = await call(t.app, 'PUT', `/projects/${s.project.id}/merge_requests/${mr.iid}/merge`, { token: s.roles.maintainer.token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // The target head from its ref file, then merge-tree (a creation leaves the pair to its first read, and each
      // merge moves main for the next one), the merge commit written without a process, and the compare-and-swap
      // in the worker's running update-ref --stdin (the creations started it).
      assert.equal(gitInvocationCount(repo.path) - before, 1);
      merges.push(r.body.merge_commit_sha);
      assert.deepEqual(await parents(s.project, merges[i]), [merges[i], i === 0 ? s.base : merges[i - 1], heads[i]]);
    }
    // The first-parent history of main: the three merge commits, newest first, then where main was.
    assert.deepEqual((await git(s.project, ['rev-list', '--first-parent', '--max-count=4', 'main'])).split('\n'), [...merges].reverse().concat(s.base));
    assert.equal(await git(s.project, ['ls-tree', '--name-only', 'main']), ['README.md', 'one.txt', 'three.txt', 'two.txt'].join('\n'));
    const queued = await t.app.db.selectFrom('jobs').select(['args', 'state']).where('unique_key', '=', `repository_housekeeping:${s.project.id}`).execute();
    assert.deepEqual(queued, [{ args: JSON.stringify({ project_id: s.project.id }), state: 'queued' }]);
  });

  test('squash with the merge method: the squash commit sits on the old target head, by the author; the merge commit joins them', async () => {
    const s = await setup();
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { squash: true, squash_commit_message: 'Add both', merge_commit_message: 'Merge it' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const main = await git(s.project, ['rev-parse', 'main']);
    const squash = r.body.squash_commit_sha;
    assert.deepEqual(await parents(s.project, main), [main, s.base, squash]);
    assert.deepEqual(await parents(s.project, squash), [squash, s.base]);
    assert.equal(await git(s.project, ['log', '-1', '--format=%B', squash]), 'Add both');
    assert.equal(await git(s.project, ['log', '-1', '--format=%B', main]), 'Merge it');
    assert.equal(await git(s.project, ['log', '-1', '--format=%an', squash]), s.roles.developer.user.name);
    assert.equal(await git(s.project, ['rev-parse', `${squash}^{tree}`]), await git(s.project, ['rev-parse', `${s.head}^{tree}`]));
    assert.equal(r.body.squash, true);
    assert.equal(r.body.merge_commit_sha, main);
  });

  test('ff: the target moves to the source head, no merge commit; with squash, to the squash commit; squash_option never wins', async () => {
    const s = await setup({ settings: { merge_method: 'ff' } });
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(await git(s.project, ['rev-parse', 'main']), s.head);
    assert.deepEqual([r.body.merge_commit_sha, r.body.squash_commit_sha], [null, null]);
    assert.equal(await git(s.project, ['rev-list', '--count', '--merges', 'main']), '0');

    const q = await setup({ settings: { merge_method: 'ff', squash_option: 'always' } });
    const sq = await call(t.app, 'PUT', `${q.url}/merge`, { token: q.roles.maintainer.token, body: { squash: false } });
    assert.equal(sq.status, 200);
    const main = await git(q.project, ['rev-parse', 'main']);
    assert.equal(sq.body.squash_commit_sha, main);
    assert.deepEqual(await parents(q.project, main), [main, q.base]);
    assert.equal(await git(q.project, ['log', '-1', '--format=%B', main]), 'Add a and b');

    const never = await setup({ settings: { squash_option: 'never' } });
    const nv = await call(t.app, 'PUT', `${never.url}/merge`, { token: never.roles.maintainer.token, body: { squash: true } });
    assert.equal(nv.body.squash_commit_sha, null);
    assert.deepEqual((await parents(never.project, 'main')).slice(1), [never.base, never.head]);
  });

  test('rebase_merge: a merge commit when fast-forward is possible; after the target moved, rebase (202, a job) then merge', async () => {
    const s = await setup({ settings: { merge_method: 'rebase_merge' } });
    const moved = await commitFiles(t.app, s.project, 'main', { 'c.txt': 'c\n' });
    const refused = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.equal(refused.status, 422);
    // Rebase: a Reporter may not push to the source branch.
    const no = await call(t.app, 'PUT', `${s.url}/rebase`, { token: s.roles.reporter.token });
    assert.deepEqual([no.status, no.body], [403, { message: '403 Forbidden - Cannot push to source branch' }]);
    const rb = await call(t.app, 'PUT', `${s.url}/rebase`, { token: s.roles.developer.token });
    assert.deepEqual([rb.status, rb.body], [202, { rebase_in_progress: true }]);
    const busy = await call(t.app, 'PUT', `${s.url}/rebase`, { token: s.roles.developer.token });
    assert.equal(busy.status, 409);
    const during = await call(t.app, 'GET', s.url, { token: s.roles.developer.token, query: { include_rebase_in_progress: 'true' } });
    assert.equal(during.body.rebase_in_progress, true);
    await t.app.jobs.drain();
    const rebased = await git(s.project, ['rev-parse', s.branch]);
    assert.notEqual(rebased, s.head);
    // Linear on top of the moved target, the two commits with their messages and authors kept.
    assert.equal(await git(s.project, ['log', '--format=%s|%an', `${moved}..${rebased}`]), 'Add b|Fixture\nAdd a|Fixture');
    assert.equal(await git(s.project, ['merge-base', 'main', rebased]), moved);
    const after = await call(t.app, 'GET', s.url, { token: s.roles.developer.token, query: { include_rebase_in_progress: 'true' } });
    assert.deepEqual([after.body.sha, after.body.rebase_in_progress, after.body.detailed_merge_status, after.body.diff_refs.base_sha], [rebased, false, 'mergeable', moved]);
    assert.equal(await git(s.project, ['rev-parse', `refs/merge-requests/${s.mr.iid}/head`]), rebased);
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { sha: rebased } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const main = await git(s.project, ['rev-parse', 'main']);
    assert.deepEqual(await parents(s.project, main), [main, moved, rebased]);
  });

  test('a rebase that conflicts leaves the branch and says why', async () => {
    const s = await setup();
    await commitFiles(t.app, s.project, 'main', { 'a.txt': 'not a\n' });
    assert.equal((await call(t.app, 'PUT', `${s.url}/rebase`, { token: s.roles.developer.token })).status, 202);
    await t.app.jobs.drain();
    assert.equal(await git(s.project, ['rev-parse', s.branch]), s.head);
    const saved = await row(s.mr.id);
    assert.deepEqual([saved.rebase_in_progress, saved.merge_error], [0, 'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.']);
  });

  test('the sha guard: 409 with the head, nothing moves', async () => {
    const s = await setup();
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { sha: s.base } });
    assert.deepEqual([r.status, r.body], [409, { message: `SHA does not match HEAD of source branch: ${s.head}` }]);
    assert.equal(await git(s.project, ['rev-parse', 'main']), s.base);
    assert.equal((await row(s.mr.id)).state, 'opened');
  });

  test('a push to the target racing the merge is kept: the compare-and-swap fails and the merge is made again on top of it', async () => {
    const s = await setup();
    const original = Repository.prototype.updateRef;
    let pushed: string | null = null;
    Repository.prototype.updateRef = async function (ref: string, next: string, expected: string | null) {
      if (ref === 'refs/heads/main' && pushed === null && expected === s.base) {
        pushed = '';
        Repository.prototype.updateRef = original;
        pushed = await commitFiles(t.app, s.project, 'main', { 'pushed.txt': 'x\n' });
        Repository.prototype.updateRef = this.updateRef;
      }
      return original.call(this, ref, next, expected);
    };
    try {
      const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    } finally {
      Repository.prototype.updateRef = original;
    }
    assert.ok(pushed);
    const main = await git(s.project, ['rev-parse', 'main']);
    assert.deepEqual(await parents(s.project, main), [main, pushed, s.head]);
  });

  test('killed after the ref moved: the next attempt records the merge; a stale mark that never moved the ref is cleared', async () => {
    const s = await setup();
    const repo = repoFor(t.app.config, s.project);
    const tree = await git(s.project, ['rev-parse', `${s.head}^{tree}`]);
    const merge = await repo.commitTree({ tree, parents: [s.base, s.head], message: 'm', author: { name: 'x', email: 'x@example.com' } });
    const mark = { target_ref_sha: s.base, merge_commit_sha: merge, squash_commit_sha: null, user_id: s.roles.maintainer.user.id, at: t.app.clock.now() };
    await t.app.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: merge, merge_params: JSON.stringify({ in_progress: mark }) }).where('id', '=', s.mr.id).execute();
    await repo.updateRef('refs/heads/main', merge, s.base);
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token });
    assert.deepEqual([r.status, r.body], [405, { message: '405 Method Not Allowed' }]);
    const saved = await row(s.mr.id);
    assert.deepEqual([saved.state, saved.merge_commit_sha, saved.merged_by_id, saved.in_progress_merge_commit_sha], ['merged', merge, s.roles.maintainer.user.id, null]);

    const k = await setup();
    const orphan = await repoFor(t.app.config, k.project).commitTree({ tree, parents: [k.base], message: 'never published', author: { name: 'x', email: 'x@example.com' } });
    await t.app.db.updateTable('merge_requests').set({
      in_progress_merge_commit_sha: orphan, merge_params: JSON.stringify({ in_progress: { ...mark, at: t.app.clock.now() - 120_000 } }),
    }).where('id', '=', k.mr.id).execute();
    const ok = await call(t.app, 'PUT', `${k.url}/merge`, { token: k.roles.maintainer.token });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual((await parents(k.project, 'main')).slice(1), [k.base, k.head]);
  });

  test('templates: the reference variables, a line with an empty variable removed', async () => {
    const s = await setup({
      description: 'Closes #1',
      settings: { merge_commit_template: '%{title} (%{reference})\n\n%{issues}\n\n%{approved_by}\n\nMerged-by: %{merged_by}', squash_commit_template: '%{first_commit}\n\n%{all_commits}' },
    });
    await makeIssue(t.app, s.project);
    const r = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { squash: true } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const m = s.roles.maintainer.user;
    assert.equal(await git(s.project, ['log', '-1', '--format=%B', 'main']), `Add a and b (${s.project.full_path}!${s.mr.iid})\n\nCloses #1\n\nMerged-by: ${m.name} <${m.email}>`);
    assert.equal(await git(s.project, ['log', '-1', '--format=%B', r.body.squash_commit_sha]), 'Add a\n\n* Add a\n\n* Add b\n\nwith a body');
    assert.equal(fillTemplate('a\n\n%{x}\n\nb\n%{x}\nc %{unknown}', { x: '' }), 'a\n\nb\nc %{unknown}');
    assert.deepEqual(closingIssueIids('Fixes #3, #4 and #5. Mentions #6. resolves: issue #7'), [3, 4, 5, 7]);
  });
});

describe('merge ref', () => {
  test('GET merge_ref: the merge commit at refs/merge-requests/:iid/merge, the same for the same pair; 400 when not mergeable', async () => {
    const s = await setup();
    const r = await call(t.app, 'GET', `${s.url}/merge_ref`, { token: s.roles.reporter.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const sha = r.body.commit_id;
    assert.deepEqual(await parents(s.project, sha), [sha, s.base, s.head]);
    assert.equal(await git(s.project, ['rev-parse', `refs/merge-requests/${s.mr.iid}/merge`]), sha);
    assert.equal(await git(s.project, ['rev-parse', 'main']), s.base);
    t.app.caches.voidAll();
    assert.equal((await call(t.app, 'GET', `${s.url}/merge_ref`, { token: s.roles.reporter.token })).body.commit_id, sha);
    await commitFiles(t.app, s.project, 'main', { 'a.txt': 'clash\n' });
    t.app.caches.voidAll();
    const bad = await call(t.app, 'GET', `${s.url}/merge_ref`, { token: s.roles.reporter.token });
    assert.deepEqual([bad.status, bad.body], [400, { message: 'Merge request is not mergeable' }]);
  });
});

describe('merge: who may merge', () => {
  test('roles on a private project, a read_api token, and a protected target branch', async () => {
    const s = await setup();
    const expect: Array<[keyof RoleCast | 'anonymous', number]> = [['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 401]];
    for (const [who, status] of expect) {
      const token = who === 'anonymous' ? undefined : (s.roles as any)[who].token;
      const r = await call(t.app, 'PUT', `${s.url}/merge`, { token });
      assert.equal(r.status, status, `${who}: ${JSON.stringify(r.body)}`);
      if (status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
    }
    const readApi = await makeToken(t.app, s.roles.maintainer.user, ['read_api']);
    assert.equal((await call(t.app, 'PUT', `${s.url}/merge`, { token: readApi })).status, 403);
    // Protect main: only Maintainers merge; a Developer is refused, nothing moves.
    const pb = await call(t.app, 'POST', `/projects/${s.project.id}/protected_branches`, { token: s.roles.owner.token, body: { name: 'main', merge_access_level: 40, push_access_level: 40 } });
    assert.equal(pb.status, 201, JSON.stringify(pb.body));
    const dev = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.developer.token });
    assert.deepEqual([dev.status, dev.body], [401, { message: '401 Unauthorized' }]);
    assert.equal(await git(s.project, ['rev-parse', 'main']), s.base);
    const got = await call(t.app, 'GET', s.url, { token: s.roles.developer.token });
    assert.deepEqual(got.body.user, { can_merge: false });
    for (const who of ['maintainer', 'owner', 'admin'] as const) {
      const o = await setup();
      await call(t.app, 'POST', `/projects/${o.project.id}/protected_branches`, { token: o.roles.owner.token, body: { name: 'main', merge_access_level: 40 } });
      const r = await call(t.app, 'PUT', `${o.url}/merge`, { token: o.roles[who].token });
      assert.equal(r.status, 200, `${who}: ${JSON.stringify(r.body)}`);
    }
    // The Developer merges where nothing is protected.
    const d = await setup();
    assert.equal((await call(t.app, 'PUT', `${d.url}/merge`, { token: d.roles.developer.token })).status, 200);
  });
});

describe('after a merge', () => {
  test('another merge request into the moved target is marked unchecked and answers for the new pair on the next read', async () => {
    const s = await setup();
    const other = `other-${++n}`;
    await commitFiles(t.app, s.project, other, { 'c.txt': 'c\n' }, { from: 'main', message: 'Add c' });
    const b = await makeMergeRequest(t.app, s.roles.developer.token, s.project, { source_branch: other, target_branch: 'main', title: 'Add c' });
    const bUrl = `/projects/${s.project.id}/merge_requests/${b.iid}`;
    const first = await call(t.app, 'GET', bUrl, { token: s.roles.reporter.token, query: { include_diverged_commits_count: 'true' } });
    assert.deepEqual([first.body.merge_status, first.body.detailed_merge_status, first.body.diverged_commits_count], ['can_be_merged', 'mergeable', 0]);
    await t.app.db.updateTable('merge_requests').set({ merge_status: 'can_be_merged' }).where('id', '=', b.id).execute();
    assert.equal((await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token })).status, 200);
    const moved = await git(s.project, ['rev-parse', 'main']);
    // No answer for the new pair was computed by the merge: the row says unchecked, and no pair row exists yet.
    assert.equal((await row(b.id)).merge_status, 'unchecked');
    const before = await t.app.db.selectFrom('merge_request_mergeability').select('source_sha').where('project_id', '=', s.project.id).where('target_sha', '=', moved).execute();
    assert.deepEqual(before, []);
    // The next read computes it: still mergeable, now behind by the merged commits and the merge commit.
    const next = await call(t.app, 'GET', bUrl, { token: s.roles.reporter.token, query: { include_diverged_commits_count: 'true' } });
    assert.equal(next.status, 200);
    const behind = Number(await git(s.project, ['rev-list', '--count', `${other}..main`]));
    assert.equal(behind, 3);
    assert.deepEqual([next.body.merge_status, next.body.detailed_merge_status, next.body.has_conflicts, next.body.diverged_commits_count], ['can_be_merged', 'mergeable', false, behind]);
    const kept = await t.app.db.selectFrom('merge_request_mergeability').select(['source_sha', 'merge_base_sha', 'has_conflicts']).where('project_id', '=', s.project.id).where('target_sha', '=', moved).execute();
    assert.deepEqual(kept, [{ source_sha: b.sha, merge_base_sha: s.base, has_conflicts: 0 }]);
  });

  test('a read without diverged_commits_count makes no walk: the pair row is kept without its merge base until one asks', async () => {
    const s = await setup();
    const got = await call(t.app, 'GET', s.url, { token: s.roles.reporter.token });
    assert.deepEqual([got.body.merge_status, got.body.detailed_merge_status, 'diverged_commits_count' in got.body], ['can_be_merged', 'mergeable', false]);
    const key = (q: any) => q.where('project_id', '=', s.project.id).where('target_sha', '=', s.base).where('source_sha', '=', s.head);
    assert.equal((await key(t.app.db.selectFrom('merge_request_mergeability').select('merge_base_sha')).executeTakeFirstOrThrow()).merge_base_sha, null);
    const counted = await call(t.app, 'GET', s.url, { token: s.roles.reporter.token, query: { include_diverged_commits_count: 'true' } });
    assert.equal(counted.body.diverged_commits_count, 0);
    assert.equal((await key(t.app.db.selectFrom('merge_request_mergeability').select('merge_base_sha')).executeTakeFirstOrThrow()).merge_base_sha, s.base);
  });

  test('the statistics of the moved default branch are read by one delayed job after a burst of merges', async () => {
    const s = await setup();
    const stats = async () => (await t.app.db.selectFrom('project_statistics').select('commit_count').where('project_id', '=', s.project.id).executeTakeFirst())?.commit_count ?? null;
    await t.app.jobs.drain();
    const was = await stats();
    const merged = t.clock.now();
    assert.equal((await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token })).status, 200);
    const facts = () => t.app.db.selectFrom('jobs').select(['kind', 'args', 'state', 'run_at']).where('kind', '=', 'repository_facts').where('args', '=', JSON.stringify({ project_id: s.project.id })).execute();
    assert.deepEqual(await facts(), [{ kind: 'repository_facts', args: JSON.stringify({ project_id: s.project.id }), state: 'queued', run_at: merged + REPOSITORY_FACTS_DELAY_MS }]);
    // A second merge into the default branch while it waits shares it.
    const branch = `feature-${++n}`;
    await commitFiles(t.app, s.project, branch, { 'second.txt': 'x\n' }, { from: 'main', message: 'Second' });
    const second = await makeMergeRequest(t.app, s.roles.developer.token, s.project, { source_branch: branch, target_branch: 'main', title: 'Second' });
    assert.equal((await call(t.app, 'PUT', `/projects/${s.project.id}/merge_requests/${second.iid}/merge`, { token: s.roles.maintainer.token })).status, 200);
    assert.equal((await facts()).length, 1);
    // Not due yet: the statistics are those before the merges.
    await t.app.jobs.drain();
    assert.equal(await stats(), was);
    (t.clock as ManualClock).advance(REPOSITORY_FACTS_DELAY_MS);
    await t.app.jobs.drain();
    assert.deepEqual((await facts()).map((j) => j.state), ['succeeded']);
    const now = Number(await git(s.project, ['rev-list', '--count', 'main']));
    assert.notEqual(was, now);
    assert.equal(await stats(), now);
  });
});

describe('approvals on this tier', () => {
  test('never block: detailed_merge_status and the merge agree without any approval; approvals_before_merge is ignored; the author approves only when the project allows it', async () => {
    const s = await setup();
    // The author (the Developer) may not approve their own merge request by default.
    const own = await call(t.app, 'POST', `${s.url}/approve`, { token: s.roles.developer.token });
    assert.deepEqual([own.status, own.body], [403, { message: '403 Forbidden' }]);
    // A required approval count is an unlicensed setting: accepted, ignored, not shown.
    const put = await call(t.app, 'PUT', `/projects/${s.project.id}`, { token: s.roles.maintainer.token, body: { approvals_before_merge: 2, merge_requests_author_approval: true } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal('approvals_before_merge' in put.body, false);
    const state = await call(t.app, 'GET', `${s.url}/approvals`, { token: s.roles.reporter.token });
    assert.deepEqual([state.body.approved, state.body.approvals_required, state.body.approvals_left, state.body.approved_by], [true, 0, 0, []]);
    const shown = await call(t.app, 'GET', s.url, { token: s.roles.reporter.token });
    assert.deepEqual([shown.body.merge_status, shown.body.detailed_merge_status], ['can_be_merged', 'mergeable']);
    // Now the project lets authors approve.
    const mine = await call(t.app, 'POST', `${s.url}/approve`, { token: s.roles.developer.token });
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.deepEqual(mine.body.approved_by.map((a: any) => a.user.id), [s.roles.developer.user.id]);
    // Unapproved again, it still merges: nothing on this tier requires an approval.
    assert.equal((await call(t.app, 'POST', `${s.url}/unapprove`, { token: s.roles.developer.token })).status, 201);
    assert.equal((await call(t.app, 'GET', s.url, { token: s.roles.reporter.token })).body.detailed_merge_status, 'mergeable');
    const merged = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { sha: s.head } });
    assert.deepEqual([merged.status, merged.body.state], [200, 'merged']);
    assert.deepEqual((await parents(s.project, 'main')).slice(1), [s.base, s.head]);
  });
});

describe('rebase: a source branch in a fork', () => {
  /** A public upstream with a role cast, a public fork whose owner asks to merge `fix` into upstream's `main`, which then moves on. */
  async function forkSetup(o: { allowCollaboration: boolean; forkVisibility?: number }) {
    const upstream = await makeProject(t.app, { visibility: 20, repository: true });
    const roles = await castRoles(t.app, upstream);
    const base = await commitFiles(t.app, upstream, 'main', { 'README.md': 'one\n' });
    const author = await quickUser(t.app);
    const fork = await makeFork(t.app, upstream, author.user, 'fix', { 'fix.txt': 'fixed\n' });
    if (o.forkVisibility !== undefined) await t.app.db.updateTable('projects').set({ visibility_level: o.forkVisibility }).where('id', '=', fork.id).execute();
    const head = await git(fork, ['rev-parse', 'fix']);
    const mr = await makeMergeRequest(t.app, author.token, fork, {
      source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: upstream.id, allow_collaboration: o.allowCollaboration,
    });
    const moved = await commitFiles(t.app, upstream, 'main', { 'c.txt': 'c\n' }, { message: 'Add c' });
    return { upstream, fork, roles, author, base, head, moved, mr, url: `/projects/${upstream.id}/merge_requests/${mr.iid}` };
  }
  const cannotPush = { message: '403 Forbidden - Cannot push to source branch' };

  test("the fork's branch is rebased onto upstream's target in the fork; upstream's head ref and the merge request follow", async () => {
    const s = await forkSetup({ allowCollaboration: true });
    // An upstream Developer may update upstream's (unprotected) main, so collaboration lets them push to the fork's branch.
    const rb = await call(t.app, 'PUT', `${s.url}/rebase`, { token: s.roles.developer.token });
    assert.deepEqual([rb.status, rb.body], [202, { rebase_in_progress: true }]);
    await t.app.jobs.drain();
    const rebased = await git(s.fork, ['rev-parse', 'fix']);
    assert.notEqual(rebased, s.head);
    // In the fork: upstream's new commit below the branch's own one, author and message kept, the rebaser the committer.
    assert.equal(await git(s.fork, ['log', '--format=%s|%an|%cn', `${s.moved}..${rebased}`]), `Change fix.txt|Fixture|${s.roles.developer.user.name}`);
    assert.deepEqual(await parents(s.fork, rebased), [rebased, s.moved]);
    assert.equal(await git(s.fork, ['show', `${rebased}:fix.txt`]), 'fixed');
    // Nothing else moved: the fork's main, upstream's main; no scratch ref left in the fork.
    assert.equal(await git(s.fork, ['rev-parse', 'main']), s.base);
    assert.equal(await git(s.upstream, ['rev-parse', 'main']), s.moved);
    assert.equal(await git(s.fork, ['for-each-ref', '--format=%(refname)', 'refs/rebase-onto/']), '');
    // Upstream: the head ref holds the rebased commit; the merge request shows it, based on the moved target.
    assert.equal(await git(s.upstream, ['rev-parse', `refs/merge-requests/${s.mr.iid}/head`]), rebased);
    const after = await call(t.app, 'GET', s.url, { token: s.author.token, query: { include_rebase_in_progress: 'true' } });
    assert.deepEqual([after.body.sha, after.body.rebase_in_progress, after.body.diff_refs, after.body.merge_error],
      [rebased, false, { base_sha: s.moved, head_sha: rebased, start_sha: s.moved }, null]);
    // And it merges as a fast-forward-free merge commit of the rebased head.
    const merged = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { sha: rebased } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    assert.deepEqual((await parents(s.upstream, 'main')).slice(1), [s.moved, rebased]);
  });

  test('who may rebase a fork\'s branch: its writers, and with allow_collaboration whoever may update the target branch', async () => {
    const s = await forkSetup({ allowCollaboration: true });
    const status = async (token: string | undefined) => {
      const r = await call(t.app, 'PUT', `${s.url}/rebase`, { token });
      if (r.status === 202) await t.app.jobs.drain();
      return r.status === 403 ? [r.status, r.body.message] : r.status;
    };
    // The upstream's Reporter, Guest and a non-member cannot push anywhere; anonymous callers are asked to sign in.
    assert.deepEqual(await status(undefined), 401);
    for (const who of ['guest', 'reporter', 'nonMember'] as const) assert.deepEqual(await status(s.roles[who]!.token), [403, cannotPush.message], who);
    // The fork's owner pushes to their own branch.
    assert.equal(await status(s.author.token), 202);
    for (const who of ['developer', 'maintainer', 'owner', 'admin'] as const) assert.equal(await status(s.roles[who]!.token), 202, who);
    // Upstream protects main for Maintainers: its Developers no longer update the target branch, so no collaboration.
    const prot = await call(t.app, 'POST', `/projects/${s.upstream.id}/protected_branches`, {
      token: s.roles.maintainer.token, body: { name: 'main', push_access_level: 40, merge_access_level: 40 },
    });
    assert.equal(prot.status, 201, JSON.stringify(prot.body));
    t.app.caches.voidAll();
    assert.deepEqual(await status(s.roles.developer.token), [403, cannotPush.message]);
    assert.equal(await status(s.roles.maintainer.token), 202);
    // A protection on the fork's branch ends collaboration (its owner still pushes).
    const own = await call(t.app, 'POST', `/projects/${s.fork.id}/protected_branches`, { token: s.author.token, body: { name: 'fix' } });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    t.app.caches.voidAll();
    assert.deepEqual(await status(s.roles.maintainer.token), [403, cannotPush.message]);
    assert.equal(await status(s.author.token), 202);
  });

  test('without allow_collaboration, or from a private fork, only the fork\'s writers rebase; a deleted branch is refused', async () => {
    const closed = await forkSetup({ allowCollaboration: false });
    const r = await call(t.app, 'PUT', `${closed.url}/rebase`, { token: closed.roles.maintainer.token });
    assert.deepEqual([r.status, r.body], [403, cannotPush]);
    assert.equal((await row(closed.mr.id)).rebase_in_progress, 0);
    assert.equal(await git(closed.fork, ['rev-parse', 'fix']), closed.head);
    // The author turns collaboration on: the upstream Maintainer may now.
    const on = await call(t.app, 'PUT', closed.url, { token: closed.author.token, body: { allow_collaboration: true } });
    assert.equal(on.status, 200);
    assert.equal((await call(t.app, 'PUT', `${closed.url}/rebase`, { token: closed.roles.maintainer.token })).status, 202);
    await t.app.jobs.drain();
    assert.notEqual(await git(closed.fork, ['rev-parse', 'fix']), closed.head);

    const hidden = await forkSetup({ allowCollaboration: true, forkVisibility: 0 });
    const p = await call(t.app, 'PUT', `${hidden.url}/rebase`, { token: hidden.roles.maintainer.token });
    assert.deepEqual([p.status, p.body], [403, cannotPush]);
    assert.equal((await call(t.app, 'PUT', `${hidden.url}/rebase`, { token: hidden.author.token })).status, 202);
    await t.app.jobs.drain();

    // The source branch deleted in the fork.
    await repoFor(t.app.config, hidden.fork).git(['update-ref', '-d', 'refs/heads/fix']);
    const gone = await call(t.app, 'PUT', `${hidden.url}/rebase`, { token: hidden.author.token });
    assert.deepEqual([gone.status, gone.body], [403, { message: '403 Forbidden - Source branch does not exist' }]);
  });
});
