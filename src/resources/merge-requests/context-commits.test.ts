import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeMergeRequest, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from '../repository/repository.common.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const FIELDS = ['id', 'short_id', 'created_at', 'parent_ids', 'title', 'message', 'author_name', 'author_email', 'authored_date', 'committer_name', 'committer_email', 'committed_date'];
const CREATED_FIELDS = FIELDS.filter((f) => !['short_id', 'created_at', 'title'].includes(f));

describe('merge request context commits', () => {
  let project: ProjectRow;
  let roles: RoleCast;
  let mr: any;
  let old: string[];
  let url: string;
  before(async () => {
    project = await makeProject(t.app, { visibility: 0, repository: true });
    old = [];
    for (let i = 1; i <= 3; i++) old.push(await commitFiles(t.app, project, 'main', { [`f${i}.txt`]: `${i}\n` }, { message: `Old ${i}` }));
    // A side branch whose commits are only in the repository through it.
    old.push(await commitFiles(t.app, project, 'side', { 'side.txt': 's\n' }, { from: 'main', message: 'Side work' }));
    await commitFiles(t.app, project, 'topic', { 'topic.txt': 't\n' }, { from: 'main' });
    roles = await castRoles(t.app, project);
    mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'topic', target_branch: 'main' });
    url = `/projects/${project.id}/merge_requests/${mr.iid}/context_commits`;
  });
  const repo = () => repoFor(t.app.config, project);
  const stored = async () => (await t.app.db.selectFrom('merge_request_context_commits').select('sha').where('merge_request_id', '=', mr.id).orderBy('relative_order').execute()).map((r) => r.sha);

  test('roles: reading needs the merge request, adding Developer, removing Owner', async () => {
    const expectGet: Record<string, number> = { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
    const expectPost: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201 };
    const expectDelete: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204, admin: 204 };
    for (const [who, status] of Object.entries(expectGet)) assert.equal((await call(t.app, 'GET', url, { token: (roles as any)[who]?.token })).status, status, `GET ${who}`);
    for (const [who, status] of Object.entries(expectPost)) {
      const r = await call(t.app, 'POST', url, { token: (roles as any)[who]?.token, body: { commits: [old[0]] } });
      assert.equal(r.status, status, `POST ${who}`);
    }
    assert.deepEqual(await stored(), [old[0]]);
    for (const [who, status] of Object.entries(expectDelete)) {
      const r = await call(t.app, 'DELETE', url, { token: (roles as any)[who]?.token, body: { commits: [old[0]] } });
      assert.equal(r.status, status, `DELETE ${who}`);
    }
    assert.deepEqual(await stored(), []);
  });

  test('POST: SHAs or unique prefixes, as an array or comma-separated; the answer without short_id, created_at and title', async () => {
    const r = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: `${old[1].slice(0, 10)},${old[3]}` } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.map((c: any) => c.id), [old[1], old[3]]);
    for (const c of r.body) assert.deepEqual(Object.keys(c), CREATED_FIELDS);
    assert.deepEqual([r.body[1].message, r.body[1].parent_ids], ['Side work', [old[2]]]);
    const list = await call(t.app, 'GET', url, { token: roles.reporter.token });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.map((c: any) => [c.id, c.title]), [[old[1], 'Old 2'], [old[3], 'Side work']]);
    for (const c of list.body) assert.deepEqual(Object.keys(c), FIELDS);
    assert.equal(list.headers['x-total'], '2');
    // Kept by refs: the side branch gone and garbage collected, the commit is still read.
    assert.equal(await repo().revParse(`refs/merge-requests/${mr.iid}/context/${old[3]}`), old[3]);
    await repo().deleteBranch('side');
    await repo().git(['reflog', 'expire', '--expire=now', '--all']);
    await repo().git(['gc', '--prune=now', '--quiet']);
    repo().invalidate();
    const after = await call(t.app, 'GET', url, { token: roles.reporter.token });
    assert.deepEqual(after.body.map((c: any) => c.id), [old[1], old[3]]);
    assert.equal((await repo().getCommit(old[3]))?.title, 'Side work');
  });

  test('refusals: duplicates listing the full SHAs, unknown SHAs, a SHA twice, more than 20, none; nothing stored', async () => {
    const before = await stored();
    const dup = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: [old[0], old[1].slice(0, 8)] } });
    assert.deepEqual([dup.status, dup.body], [400, { message: `Context commits: ["${old[1]}"] are already created` }]);
    const unknown = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: [old[0], 'deadbeefdeadbeef'] } });
    assert.deepEqual([unknown.status, unknown.body], [400, { message: "One or more context commits' sha is not valid." }]);
    const option = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: ['--all'] } });
    assert.deepEqual([option.status, option.body], [400, { message: "One or more context commits' sha is not valid." }]);
    const twice = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: [old[0], old[0]] } });
    assert.deepEqual([twice.status, twice.body], [400, { message: "One or more context commits' sha is not valid." }]);
    const tooMany = await call(t.app, 'POST', url, { token: roles.developer.token, body: { commits: Array.from({ length: 21 }, () => old[0]) } });
    assert.deepEqual([tooMany.status, tooMany.body], [400, { message: 'Context commits array size should not be more than 20' }]);
    // The limit is checked before the merge request is looked up.
    const noMr = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/9999/context_commits`, { token: roles.developer.token, body: { commits: Array.from({ length: 21 }, () => old[0]) } });
    assert.equal(noMr.status, 400);
    const missingMr = await call(t.app, 'POST', `/projects/${project.id}/merge_requests/9999/context_commits`, { token: roles.developer.token, body: { commits: [old[0]] } });
    assert.deepEqual([missingMr.status, missingMr.body], [404, { message: '404 Not found' }]);
    const none = await call(t.app, 'POST', url, { token: roles.developer.token, body: {} });
    assert.deepEqual([none.status, none.body], [400, { message: '400 (Bad request) "commits" not given' }]);
    assert.deepEqual(await stored(), before);
  });

  test('DELETE: 204, SHAs that are not context commits ignored, an unknown SHA refused; the ref goes with the row', async () => {
    const ignored = await call(t.app, 'DELETE', url, { token: roles.owner.token, body: { commits: [old[0]] } });
    assert.equal(ignored.status, 204);
    const bad = await call(t.app, 'DELETE', url, { token: roles.owner.token, body: { commits: ['0123456789abcdef'] } });
    assert.deepEqual([bad.status, bad.body], [400, { message: "One or more context commits' sha is not valid." }]);
    const before = await stored();
    assert.ok(before.includes(old[1]));
    const r = await call(t.app, 'DELETE', url, { token: roles.owner.token, body: { commits: old[1] } });
    assert.deepEqual([r.status, r.text], [204, '']);
    assert.deepEqual(await stored(), before.filter((s) => s !== old[1]));
    assert.equal(await repo().revParse(`refs/merge-requests/${mr.iid}/context/${old[1]}`), null);
  });
});
