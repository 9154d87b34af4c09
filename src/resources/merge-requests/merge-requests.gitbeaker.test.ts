import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, commitFiles, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';
import { repoFor } from '../repository/repository.common.ts';

// @gitbeaker/rest driving merge requests: create, list with pagination, show, edit, notes, approvals, commits,
// participants, time tracking and remove; and the whole review flow: diffs and changes, a thread on a diff line,
// approval and the merge, checked with git.

let t: TestApp;
let base: string;
const baseUrl = () => base;

before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives merge requests', async () => {
  const owner = await quickUser(t.app);
  const dev = await quickUser(t.app);
  const p = await makeProject(t.app, { visibility: 0, repository: true });
  await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
  await addMember(t.app, { type: 'Project', id: p.id }, dev.user.id, Role.developer);
  await commitFiles(t.app, p, 'main', { 'README.md': 'hi\n' });
  for (const b of ['a', 'b', 'c']) await commitFiles(t.app, p, b, { [`${b}.txt`]: `${b}\n` }, { from: 'main', message: `Add ${b}` });
  const api = new Gitlab({ host: base, token: owner.token });
  const created = await api.MergeRequests.create(p.id, 'a', 'main', 'From gitbeaker', { labels: 'bug', reviewerIds: [dev.user.id] } as any);
  assert.equal(created.iid, 1);
  assert.deepEqual(created.labels, ['bug']);
  assert.deepEqual((created.reviewers as any[]).map((u) => u.id), [dev.user.id]);
  await api.MergeRequests.create(p.id, 'b', 'main', 'Second');
  await api.MergeRequests.create(p.id, 'c', 'main', 'Third');
  const all = await api.MergeRequests.all({ projectId: p.id, perPage: 2, maxPages: 10, orderBy: 'created_at', sort: 'asc' } as any);
  assert.deepEqual(all.map((m: any) => m.iid), [1, 2, 3]);
  const edited = await api.MergeRequests.edit(p.id, 1, { title: 'Draft: From gitbeaker', addLabels: 'ui' } as any);
  assert.equal(edited.draft, true);
  assert.deepEqual(edited.labels, ['bug', 'ui']);
  const shown = await api.MergeRequests.show(p.id, 1);
  assert.equal(shown.title, 'Draft: From gitbeaker');
  assert.equal((shown.diff_refs as any).head_sha, shown.sha);
  const note = await api.MergeRequestNotes.create(p.id, 1, 'from gitbeaker');
  assert.equal(note.noteable_type, 'MergeRequest');
  const devApi = new Gitlab({ host: base, token: dev.token });
  const approved = await devApi.MergeRequestApprovals.approve(p.id, 1, { sha: shown.sha } as any);
  assert.equal((approved as any).approved, true);
  assert.deepEqual((await api.MergeRequests.allCommits(p.id, 1)).map((c: any) => c.title), ['Add a']);
  // The reviewer takes part too.
  assert.deepEqual((await api.MergeRequests.allParticipants(p.id, 1)).map((u: any) => u.id), [owner.user.id, dev.user.id]);
  await api.MergeRequests.setTimeEstimate(p.id, 1, '1h');
  assert.equal((await api.MergeRequests.showTimeStats(p.id, 1)).time_estimate, 3600);
  const closed = await api.MergeRequests.edit(p.id, 2, { stateEvent: 'close' } as any);
  assert.equal(closed.state, 'closed');
  await api.MergeRequests.remove(p.id, 3);
  await assert.rejects(api.MergeRequests.show(p.id, 3), (e: any) => e?.cause?.response?.status === 404);
  const open = await api.MergeRequests.all({ projectId: p.id, state: 'opened' } as any);
  assert.deepEqual(open.map((m: any) => m.iid), [1]);
});

test('@gitbeaker/rest drives a review to the merge: diffs, changes, a diff thread, approval, merge', async () => {
  const owner = await quickUser(t.app);
  const dev = await quickUser(t.app);
  const p = await makeProject(t.app, { visibility: 0, repository: true });
  await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
  await addMember(t.app, { type: 'Project', id: p.id }, dev.user.id, Role.developer);
  const base = await commitFiles(t.app, p, 'main', { 'README.md': 'one\ntwo\nthree\n' });
  const head = await commitFiles(t.app, p, 'feature', { 'README.md': 'one\nTWO\nthree\n', 'new.txt': 'new\n' }, { from: 'main', message: 'Shout two' });
  const api = new Gitlab({ host: baseUrl(), token: owner.token });
  const devApi = new Gitlab({ host: baseUrl(), token: dev.token });

  const created = await api.MergeRequests.create(p.id, 'feature', 'main', 'Shout two', { description: 'Louder', removeSourceBranch: true } as any);
  assert.deepEqual([created.iid, created.state, created.sha, (created as any).detailed_merge_status === 'not_approved'], [1, 'opened', head, false]);
  const listed = await devApi.MergeRequests.all({ projectId: p.id, state: 'opened' } as any);
  assert.deepEqual(listed.map((m: any) => [m.iid, m.source_branch, m.target_branch]), [[1, 'feature', 'main']]);
  const shown = await devApi.MergeRequests.show(p.id, 1);
  assert.deepEqual(shown.diff_refs, { base_sha: base, head_sha: head, start_sha: base });
  assert.deepEqual([shown.merge_status, shown.detailed_merge_status, shown.has_conflicts], ['can_be_merged', 'mergeable', false]);

  const diffs = await devApi.MergeRequests.allDiffs(p.id, 1);
  assert.deepEqual(diffs.map((d: any) => [d.old_path, d.new_path, d.new_file, d.deleted_file]), [['README.md', 'README.md', false, false], ['new.txt', 'new.txt', true, false]]);
  assert.equal((diffs[0] as any).diff, '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');
  const changes = await devApi.MergeRequests.showChanges(p.id, 1);
  assert.deepEqual((changes as any).changes.map((c: any) => c.new_path), ['README.md', 'new.txt']);
  assert.equal((changes as any).changes_count, '2');

  // A thread on the added line 2 (gitbeaker sends the position as form fields).
  const position = { positionType: 'text', baseSha: base, startSha: base, headSha: head, oldPath: 'README.md', newPath: 'README.md', newLine: 2 };
  const thread = await devApi.MergeRequestDiscussions.create(p.id, 1, 'Why so loud?', { position } as any);
  const note = (thread as any).notes[0];
  assert.deepEqual([note.type, note.body, note.position.new_line, note.position.old_line, note.resolvable, note.resolved], ['DiffNote', 'Why so loud?', 2, null, true, false]);
  const threads = await api.MergeRequestDiscussions.all(p.id, 1);
  assert.deepEqual(threads.filter((d: any) => !d.individual_note).map((d: any) => d.id), [(thread as any).id]);
  const resolved = await api.MergeRequestDiscussions.resolve(p.id, 1, (thread as any).id, true);
  assert.deepEqual([(resolved as any).notes[0].resolved, (resolved as any).notes[0].resolved_by.id], [true, owner.user.id]);

  // The author may not approve their own; the Developer does, at the head.
  await assert.rejects(api.MergeRequestApprovals.approve(p.id, 1), (e: any) => e?.cause?.response?.status === 403);
  const approved = await devApi.MergeRequestApprovals.approve(p.id, 1, { sha: head } as any);
  assert.deepEqual([(approved as any).approved, (approved as any).approved_by.map((a: any) => a.user.id)], [true, [dev.user.id]]);

  const merged = await api.MergeRequests.accept(p.id, 1, { sha: head, shouldRemoveSourceBranch: true } as any);
  assert.deepEqual([merged.state, (merged as any).merged_by.id, (merged as any).detailed_merge_status], ['merged', owner.user.id, 'not_open']);
  // git: main is a merge commit of the old main and the branch's head; the source branch is gone.
  const repo = repoFor(t.app.config, p);
  const main = (await repo.git(['rev-list', '--parents', '-n', '1', 'main'])).stdout.toString().trim().split(' ');
  assert.deepEqual(main, [merged.merge_commit_sha, base, head]);
  assert.equal((await repo.git(['show', 'main:README.md'])).stdout.toString(), 'one\nTWO\nthree\n');
  assert.equal(await repo.resolveCommit('refs/heads/feature'), null);
  const done = await devApi.MergeRequests.all({ projectId: p.id, state: 'merged' } as any);
  assert.deepEqual(done.map((m: any) => m.iid), [1]);
});
