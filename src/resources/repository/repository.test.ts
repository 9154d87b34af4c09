import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeUser } from '../../../test/support/fixtures.ts';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { makeProject, reloadProject, roleUsers, type RoleUsers } from './testing.ts';
import { repoFor } from './repository.common.ts';
import type { ProjectRow } from '../../platform/membership.ts';

let t: TestApp;
let p: ProjectRow;
let u: RoleUsers;
let first: any;

const files = (path: string) => `/projects/${p.id}/repository/files/${encodeURIComponent(path)}`;

before(async () => {
  t = await buildTestApp();
  const owner = await makeUser(t.app);
  p = await makeProject(t.app, owner.user, { init: false });
  u = await roleUsers(t.app, p, owner, (o) => makeUser(t.app, o));
});
after(async () => { await t.close(); });

describe('commits with actions', () => {
  test('the first commit creates the repository and the default branch', async () => {
    const r = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, {
      token: u.developer.token,
      body: {
        branch: 'main', commit_message: 'Initial import', author_name: 'Ada', author_email: 'ada@example.com',
        actions: [
          { action: 'create', file_path: 'README.md', content: '# Hello\n' },
          { action: 'create', file_path: 'src/app.js', content: Buffer.from('console.log(1)\n').toString('base64'), encoding: 'base64' },
          { action: 'create', file_path: 'bin/run', content: '#!/bin/sh\n', execute_filemode: true },
        ],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    first = r.body;
    assert.deepEqual(Object.keys(r.body), ['id', 'short_id', 'created_at', 'parent_ids', 'title', 'message', 'author_name', 'author_email', 'authored_date', 'committer_name', 'committer_email', 'committed_date', 'trailers', 'extended_trailers', 'web_url', 'stats', 'status', 'project_id', 'last_pipeline']);
    assert.equal(r.body.title, 'Initial import');
    assert.equal(r.body.author_name, 'Ada');
    assert.equal(r.body.committer_name, u.developer.user.name);
    assert.deepEqual(r.body.parent_ids, []);
    assert.deepEqual(r.body.stats, { additions: 3, deletions: 0, total: 3 });
    assert.equal(r.body.authored_date, '2026-06-01T12:00:00.000+00:00');
    const proj = await reloadProject(t.app, p.id);
    assert.equal(proj.default_branch, 'main');
    assert.equal(proj.empty_repo, 0);
  });

  test('update, move, delete, chmod in one commit', async () => {
    const r = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, {
      token: u.developer.token,
      body: {
        branch: 'main', commit_message: 'Rework',
        actions: [
          { action: 'update', file_path: 'README.md', content: '# Hello again\n' },
          { action: 'move', previous_path: 'src/app.js', file_path: 'lib/app.js' },
          { action: 'delete', file_path: 'bin/run' },
          { action: 'create', file_path: 'tool.sh', content: 'echo\n' },
          { action: 'chmod', file_path: 'tool.sh', execute_filemode: true },
        ],
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.parent_ids, [first.id]);
    const tree = await call(t.app, 'GET', `/projects/${p.id}/repository/tree`, { token: u.reporter.token, query: { recursive: 'true' } });
    assert.deepEqual(tree.body.map((e: any) => [e.path, e.type, e.mode]), [
      ['README.md', 'blob', '100644'], ['lib', 'tree', '040000'], ['lib/app.js', 'blob', '100644'], ['tool.sh', 'blob', '100755'],
    ]);
  });

  test('errors: existing, missing, bad action, missing params, branch rules, roles', async () => {
    const post = (body: Record<string, unknown>, token = u.developer.token) => call(t.app, 'POST', `/projects/${p.id}/repository/commits`, { token, body });
    let r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'README.md', content: 'x' }] });
    assert.deepEqual([r.status, r.body], [400, { message: 'A file with this name already exists' }]);
    r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'update', file_path: 'nope.md', content: 'x' }] });
    assert.deepEqual([r.status, r.body], [400, { message: "A file with this name doesn't exist" }]);
    r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'explode', file_path: 'a' }] });
    assert.deepEqual([r.status, r.body], [400, { error: 'actions[0][action] does not have a valid value' }]);
    r = await post({ branch: 'main', commit_message: 'x' });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "actions" not given' }]);
    r = await post({ branch: 'main', actions: [] });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "commit_message" not given' }]);
    r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: '../etc/passwd', content: 'x' }] });
    assert.equal(r.status, 400);
    r = await post({ branch: 'other', commit_message: 'x', actions: [{ action: 'create', file_path: 'n', content: 'x' }] });
    assert.deepEqual([r.status, r.body], [400, { message: 'You can only create or edit files when you are on a branch' }]);
    r = await post({ branch: 'other', start_branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'n', content: 'x' }] });
    assert.equal(r.status, 201);
    r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'q', content: 'x' }] }, u.reporter.token);
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    await call(t.app, 'POST', `/projects/${p.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'main' } });
    r = await post({ branch: 'main', commit_message: 'x', actions: [{ action: 'create', file_path: 'q', content: 'x' }] });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
    await call(t.app, 'DELETE', `/projects/${p.id}/protected_branches/main`, { token: u.maintainer.token });
  });

  test('concurrent writers: every commit lands, none is lost', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      call(t.app, 'POST', `/projects/${p.id}/repository/commits`, { token: u.developer.token, body: { branch: 'main', commit_message: `c${i}`, actions: [{ action: 'create', file_path: `c/${i}.txt`, content: String(i) }] } })));
    assert.deepEqual(results.map((r) => r.status), [201, 201, 201, 201, 201, 201]);
    const tree = await call(t.app, 'GET', `/projects/${p.id}/repository/tree`, { token: u.developer.token, query: { path: 'c' } });
    assert.deepEqual(tree.body.map((e: any) => e.name).sort(), ['0.txt', '1.txt', '2.txt', '3.txt', '4.txt', '5.txt']);
  });
});

describe('files', () => {
  test('GET file with metadata, raw, and their errors', async () => {
    const r = await call(t.app, 'GET', files('README.md'), { token: u.reporter.token, query: { ref: 'main' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['file_name', 'file_path', 'size', 'encoding', 'content_sha256', 'ref', 'blob_id', 'commit_id', 'last_commit_id', 'execute_filemode', 'content']);
    assert.equal(Buffer.from(r.body.content, 'base64').toString(), '# Hello again\n');
    assert.equal(r.body.execute_filemode, false);
    const raw = await call(t.app, 'GET', `${files('lib/app.js')}/raw`, { token: u.reporter.token });
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'console.log(1)\n');
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    let e = await call(t.app, 'GET', files('README.md'), { token: u.reporter.token });
    assert.deepEqual([e.status, e.body], [400, { message: '400 (Bad request) "ref" not given' }]);
    e = await call(t.app, 'GET', files('missing.md'), { token: u.reporter.token, query: { ref: 'main' } });
    assert.deepEqual([e.status, e.body], [404, { message: '404 File Not Found' }]);
    e = await call(t.app, 'GET', files('README.md'), { token: u.reporter.token, query: { ref: 'no-such-ref' } });
    assert.deepEqual([e.status, e.body], [404, { message: '404 Commit Not Found' }]);
    e = await call(t.app, 'GET', files('README.md'), { token: u.guest.token, query: { ref: 'main' } });
    assert.equal(e.status, 403);
    e = await call(t.app, 'GET', files('README.md'), { query: { ref: 'main' } });
    assert.deepEqual([e.status, e.body], [404, { message: '404 Project Not Found' }]);
  });

  test('POST, PUT, DELETE a file', async () => {
    let r = await call(t.app, 'POST', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', content: 'new', commit_message: 'add doc' } });
    assert.deepEqual([r.status, r.body], [201, { file_path: 'docs/new file.md', branch: 'main' }]);
    r = await call(t.app, 'POST', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', content: 'new', commit_message: 'add doc' } });
    assert.deepEqual([r.status, r.body], [400, { message: 'A file with this name already exists' }]);
    const meta = await call(t.app, 'GET', files('docs/new file.md'), { token: u.developer.token, query: { ref: 'main' } });
    r = await call(t.app, 'PUT', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', content: 'changed', commit_message: 'edit', last_commit_id: meta.body.last_commit_id } });
    assert.deepEqual([r.status, r.body], [200, { file_path: 'docs/new file.md', branch: 'main' }]);
    r = await call(t.app, 'PUT', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', content: 'stale', commit_message: 'edit', last_commit_id: meta.body.last_commit_id } });
    assert.deepEqual([r.status, r.body], [400, { message: 'You are attempting to update a file that has changed since you started editing it.' }]);
    r = await call(t.app, 'PUT', files('nope.md'), { token: u.developer.token, body: { branch: 'main', content: 'x', commit_message: 'edit' } });
    assert.deepEqual([r.status, r.body], [400, { message: "A file with this name doesn't exist" }]);
    r = await call(t.app, 'PUT', files('nope.md'), { token: u.developer.token, body: { branch: 'main', content: 'x' } });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "commit_message" not given' }]);
    r = await call(t.app, 'DELETE', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', commit_message: 'rm' } });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', files('docs/new file.md'), { token: u.developer.token, body: { branch: 'main', commit_message: 'rm' } });
    assert.deepEqual([r.status, r.body], [400, { message: "A file with this name doesn't exist" }]);
    r = await call(t.app, 'POST', files('z.md'), { token: u.reporter.token, body: { branch: 'main', content: 'x', commit_message: 'x' } });
    assert.equal(r.status, 403);
  });

  test('a read-only project refuses writes', async () => {
    await t.app.db.updateTable('projects').set({ repository_read_only: 1 }).where('id', '=', p.id).execute();
    const r = await call(t.app, 'POST', files('ro.md'), { token: u.developer.token, body: { branch: 'main', content: 'x', commit_message: 'x' } });
    await t.app.db.updateTable('projects').set({ repository_read_only: 0 }).where('id', '=', p.id).execute();
    assert.deepEqual([r.status, r.body], [400, { message: 'The repository is temporarily read-only. Please try again later.' }]);
  });
});

describe('tree, commits, compare', () => {
  test('tree of a path and its errors', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/tree`, { token: u.reporter.token, query: { path: 'lib' } });
    assert.deepEqual(r.body.map((e: any) => Object.keys(e)), [['id', 'name', 'type', 'path', 'mode']]);
    assert.equal(r.body[0].path, 'lib/app.js');
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/tree`, { token: u.reporter.token, query: { path: 'nope' } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Tree Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/tree`, { token: u.reporter.token, query: { ref: 'nope' } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Tree Not Found' }]);
  });

  test('commit list with ref_name, path, pagination; single commit', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits`, { token: u.reporter.token, query: { per_page: '2' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 2);
    assert.ok(Number(r.headers['x-total']) >= 9);
    assert.equal(r.headers['x-next-page'], '2');
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits`, { token: u.reporter.token, query: { path: 'lib/app.js' } });
    assert.deepEqual(r.body.map((c: any) => c.title), ['Rework']);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits`, { token: u.reporter.token, query: { ref_name: 'nope' } });
    assert.deepEqual(r.body, []);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits`, { token: u.reporter.token, query: { until: '2000-01-01T00:00:00Z' } });
    assert.deepEqual(r.body, []);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits/${first.id}`, { token: u.reporter.token });
    assert.equal(r.body.id, first.id);
    assert.deepEqual(r.body.stats, { additions: 3, deletions: 0, total: 3 });
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits/${'0'.repeat(40)}`, { token: u.reporter.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Commit Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/commits/--all`, { token: u.reporter.token });
    assert.equal(r.status, 404);
  });

  test('compare', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/compare`, { token: u.reporter.token, query: { from: first.id, to: 'main' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['commit', 'commits', 'diffs', 'compare_timeout', 'compare_same_ref', 'web_url']);
    assert.equal(r.body.commits[0].title, 'Rework');
    const readme = r.body.diffs.find((d: any) => d.new_path === 'README.md');
    assert.match(readme.diff, /^@@ .*\n-# Hello\n\+# Hello again\n/);
    const moved = r.body.diffs.find((d: any) => d.new_path === 'lib/app.js');
    assert.equal(moved.renamed_file, true);
    assert.equal(moved.old_path, 'src/app.js');
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/compare`, { token: u.reporter.token, query: { from: 'main', to: 'main' } });
    assert.equal(r.body.compare_same_ref, true);
    assert.deepEqual(r.body.commits, []);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/compare`, { token: u.reporter.token, query: { from: 'nope', to: 'main' } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Ref Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/compare`, { token: u.reporter.token, query: { from: 'main' } });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "to" not given' }]);
  });
});

describe('tags', () => {
  test('create lightweight and annotated, list, single, delete, errors', async () => {
    let r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'v1.0.0', ref: 'main', message: 'First release' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body), ['name', 'message', 'target', 'commit', 'release', 'protected', 'created_at']);
    assert.equal(r.body.message, 'First release');
    assert.notEqual(r.body.target, r.body.commit.id);
    assert.equal(r.body.created_at, '2026-06-01T12:00:00.000+00:00');
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'light', ref: first.id } });
    assert.equal(r.status, 201);
    assert.equal(r.body.target, first.id);
    assert.equal(r.body.created_at, null);
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'light', ref: 'main' } });
    assert.deepEqual([r.status, r.body], [400, { message: 'Tag light already exists' }]);
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'bad name', ref: 'main' } });
    assert.deepEqual([r.status, r.body], [400, { message: 'Tag name invalid' }]);
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'x', ref: 'nope' } });
    assert.deepEqual([r.status, r.body], [400, { message: 'Target nope is invalid' }]);
    await call(t.app, 'POST', `/projects/${p.id}/protected_tags`, { token: u.maintainer.token, body: { name: 'rel-*' } });
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.developer.token, body: { tag_name: 'rel-1', ref: 'main' } });
    assert.equal(r.status, 403);
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.maintainer.token, body: { tag_name: 'rel-1', ref: 'main' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.protected, true);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/tags`, { token: u.reporter.token, query: { order_by: 'name', sort: 'asc' } });
    assert.deepEqual(r.body.map((x: any) => x.name), ['light', 'rel-1', 'v1.0.0']);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/tags/v1.0.0`, { token: u.reporter.token });
    assert.equal(r.body.name, 'v1.0.0');
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/tags/rel-1`, { token: u.developer.token });
    assert.equal(r.status, 403);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/tags/light`, { token: u.developer.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/tags/light`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [404, { message: 'No such tag' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/tags/light`, { token: u.reporter.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Tag Not Found' }]);
  });
});

describe('a project whose repository is missing on disk', () => {
  const make = async (name: string) => {
    const r = await call(t.app, 'POST', '/projects', { token: u.owner.token, body: { name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return reloadProject(t.app, r.body.id);
  };
  const ask = async (q: ProjectRow) => Promise.all([
    `/projects/${q.id}/repository/tree`,
    `/projects/${q.id}/repository/branches`,
    `/projects/${q.id}/repository/branches/main`,
    `/projects/${q.id}/repository/tags`,
    `/projects/${q.id}/repository/files/README.md?ref=main`,
    `/projects/${q.id}/repository/files/README.md/raw?ref=main`,
    `/projects/${q.id}/repository/commits`,
    `/projects/${q.id}/repository/commits/main`,
    `/projects/${q.id}/repository/commits/main/diff`,
    `/projects/${q.id}/repository/commits/main/refs`,
    `/projects/${q.id}/repository/commits/main/signature`,
    `/projects/${q.id}/repository/files/README.md/blame?ref=main`,
    `/projects/${q.id}/repository/blobs/abcd1234`,
    `/projects/${q.id}/repository/archive.zip`,
    `/projects/${q.id}/repository/merge_base?refs[]=main&refs[]=main`,
    `/projects/${q.id}/repository/contributors`,
  ].map(async (path) => {
    const r = await call(t.app, 'GET', path, { token: u.reporter.token });
    return [path.replace(String(q.id), ':id'), r.status, r.body];
  }));

  // Gone (a lost disk), or cut short by a stop during `git init` (HEAD written, no object store yet).
  for (const [what, damage] of [
    ['gone', (dir: string) => rmSync(dir, { recursive: true, force: true })],
    ['half-made', (dir: string) => { for (const d of ['objects', 'refs']) rmSync(join(dir, d), { recursive: true, force: true }); }],
  ] as const) {
    test(`${what}: tree, branches, files and commits answer like an empty repository, and a write brings it back`, async () => {
      const empty = await make(`empty-${what}`);
      const broken = await make(`broken-${what}`);
      damage(repoFor(t.app.config, broken).path);
      const [want, got] = [await ask(empty), await ask(broken)];
      for (const [, status] of got) assert.ok((status as number) < 500, JSON.stringify(got));
      assert.deepEqual(got, want);
      const c = await call(t.app, 'POST', `/projects/${broken.id}/repository/commits`, {
        token: u.owner.token, body: { branch: 'main', commit_message: 'again', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] },
      });
      assert.equal(c.status, 201, JSON.stringify(c.body));
    });
  }
});
