import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, makeGroup, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest driving project and group milestones: create, list, show, edit and close, their issues, promote, remove.

let t: TestApp;
let base: string;
before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives ProjectMilestones and GroupMilestones', async () => {
  const owner = await quickUser(t.app);
  const group = await makeGroup(t.app, { visibility: 0 });
  const p = await makeProject(t.app, { namespace: group, visibility: 0 });
  await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, Role.owner);
  const api = new Gitlab({ host: base, token: owner.token });
  const m = await api.ProjectMilestones.create(p.id, 'v1.0', { description: 'first', startDate: '2026-06-01', dueDate: '2026-06-30' } as any);
  assert.deepEqual([m.iid, m.title, m.state, m.start_date, m.due_date, m.expired], [1, 'v1.0', 'active', '2026-06-01', '2026-06-30', false]);
  const later = await api.ProjectMilestones.create(p.id, 'v2.0');
  const issue = await api.Issues.create(p.id, 'for v1', { milestoneId: m.id } as any);
  assert.equal(issue.milestone?.id, m.id);
  assert.deepEqual((await api.ProjectMilestones.all(p.id)).map((x: any) => x.title), ['v1.0', 'v2.0']);
  assert.deepEqual((await api.ProjectMilestones.all(p.id, { title: 'v2.0' } as any)).map((x: any) => x.id), [later.id]);
  assert.equal((await api.ProjectMilestones.show(p.id, m.id)).description, 'first');
  const closed = await api.ProjectMilestones.edit(p.id, later.id, { stateEvent: 'close' } as any);
  assert.equal(closed.state, 'closed');
  assert.deepEqual((await api.ProjectMilestones.all(p.id, { state: 'active' } as any)).map((x: any) => x.title), ['v1.0']);
  assert.deepEqual((await api.ProjectMilestones.allAssignedIssues(p.id, m.id)).map((i: any) => i.title), ['for v1']);
  await api.ProjectMilestones.promote(p.id, m.id);
  const [gm] = await api.GroupMilestones.all(group.id);
  assert.deepEqual([gm.title, gm.group_id, gm.description], ['v1.0', group.id, 'first']);
  assert.deepEqual((await api.GroupMilestones.allAssignedIssues(group.id, gm.id)).map((i: any) => i.iid), [issue.iid]);
  assert.equal((await api.Issues.show(issue.iid, { projectId: p.id })).milestone?.id, gm.id);
  const groupOwn = await api.GroupMilestones.create(group.id, 'Q3');
  assert.equal(groupOwn.iid, 2);
  await api.ProjectMilestones.remove(p.id, later.id);
  await assert.rejects(api.ProjectMilestones.show(p.id, later.id), (e: any) => e?.cause?.response?.status === 404);
  await api.GroupMilestones.remove(group.id, groupOwn.id);
  assert.deepEqual((await api.GroupMilestones.all(group.id)).map((x: any) => x.title), ['v1.0']);
});
