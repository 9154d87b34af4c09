import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { bulkCommit, castRoles, commitFiles, makeMergeRequest, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from '../repository/repository.common.ts';
import { headRef, recordDiffVersion, setRef } from './merge-requests.service.ts';
import { markOutdatedDiffNotes } from './positions.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const DIFF_FIELDS = ['diff', 'collapsed', 'too_large', 'new_path', 'old_path', 'a_mode', 'b_mode', 'new_file', 'renamed_file', 'deleted_file', 'generated_file'];
const VERSION_FIELDS = ['id', 'head_commit_sha', 'base_commit_sha', 'start_commit_sha', 'created_at', 'merge_request_id', 'state', 'real_size', 'patch_id_sha'];
const lines = (from: number, to: number, f = (i: number) => `l${i}`) => Array.from({ length: to - from + 1 }, (_, k) => f(from + k)).join('\n') + '\n';
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const RENAMED = 'Renamed text\nline two\nline three\nline four\nline five\n';

/**
 * main: a.txt (l1..l10), old.txt, gone.txt, logo.png. feature changes l5 of a.txt and adds a line after l8, renames
 * old.txt to new.txt changing its last line, deletes gone.txt, changes logo.png and adds added.txt.
 */
async function fixture(visibility = 0) {
  const project = await makeProject(t.app, { visibility, repository: true });
  const base = await commitFiles(t.app, project, 'main', {
    'a.txt': lines(1, 10), 'old.txt': RENAMED, 'gone.txt': 'bye\n', 'logo.png': Buffer.from([0x89, 0x50, 0, 1, 2, 0]),
  });
  const head = await commitFiles(t.app, project, 'feature', {
    'a.txt': lines(1, 10, (i) => (i === 5 ? 'L5' : i === 8 ? 'l8\nnew9' : `l${i}`)),
    'new.txt': RENAMED.replace('line five', 'line 5'), 'gone.txt': null, 'logo.png': Buffer.from([0x89, 0x50, 0, 9, 9, 0]), 'added.txt': 'new\n',
  }, { from: 'main', moves: { 'new.txt': 'old.txt' } });
  return { project, base, head };
}

describe('merge request diffs', () => {
  let project: ProjectRow;
  let base: string;
  let head: string;
  let roles: RoleCast;
  let mr: any;
  before(async () => {
    ({ project, base, head } = await fixture());
    roles = await castRoles(t.app, project);
    mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'feature', target_branch: 'main' });
  });

  test('GET .../diffs: every changed file in git order with the reference fields, paginated', async () => {
    const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/diffs`, { token: roles.reporter.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], '5');
    assert.equal(r.headers['x-per-page'], '20');
    for (const d of r.body) assert.deepEqual(Object.keys(d), DIFF_FIELDS);
    const by = Object.fromEntries(r.body.map((d: any) => [d.new_path, d]));
    assert.deepEqual(r.body.map((d: any) => d.new_path), ['a.txt', 'added.txt', 'gone.txt', 'logo.png', 'new.txt']);
    assert.equal(by['a.txt'].diff, '@@ -2,9 +2,10 @@ l1\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n+new9\n l9\n l10\n');
    assert.deepEqual([by['added.txt'].new_file, by['added.txt'].a_mode, by['added.txt'].b_mode], [true, '0', '100644']);
    assert.deepEqual([by['gone.txt'].deleted_file, by['gone.txt'].b_mode], [true, '0']);
    assert.equal(by['logo.png'].diff, 'Binary files a/logo.png and b/logo.png differ\n');
    assert.deepEqual([by['new.txt'].renamed_file, by['new.txt'].old_path], [true, 'old.txt']);
    assert.equal(by['new.txt'].diff, '@@ -2,4 +2,4 @@ Renamed text\n line two\n line three\n line four\n-line five\n+line 5\n');
    assert.deepEqual([by['a.txt'].collapsed, by['a.txt'].too_large, by['a.txt'].generated_file], [false, false, false]);

    const page = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/diffs?per_page=2&page=2&unidiff=true`, { token: roles.reporter.token });
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.map((d: any) => d.new_path), ['gone.txt', 'logo.png']);
    assert.equal(page.body[0].diff, '--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n');
    assert.equal(page.headers['x-next-page'], '3');
  });

  test('GET .../changes: the merge request entity with changes and overflow; GET .../raw_diffs: the git diff text', async () => {
    const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/changes`, { token: roles.reporter.token });
    assert.equal(r.status, 200);
    const keys = Object.keys(r.body);
    assert.deepEqual(keys.slice(-2), ['changes', 'overflow']);
    assert.equal(r.body.iid, mr.iid);
    assert.equal(r.body.changes.length, 5);
    assert.equal(r.body.overflow, false);
    const raw = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/raw_diffs`, { token: roles.reporter.token });
    assert.equal(raw.status, 200);
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    assert.match(raw.text, /^diff --git a\/a.txt b\/a.txt\n/);
    assert.match(raw.text, /rename from old.txt\nrename to new.txt\n/);
  });

  test('GET .../versions and .../versions/:id: the version with its commits and diffs; an unknown version is 404', async () => {
    const list = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions`, { token: roles.reporter.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    assert.deepEqual(Object.keys(list.body[0]), VERSION_FIELDS);
    assert.deepEqual([list.body[0].base_commit_sha, list.body[0].start_commit_sha, list.body[0].head_commit_sha, list.body[0].state, list.body[0].real_size],
      [base, base, head, 'collected', '5']);
    const one = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions/${list.body[0].id}`, { token: roles.reporter.token });
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.body), [...VERSION_FIELDS, 'commits', 'diffs']);
    assert.deepEqual(one.body.commits.map((c: any) => c.id), [head]);
    assert.equal(one.body.diffs.length, 5);
    const missing = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions/999999`, { token: roles.reporter.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
    const anon = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions`);
    assert.equal(anon.status, 401);
  });

  describe('diff threads', () => {
    const position = (o: Record<string, unknown>) => ({
      position_type: 'text', base_sha: base, start_sha: base, head_sha: head, old_path: 'a.txt', new_path: 'a.txt', ...o,
    });
    const start = (token: string, o: Record<string, unknown>, body = 'Look here') =>
      call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, { token, body: { body, position: position(o) } });
    const notes = async () => Number((await t.app.db.selectFrom('notes').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    test('on an added, a removed and an unchanged line: a DiffNote keeping its position and line code', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ new_line: 5 }, `${sha1('a.txt')}_6_5`],
        [{ old_line: 5 }, `${sha1('a.txt')}_5_5`],
        [{ old_line: 7, new_line: 7 }, `${sha1('a.txt')}_7_7`],
        [{ old_line: 9, new_line: 10 }, `${sha1('a.txt')}_9_10`],
      ];
      for (const [at, code] of cases) {
        const r = await start(roles.reporter.token, at);
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.equal(r.body.individual_note, false);
        const n = r.body.notes[0];
        assert.equal(n.type, 'DiffNote');
        assert.deepEqual(n.position, {
          base_sha: base, start_sha: base, head_sha: head, old_path: 'a.txt', new_path: 'a.txt', position_type: 'text',
          old_line: at.old_line ?? null, new_line: at.new_line ?? null, line_range: null,
        });
        assert.deepEqual([n.resolvable, n.resolved, n.resolved_by, n.resolved_at], [true, false, null, null]);
        const row = await t.app.db.selectFrom('notes').selectAll().where('id', '=', n.id).executeTakeFirstOrThrow();
        assert.equal(row.line_code, code);
        assert.equal(row.original_position, row.position);
      }
    });

    test('a multi-line thread keeps its line range as written', async () => {
      const range = {
        start: { line_code: `${sha1('a.txt')}_6_5`, type: 'new', old_line: null, new_line: 5 },
        end: { line_code: `${sha1('a.txt')}_8_9`, type: 'new', old_line: null, new_line: 9 },
      };
      const r = await start(roles.reporter.token, { new_line: 9, line_range: range });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual(r.body.notes[0].position.line_range, range);
      assert.equal(r.body.notes[0].position.new_line, 9);
    });

    test('on a renamed file\'s changed line', async () => {
      const r = await start(roles.reporter.token, { old_path: 'old.txt', new_path: 'new.txt', new_line: 5 });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.notes[0].position.old_path, 'old.txt');
    });

    test('a line not in the diff, a binary file, unknown commits: 400 with the reference text, nothing written', async () => {
      const before = await notes();
      const text = 'Note {:line_code=>["can\'t be blank", "must be a valid line code"]}';
      for (const at of [{ old_line: 1, new_line: 1 }, { new_line: 100000 }, { new_line: 6 }, { old_line: 6 }, { new_path: 'logo.png', old_path: 'logo.png', new_line: 1 },
        { head_sha: 'f'.repeat(40), new_line: 5 }, { new_path: 'nothere.txt', old_path: 'nothere.txt', new_line: 1 }]) {
        const r = await start(roles.reporter.token, at);
        assert.deepEqual([r.status, r.body], [400, { message: `400 Bad request - ${text}` }], JSON.stringify(at));
      }
      const incomplete = await start(roles.reporter.token, {});
      assert.deepEqual([incomplete.status, incomplete.body.message], [400, `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"], :position=>["is incomplete"]}`]);
      const missing = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, { token: roles.reporter.token, body: { body: 'x', position: { position_type: 'text', base_sha: base, head_sha: head } } });
      assert.equal(missing.status, 400);
      assert.equal(await notes(), before);
    });

    test('replies are diff notes on the same lines; resolving the thread and one note; who may resolve', async () => {
      const r = await start(roles.reporter.token, { new_line: 9 });
      const id = r.body.id;
      const reply = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions/${id}/notes`, { token: roles.guest.token, body: { body: 'Agreed' } });
      // Guests do not read merge requests of a private project.
      assert.equal(reply.status, 403);
      const reply2 = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions/${id}/notes`, { token: roles.maintainer.token, body: { body: 'Agreed' } });
      assert.equal(reply2.status, 201);
      assert.equal(reply2.body.type, 'DiffNote');
      assert.deepEqual(reply2.body.position, r.body.notes[0].position);
      assert.equal(reply2.body.resolvable, true);

      const url = `/projects/${project.id}/merge_requests/${mr.iid}/discussions/${id}`;
      const denied = await call(t.app, 'PUT', url, { token: roles.reporter.token, body: { resolved: true } });
      assert.deepEqual([denied.status, denied.body], [403, { message: '403 Forbidden' }]);
      // The merge request's author (a Developer here) and Developers and up resolve.
      const ok = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { resolved: true } });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.id, id);
      for (const n of ok.body.notes) {
        assert.equal(n.resolved, true);
        assert.equal(n.resolved_by.id, roles.developer.user.id);
        assert.ok(n.resolved_at);
      }
      const reopen = await call(t.app, 'PUT', url, { token: roles.maintainer.token, body: { resolved: false } });
      assert.deepEqual(reopen.body.notes.map((n: any) => [n.resolved, n.resolved_by]), [[false, null], [false, null]]);

      const one = await call(t.app, 'PUT', `${url}/notes/${reply2.body.id}`, { token: roles.maintainer.token, body: { resolved: true } });
      assert.equal(one.status, 200);
      assert.deepEqual([one.body.resolved, one.body.resolved_by.id], [true, roles.maintainer.user.id]);
      const stored = await t.app.db.selectFrom('notes').select(['id', 'resolved_at']).where('discussion_id', '=', id).orderBy('id').execute();
      assert.deepEqual(stored.map((n) => n.resolved_at !== null), [false, true]);

      // A plain comment is not resolvable; its thread answers 403 to resolving.
      const plain = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/notes`, { token: roles.developer.token, body: { body: 'plain' } });
      assert.equal(plain.body.resolvable, false);
      const notResolvable = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${mr.iid}/discussions/${'0'.repeat(40)}`, { token: roles.developer.token, body: { resolved: true } });
      assert.equal(notResolvable.status, 404);
      const lone = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${mr.iid}/notes/${plain.body.id}`, { token: roles.developer.token, body: { body: 'edited' } });
      assert.equal(lone.status, 200);
    });

    test('discussions are listed in the order they were started, each with its notes', async () => {
      const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/discussions?per_page=100`, { token: roles.reporter.token });
      assert.equal(r.status, 200);
      const firsts = r.body.map((d: any) => d.notes[0].id);
      assert.deepEqual(firsts, [...firsts].sort((a: number, b: number) => a - b));
      assert.ok(r.body.some((d: any) => d.notes.length === 2 && d.notes.every((n: any) => n.type === 'DiffNote')));
    });
  });
});

describe('a push: a new version, diff notes moved or outdated', () => {
  test('the note on a changed line is outdated with its change position; one below an added line moves down', async () => {
    const { project, base, head } = await fixture();
    const roles = await castRoles(t.app, project);
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'feature', target_branch: 'main' });
    const post = (o: Record<string, unknown>) => call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, {
      token: roles.developer.token, body: { body: 'x', position: { position_type: 'text', base_sha: base, start_sha: base, head_sha: head, old_path: 'a.txt', new_path: 'a.txt', ...o } },
    });
    const onL7 = (await post({ old_line: 7, new_line: 7 })).body.notes[0].id;
    const onNew9 = (await post({ new_line: 9 })).body.notes[0].id;
    const onRemoved = (await post({ old_line: 5 })).body.notes[0].id;

    // The push: a line on top, l7 rewritten; then what the push hook does: the head ref, a version, the notes.
    const next = await commitFiles(t.app, project, 'feature', { 'a.txt': `top\n${lines(1, 10, (i) => (i === 5 ? 'L5' : i === 7 ? 'L7' : i === 8 ? 'l8\nnew9' : `l${i}`))}` });
    const repo = repoFor(t.app.config, project);
    await setRef(repo, headRef(mr.iid), next);
    const row = await t.app.db.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow();
    const oldVersion = await t.app.db.selectFrom('merge_request_diffs').selectAll().where('id', '=', row.latest_diff_id!).executeTakeFirstOrThrow();
    const outdated = await t.app.db.transaction().execute(async (trx) => {
      const id = await recordDiffVersion(trx, repo, mr.id, { base, start: base, head: next }, t.app.clock.now());
      await trx.updateTable('merge_requests').set({ latest_diff_id: id, sha: next }).where('id', '=', mr.id).execute();
      const newVersion = await trx.selectFrom('merge_request_diffs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return markOutdatedDiffNotes(t.app, trx, row, oldVersion, newVersion);
    });
    assert.equal(outdated, 1);
    const get = (id: number) => t.app.db.selectFrom('notes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const l7 = await get(onL7);
    assert.equal(l7.outdated, 1);
    assert.deepEqual(JSON.parse(l7.change_position!), {
      base_sha: head, start_sha: head, head_sha: next, old_path: 'a.txt', new_path: 'a.txt', position_type: 'text', old_line: 7, new_line: null, line_range: null,
    });
    assert.equal(JSON.parse(l7.position!).head_sha, head, 'an outdated note keeps its position');
    const n9 = await get(onNew9);
    assert.equal(n9.outdated, 0);
    assert.deepEqual([JSON.parse(n9.position!).head_sha, JSON.parse(n9.position!).new_line], [next, 10]);
    assert.equal(JSON.parse(n9.original_position!).new_line, 9, 'the original position stays as written');
    const removed = await get(onRemoved);
    assert.deepEqual([removed.outdated, JSON.parse(removed.position!).old_line, JSON.parse(removed.position!).head_sha], [0, 5, next]);

    // The versions list shows both, newest first; the new one's diff is git's.
    const versions = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions`, { token: roles.reporter.token });
    assert.deepEqual(versions.body.map((v: any) => v.head_commit_sha), [next, head]);
    const diffs = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/diffs`, { token: roles.reporter.token });
    assert.match(diffs.body[0].diff, /^@@ -1,10 \+1,12 @@\n\+top\n/);
    // A new thread on the moved line of the new version is accepted at its new number.
    const again = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, {
      token: roles.developer.token, body: { body: 'x', position: { position_type: 'text', base_sha: base, start_sha: base, head_sha: next, new_path: 'a.txt', old_path: 'a.txt', new_line: 10 } },
    });
    assert.equal(again.status, 201);
  });
});

describe('a 1,000-file diff', () => {
  test('is served a page at a time; changes stops at 1,000 files and says it overflowed', async () => {
    const project = await makeProject(t.app, { repository: true });
    await commitFiles(t.app, project, 'main', { 'README.md': 'x\n' });
    const files: Record<string, string> = {};
    for (let i = 0; i < 1001; i++) files[`dir/f${String(i).padStart(4, '0')}.txt`] = `file ${i}\n`;
    await bulkCommit(t.app, project, 'big', 'main', files);
    const roles = await castRoles(t.app, project);
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'big', target_branch: 'main' });
    const r = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/diffs?per_page=20&page=50`, { token: roles.reporter.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], '1001');
    assert.equal(r.headers['x-total-pages'], '51');
    assert.deepEqual(r.body.map((d: any) => d.new_path), Array.from({ length: 20 }, (_, k) => `dir/f${String(980 + k).padStart(4, '0')}.txt`));
    assert.equal(r.body[0].diff, '@@ -0,0 +1 @@\n+file 980\n');
    const changes = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/changes`, { token: roles.reporter.token });
    assert.deepEqual([changes.body.changes.length, changes.body.overflow, changes.body.changes_count], [1000, true, '1000+']);
    const all = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/changes?access_raw_diffs=true`, { token: roles.reporter.token });
    assert.equal(all.body.changes.length, 1001);
  });
});

describe('merge request diffs: access by role', () => {
  let priv: { project: ProjectRow; base: string; head: string };
  let pub: { project: ProjectRow; base: string; head: string };
  let rolesPriv: RoleCast;
  let rolesPub: RoleCast;
  const iids = new Map<number, number>();
  before(async () => {
    priv = await fixture(0);
    pub = await fixture(20);
    rolesPriv = await castRoles(t.app, priv.project);
    rolesPub = await castRoles(t.app, pub.project);
    for (const [f, r] of [[priv, rolesPriv], [pub, rolesPub]] as const) {
      iids.set(f.project.id, (await makeMergeRequest(t.app, r.owner.token, f.project, { source_branch: 'feature', target_branch: 'main' })).iid);
    }
  });
  const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
  type Fx = { project: ProjectRow; base: string; head: string };
  const table: Array<[string, 'private' | 'public', (f: Fx) => { method: string; url: string; body?: unknown }, number[]]> = [
    ['list diffs', 'private', (f) => ({ method: 'GET', url: `/projects/${f.project.id}/merge_requests/${iids.get(f.project.id)}/diffs` }), [404, 404, 403, 200, 200, 200, 200, 200]],
    ['list diffs', 'public', (f) => ({ method: 'GET', url: `/projects/${f.project.id}/merge_requests/${iids.get(f.project.id)}/diffs` }), [200, 200, 200, 200, 200, 200, 200, 200]],
    ['start a diff thread', 'private', (f) => ({
      method: 'POST', url: `/projects/${f.project.id}/merge_requests/${iids.get(f.project.id)}/discussions`,
      body: { body: 'x', position: { position_type: 'text', base_sha: f.base, start_sha: f.base, head_sha: f.head, new_path: 'a.txt', old_path: 'a.txt', new_line: 5 } },
    }), [401, 404, 403, 201, 201, 201, 201, 201]],
    ['start a diff thread', 'public', (f) => ({
      method: 'POST', url: `/projects/${f.project.id}/merge_requests/${iids.get(f.project.id)}/discussions`,
      body: { body: 'x', position: { position_type: 'text', base_sha: f.base, start_sha: f.base, head_sha: f.head, new_path: 'a.txt', old_path: 'a.txt', new_line: 5 } },
    }), [401, 201, 201, 201, 201, 201, 201, 201]],
  ];
  for (const [what, vis, req, statuses] of table) {
    CALLERS.forEach((caller, i) => {
      test(`${caller}: ${what} on a ${vis} project answers ${statuses[i]}`, async () => {
        const f = vis === 'private' ? priv : pub;
        const roles = vis === 'private' ? rolesPriv : rolesPub;
        const r = req(f);
        const res = await call(t.app, r.method, r.url, { token: roles[caller]?.token, body: r.body });
        assert.equal(res.status, statuses[i], JSON.stringify(res.body));
        if (res.status === 403) assert.deepEqual(res.body, { message: '403 Forbidden' });
        if (res.status === 404) assert.match(res.body.message, /^404 (Project|Not found)/);
      });
    });
  }

  test('a read-only token lists diffs and cannot start a thread', async () => {
    const { makeToken } = await import('../../../test/support/fixtures.ts');
    const token = await makeToken(t.app, rolesPriv.developer.user, ['read_api']);
    const iid = iids.get(priv.project.id);
    const list = await call(t.app, 'GET', `/projects/${priv.project.id}/merge_requests/${iid}/diffs`, { token });
    assert.equal(list.status, 200);
    const post = await call(t.app, 'POST', `/projects/${priv.project.id}/merge_requests/${iid}/discussions`, {
      token, body: { body: 'x', position: { position_type: 'text', base_sha: priv.base, start_sha: priv.base, head_sha: priv.head, new_path: 'a.txt', old_path: 'a.txt', new_line: 5 } },
    });
    assert.equal(post.status, 403);
    assert.match(post.body.error ?? post.body.message, /insufficient_scope|403/);
  });
});
