import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import type { TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, makeIssue, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest driving issue notes, discussions and award emoji on notes.

let t: TestApp;
let base: string;
before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives IssueNotes, IssueDiscussions and IssueNoteAwardEmojis', async () => {
  const dev = await quickUser(t.app);
  const p = await makeProject(t.app, { visibility: 0 });
  await addMember(t.app, { type: 'Project', id: p.id }, dev.user.id, Role.developer);
  const issue = await makeIssue(t.app, p, {});
  const api = new Gitlab({ host: base, token: dev.token });
  const n = await api.IssueNotes.create(p.id, issue.iid, 'from gitbeaker');
  assert.deepEqual([n.body, n.noteable_type, n.system, n.author.id], ['from gitbeaker', 'Issue', false, dev.user.id]);
  const edited = await api.IssueNotes.edit(p.id, issue.iid, n.id, { body: 'edited in gitbeaker' } as any);
  assert.equal(edited.body, 'edited in gitbeaker');
  assert.equal((await api.IssueNotes.show(p.id, issue.iid, n.id)).body, 'edited in gitbeaker');
  const award = await api.IssueNoteAwardEmojis.award(p.id, issue.iid, n.id, 'tada');
  assert.deepEqual([award.name, award.awardable_type, award.awardable_id], ['tada', 'Note', n.id]);
  assert.deepEqual((await api.IssueNoteAwardEmojis.all(p.id, issue.iid, n.id)).map((a: any) => a.name), ['tada']);
  assert.equal((await api.IssueNoteAwardEmojis.show(p.id, issue.iid, n.id, award.id)).id, award.id);
  await api.IssueNoteAwardEmojis.remove(p.id, issue.iid, n.id, award.id);
  assert.deepEqual(await api.IssueNoteAwardEmojis.all(p.id, issue.iid, n.id), []);

  const d = await api.IssueDiscussions.create(p.id, issue.iid, 'a thread');
  assert.equal(d.individual_note, false);
  const reply = await api.IssueDiscussions.addNote(p.id, issue.iid, d.id, 'a reply');
  assert.equal(reply.body, 'a reply');
  const shown = await api.IssueDiscussions.show(p.id, issue.iid, d.id);
  assert.deepEqual(shown.notes!.map((x: any) => x.body), ['a thread', 'a reply']);
  const changed = await api.IssueDiscussions.editNote(p.id, issue.iid, d.id, reply.id, { body: 'a better reply' } as any);
  assert.equal(changed.body, 'a better reply');
  const discussions = await api.IssueDiscussions.all(p.id, issue.iid);
  assert.deepEqual(discussions.map((x: any) => x.notes.length), [1, 2]);
  await api.IssueDiscussions.removeNote(p.id, issue.iid, d.id, reply.id);
  await api.IssueNotes.remove(p.id, issue.iid, n.id);
  const left = await api.IssueNotes.all(p.id, issue.iid, { sort: 'asc' } as any);
  assert.deepEqual(left.map((x: any) => x.body), ['a thread']);
});
