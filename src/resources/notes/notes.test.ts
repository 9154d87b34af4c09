import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { addMember, castRoles, makeGroup, makeIssue, makeProject, quickUser, Role, type RoleCast } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { sentence } from './system-notes.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const NOTE_FIELDS = ['id', 'type', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type',
  'project_id', 'resolvable', 'confidential', 'internal', 'noteable_iid', 'commands_changes'];

const notesOf = async (issueId: number) => t.app.db.selectFrom('notes').selectAll().where('noteable_type', '=', 'Issue').where('noteable_id', '=', issueId).orderBy('id').execute();

describe('notes: the entity, order, filters, edits', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let issue: { id: number; iid: number };
  const url = () => `/projects/${p.id}/issues/${issue.iid}/notes`;
  before(async () => {
    p = await makeProject(t.app, { visibility: 0 });
    roles = await castRoles(t.app, p);
    issue = await makeIssue(t.app, p, { authorId: roles.developer!.user.id });
  });

  test('a comment answers 201 with the reference entity and moves the issue', async () => {
    const r = await call(t.app, 'POST', url(), { token: roles.developer!.token, body: { body: 'First!' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), NOTE_FIELDS);
    assert.deepEqual({ ...r.body, id: 0, author: r.body.author.username, created_at: 0, updated_at: 0 }, {
      id: 0, type: null, body: 'First!', attachment: null, author: roles.developer!.user.username, created_at: 0, updated_at: 0, system: false,
      noteable_id: issue.id, noteable_type: 'Issue', project_id: p.id, resolvable: false, confidential: false, internal: false,
      noteable_iid: issue.iid, commands_changes: {},
    });
    const row = await t.app.db.selectFrom('issues').select('updated_at').where('id', '=', issue.id).executeTakeFirstOrThrow();
    assert.equal(row.updated_at, t.clock.now());
    const one = await call(t.app, 'GET', `${url()}/${r.body.id}`, { token: roles.guest!.token });
    assert.deepEqual(one.body, r.body);
  });

  test('newest first by default; sort, order_by and activity_filter', async () => {
    const second = await call(t.app, 'POST', url(), { token: roles.reporter!.token, body: { body: 'Second' } });
    (t.clock as any).advance(1000);
    await call(t.app, 'PUT', `/projects/${p.id}/issues/${issue.iid}`, { token: roles.reporter!.token, body: { state_event: 'close' } });
    (t.clock as any).advance(1000);
    await call(t.app, 'PUT', `${url()}/${second.body.id}`, { token: roles.reporter!.token, body: { body: 'Second, edited' } });
    const bodies = async (q: string) => (await call(t.app, 'GET', `${url()}${q}`, { token: roles.guest!.token })).body.map((n: any) => n.body);
    assert.deepEqual(await bodies(''), ['closed', 'Second, edited', 'First!']);
    assert.deepEqual(await bodies('?sort=asc'), ['First!', 'Second, edited', 'closed']);
    assert.deepEqual(await bodies('?order_by=updated_at'), ['Second, edited', 'closed', 'First!']);
    assert.deepEqual(await bodies('?activity_filter=only_comments'), ['Second, edited', 'First!']);
    assert.deepEqual(await bodies('?activity_filter=only_activity'), ['closed']);
    const bad = await call(t.app, 'GET', `${url()}?sort=sideways`, { token: roles.guest!.token });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'sort does not have a valid value' }]);
    const page = await call(t.app, 'GET', `${url()}?per_page=2`, { token: roles.guest!.token });
    assert.deepEqual([page.body.length, page.headers['x-total'], page.headers['x-next-page']], [2, '3', '2']);
  });

  test('bodies: missing, blank and too long are refused and change nothing', async () => {
    const before = (await notesOf(issue.id)).length;
    let r = await call(t.app, 'POST', url(), { token: roles.developer!.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "body" not given' }]);
    r = await call(t.app, 'POST', url(), { token: roles.developer!.token, body: { body: '   ' } });
    assert.deepEqual([r.status, r.body], [400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` }]);
    r = await call(t.app, 'POST', url(), { token: roles.developer!.token, body: { body: 'x'.repeat(1_000_001) } });
    assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - Note {:note=>["is too long (maximum is 1000000 characters)"]}' }]);
    const mine = (await notesOf(issue.id)).find((n) => n.body === 'First!')!;
    r = await call(t.app, 'PUT', `${url()}/${mine.id}`, { token: roles.developer!.token, body: { body: '' } });
    assert.deepEqual([r.status, r.body], [400, { error: 'body is empty' }]);
    assert.equal((await notesOf(issue.id)).length, before);
  });

  test('edit and delete: the author or a Maintainer; a system note by nobody', async () => {
    const mine = (await notesOf(issue.id)).find((n) => n.body === 'First!')!;
    const system = (await notesOf(issue.id)).find((n) => n.system)!;
    const expect: Record<string, number> = { guest: 403, reporter: 403, developer: 200, maintainer: 200, owner: 200, admin: 200, nonMember: 404, anonymous: 401 };
    for (const [who, status] of Object.entries(expect)) {
      const u = (roles as any)[who];
      const r = await call(t.app, 'PUT', `${url()}/${mine.id}`, { token: u?.token, body: { body: `by ${who}` } });
      assert.equal(r.status, status, who);
    }
    assert.equal((await notesOf(issue.id)).find((n) => n.id === mine.id)!.body, 'by admin');
    for (const who of ['developer', 'maintainer', 'admin'] as const) {
      const r = await call(t.app, 'PUT', `${url()}/${system.id}`, { token: roles[who]!.token, body: { body: 'rewritten' } });
      assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }], who);
    }
    let r = await call(t.app, 'DELETE', `${url()}/${mine.id}`, { token: roles.reporter!.token });
    assert.equal(r.status, 403);
    r = await call(t.app, 'DELETE', `${url()}/${mine.id}`, { token: roles.developer!.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'GET', `${url()}/${mine.id}`, { token: roles.developer!.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Note Not Found' }]);
  });

  test('a note of another issue is not found through this one', async () => {
    const other = await makeIssue(t.app, p, {});
    const n = await call(t.app, 'POST', `/projects/${p.id}/issues/${other.iid}/notes`, { token: roles.developer!.token, body: { body: 'elsewhere' } });
    const r = await call(t.app, 'GET', `${url()}/${n.body.id}`, { token: roles.developer!.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Note Not Found' }]);
  });
});

describe('notes: who may comment', () => {
  for (const visibility of [0, 20]) {
    test(`${visibility ? 'public' : 'private'} project: comment by role`, async () => {
      const p = await makeProject(t.app, { visibility });
      const roles = await castRoles(t.app, p);
      const issue = await makeIssue(t.app, p, {});
      const expect: Record<string, number> = visibility
        ? { anonymous: 401, nonMember: 201, guest: 201, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 }
        : { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 };
      for (const [who, status] of Object.entries(expect)) {
        const r = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: (roles as any)[who]?.token, body: { body: who } });
        assert.equal(r.status, status, who);
        if (status === 404) assert.deepEqual(r.body, { message: '404 Project Not Found' });
      }
      const list = await call(t.app, 'GET', `/projects/${p.id}/issues/${issue.iid}/notes`, {});
      assert.equal(list.status, visibility ? 200 : 404);
    });
  }

  test('a confidential issue hides its notes exactly as the issue', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, { confidential: true, authorId: roles.reporter!.user.id });
    await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.reporter!.token, body: { body: 'secret' } });
    for (const who of ['anonymous', 'nonMember', 'guest'] as const) {
      for (const path of ['notes', 'discussions']) {
        const r = await call(t.app, 'GET', `/projects/${p.id}/issues/${issue.iid}/${path}`, { token: roles[who]?.token });
        assert.deepEqual([r.status, r.body], [404, { message: '404 Issue Not Found' }], `${who} ${path}`);
      }
      const w = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles[who]?.token, body: { body: 'peek' } });
      assert.equal(w.status, who === 'anonymous' ? 401 : 404, who);
    }
    const r = await call(t.app, 'GET', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.reporter!.token });
    assert.deepEqual(r.body.map((n: any) => n.body), ['secret']);
  });

  test('internal notes: Reporters and up write and read them; others never see them, nor their count', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, {});
    const url = `/projects/${p.id}/issues/${issue.iid}/notes`;
    let r = await call(t.app, 'POST', url, { token: roles.guest!.token, body: { body: 'hush', internal: true } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'POST', url, { token: roles.reporter!.token, body: { body: 'hush', internal: true } });
    assert.deepEqual([r.status, r.body.internal, r.body.confidential], [201, true, true]);
    r = await call(t.app, 'POST', url, { token: roles.reporter!.token, body: { body: 'also hush', confidential: 'true' } });
    assert.equal(r.body.internal, true);
    await call(t.app, 'POST', url, { token: roles.guest!.token, body: { body: 'open' } });
    const seen = async (u: any) => (await call(t.app, 'GET', url, { token: u?.token })).body.map((n: any) => n.body).sort();
    assert.deepEqual(await seen(roles.guest), ['open']);
    assert.deepEqual(await seen(roles.nonMember), ['open']);
    assert.deepEqual(await seen(roles.reporter), ['also hush', 'hush', 'open']);
    const hidden = await call(t.app, 'GET', `${url}/${(await notesOf(issue.id))[0].id}`, { token: roles.guest!.token });
    assert.deepEqual([hidden.status, hidden.body], [404, { message: '404 Note Not Found' }]);
  });

  test('a locked discussion takes comments from project members only', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, {});
    const r0 = await call(t.app, 'PUT', `/projects/${p.id}/issues/${issue.iid}`, { token: roles.reporter!.token, body: { discussion_locked: true } });
    assert.equal(r0.status, 200);
    const url = `/projects/${p.id}/issues/${issue.iid}/notes`;
    let r = await call(t.app, 'POST', url, { token: roles.nonMember!.token, body: { body: 'me too' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/discussions`, { token: roles.nonMember!.token, body: { body: 'me too' } });
    assert.equal(r.status, 403);
    r = await call(t.app, 'POST', url, { token: roles.guest!.token, body: { body: 'member' } });
    assert.equal(r.status, 201);
    assert.deepEqual((await call(t.app, 'GET', url, { token: roles.guest!.token })).body.map((n: any) => n.body), ['member', 'locked this issue']);
  });

  test('an archived project takes no comments', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const owner = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, owner.user.id, Role.owner);
    const issue = await makeIssue(t.app, p, {});
    await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', p.id).execute();
    t.app.caches.voidAll();
    const r = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: owner.token, body: { body: 'late' } });
    assert.equal(r.status, 403);
    assert.equal((await notesOf(issue.id)).length, 0);
  });
});

describe('discussions', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let issue: { id: number; iid: number };
  const base = () => `/projects/${p.id}/issues/${issue.iid}/discussions`;
  before(async () => {
    p = await makeProject(t.app, { visibility: 0 });
    roles = await castRoles(t.app, p);
    issue = await makeIssue(t.app, p, {});
  });

  test('a thread, replies, an individual note turned into a thread; listed in the order they began', async () => {
    const single = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.guest!.token, body: { body: 'lone' } });
    const thread = await call(t.app, 'POST', base(), { token: roles.developer!.token, body: { body: 'Shall we?' } });
    assert.equal(thread.status, 201);
    assert.deepEqual(Object.keys(thread.body), ['id', 'individual_note', 'notes']);
    assert.match(thread.body.id, /^[0-9a-f]{40}$/);
    assert.equal(thread.body.individual_note, false);
    assert.deepEqual(thread.body.notes.map((n: any) => [n.type, n.body]), [['DiscussionNote', 'Shall we?']]);
    const reply = await call(t.app, 'POST', `${base()}/${thread.body.id}/notes`, { token: roles.reporter!.token, body: { body: 'Yes' } });
    assert.deepEqual([reply.status, reply.body.type, reply.body.body], [201, 'DiscussionNote', 'Yes']);
    const lone = (await notesOf(issue.id)).find((n) => n.id === single.body.id)!;
    const onLone = await call(t.app, 'POST', `${base()}/${lone.discussion_id}/notes`, { token: roles.reporter!.token, body: { body: 'About that' } });
    assert.equal(onLone.status, 201);
    const list = await call(t.app, 'GET', base(), { token: roles.guest!.token });
    assert.deepEqual(list.body.map((d: any) => [d.individual_note, d.notes.map((n: any) => `${n.type}:${n.body}`)]), [
      [false, ['DiscussionNote:lone', 'DiscussionNote:About that']],
      [false, ['DiscussionNote:Shall we?', 'DiscussionNote:Yes']],
    ]);
    const one = await call(t.app, 'GET', `${base()}/${thread.body.id}`, { token: roles.guest!.token });
    assert.deepEqual(one.body, list.body[1]);
    const notes = await call(t.app, 'GET', `${base()}/${thread.body.id}/notes`, { token: roles.guest!.token });
    assert.deepEqual(notes.body, list.body[1].notes);
    const page = await call(t.app, 'GET', `${base()}?per_page=1&page=2`, { token: roles.guest!.token });
    assert.deepEqual([page.body.length, page.body[0].id, page.headers['x-total']], [1, thread.body.id, '2']);
  });

  test('edit and delete within a thread; unknown discussions and bad parameters', async () => {
    const thread = await call(t.app, 'POST', base(), { token: roles.developer!.token, body: { body: 'v1' } });
    const noteId = thread.body.notes[0].id;
    let r = await call(t.app, 'PUT', `${base()}/${thread.body.id}/notes/${noteId}`, { token: roles.developer!.token, body: { body: 'v2' } });
    assert.deepEqual([r.status, r.body.body], [200, 'v2']);
    r = await call(t.app, 'PUT', `${base()}/${thread.body.id}/notes/${noteId}`, { token: roles.developer!.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { error: 'body, resolved are missing, exactly one parameter must be provided' }]);
    r = await call(t.app, 'PUT', `${base()}/${thread.body.id}/notes/${noteId}`, { token: roles.developer!.token, body: { resolved: true } });
    assert.deepEqual([r.status, r.body], [400, { message: '400 Bad request - Note is not resolvable' }]);
    r = await call(t.app, 'GET', `${base()}/${'0'.repeat(40)}`, { token: roles.developer!.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Discussion Not Found' }]);
    r = await call(t.app, 'GET', `${base()}/not-an-id/notes`, { token: roles.developer!.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Notes Not Found' }]);
    r = await call(t.app, 'POST', `${base()}/${'0'.repeat(40)}/notes`, { token: roles.developer!.token, body: { body: 'x' } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Discussion Not Found' }]);
    r = await call(t.app, 'DELETE', `${base()}/${thread.body.id}/notes/${noteId}`, { token: roles.developer!.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'GET', `${base()}/${thread.body.id}`, { token: roles.developer!.token });
    assert.equal(r.status, 404);
  });
});

describe('system notes', () => {
  test('sentences join as Rails joins them', () => {
    assert.equal(sentence(['@a']), '@a');
    assert.equal(sentence(['@a', '@b']), '@a and @b');
    assert.equal(sentence(['@a', '@b', '@c']), '@a, @b, and @c');
  });

  test('an issue edit writes the reference\'s system notes, which never count as user notes; a new issue gets none', async () => {
    const p = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, p);
    const created = await call(t.app, 'POST', `/projects/${p.id}/issues`, { token: roles.reporter!.token, body: { title: 'Old title', labels: 'a' } });
    assert.equal(created.status, 201);
    const iid = created.body.iid;
    assert.equal((await notesOf(created.body.id)).length, 0);
    const m = await call(t.app, 'POST', `/projects/${p.id}/milestones`, { token: roles.reporter!.token, body: { title: 'v1' } });
    const r = await call(t.app, 'PUT', `/projects/${p.id}/issues/${iid}`, {
      token: roles.reporter!.token,
      body: {
        title: 'New title', description: 'Now with words', add_labels: 'b,c', remove_labels: 'a', milestone_id: m.body.id,
        assignee_ids: [roles.developer!.user.id, roles.guest!.user.id], due_date: '2026-07-01', confidential: true, state_event: 'close',
      },
    });
    assert.equal(r.status, 200);
    const labels = await t.app.db.selectFrom('labels').select(['id', 'title']).where('project_id', '=', p.id).execute();
    const id = (title: string) => labels.find((l) => l.title === title)!.id;
    const notes = await notesOf(created.body.id);
    assert.deepEqual(notes.map((n) => [n.system, n.author_id, n.body]), [
      [1, roles.reporter!.user.id, 'changed title from **{-Old title-}** to **{+New title+}**'],
      [1, roles.reporter!.user.id, 'changed the description'],
      [1, roles.reporter!.user.id, `added ~${id('b')} ~${id('c')} labels and removed ~${id('a')} label`],
      [1, roles.reporter!.user.id, `changed milestone to %${m.body.iid}`],
      [1, roles.reporter!.user.id, `assigned to @${roles.developer!.user.username} and @${roles.guest!.user.username}`],
      [1, roles.reporter!.user.id, 'changed due date to July 1, 2026'],
      [1, roles.reporter!.user.id, 'made the issue confidential'],
      [1, roles.reporter!.user.id, 'closed'],
    ]);
    await call(t.app, 'PUT', `/projects/${p.id}/issues/${iid}`, { token: roles.reporter!.token, body: { assignee_ids: [roles.guest!.user.id], milestone_id: 0, due_date: '', state_event: 'reopen' } });
    assert.deepEqual((await notesOf(created.body.id)).slice(8).map((n) => n.body), [
      'removed milestone', `unassigned @${roles.developer!.user.username}`, 'removed due date', 'reopened',
    ]);
    await call(t.app, 'POST', `/projects/${p.id}/issues/${iid}/notes`, { token: roles.reporter!.token, body: { body: 'a real comment' } });
    const issue = await call(t.app, 'GET', `/projects/${p.id}/issues/${iid}`, { token: roles.reporter!.token });
    assert.equal(issue.body.user_notes_count, 1);
  });

  test('a failing note write rolls the issue change back', async () => {
    const p = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, { title: 'kept' });
    // The database refusing system notes stands for a failure inside the change's transaction.
    const pg = t.app.database.dialect === 'postgres';
    if (pg) {
      await sql`create function refuse_system_notes() returns trigger as $$ begin if new.system = 1 then raise exception 'refused'; end if; return new; end $$ language plpgsql`.execute(t.app.db);
      await sql`create trigger refuse_system_notes before insert on notes for each row execute function refuse_system_notes()`.execute(t.app.db);
    } else {
      await sql`create trigger refuse_system_notes before insert on notes when new.system = 1 begin select raise(abort, 'refused'); end`.execute(t.app.db);
    }
    try {
      const r = await call(t.app, 'PUT', `/projects/${p.id}/issues/${issue.iid}`, { token: roles.reporter!.token, body: { title: 'never' } });
      assert.equal(r.status, 500);
      const row = await t.app.db.selectFrom('issues').select('title').where('id', '=', issue.id).executeTakeFirstOrThrow();
      assert.equal(row.title, 'kept');
    } finally {
      await (pg ? sql`drop trigger refuse_system_notes on notes` : sql`drop trigger refuse_system_notes`).execute(t.app.db);
    }
  });
});

describe('python-gitlab: issue notes and discussions', () => {
  test('issue.notes and issue.discussions as its users call them', { skip: pythonSkip }, async () => {
    const url = await listening(t);
    const p = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, {});
    const out = await pythonGitlab(url, roles.developer!.token, `
p = gl.projects.get(${p.id})
i = p.issues.get(${issue.iid})
n = i.notes.create({"body": "from python"})
out["created"] = [n.body, n.noteable_type, n.system]
n.body = "edited in python"
n.save()
out["listed"] = [x.body for x in i.notes.list()]
d = i.discussions.create({"body": "a thread"})
d.notes.create({"body": "a reply"})
d = i.discussions.get(d.id)
out["thread"] = [x["body"] for x in d.attributes["notes"]]
out["discussions"] = len(i.discussions.list())
n.delete()
out["after_delete"] = [x.body for x in i.notes.list()]
`);
    assert.deepEqual(out, {
      created: ['from python', 'Issue', false],
      listed: ['edited in python'],
      thread: ['a thread', 'a reply'],
      discussions: 2,
      after_delete: ['a reply', 'a thread'],
    });
  });
});

describe('notes: moving an issue', () => {
  test('the notes, their discussions and award emoji go along; "moved from" and "moved to" as the reference writes them', async () => {
    const group = await makeGroup(t.app);
    const src = await makeProject(t.app, { namespace: group, visibility: 0 });
    const roles = await castRoles(t.app, src);
    const far = await makeProject(t.app, { visibility: 0 });
    const near = await makeProject(t.app, { namespace: group, visibility: 0 });
    for (const target of [far, near]) await addMember(t.app, { type: 'Project', id: target.id }, roles.maintainer!.user.id, Role.maintainer);
    const issue = await makeIssue(t.app, src, { authorId: roles.developer!.user.id });
    const base = `/projects/${src.id}/issues/${issue.iid}`;
    (t.clock as any).advance(1000);
    const single = (await call(t.app, 'POST', `${base}/notes`, { token: roles.developer!.token, body: { body: 'single' } })).body;
    await call(t.app, 'POST', `${base}/notes/${single.id}/award_emoji`, { token: roles.guest!.token, body: { name: 'heart' } });
    (t.clock as any).advance(1000);
    const thread = (await call(t.app, 'POST', `${base}/discussions`, { token: roles.reporter!.token, body: { body: 'thread start' } })).body;
    await call(t.app, 'POST', `${base}/discussions/${thread.id}/notes`, { token: roles.guest!.token, body: { body: 'thread reply' } });
    await call(t.app, 'POST', `${base}/notes`, { token: roles.reporter!.token, body: { body: 'internal', internal: true } });
    await call(t.app, 'PUT', base, { token: roles.reporter!.token, body: { title: 'Renamed' } });
    const before = await notesOf(issue.id);
    (t.clock as any).advance(1000);
    const r = await call(t.app, 'POST', `${base}/move`, { token: roles.maintainer!.token, body: { to_project_id: far.id } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.user_notes_count, 4);
    const copied = await notesOf(r.body.id);
    assert.deepEqual(copied.slice(0, before.length).map((n) => ({ ...n, id: 0, discussion_id: 0 })), before.map((n) => ({
      ...n, id: 0, discussion_id: 0, noteable_id: r.body.id, project_id: far.id,
    })));
    // Each discussion is one again, under a new id.
    const threadCopies = copied.filter((n) => n.body.startsWith('thread'));
    assert.equal(threadCopies[0].discussion_id, threadCopies[1].discussion_id);
    assert.notEqual(threadCopies[0].discussion_id, thread.id);
    assert.equal(new Set(copied.map((n) => n.discussion_id)).size, copied.length - 1);
    const singleCopy = copied.find((n) => n.body === 'single')!;
    const awards = await t.app.db.selectFrom('award_emoji').select(['name', 'user_id', 'awardable_type']).where('awardable_id', '=', singleCopy.id).where('awardable_type', '=', 'Note').execute();
    assert.deepEqual(awards, [{ name: 'heart', user_id: roles.guest!.user.id, awardable_type: 'Note' }]);
    const last = copied[copied.length - 1];
    assert.deepEqual([copied.length, last.body, last.system, last.author_id, last.created_at], [before.length + 1, `moved from ${src.full_path}#${issue.iid}`, 1, roles.maintainer!.user.id, t.clock.now()]);
    const old = await notesOf(issue.id);
    assert.deepEqual(old.slice(0, before.length), before);
    assert.deepEqual(old.slice(before.length).map((n) => [n.body, n.system]), [['closed', 1], [`moved to ${far.full_path}#${r.body.iid}`, 1]]);
    // The moved issue's notes read through the API, as on the original.
    const listed = await call(t.app, 'GET', `/projects/${far.id}/issues/${r.body.iid}/notes?sort=asc`, { token: roles.maintainer!.token });
    assert.deepEqual(listed.body.map((n: any) => n.body), copied.map((n) => n.body));

    // Within one namespace the reference is the project's path.
    const again = await call(t.app, 'POST', `/projects/${far.id}/issues/${r.body.iid}/move`, { token: roles.maintainer!.token, body: { to_project_id: near.id } });
    assert.equal(again.status, 201);
    assert.deepEqual((await notesOf(again.body.id)).at(-1)!.body, `moved from ${far.full_path}#${r.body.iid}`);
    const third = await makeIssue(t.app, near, {});
    const back = await call(t.app, 'POST', `/projects/${near.id}/issues/${third.iid}/move`, { token: roles.maintainer!.token, body: { to_project_id: src.id } });
    assert.equal(back.status, 201, JSON.stringify(back.body));
    assert.deepEqual((await notesOf(back.body.id)).map((n) => n.body), [`moved from ${near.path}#${third.iid}`]);
    assert.deepEqual((await notesOf(third.id)).map((n) => n.body), ['closed', `moved to ${src.path}#${back.body.iid}`]);
  });

  test('a move that fails writes no notes', async () => {
    const p = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, p);
    const issue = await makeIssue(t.app, p, {});
    await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.developer!.token, body: { body: 'stay' } });
    const other = await makeProject(t.app, { visibility: 0 });
    const total = async () => Number((await t.app.db.selectFrom('notes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const n = await total();
    const r = await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/move`, { token: roles.maintainer!.token, body: { to_project_id: other.id } });
    assert.equal(r.status, 404);
    assert.equal(await total(), n);
  });
});
