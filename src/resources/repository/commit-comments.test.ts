import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import type { ProjectRow } from '../../platform/membership.ts';

// Comments on commits: GET/POST /projects/:id/repository/commits/:sha/comments, stored as notes (noteable_type
// 'Commit', noteable_id 0, commit_id the sha); on a line of the commit's diff when `path`, `line`, `line_type` name one.

let t: TestApp;
let p: ProjectRow;
let r: RoleCast;
const c: Record<string, any> = {};
const url = (sha: string, project = p) => `/projects/${project.id}/repository/commits/${sha}/comments`;

before(async () => {
  t = await buildTestApp();
  p = await makeProject(t.app, { path: 'noted', visibility: 0, repository: false });
  r = await castRoles(t.app, p);
  const commit = async (body: Record<string, unknown>) => {
    const res = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, { token: r.developer.token, body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    (t.clock as ManualClock).advance(60_000);
    return res.body;
  };
  c.first = await commit({ branch: 'main', commit_message: 'Initial', actions: [{ action: 'create', file_path: 'a.txt', content: 'one\ntwo\nthree\n' }] });
  c.second = await commit({ branch: 'main', commit_message: 'Change two', actions: [{ action: 'update', file_path: 'a.txt', content: 'one\nTWO\nthree\n' }] });
});
after(async () => { await t.close(); });

test('role table: reading needs download_code, commenting signing in and download_code', async () => {
  const read: Record<string, number> = { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
  const write: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 };
  for (const [role, status] of Object.entries(read)) {
    const u = r[role as keyof RoleCast];
    assert.equal((await call(t.app, 'GET', url(c.first.id), { token: u?.token })).status, status, `read ${role}`);
    const w = await call(t.app, 'POST', url(c.first.id), { token: u?.token, body: { note: `by ${role}` } });
    assert.equal(w.status, write[role], `write ${role}`);
  }
  const rows = await t.app.db.selectFrom('notes').select(['noteable_type', 'noteable_id', 'commit_id', 'project_id', 'body']).where('commit_id', '=', c.first.id).orderBy('id').execute();
  assert.deepEqual(rows.map((x) => x.body), ['by reporter', 'by developer', 'by maintainer', 'by owner', 'by admin']);
  assert.deepEqual(rows[0], { noteable_type: 'Commit', noteable_id: 0, commit_id: c.first.id, project_id: p.id, body: 'by reporter' });
});

test('comments on a commit and on lines of its diff, listed oldest first, by sha or branch', async () => {
  const sha = c.second.id;
  const plain = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Nice' } });
  assert.equal(plain.status, 201);
  assert.deepEqual(plain.body, {
    note: 'Nice', path: null, line: null, line_type: null,
    author: { id: r.developer.user.id, username: r.developer.user.username, name: r.developer.user.name, state: 'active', locked: false, avatar_url: plain.body.author.avatar_url, web_url: `http://bellows.test/${r.developer.user.username}` },
    created_at: new Date(t.clock.now()).toISOString(),
  });
  (t.clock as ManualClock).advance(1000);
  // Line 2 was added ('new') and its old text removed ('old', at the same new-side position).
  const added = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Shouting', path: 'a.txt', line: 2, line_type: 'new' } });
  assert.deepEqual([added.status, added.body.path, added.body.line, added.body.line_type], [201, 'a.txt', 2, 'new']);
  (t.clock as ManualClock).advance(1000);
  const removed = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Was fine', path: 'a.txt', line: 2, line_type: 'old' } });
  assert.deepEqual([removed.body.path, removed.body.line, removed.body.line_type], ['a.txt', 2, 'old']);
  // line_type defaults to 'new'; a line the diff does not show (context, or another file) makes a plain comment.
  const dflt = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Default', path: 'a.txt', line: 2 } });
  assert.equal(dflt.body.line_type, 'new');
  const context = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Context', path: 'a.txt', line: 1 } });
  assert.deepEqual([context.body.path, context.body.line, context.body.line_type], [null, null, null]);
  const elsewhere = await call(t.app, 'POST', url(sha), { token: r.developer.token, body: { note: 'Elsewhere', path: 'b.txt', line: 2 } });
  assert.equal(elsewhere.body.path, null);

  const list = await call(t.app, 'GET', url('main'), { token: r.reporter.token });
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.map((n: any) => n.note), ['Nice', 'Shouting', 'Was fine', 'Default', 'Context', 'Elsewhere']);
  assert.equal(list.headers['x-total'], '6');
  const page = await call(t.app, 'GET', url(sha), { token: r.reporter.token, query: { per_page: '2', page: '2' } });
  assert.deepEqual(page.body.map((n: any) => n.note), ['Was fine', 'Default']);
  // Another commit's comments are its own.
  assert.equal((await call(t.app, 'GET', url(c.first.id), { token: r.reporter.token })).body.every((n: any) => n.note.startsWith('by ')), true);
  // Comments on commits are not an issue's notes.
  assert.equal((await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Issue').execute()).length, 0);
});

test('bad input: unknown commit, missing note or line, bad line_type; nothing written', async () => {
  const before = (await t.app.db.selectFrom('notes').select('id').execute()).length;
  const tok = r.developer.token;
  for (const sha of ['0'.repeat(40), 'nope', '-x']) {
    assert.deepEqual((await call(t.app, 'GET', url(sha), { token: tok })).body, { message: '404 Commit Not Found' });
    const w = await call(t.app, 'POST', url(sha), { token: tok, body: { note: 'x' } });
    assert.deepEqual([w.status, w.body], [404, { message: '404 Commit Not Found' }]);
  }
  const noNote = await call(t.app, 'POST', url(c.first.id), { token: tok, body: {} });
  assert.deepEqual([noNote.status, noNote.body], [400, { message: '400 (Bad request) "note" not given' }]);
  const noLine = await call(t.app, 'POST', url(c.first.id), { token: tok, body: { note: 'x', path: 'a.txt' } });
  assert.deepEqual([noLine.status, noLine.body], [400, { error: 'line is missing' }]);
  const badType = await call(t.app, 'POST', url(c.first.id), { token: tok, body: { note: 'x', path: 'a.txt', line: 1, line_type: 'both' } });
  assert.deepEqual([badType.status, badType.body], [400, { error: 'line_type does not have a valid value' }]);
  const blank = await call(t.app, 'POST', url(c.first.id), { token: tok, body: { note: '  ' } });
  assert.equal(blank.status, 400);
  assert.equal((await t.app.db.selectFrom('notes').select('id').execute()).length, before);
});

test('an archived project takes no comments, and still shows them', async () => {
  await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', p.id).execute();
  try {
    const res = await call(t.app, 'POST', url(c.first.id), { token: r.admin.token, body: { note: 'x' } });
    assert.equal(res.status, 403);
    assert.equal((await call(t.app, 'GET', url(c.first.id), { token: r.reporter.token })).status, 200);
  } finally {
    await t.app.db.updateTable('projects').set({ archived: 0 }).where('id', '=', p.id).execute();
  }
});
