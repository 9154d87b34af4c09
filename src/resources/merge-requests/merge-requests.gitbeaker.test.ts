import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, commitFiles, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest driving merge requests: create, list with pagination, show, edit, notes, approvals, commits,
// participants, time tracking and remove.

let t: TestApp;
let base: string;

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
