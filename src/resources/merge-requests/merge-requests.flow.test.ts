import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeIssue, makeMergeRequest, makeProject, makeLabel, makeMilestone, makeGroup, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from '../repository/repository.common.ts';
import { issueReferences } from './merge-requests.service.ts';

// Merge requests after creation: lists and their filters, changes with their system notes and events, deletion,
// commits, participants, the issues a description closes, approvals, subscriptions, time tracking, notes, and a
// push to the source branch.

let t: TestApp;
let project: ProjectRow;
let roles: RoleCast;
let base: string;
before(async () => {
  t = await buildTestApp();
  const group = await makeGroup(t.app, { visibility: 0 });
  project = await makeProject(t.app, { namespace: group, visibility: 0, repository: true });
  roles = await castRoles(t.app, project);
  base = await commitFiles(t.app, project, 'main', { 'README.md': '# hello\n' });
  for (const b of ['one', 'two', 'three']) await commitFiles(t.app, project, b, { [`${b}.txt`]: `${b}\n` }, { from: 'main' });
});
after(async () => { await t.close(); });

const notesOf = async (mrId: number) => (await t.app.db.selectFrom('notes').select(['body', 'system', 'author_id'])
  .where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', mrId).orderBy('id').execute());

describe('merge requests: lists, changes and what hangs off them', () => {
  let one: any;
  let two: any;
  let three: any;
  before(async () => {
    const label = await makeLabel(t.app, { projectId: project.id, title: 'bug' });
    const m = await makeMilestone(t.app, { projectId: project.id, title: 'v1' });
    one = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'one', target_branch: 'main', title: 'First one', labels: label.title, milestone_id: m.id, reviewer_ids: [roles.maintainer.user.id] });
    two = await makeMergeRequest(t.app, roles.maintainer.token, project, { source_branch: 'two', target_branch: 'main', title: 'Draft: second', assignee_ids: [roles.developer.user.id] });
    three = await makeMergeRequest(t.app, roles.owner.token, project, { source_branch: 'three', target_branch: 'one', title: 'Third', description: 'needle here' });
  });

  test('the project list filters as the reference', async () => {
    const list = async (query: Record<string, string>, token = roles.reporter.token) => {
      const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests`, { token, query });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.map((m: any) => m.iid);
    };
    assert.deepEqual(await list({}), [3, 2, 1]);
    assert.deepEqual(await list({ sort: 'asc' }), [1, 2, 3]);
    assert.deepEqual(await list({ labels: 'bug' }), [1]);
    assert.deepEqual(await list({ milestone: 'v1' }), [1]);
    assert.deepEqual(await list({ milestone: 'None' }), [3, 2]);
    assert.deepEqual(await list({ author_id: String(roles.owner.user.id) }), [3]);
    assert.deepEqual(await list({ author_username: roles.maintainer.user.username }), [2]);
    assert.deepEqual(await list({ assignee_id: String(roles.developer.user.id) }), [2]);
    assert.deepEqual(await list({ assignee_id: 'None' }), [3, 1]);
    assert.deepEqual(await list({ reviewer_id: String(roles.maintainer.user.id) }), [1]);
    assert.deepEqual(await list({ reviewer_username: roles.maintainer.user.username }), [1]);
    assert.deepEqual(await list({ reviewer_id: 'Any' }), [1]);
    assert.deepEqual(await list({ source_branch: 'two' }), [2]);
    assert.deepEqual(await list({ target_branch: 'one' }), [3]);
    assert.deepEqual(await list({ search: 'needle' }), [3]);
    assert.deepEqual(await list({ search: 'needle', in: 'title' }), []);
    assert.deepEqual(await list({ wip: 'yes' }), [2]);
    assert.deepEqual(await list({ wip: 'no' }), [3, 1]);
    assert.deepEqual(await list({ draft: 'true' }), [2]);
    assert.deepEqual(await list({ 'iids[]': '1' }), [1]);
    assert.deepEqual(await list({ 'not[labels]': 'bug' }), [3, 2]);
    assert.deepEqual(await list({ 'not[target_branch]': 'main' }), [3]);
    assert.deepEqual(await list({ state: 'opened' }), [3, 2, 1]);
    assert.deepEqual(await list({ state: 'merged' }), []);
    assert.deepEqual(await list({ order_by: 'title', sort: 'asc' }), [2, 1, 3]);
    assert.deepEqual(await list({ scope: 'created_by_me' }, roles.developer.token), [1]);
    assert.deepEqual(await list({ scope: 'assigned_to_me' }, roles.developer.token), [2]);
    assert.deepEqual(await list({ scope: 'reviews_for_me' }, roles.maintainer.token), [1]);
    const bad = await call(t.app, 'GET', `/projects/${project.id}/merge_requests`, { token: roles.reporter.token, query: { assignee_id: 'x' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'assignee_id is invalid' });
    const both = await call(t.app, 'GET', `/projects/${project.id}/merge_requests`, { token: roles.reporter.token, query: { author_id: '1', author_username: 'x' } });
    assert.equal(both.status, 400);
    const simple = await call(t.app, 'GET', `/projects/${project.id}/merge_requests`, { token: roles.reporter.token, query: { view: 'simple', per_page: '1' } });
    assert.deepEqual(Object.keys(simple.body[0]), ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'web_url']);
    assert.equal(simple.headers['x-total'], '3');
    assert.equal(simple.headers['x-next-page'], '2');
  });

  test('the group and global lists hold the caller to read_merge_request', async () => {
    const g = await call(t.app, 'GET', `/groups/${project.namespace_id}/merge_requests`, { token: roles.admin.token });
    assert.equal(g.status, 200);
    assert.deepEqual(g.body.map((m: any) => m.iid), [3, 2, 1]);
    assert.equal(g.body[0].references.relative, `${project.path}!3`);
    // A Guest of a private project does not read its merge requests.
    const guest = await call(t.app, 'GET', '/merge_requests', { token: roles.guest.token, query: { scope: 'all' } });
    assert.equal(guest.status, 200);
    assert.deepEqual(guest.body, []);
    const mine = await call(t.app, 'GET', '/merge_requests', { token: roles.developer.token });
    assert.deepEqual(mine.body.map((m: any) => m.iid), [1]);
    const anon = await call(t.app, 'GET', '/merge_requests');
    assert.equal(anon.status, 401);
  });

  test('PUT changes text, labels, reviewers, target branch and state, with events and system notes', async () => {
    const before = await notesOf(one.id);
    const r = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, {
      token: roles.maintainer.token,
      body: { title: 'Draft: First one', add_labels: 'ux', reviewer_ids: [roles.owner.user.id], target_branch: 'two', discussion_locked: true, squash: true },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.draft, true);
    assert.deepEqual(r.body.labels, ['bug', 'ux']);
    assert.deepEqual(r.body.reviewers.map((u: any) => u.id), [roles.owner.user.id]);
    assert.equal(r.body.target_branch, 'two');
    assert.equal(r.body.discussion_locked, true);
    assert.equal(r.body.squash, true);
    // A new version against the new target branch.
    const two_ = await repoFor(t.app.config, project).resolveCommit('refs/heads/two');
    assert.equal(r.body.diff_refs.start_sha, two_);
    assert.equal(r.body.diff_refs.base_sha, base);
    assert.equal(Number((await t.app.db.selectFrom('merge_request_diffs').select((eb) => eb.fn.countAll<number>().as('n')).where('merge_request_id', '=', one.id).executeTakeFirstOrThrow()).n), 2);
    const label = await t.app.db.selectFrom('labels').select('id').where('title', '=', 'ux').executeTakeFirstOrThrow();
    const added = (await notesOf(one.id)).slice(before.length).map((n) => n.body);
    assert.deepEqual(added, [
      'changed title from **{-First one-}** to **{+Draft: First one+}**',
      `added ~${label.id} label`,
      `requested review from @${roles.owner.user.username} and removed review request for @${roles.maintainer.user.username}`,
      'changed target branch from `main` to `two`',
      'marked this merge request as **draft**',
      'locked this merge request',
    ]);
    const close = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.developer.token, body: { state_event: 'close', title: 'First one' } });
    assert.equal(close.status, 200);
    assert.equal(close.body.state, 'closed');
    assert.equal(close.body.closed_by.id, roles.developer.user.id);
    assert.equal(close.body.draft, false);
    const events = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${one.iid}/resource_state_events`, { token: roles.reporter.token });
    assert.deepEqual(events.body.map((e: any) => [e.state, e.resource_type]), [['closed', 'MergeRequest']]);
    const reopen = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.developer.token, body: { state_event: 'reopen', target_branch: 'main' } });
    assert.equal(reopen.body.state, 'opened');
    // Refusals, nothing changed: nothing to change, a missing target branch, a Reporter.
    const none = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.developer.token, body: {} });
    assert.equal(none.status, 400);
    const missing = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.developer.token, body: { target_branch: 'gone' } });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body, { message: ['Target branch "gone" does not exist'] });
    const reporter = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.reporter.token, body: { title: 'x' } });
    assert.equal(reporter.status, 403);
    const after = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${one.iid}`, { token: roles.reporter.token });
    assert.equal(after.body.title, 'First one');
    assert.equal(after.body.target_branch, 'main');
  });

  test('commits, participants, subscriptions, time tracking, notes and award emoji', async () => {
    const commits = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${two.iid}/commits`, { token: roles.reporter.token });
    assert.equal(commits.status, 200);
    assert.deepEqual(commits.body.map((c: any) => c.title), ['Change two.txt']);
    assert.equal(commits.headers['x-total'], '1');
    const note = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/notes`, { token: roles.reporter.token, body: { body: 'Looks good' } });
    assert.equal(note.status, 201, JSON.stringify(note.body));
    assert.equal(note.body.noteable_type, 'MergeRequest');
    assert.equal(note.body.noteable_iid, two.iid);
    const parts = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${two.iid}/participants`, { token: roles.reporter.token });
    assert.deepEqual(parts.body.map((u: any) => u.id), [roles.maintainer.user.id, roles.reporter.user.id, roles.developer.user.id]);
    const sub = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/subscribe`, { token: roles.guest.token });
    assert.equal(sub.status, 403);
    const sub2 = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/subscribe`, { token: roles.owner.token });
    assert.equal(sub2.status, 201);
    assert.equal(sub2.body.subscribed, true);
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/subscribe`, { token: roles.owner.token })).status, 304);
    const est = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/time_estimate`, { token: roles.developer.token, body: { duration: '1h' } });
    assert.equal(est.status, 200);
    const spent = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/add_spent_time`, { token: roles.developer.token, body: { duration: '30m' } });
    assert.equal(spent.status, 201);
    assert.deepEqual(spent.body, { time_estimate: 3600, total_time_spent: 1800, human_time_estimate: '1h', human_total_time_spent: '30m' });
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/time_estimate`, { token: roles.reporter.token, body: { duration: '1h' } })).status, 403);
    const award = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${two.iid}/award_emoji`, { token: roles.reporter.token, body: { name: 'thumbsup' } });
    assert.equal(award.status, 201);
    const shown = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${two.iid}`, { token: roles.reporter.token });
    assert.equal(shown.body.upvotes, 1);
    assert.equal(shown.body.user_notes_count, 1);
    assert.deepEqual(shown.body.time_stats, { time_estimate: 3600, total_time_spent: 1800, human_time_estimate: '1h', human_total_time_spent: '30m' });
  });

  test('approvals: Developers approve once, sha must be the head, the author only when the project allows it', async () => {
    const url = `/projects/${project.id}/merge_requests/${three.iid}`;
    const wrong = await call(t.app, 'POST', `${url}/approve`, { token: roles.developer.token, body: { sha: base } });
    assert.equal(wrong.status, 409);
    assert.deepEqual(wrong.body, { message: `SHA does not match HEAD of source branch: ${three.sha}` });
    const ok = await call(t.app, 'POST', `${url}/approve`, { token: roles.developer.token, body: { sha: three.sha } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.deepEqual(Object.keys(ok.body), ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'merge_status',
      'approved', 'approvals_required', 'approvals_left', 'require_password_to_approve', 'approved_by', 'suggested_approvers', 'approvers',
      'approver_groups', 'user_has_approved', 'user_can_approve', 'approval_rules_left', 'has_approval_rules', 'merge_request_approvers_available',
      'multiple_approval_rules_available', 'invalid_approvers_rules']);
    assert.deepEqual([ok.body.iid, ok.body.approved, ok.body.approvals_left, ok.body.user_has_approved, ok.body.user_can_approve], [three.iid, true, 0, true, false]);
    assert.deepEqual(ok.body.approved_by.map((a: any) => a.user.id), [roles.developer.user.id]);
    assert.equal((await call(t.app, 'POST', `${url}/approve`, { token: roles.developer.token })).status, 401);
    assert.equal((await call(t.app, 'POST', `${url}/approve`, { token: roles.reporter.token })).status, 403);
    // The author (the owner) may not approve their own merge request by default.
    assert.equal((await call(t.app, 'POST', `${url}/approve`, { token: roles.owner.token })).status, 403);
    const seen = await call(t.app, 'GET', `${url}/approvals`, { token: roles.reporter.token });
    assert.deepEqual([seen.body.approved, seen.body.user_has_approved, seen.body.user_can_approve], [true, false, false]);
    const un = await call(t.app, 'POST', `${url}/unapprove`, { token: roles.developer.token });
    assert.equal(un.status, 201);
    assert.deepEqual(un.body.approved_by, []);
    assert.equal(un.body.user_can_approve, true);
    assert.equal((await call(t.app, 'POST', `${url}/unapprove`, { token: roles.developer.token })).status, 404);
    const notes = (await notesOf(three.id)).map((n) => n.body);
    assert.deepEqual(notes.slice(-2), ['approved this merge request', 'unapproved this merge request']);
  });

  test('DELETE: owners and administrators; the head ref goes with it', async () => {
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'three', target_branch: 'two', title: 'Doomed' });
    const url = `/projects/${project.id}/merge_requests/${mr.iid}`;
    assert.equal((await call(t.app, 'DELETE', url, { token: roles.maintainer.token })).status, 403);
    assert.equal((await call(t.app, 'DELETE', url, { token: roles.owner.token })).status, 204);
    assert.equal((await call(t.app, 'GET', url, { token: roles.owner.token })).status, 404);
    assert.equal(await repoFor(t.app.config, project).revParse(`refs/merge-requests/${mr.iid}/head`), null);
  });
});

describe('merge requests: the issues a description names', () => {
  test('closing patterns are read as the reference reads them', () => {
    const refs = issueReferences('Closes #1, #2 and #3. Fixes: group/proj#4\nSee #5; implemented #6');
    assert.deepEqual(refs.closes.map((r) => `${r.path ?? ''}#${r.iid}`), ['#1', '#2', '#3', 'group/proj#4', '#6']);
    assert.deepEqual(refs.mentions.map((r) => r.iid), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(issueReferences('issue#7 and &8 and nothing').closes, []);
  });

  test('closes_issues, related_merge_requests, closed_by and merge_requests_count', async () => {
    const i1 = await makeIssue(t.app, project, { title: 'closed by it' });
    const i2 = await makeIssue(t.app, project, { title: 'only mentioned' });
    await commitFiles(t.app, project, 'closer', { 'c.txt': 'c\n' }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'closer', target_branch: 'main', description: `Closes #${i1.iid}, see #${i2.iid}` });
    const url = `/projects/${project.id}`;
    const closes = await call(t.app, 'GET', `${url}/merge_requests/${mr.iid}/closes_issues`, { token: roles.reporter.token });
    assert.equal(closes.status, 200);
    assert.deepEqual(closes.body.map((i: any) => i.iid), [i1.iid]);
    assert.equal(closes.body[0].merge_requests_count, 1);
    const related = await call(t.app, 'GET', `${url}/issues/${i2.iid}/related_merge_requests`, { token: roles.reporter.token });
    assert.deepEqual(related.body.map((m: any) => m.iid), [mr.iid]);
    const closedBy = await call(t.app, 'GET', `${url}/issues/${i1.iid}/closed_by`, { token: roles.reporter.token });
    assert.deepEqual(closedBy.body.map((m: any) => m.iid), [mr.iid]);
    assert.deepEqual((await call(t.app, 'GET', `${url}/issues/${i2.iid}/closed_by`, { token: roles.reporter.token })).body, []);
    // A Guest reads the issue but not the merge requests of a private project.
    assert.deepEqual((await call(t.app, 'GET', `${url}/issues/${i1.iid}/closed_by`, { token: roles.guest.token })).body, []);
    // Editing the description rewrites the links.
    await call(t.app, 'PUT', `${url}/merge_requests/${mr.iid}`, { token: roles.developer.token, body: { description: 'nothing' } });
    assert.deepEqual((await call(t.app, 'GET', `${url}/issues/${i1.iid}/closed_by`, { token: roles.reporter.token })).body, []);
    assert.equal((await call(t.app, 'GET', `${url}/issues/${i1.iid}`, { token: roles.reporter.token })).body.merge_requests_count, 0);
  });
});

describe('merge requests: a push to the source branch', () => {
  test('moves sha and the head ref, adds a version and the "added N commits" note by the pusher', async () => {
    await commitFiles(t.app, project, 'pushed', { 'p.txt': '1\n' }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'pushed', target_branch: 'main' });
    // The commits API moves the branch as a push does (afterRefsChanged).
    const c1 = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: roles.developer.token, body: { branch: 'pushed', commit_message: 'Second <b>', actions: [{ action: 'create', file_path: 'q.txt', content: 'q\n' }] },
    });
    assert.equal(c1.status, 201, JSON.stringify(c1.body));
    const c2 = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: roles.developer.token, body: { branch: 'pushed', commit_message: 'Third', actions: [{ action: 'create', file_path: 'r.txt', content: 'r\n' }] },
    });
    const got = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}`, { token: roles.reporter.token });
    assert.equal(got.body.sha, c2.body.id);
    assert.equal(got.body.diff_refs.head_sha, c2.body.id);
    assert.equal(got.body.changes_count, '3');
    assert.equal(await repoFor(t.app.config, project).revParse(`refs/merge-requests/${mr.iid}/head`), c2.body.id);
    const versions = await t.app.db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
    assert.deepEqual(versions.map((v) => v.head_commit_sha), [mr.sha, c1.body.id, c2.body.id]);
    const notes = (await notesOf(mr.id)).filter((n) => n.system);
    assert.equal(notes.length, 2);
    assert.equal(notes[0].body, `added 1 commit\n\n<ul><li>${c1.body.short_id} - Second &lt;b&gt;</li></ul>\n\n`
      + `[Compare with previous version](/${project.full_path}/-/merge_requests/${mr.iid}/diffs?diff_id=${versions[1].id}&start_sha=${mr.sha})`);
    assert.match(notes[1].body, /^added 1 commit\n\n<ul><li>[0-9a-f]{8} - Third<\/li><\/ul>/);
    const commits = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/commits`, { token: roles.reporter.token });
    assert.deepEqual(commits.body.map((c: any) => c.title), ['Third', 'Second <b>', 'Change p.txt']);
  });
});
