import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest driving issues: create, list with pagination, show, edit, close, time tracking, award emoji,
// participants, move and remove.

let t: TestApp;
let base: string;

before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives issues', async () => {
  const owner = await quickUser(t.app);
  const admin = await quickUser(t.app, { admin: true });
  const p = await makeProject(t.app, { visibility: 0 });
  const target = await makeProject(t.app, { visibility: 0 });
  await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
  await addMember(t.app, { type: 'Project', id: target.id }, owner.user.id, Role.maintainer);
  const api = new Gitlab({ host: base, token: owner.token });
  const created = await api.Issues.create(p.id, 'From gitbeaker', { labels: 'bug', description: '- [ ] task' } as any);
  assert.equal(created.iid, 1);
  assert.deepEqual(created.labels, ['bug']);
  for (let i = 0; i < 4; i++) await api.Issues.create(p.id, `extra ${i}`);
  const all = await api.Issues.all({ projectId: p.id, perPage: 2, maxPages: 10, orderBy: 'created_at', sort: 'asc' } as any);
  assert.deepEqual(all.map((i: any) => i.iid), [1, 2, 3, 4, 5]);
  const edited = await api.Issues.edit(p.id, 1, { stateEvent: 'close', addLabels: 'ui' } as any);
  assert.equal(edited.state, 'closed');
  assert.deepEqual(edited.labels, ['bug', 'ui']);
  const shown = await api.Issues.show(1, { projectId: p.id });
  assert.equal(shown.state, 'closed');
  const byId = await new Gitlab({ host: base, token: admin.token }).Issues.show(created.id);
  assert.equal(byId.iid, 1);
  await api.Issues.addTimeEstimate(p.id, 1, '2h');
  const spent = await api.Issues.addSpentTime(p.id, 1, '30m');
  assert.equal(spent.total_time_spent, 1800);
  assert.deepEqual(await api.Issues.showTimeStats(p.id, 1), { time_estimate: 7200, total_time_spent: 1800, human_time_estimate: '2h', human_total_time_spent: '30m' });
  const award = await api.IssueAwardEmojis.award(p.id, 1, 'rocket');
  assert.deepEqual((await api.IssueAwardEmojis.all(p.id, 1)).map((a: any) => a.name), ['rocket']);
  await api.IssueAwardEmojis.remove(p.id, 1, award.id);
  assert.deepEqual((await api.Issues.allParticipants(p.id, 1)).map((u: any) => u.id), [owner.user.id]);
  const moved = await api.Issues.move(p.id, 2, target.id);
  assert.equal(moved.project_id, target.id);
  await api.Issues.remove(p.id, 3);
  await assert.rejects(api.Issues.show(3, { projectId: p.id }), (e: any) => e?.cause?.response?.status === 404);
  const left = await api.Issues.all({ projectId: p.id, state: 'opened' } as any);
  assert.deepEqual(left.map((i: any) => i.iid), [5, 4]);
});
