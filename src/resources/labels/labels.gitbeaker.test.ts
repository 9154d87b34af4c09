import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, makeGroup, makeIssue, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest driving project and group labels: create, list with counts, show, edit, subscribe, promote, remove.

let t: TestApp;
let base: string;
before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives ProjectLabels and GroupLabels', async () => {
  const owner = await quickUser(t.app);
  const group = await makeGroup(t.app, { visibility: 0 });
  const p = await makeProject(t.app, { namespace: group, visibility: 0 });
  await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, Role.owner);
  const api = new Gitlab({ host: base, token: owner.token });
  const bug = await api.ProjectLabels.create(p.id, 'bug', 'red', { description: 'Broken', priority: 2 });
  assert.deepEqual([bug.name, bug.color, bug.description, bug.priority, bug.is_project_label], ['bug', '#FF0000', 'Broken', 2, true]);
  const ui = await api.GroupLabels.create(group.id, 'ui', '#00ff00');
  assert.deepEqual([ui.name, ui.color, 'is_project_label' in ui], ['ui', '#00ff00', false]);
  await makeIssue(t.app, p, { labels: [bug.id, ui.id] });
  const listed = await api.ProjectLabels.all(p.id, { withCounts: true, includeAncestorGroups: true });
  assert.deepEqual(listed.map((l: any) => [l.name, l.open_issues_count]), [['bug', 1], ['ui', 1]]);
  const searched = await api.ProjectLabels.all(p.id, { search: 'bu' });
  assert.deepEqual(searched.map((l: any) => l.name), ['bug']);
  const edited = await api.ProjectLabels.edit(p.id, bug.id, { newName: 'defect', description: 'Still broken' } as any);
  assert.deepEqual([edited.name, edited.description], ['defect', 'Still broken']);
  assert.equal((await api.ProjectLabels.show(p.id, 'defect')).id, bug.id);
  const sub = await api.ProjectLabels.subscribe(p.id, bug.id);
  assert.equal(sub.subscribed, true);
  assert.equal((await api.ProjectLabels.unsubscribe(p.id, bug.id)).subscribed, false);
  const promoted = await api.ProjectLabels.promote(p.id, bug.id);
  assert.deepEqual([promoted.name, (promoted as any).is_project_label ?? null], ['defect', null]);
  assert.deepEqual((await api.GroupLabels.all(group.id)).map((l: any) => l.name), ['defect', 'ui']);
  await api.GroupLabels.remove(group.id, ui.id);
  await assert.rejects(api.GroupLabels.show(group.id, ui.id), (e: any) => e?.cause?.response?.status === 404);
  const issue = await api.Issues.show(1, { projectId: p.id });
  assert.deepEqual(issue.labels, ['defect']);
});
