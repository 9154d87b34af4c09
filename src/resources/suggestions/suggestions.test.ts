import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeMergeRequest, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from '../repository/repository.common.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const SUGGESTION_FIELDS = ['id', 'from_line', 'to_line', 'applicable', 'applied', 'from_content', 'to_content'];
const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}\n`).join('');
const block = (text: string, label = 'suggestion') => `Try this:\n\`\`\`${label}\n${text}\n\`\`\`\n`;

describe('suggestions', () => {
  let project: ProjectRow;
  let roles: RoleCast;
  let n = 0;
  before(async () => {
    project = await makeProject(t.app, { visibility: 0, repository: true });
    await commitFiles(t.app, project, 'main', { 'a.txt': lines('l', 10), 'b.txt': lines('b', 5), 'c.ipynb': lines('c', 3) });
    roles = await castRoles(t.app, project);
  });

  /** A branch rewriting every line of a.txt, b.txt and c.ipynb (so each line is an added line) and its merge request. */
  async function change() {
    const branch = `topic-${++n}`;
    const head = await commitFiles(t.app, project, branch, { 'a.txt': lines('A', 10), 'b.txt': lines('B', 5), 'c.ipynb': lines('C', 3) }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: branch, target_branch: 'main' });
    const versions = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}/versions`, { token: roles.developer.token });
    const v = versions.body[0];
    return { branch, head, mr, v };
  }

  type Change = Awaited<ReturnType<typeof change>>;
  async function suggest(c: Change, token: string, path: string, line: number, body: string) {
    const position = { position_type: 'text', base_sha: c.v.base_commit_sha, start_sha: c.v.start_commit_sha, head_sha: c.v.head_commit_sha, old_path: path, new_path: path, new_line: line };
    const r = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${c.mr.iid}/discussions`, { token, body: { body, position } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { discussion: r.body.id as string, note: r.body.notes[0], suggestions: r.body.notes[0].suggestions as any[] };
  }
  const apply = (token: string | undefined, id: number, body: Record<string, unknown> = {}) => call(t.app, 'PUT', `/suggestions/${id}/apply`, { token, body });
  const batch = (token: string | undefined, ids: unknown, body: Record<string, unknown> = {}) => call(t.app, 'PUT', '/suggestions/batch_apply', { token, body: { ids, ...body } });
  const repo = () => repoFor(t.app.config, project);
  const headOf = (branch: string) => repo().resolveCommit(`refs/heads/${branch}`);
  const fileAt = async (branch: string, path: string) => (await repo().blob(`refs/heads/${branch}`, path))!.content.toString();
  const rawMessage = async (sha: string) => (await repo().git(['cat-file', 'commit', sha])).stdout.toString();
  const commitCount = async (branch: string) => Number((await repo().git(['rev-list', '--count', `refs/heads/${branch}`])).stdout.toString().trim());

  test('a diff note keeps its suggestion blocks: the suggestions array in the note entity, re-parsed when edited', async () => {
    const c = await change();
    const body = `${block('X3')}and\n${block('Y', 'suggestion:-1+2')}\`\`\`ruby\nno\n\`\`\`\n`;
    const s = await suggest(c, roles.developer.token, 'a.txt', 4, body);
    assert.equal(s.suggestions.length, 2);
    for (const x of s.suggestions) assert.deepEqual(Object.keys(x), SUGGESTION_FIELDS);
    assert.deepEqual(s.suggestions.map(({ id: _id, ...x }) => x), [
      { from_line: 4, to_line: 4, applicable: true, applied: false, from_content: 'A4\n', to_content: 'X3\n' },
      { from_line: 3, to_line: 6, applicable: true, applied: false, from_content: 'A3\nA4\nA5\nA6\n', to_content: 'Y\n' },
    ]);
    const keys = Object.keys(s.note);
    assert.deepEqual(keys.slice(keys.indexOf('resolved_at'), keys.indexOf('confidential') + 1), ['resolved_at', 'suggestions', 'confidential']);
    // Editing the note re-parses its suggestions.
    const edit = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${c.mr.iid}/notes/${s.note.id}`, { token: roles.developer.token, body: { body: block('only one') } });
    assert.equal(edit.status, 200);
    assert.deepEqual(edit.body.suggestions.map((x: any) => [x.from_line, x.to_content]), [[4, 'only one\n']]);
    const rows = await t.app.db.selectFrom('suggestions').selectAll().where('note_id', '=', s.note.id).execute();
    assert.deepEqual(rows.map((r) => r.to_content), ['only one\n']);
    // A reply in the thread is a diff note and may suggest too; a plain merge request note has no suggestions key.
    const reply = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${c.mr.iid}/discussions/${s.discussion}/notes`, { token: roles.maintainer.token, body: { body: block('Z') } });
    assert.deepEqual(reply.body.suggestions.map((x: any) => x.to_content), ['Z\n']);
    const plain = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${c.mr.iid}/notes`, { token: roles.developer.token, body: { body: block('W') } });
    assert.equal(plain.status, 201);
    assert.equal('suggestions' in plain.body, false);
    assert.equal(await t.app.db.selectFrom('suggestions').select('id').where('note_id', '=', plain.body.id).executeTakeFirst(), undefined);
    // A multi-line thread anchors its suggestions on its last line.
    const position = { position_type: 'text', base_sha: c.v.base_commit_sha, start_sha: c.v.start_commit_sha, head_sha: c.v.head_commit_sha, old_path: 'a.txt', new_path: 'a.txt', new_line: 8,
      line_range: { start: { type: 'new', new_line: 6 }, end: { type: 'new', new_line: 8 } } };
    const multi = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/${c.mr.iid}/discussions`, { token: roles.developer.token, body: { body: block('M', 'suggestion:-2+0'), position } });
    assert.deepEqual(multi.body.notes[0].suggestions.map((x: any) => [x.from_line, x.to_line, x.from_content]), [[6, 8, 'A6\nA7\nA8\n']]);
  });

  test('apply one: a commit on the source branch by the note author, applied with its commit, a new diff version, the thread resolved', async () => {
    const c = await change();
    const s = await suggest(c, roles.developer.token, 'a.txt', 2, block('two'));
    const r = await apply(roles.maintainer.token, s.suggestions[0].id);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { id: s.suggestions[0].id, from_line: 2, to_line: 2, applicable: false, applied: true, from_content: 'A2\n', to_content: 'two\n' });
    const head = (await headOf(c.branch))!;
    assert.notEqual(head, c.head);
    assert.equal(await fileAt(c.branch, 'a.txt'), lines('A', 10).replace('A2\n', 'two\n'));
    const raw = await rawMessage(head);
    const dev = roles.developer.user;
    const maint = roles.maintainer.user;
    assert.match(raw, new RegExp(`^parent ${c.head}$`, 'm'));
    assert.match(raw, new RegExp(`^author ${dev.name} <${dev.email}> `, 'm'));
    assert.match(raw, new RegExp(`^committer ${maint.name} <${maint.email}> `, 'm'));
    assert.ok(raw.endsWith(`\n\nApply 1 suggestion(s) to 1 file(s)\n\nCo-authored-by: ${dev.name} <${dev.email}>`), raw);
    const row = await t.app.db.selectFrom('suggestions').selectAll().where('id', '=', s.suggestions[0].id).executeTakeFirstOrThrow();
    assert.deepEqual([row.applied, row.commit_id], [1, head]);
    const versions = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${c.mr.iid}/versions`, { token: roles.developer.token });
    assert.deepEqual(versions.body.map((v: any) => v.head_commit_sha), [head, c.head]);
    const d = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${c.mr.iid}/discussions/${s.discussion}`, { token: roles.developer.token });
    assert.deepEqual([d.body.notes[0].resolved, d.body.notes[0].resolved_by.id], [true, maint.id]);
    assert.equal(d.body.notes[0].suggestions[0].applied, true);
    // Applied once is applied: the second time is refused and nothing moves.
    const again = await apply(roles.maintainer.token, s.suggestions[0].id);
    assert.deepEqual([again.status, again.body], [400, { message: "Can't apply this suggestion." }]);
    assert.equal(await headOf(c.branch), head);
  });

  test('batch apply: several in one file and several files, two authors (the applier commits, co-authors listed), a custom message', async () => {
    const c = await change();
    const a1 = await suggest(c, roles.developer.token, 'a.txt', 1, block('one'));
    const a2 = await suggest(c, roles.maintainer.token, 'a.txt', 5, block('five\nfive b', 'suggestion:-0+1'));
    const b1 = await suggest(c, roles.owner.token, 'b.txt', 5, block('last'));
    const ids = [b1.suggestions[0].id, a1.suggestions[0].id, a2.suggestions[0].id];
    const message = '%{suggestions_count} on %{branch_name} in %{files_count}: %{file_paths} of %{project_name} (%{project_path}) by %{user_full_name} @%{username}\n\n%{co_authored_by}';
    const r = await batch(roles.owner.token, ids.join(','), { commit_message: message });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.map((x: any) => [x.id, x.applied]), ids.map((id) => [id, true]));
    assert.equal(await commitCount(c.branch), (await commitCount('main')) + 2);
    assert.equal(await fileAt(c.branch, 'a.txt'), 'one\nA2\nA3\nA4\nfive\nfive b\nA7\nA8\nA9\nA10\n');
    assert.equal(await fileAt(c.branch, 'b.txt'), 'B1\nB2\nB3\nB4\nlast\n');
    const head = (await headOf(c.branch))!;
    const [dev, maint, owner] = [roles.developer.user, roles.maintainer.user, roles.owner.user];
    const raw = await rawMessage(head);
    assert.match(raw, new RegExp(`^author ${owner.name} <${owner.email}> `, 'm'));
    const body = raw.slice(raw.indexOf('\n\n') + 2);
    assert.equal(body, `3 on ${c.branch} in 2: a.txt, b.txt of ${project.name} (${project.path}) by ${owner.name} @${owner.username}\n\n`
      + `Co-authored-by: ${dev.name} <${dev.email}>\nCo-authored-by: ${maint.name} <${maint.email}>`);
    const log = (await repo().git(['log', '-1', '--format=%(trailers:key=Co-authored-by,valueonly)', head])).stdout.toString().trim().split('\n');
    assert.deepEqual(log, [`${dev.name} <${dev.email}>`, `${maint.name} <${maint.email}>`]);
  });

  test("the project's suggestion_commit_message is the template when no message is given; ids as an array", async () => {
    const other = await makeProject(t.app, { visibility: 0, repository: true });
    await commitFiles(t.app, other, 'main', { 'a.txt': lines('l', 3) });
    const owner = await castRoles(t.app, other);
    const set = await call(t.app, 'PUT', `/projects/${other.id}`, { token: owner.owner.token, body: { suggestion_commit_message: 'Suggested: %{file_paths} (%{suggestions_count})' } });
    assert.equal(set.status, 200);
    await commitFiles(t.app, other, 'x', { 'a.txt': lines('A', 3) }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, owner.developer.token, other, { source_branch: 'x', target_branch: 'main' });
    const v = (await call(t.app, 'GET', `/projects/${other.id}/merge_requests/${mr.iid}/versions`, { token: owner.developer.token })).body[0];
    const position = { position_type: 'text', base_sha: v.base_commit_sha, start_sha: v.start_commit_sha, head_sha: v.head_commit_sha, old_path: 'a.txt', new_path: 'a.txt', new_line: 1 };
    const d = await call(t.app, 'POST', `/projects/${other.id}/merge_requests/${mr.iid}/discussions`, { token: owner.developer.token, body: { body: block('first'), position } });
    const r = await batch(owner.developer.token, [d.body.notes[0].suggestions[0].id]);
    assert.equal(r.status, 200);
    const repoX = repoFor(t.app.config, other);
    const msg = (await repoX.git(['log', '-1', '--format=%B', 'refs/heads/x'])).stdout.toString().trim();
    assert.equal(msg, 'Suggested: a.txt (1)');
  });

  test('who may apply: the source branch push rule (Developer and up); unreadable is 404, anonymous 401', async () => {
    const c = await change();
    const s = await suggest(c, roles.developer.token, 'a.txt', 3, block('three'));
    const id = s.suggestions[0].id;
    const expected: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 404, reporter: 403 };
    for (const [who, status] of Object.entries(expected)) {
      const user = (roles as any)[who];
      const r = await apply(user?.token, id);
      assert.equal(r.status, status, who);
      if (status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
      if (status === 404) assert.deepEqual(r.body, { message: 'Suggestion is not applicable as the suggestion was not found.' });
    }
    assert.equal(await headOf(c.branch), c.head);
    // A protected source branch only its push entries may move: a Developer is refused there, a Maintainer is not.
    await call(t.app, 'POST', `/projects/${project.id}/protected_branches`, { token: roles.owner.token, body: { name: c.branch, push_access_level: 40 } });
    const dev = await apply(roles.developer.token, id);
    assert.deepEqual([dev.status, dev.body], [403, { message: '403 Forbidden' }]);
    assert.equal(await headOf(c.branch), c.head);
    const maint = await apply(roles.maintainer.token, id);
    assert.equal(maint.status, 200);
    const admin = await apply(roles.admin.token, id);
    assert.deepEqual([admin.status, admin.body], [400, { message: "Can't apply this suggestion." }]);
  });

  test('refusals, each with the data that provokes it, nothing changed', async () => {
    const token = roles.maintainer.token;
    const expect400 = async (r: any, message: string, branch: string, head: string | null) => {
      assert.deepEqual([r.status, r.body], [400, { message }]);
      assert.equal(await headOf(branch), head);
    };
    // Not found: unknown id, one of several unknown, a repeated id.
    const c = await change();
    const s = await suggest(c, roles.developer.token, 'a.txt', 3, block('three'));
    const id = s.suggestions[0].id;
    assert.deepEqual([(await apply(token, 999999)).status, (await apply(token, 999999)).body], [404, { message: 'Suggestion is not applicable as the suggestion was not found.' }]);
    const many = await batch(token, [id, 999999]);
    assert.deepEqual([many.status, many.body], [404, { message: 'Suggestions are not applicable as one or more suggestions were not found.' }]);
    assert.equal((await batch(token, [id, id])).status, 404);
    assert.equal((await batch(token, 'x')).status, 400);

    // A file was not found: the note's file is not at its head.
    const nf = await suggest(c, roles.developer.token, 'a.txt', 7, block('seven'));
    const note = await t.app.db.selectFrom('notes').select('position').where('id', '=', nf.note.id).executeTakeFirstOrThrow();
    await t.app.db.updateTable('notes').set({ position: note.position!.replaceAll('"a.txt"', '"missing.txt"') }).where('id', '=', nf.note.id).execute();
    await expect400(await apply(token, nf.suggestions[0].id), 'A file was not found.', c.branch, c.head);

    // Not on the same branch.
    const c2 = await change();
    const s2 = await suggest(c2, roles.developer.token, 'a.txt', 3, block('three'));
    await expect400(await batch(token, [id, s2.suggestions[0].id]), 'Suggestions must all be on the same branch.', c.branch, c.head);

    // No change, too many lines, a notebook.
    const same = await suggest(c, roles.developer.token, 'a.txt', 4, block('A4'));
    await expect400(await apply(token, same.suggestions[0].id), 'This suggestion already matches its content.', c.branch, c.head);
    const wide = await suggest(c, roles.developer.token, 'a.txt', 4, block('x', 'suggestion:-101+0'));
    await expect400(await apply(token, wide.suggestions[0].id), 'Cannot apply as this suggestion spans more than 100 lines.', c.branch, c.head);
    const nb = await suggest(c, roles.developer.token, 'c.ipynb', 1, block('x'));
    await expect400(await apply(token, nb.suggestions[0].id), "This file was modified for readability, and can't accept suggestions. Edit it directly.", c.branch, c.head);

    // Overlapping lines in one file.
    const o1 = await suggest(c, roles.developer.token, 'b.txt', 2, block('x', 'suggestion:-0+1'));
    const o2 = await suggest(c, roles.developer.token, 'b.txt', 3, block('y'));
    await expect400(await batch(token, [o1.suggestions[0].id, o2.suggestions[0].id]), 'Suggestions are not applicable as their lines cannot overlap.', c.branch, c.head);

    // A changed file: the branch moved without the merge request following it.
    const moved = await commitFiles(t.app, project, c.branch, { 'other.txt': 'x\n' });
    await expect400(await apply(token, id), 'A file has been changed.', c.branch, moved);
    assert.equal((await t.app.db.selectFrom('suggestions').select('applied').where('id', '=', id).executeTakeFirstOrThrow()).applied, 0);
  });

  test('a push between writing and applying: other lines move the note along (applies); its own lines outdate it (refused)', async () => {
    const c = await change();
    const keep = await suggest(c, roles.developer.token, 'a.txt', 9, block('nine'));
    const lost = await suggest(c, roles.developer.token, 'a.txt', 2, block('two'));
    const many = await suggest(c, roles.developer.token, 'a.txt', 2, block('two', 'suggestion:-1+0'));
    const push = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, { token: roles.developer.token, body: {
      branch: c.branch, commit_message: 'Rewrite line 2', actions: [{ action: 'update', file_path: 'a.txt', content: lines('A', 10).replace('A2\n', 'pushed\n') }],
    } });
    assert.equal(push.status, 201);
    const pushed = push.body.id;
    const r1 = await apply(roles.maintainer.token, lost.suggestions[0].id);
    assert.deepEqual([r1.status, r1.body], [400, { message: "Can't apply as this line was changed in a more recent version." }]);
    const r2 = await apply(roles.maintainer.token, many.suggestions[0].id);
    assert.deepEqual([r2.status, r2.body], [400, { message: "Can't apply as these lines were changed in a more recent version." }]);
    const listed = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${c.mr.iid}/discussions/${lost.discussion}`, { token: roles.developer.token });
    assert.equal(listed.body.notes[0].suggestions[0].applicable, false);
    assert.equal(await headOf(c.branch), pushed);
    const ok = await apply(roles.maintainer.token, keep.suggestions[0].id);
    assert.equal(ok.status, 200);
    assert.equal(await fileAt(c.branch, 'a.txt'), lines('A', 10).replace('A2\n', 'pushed\n').replace('A9\n', 'nine\n'));
  });

  test('concurrent applies of overlapping suggestions: exactly one commit lands', async () => {
    const c = await change();
    const a = await suggest(c, roles.developer.token, 'b.txt', 3, block('first'));
    const b = await suggest(c, roles.maintainer.token, 'b.txt', 3, block('second', 'suggestion:-1+0'));
    const [r1, r2] = await Promise.all([apply(roles.maintainer.token, a.suggestions[0].id), apply(roles.owner.token, b.suggestions[0].id)]);
    assert.deepEqual([r1.status, r2.status].sort(), [200, 400]);
    assert.equal(await commitCount(c.branch), (await commitCount('main')) + 2);
    const applied = await t.app.db.selectFrom('suggestions').select('applied').where('id', 'in', [a.suggestions[0].id, b.suggestions[0].id]).execute();
    assert.equal(applied.filter((x) => x.applied).length, 1);
  });

  // Last: the merge moves main to the topic's content.
  test('closed, merged and deleted source branch refuse', async () => {
    const closed = await change();
    const s1 = await suggest(closed, roles.developer.token, 'a.txt', 1, block('x'));
    await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${closed.mr.iid}`, { token: roles.developer.token, body: { state_event: 'close' } });
    const r1 = await apply(roles.maintainer.token, s1.suggestions[0].id);
    assert.deepEqual([r1.status, r1.body], [400, { message: 'This merge request is closed. To apply this suggestion, edit this file directly.' }]);

    const gone = await change();
    const s2 = await suggest(gone, roles.developer.token, 'a.txt', 1, block('x'));
    const del = await call(t.app, 'DELETE', `/projects/${project.id}/repository/branches/${gone.branch}`, { token: roles.developer.token });
    assert.equal(del.status, 204);
    const r2 = await apply(roles.maintainer.token, s2.suggestions[0].id);
    assert.deepEqual([r2.status, r2.body], [400, { message: "Can't apply as the source branch was deleted." }]);

    const merged = await change();
    const s3 = await suggest(merged, roles.developer.token, 'a.txt', 1, block('x'));
    const m = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${merged.mr.iid}/merge`, { token: roles.maintainer.token, body: {} });
    assert.equal(m.status, 200, JSON.stringify(m.body));
    const r3 = await apply(roles.maintainer.token, s3.suggestions[0].id);
    assert.deepEqual([r3.status, r3.body], [400, { message: 'This merge request was merged. To apply this suggestion, edit this file directly.' }]);
    assert.equal(await headOf(merged.branch), merged.head);
  });
});
