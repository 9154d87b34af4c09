import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, reloadProject, type RoleCast, makeUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from './repository.common.ts';
import { SIGNED_README, SIGNER_KEY_ID, SIGNER_PUBLIC_KEY, signedCommitObject } from '../../../test/support/gpg-fixtures.ts';

let t: TestApp;
let p: ProjectRow;
let r: RoleCast;
const c: Record<string, any> = {};

const api = (path: string) => `/projects/${p.id}/repository${path}`;
const enc = encodeURIComponent;

async function commit(token: string, body: Record<string, unknown>, project = p) {
  const res = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, { token, body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  (t.clock as ManualClock).advance(60_000);
  return res.body;
}

/** Names of the members of an uncompressed tar. */
function tarNames(buf: Buffer): string[] {
  const names: string[] = [];
  for (let at = 0; at + 512 <= buf.length; ) {
    const name = buf.subarray(at, at + 100).toString('utf8').replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(buf.subarray(at + 124, at + 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    if (buf[at + 156] !== 0x67 /* g: pax global header */) names.push(name);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

before(async () => {
  t = await buildTestApp();
  p = await makeProject(t.app, { path: 'tools', visibility: 0, repository: false });
  r = await castRoles(t.app, p);
  const dev = r.developer.token;
  c.first = await commit(dev, {
    branch: 'main', commit_message: 'Initial import', author_name: 'Ada', author_email: 'ada@example.com',
    actions: [
      { action: 'create', file_path: 'README.md', content: '# Hello\n' },
      { action: 'create', file_path: 'src/a.txt', content: 'one\ntwo\nthree\n' },
      { action: 'create', file_path: 'bin/run', content: '#!/bin/sh\n', execute_filemode: true },
    ],
  });
  c.second = await commit(dev, { branch: 'main', commit_message: 'Change two', actions: [{ action: 'update', file_path: 'src/a.txt', content: 'one\nTWO\nthree\n' }] });
  c.third = await commit(r.maintainer.token, { branch: 'main', commit_message: 'Add guide\n\nWith a body.', actions: [{ action: 'create', file_path: 'docs/guide.md', content: 'guide\n' }] });
  assert.equal((await call(t.app, 'POST', api('/branches'), { token: dev, body: { branch: 'feature', ref: c.first.id } })).status, 201);
  assert.equal((await call(t.app, 'POST', api('/tags'), { token: dev, body: { tag_name: 'v1', ref: c.second.id } })).status, 201);
});
after(async () => { await t.close(); });

describe('a branch in an empty repository', () => {
  test('the default branch is made first with an empty README.md, then the branch (201)', async () => {
    const q = await makeProject(t.app, { path: 'empty', visibility: 0, repository: true });
    const roles = await castRoles(t.app, q);
    const refused = await call(t.app, 'POST', `/projects/${q.id}/repository/branches`, { token: roles.reporter.token, body: { branch: 'feature', ref: 'main' } });
    assert.deepEqual([refused.status, refused.body], [403, { message: '403 Forbidden' }]);
    assert.equal((await reloadProject(t.app, q.id)).empty_repo, 1);
    const res = await call(t.app, 'POST', `/projects/${q.id}/repository/branches`, { token: roles.developer.token, body: { branch: 'feature', ref: 'main' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.name, 'feature');
    assert.equal(res.body.commit.title, 'Add README.md');
    assert.equal(res.body.commit.author_email, roles.developer.user.email);
    const branches = await call(t.app, 'GET', `/projects/${q.id}/repository/branches`, { token: roles.developer.token });
    assert.deepEqual(branches.body.map((b: any) => [b.name, b.commit.id, b.default]), [['feature', res.body.commit.id, false], ['main', res.body.commit.id, true]]);
    const readme = await call(t.app, 'GET', `/projects/${q.id}/repository/files/README.md`, { token: roles.developer.token, query: { ref: 'main' } });
    assert.deepEqual([readme.status, readme.body.content, readme.body.size], [200, '', 0]);
    const proj = await reloadProject(t.app, q.id);
    assert.deepEqual([proj.empty_repo, proj.default_branch], [0, 'main']);
    const again = await call(t.app, 'POST', `/projects/${q.id}/repository/branches`, { token: roles.developer.token, body: { branch: 'other', ref: 'nope' } });
    assert.deepEqual([again.status, again.body], [400, { message: "Failed to create branch 'other': invalid reference name 'nope'" }]);
  });

  test('asking for the default branch itself makes it and answers that it exists', async () => {
    const q = await makeProject(t.app, { path: 'empty-main', visibility: 0, repository: true });
    const roles = await castRoles(t.app, q);
    const res = await call(t.app, 'POST', `/projects/${q.id}/repository/branches`, { token: roles.maintainer.token, body: { branch: 'main', ref: 'main' } });
    assert.deepEqual([res.status, res.body], [400, { message: 'Branch already exists' }]);
    const branches = await call(t.app, 'GET', `/projects/${q.id}/repository/branches`, { token: roles.maintainer.token });
    assert.deepEqual(branches.body.map((b: any) => b.name), ['main']);
  });
});

describe('file metadata headers', () => {
  const expected = () => ({
    'x-gitlab-blob-id': spawnSync('git', ['--git-dir', repoFor(t.app.config, p).path, 'rev-parse', `${c.second.id}:src/a.txt`]).stdout.toString().trim(),
    'x-gitlab-commit-id': c.third.id,
    'x-gitlab-content-sha256': createHash('sha256').update('one\nTWO\nthree\n').digest('hex'),
    'x-gitlab-encoding': 'base64',
    'x-gitlab-execute-filemode': 'false',
    'x-gitlab-file-name': 'a.txt',
    'x-gitlab-file-path': 'src/a.txt',
    'x-gitlab-last-commit-id': c.second.id,
    'x-gitlab-ref': 'main',
    'x-gitlab-size': '14',
  });
  const gitlabHeaders = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith('x-gitlab-')).sort());

  test('GET and HEAD carry them; HEAD has no body', async () => {
    const get = await call(t.app, 'GET', api(`/files/${enc('src/a.txt')}`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.equal(get.status, 200);
    assert.deepEqual(gitlabHeaders(get.headers), expected());
    assert.equal(get.body.blob_id, expected()['x-gitlab-blob-id']);
    const head = await call(t.app, 'HEAD', api(`/files/${enc('src/a.txt')}`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.deepEqual(gitlabHeaders(head.headers), expected());
    const exec = await call(t.app, 'HEAD', api(`/files/${enc('bin/run')}`), { token: r.reporter.token, query: { ref: c.first.id } });
    assert.equal(exec.headers['x-gitlab-execute-filemode'], 'true');
    assert.equal(exec.headers['x-gitlab-ref'], c.first.id);
    const missing = await call(t.app, 'HEAD', api(`/files/${enc('nope.txt')}`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['x-gitlab-file-path'], undefined);
  });

  test('a name beyond ASCII goes out as its UTF-8 bytes', async () => {
    const path = enc('dir/☃ snow.txt');
    const made = await call(t.app, 'POST', api(`/files/${path}`), { token: r.developer.token, body: { branch: 'unicode', start_branch: 'main', content: 'cold', commit_message: 'add' } });
    assert.equal(made.status, 201, made.text);
    for (const method of ['HEAD', 'GET']) {
      const res = await call(t.app, method, api(`/files/${path}`), { token: r.reporter.token, query: { ref: 'unicode' } });
      assert.equal(res.status, 200);
      const bytes = (h: string) => Buffer.from(String(res.headers[h]), 'latin1').toString('utf8');
      assert.deepEqual([bytes('x-gitlab-file-name'), bytes('x-gitlab-file-path')], ['☃ snow.txt', 'dir/☃ snow.txt']);
    }
    assert.equal((await call(t.app, 'DELETE', api('/branches/unicode'), { token: r.developer.token })).status, 204);
  });

  test('the raw file carries them too; without ref the ref header is empty', async () => {
    const raw = await call(t.app, 'GET', api(`/files/${enc('src/a.txt')}/raw`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.deepEqual([raw.status, raw.text], [200, 'one\nTWO\nthree\n']);
    assert.deepEqual(gitlabHeaders(raw.headers), expected());
    const noRef = await call(t.app, 'GET', api(`/files/${enc('src/a.txt')}/raw`), { token: r.reporter.token });
    assert.deepEqual(gitlabHeaders(noRef.headers), { ...expected(), 'x-gitlab-ref': '' });
  });
});

describe('blobs', () => {
  test('by full and abbreviated id, base64 and raw; anything else is 404 Blob Not Found', async () => {
    const tree = await call(t.app, 'GET', api('/tree'), { token: r.reporter.token, query: { path: 'src' } });
    const id = tree.body[0].id;
    let res = await call(t.app, 'GET', api(`/blobs/${id}`), { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [200, { size: 14, encoding: 'base64', content: Buffer.from('one\nTWO\nthree\n').toString('base64'), sha: id }]);
    res = await call(t.app, 'GET', api(`/blobs/${id.slice(0, 8)}`), { token: r.reporter.token });
    assert.equal(res.body.sha, id);
    res = await call(t.app, 'GET', api(`/blobs/${id}/raw`), { token: r.reporter.token });
    assert.deepEqual([res.status, res.text, res.headers['content-type'], res.headers['content-disposition']], [200, 'one\nTWO\nthree\n', 'text/plain; charset=utf-8', 'inline']);
    const root = await call(t.app, 'GET', api('/tree'), { token: r.reporter.token });
    const dir = root.body.find((e: any) => e.type === 'tree').id;
    for (const bad of ['0'.repeat(40), dir, c.first.id, 'main', '--all', 'xyz']) {
      for (const suffix of ['', '/raw']) {
        res = await call(t.app, 'GET', api(`/blobs/${enc(bad)}${suffix}`), { token: r.reporter.token });
        assert.deepEqual([res.status, res.body], [404, { message: '404 Blob Not Found' }], `${bad}${suffix}`);
      }
    }
  });
});

describe('archives', () => {
  const get = async (path: string, query?: Record<string, string>, token = r.reporter.token) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v4${api(path)}`, query, headers: { 'private-token': token } });
    return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload, body: res.body };
  };

  test('every format, by suffix or parameter, named as the reference names them', async () => {
    const name = `tools-main-${c.third.id}`;
    let res = await get('/archive');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-disposition'], `attachment; filename="${name}.tar.gz"`);
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.deepEqual(tarNames(gunzipSync(res.bytes)).sort(), [`${name}/`, `${name}/README.md`, `${name}/bin/`, `${name}/bin/run`, `${name}/docs/`, `${name}/docs/guide.md`, `${name}/src/`, `${name}/src/a.txt`]);
    for (const [format, ext, magic] of [
      ['tar', 'tar', null], ['zip', 'zip', 'PK'], ['tar.bz2', 'tar.bz2', 'BZh'], ['tbz', 'tar.bz2', 'BZh'], ['tbz2', 'tar.bz2', 'BZh'],
      ['tb2', 'tar.bz2', 'BZh'], ['bz2', 'tar.bz2', 'BZh'], ['tar.gz', 'tar.gz', '\x1f\x8b'],
    ] as const) {
      for (const res2 of [await get(`/archive.${format}`), await get('/archive', { format })]) {
        assert.equal(res2.status, 200, format);
        assert.equal(res2.headers['content-disposition'], `attachment; filename="${name}.${ext}"`, format);
        assert.equal(res2.headers['content-type'], format === 'zip' ? 'application/zip' : 'application/octet-stream');
        if (magic) assert.equal(res2.bytes.subarray(0, magic.length).toString('latin1'), magic, format);
        else assert.ok(tarNames(res2.bytes).includes(`${name}/src/a.txt`));
      }
    }
  });

  test('sha and path choose what is archived; unknown ones are 404 File Not Found', async () => {
    let res = await get('/archive.tar', { sha: 'v1', path: 'src' });
    const name = `tools-v1-${c.second.id}-src`;
    assert.equal(res.headers['content-disposition'], `attachment; filename="${name}.tar"`);
    assert.deepEqual(tarNames(res.bytes), [`${name}/`, `${name}/src/`, `${name}/src/a.txt`]);
    res = await get('/archive.tar', { sha: c.first.id });
    assert.equal(res.headers['content-disposition'], `attachment; filename="tools-${c.first.id}-${c.first.id}.tar"`);
    assert.ok(!tarNames(res.bytes).some((n) => n.includes('guide')));
    assert.equal((await call(t.app, 'POST', api('/branches'), { token: r.developer.token, body: { branch: 'rel/ünï', ref: c.first.id } })).status, 201);
    res = await get('/archive', { sha: 'rel/ünï' });
    assert.equal(res.headers['content-disposition'], `attachment; filename="tools-rel-_n_-${c.first.id}.tar.gz"; filename*=UTF-8''tools-rel-%C3%BCn%C3%AF-${c.first.id}.tar.gz`);
    assert.ok(tarNames(gunzipSync(res.bytes)).includes(`tools-rel-ünï-${c.first.id}/README.md`));
    assert.equal((await call(t.app, 'DELETE', api(`/branches/${enc('rel/ünï')}`), { token: r.developer.token })).status, 204);
    for (const query of [{ sha: 'nope' }, { path: 'nope' }, { sha: '--output=/tmp/x' }] as Array<Record<string, string>>) {
      res = await get('/archive', query);
      assert.deepEqual([res.status, JSON.parse(res.body)], [404, { message: '404 File Not Found' }], JSON.stringify(query));
    }
  });
});

describe('commit diff and refs', () => {
  test('diff against the first parent, a root commit against nothing, paginated', async () => {
    let res = await call(t.app, 'GET', api(`/commits/${c.second.id}/diff`), { token: r.reporter.token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, [{
      diff: '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n', collapsed: false, too_large: false, new_path: 'src/a.txt', old_path: 'src/a.txt',
      a_mode: '100644', b_mode: '100644', new_file: false, renamed_file: false, deleted_file: false, generated_file: false,
    }]);
    res = await call(t.app, 'GET', api(`/commits/${c.second.id}/diff`), { token: r.reporter.token, query: { unidiff: 'true' } });
    assert.equal(res.body[0].diff, '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');
    res = await call(t.app, 'GET', api('/compare'), { token: r.reporter.token, query: { from: c.first.id, to: c.third.id, unidiff: 'True' } });
    assert.deepEqual(res.body.diffs.map((d: any) => d.diff.split('\n').slice(0, 2)), [['--- /dev/null', '+++ b/docs/guide.md'], ['--- a/src/a.txt', '+++ b/src/a.txt']]);
    res = await call(t.app, 'GET', api(`/commits/${c.first.id}/diff`), { token: r.reporter.token, query: { per_page: '2' } });
    assert.deepEqual(res.body.map((d: any) => [d.new_path, d.new_file]), [['README.md', true], ['bin/run', true]]);
    assert.equal(res.headers['x-total'], '3');
    res = await call(t.app, 'GET', api('/commits/nope/diff'), { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [404, { message: '404 Commit Not Found' }]);
  });

  test('refs holding a commit, by type', async () => {
    let res = await call(t.app, 'GET', api(`/commits/${c.first.id}/refs`), { token: r.reporter.token });
    assert.deepEqual(res.body, [{ type: 'branch', name: 'feature' }, { type: 'branch', name: 'main' }, { type: 'tag', name: 'v1' }]);
    res = await call(t.app, 'GET', api(`/commits/${c.first.id}/refs`), { token: r.reporter.token, query: { type: 'tag' } });
    assert.deepEqual(res.body, [{ type: 'tag', name: 'v1' }]);
    res = await call(t.app, 'GET', api(`/commits/${c.third.id}/refs`), { token: r.reporter.token, query: { type: 'branch' } });
    assert.deepEqual(res.body, [{ type: 'branch', name: 'main' }]);
    res = await call(t.app, 'GET', api(`/commits/${c.first.id}/refs`), { token: r.reporter.token, query: { type: 'other' } });
    assert.deepEqual([res.status, res.body], [400, { error: 'type does not have a valid value' }]);
  });
});

describe('merge base, blame, contributors', () => {
  test('merge_base of two or more refs', async () => {
    let res = await call(t.app, 'GET', `${api('/merge_base')}?refs[]=main&refs[]=feature`, { token: r.reporter.token });
    assert.deepEqual([res.status, res.body.id, res.body.title], [200, c.first.id, 'Initial import']);
    res = await call(t.app, 'GET', api('/merge_base'), { token: r.reporter.token, query: { refs: `main,${c.second.id}` } });
    assert.equal(res.body.id, c.second.id);
    res = await call(t.app, 'GET', api('/merge_base'), { token: r.reporter.token, query: { refs: 'main' } });
    assert.deepEqual([res.status, res.body], [400, { message: 'Provide at least 2 refs' }]);
    res = await call(t.app, 'GET', `${api('/merge_base')}?refs[]=main&refs[]=nope&refs[]=gone`, { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [400, { message: 'Could not find refs: nope, gone' }]);
    res = await call(t.app, 'GET', `${api('/merge_base')}?refs[]=main&refs[]=nope`, { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [400, { message: 'Could not find ref: nope' }]);
    res = await call(t.app, 'GET', api('/merge_base'), { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [400, { message: '400 (Bad request) "refs" not given' }]);
  });

  test('blame in runs of lines, with a range', async () => {
    let res = await call(t.app, 'GET', api(`/files/${enc('src/a.txt')}/blame`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.map((g: any) => [g.commit.id, g.lines]), [[c.first.id, ['one']], [c.second.id, ['TWO']], [c.first.id, ['three']]]);
    assert.deepEqual(Object.keys(res.body[0].commit), ['id', 'parent_ids', 'message', 'authored_date', 'author_name', 'author_email', 'committed_date', 'committer_name', 'committer_email']);
    assert.equal(res.body[0].commit.author_name, 'Ada');
    assert.equal(res.headers['x-gitlab-file-path'], 'src/a.txt');
    res = await call(t.app, 'GET', `${api(`/files/${enc('src/a.txt')}/blame`)}?ref=main&range[start]=2&range[end]=9`, { token: r.reporter.token });
    assert.deepEqual(res.body.map((g: any) => g.lines), [['TWO'], ['three']]);
    res = await call(t.app, 'GET', `${api(`/files/${enc('src/a.txt')}/blame`)}?ref=main&range[start]=3&range[end]=2`, { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [400, { message: 'range[start] must be less than or equal to range[end]' }]);
    res = await call(t.app, 'GET', `${api(`/files/${enc('src/a.txt')}/blame`)}?ref=main&range[start]=0&range[end]=2`, { token: r.reporter.token });
    assert.deepEqual([res.status, res.body], [400, { error: 'range[start] does not have a valid value' }]);
    res = await call(t.app, 'GET', api(`/files/${enc('nope.txt')}/blame`), { token: r.reporter.token, query: { ref: 'main' } });
    assert.deepEqual([res.status, res.body], [404, { message: '404 File Not Found' }]);
    res = await call(t.app, 'GET', api(`/files/${enc('src/a.txt')}/blame`), { token: r.reporter.token, query: { ref: 'nope' } });
    assert.deepEqual([res.status, res.body], [404, { message: '404 Commit Not Found' }]);
  });

  test('contributors by e-mail, ordered and sorted', async () => {
    let res = await call(t.app, 'GET', api('/contributors'), { token: r.reporter.token });
    const dev = { name: r.developer.user.name, email: r.developer.user.email, commits: 1, additions: 0, deletions: 0 };
    const maint = { name: r.maintainer.user.name, email: r.maintainer.user.email, commits: 1, additions: 0, deletions: 0 };
    const ada = { name: 'Ada', email: 'ada@example.com', commits: 1, additions: 0, deletions: 0 };
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.map((x: any) => x.email).sort(), [ada, dev, maint].map((x) => x.email).sort());
    res = await call(t.app, 'GET', api('/contributors'), { token: r.reporter.token, query: { order_by: 'name', sort: 'desc' } });
    assert.deepEqual(res.body, [ada, dev, maint].sort((a, b) => (a.name < b.name ? 1 : -1)));
    res = await call(t.app, 'GET', api('/contributors'), { token: r.reporter.token, query: { ref: 'feature', order_by: 'email' } });
    assert.deepEqual(res.body, [ada]);
    res = await call(t.app, 'GET', api('/contributors'), { token: r.reporter.token, query: { order_by: 'size' } });
    assert.deepEqual([res.status, res.body], [400, { error: 'order_by does not have a valid value' }]);
  });
});

describe('cherry-pick and revert', () => {
  test('cherry-pick onto another branch keeps the author; again is refused as empty', async () => {
    const before = (await call(t.app, 'GET', api('/branches/feature'), { token: r.developer.token })).body.commit.id;
    let res = await call(t.app, 'POST', api(`/commits/${c.third.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'feature', dry_run: true } });
    assert.deepEqual([res.status, res.body], [200, { dry_run: 'success' }]);
    assert.equal((await call(t.app, 'GET', api('/branches/feature'), { token: r.developer.token })).body.commit.id, before);
    res = await call(t.app, 'POST', api(`/commits/${c.third.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'feature' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['id', 'short_id', 'created_at', 'parent_ids', 'title', 'message', 'author_name', 'author_email', 'authored_date', 'committer_name', 'committer_email', 'committed_date', 'trailers', 'extended_trailers', 'web_url']);
    assert.equal(res.body.message, `Add guide\n\nWith a body.\n\n(cherry picked from commit ${c.third.id})`);
    assert.deepEqual(res.body.parent_ids, [before]);
    assert.deepEqual([res.body.author_name, res.body.author_email, res.body.authored_date], [c.third.author_name, c.third.author_email, c.third.authored_date]);
    assert.equal(res.body.committer_email, r.developer.user.email);
    const tree = await call(t.app, 'GET', api('/tree'), { token: r.developer.token, query: { ref: 'feature', recursive: 'true' } });
    assert.ok(tree.body.some((e: any) => e.path === 'docs/guide.md'));
    const head = (await call(t.app, 'GET', api('/branches/feature'), { token: r.developer.token })).body.commit.id;
    assert.equal(head, res.body.id);
    const text = 'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.';
    res = await call(t.app, 'POST', api(`/commits/${c.third.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'feature' } });
    assert.deepEqual([res.status, res.body], [400, { message: text, error_code: 'empty' }]);
    res = await call(t.app, 'POST', api(`/commits/${c.third.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'feature', dry_run: true } });
    assert.deepEqual([res.status, res.body], [400, { message: text, error_code: 'empty', dry_run: 'error' }]);
    assert.equal((await call(t.app, 'GET', api('/branches/feature'), { token: r.developer.token })).body.commit.id, head);
  });

  test('a custom message; a conflicting change is refused as a conflict', async () => {
    await commit(r.developer.token, { branch: 'feature', commit_message: 'Feature edit', actions: [{ action: 'update', file_path: 'src/a.txt', content: 'one\ntwo!\nthree\n' }] });
    const text = 'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.';
    let res = await call(t.app, 'POST', api(`/commits/${c.second.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'feature', message: 'Mine' } });
    assert.deepEqual([res.status, res.body], [400, { message: text, error_code: 'conflict' }]);
    res = await call(t.app, 'POST', api(`/commits/${c.second.id}/cherry_pick`), { token: r.developer.token, form: { branch: 'main', message: 'Mine' } });
    assert.deepEqual([res.status, res.body.error_code], [400, 'empty']);
    const side = await commit(r.developer.token, { branch: 'feature', commit_message: 'Side file', actions: [{ action: 'create', file_path: 'side.txt', content: 's\n' }] });
    res = await call(t.app, 'POST', api(`/commits/${side.id}/cherry_pick`), { token: r.developer.token, body: { branch: 'main', message: 'Mine' } });
    assert.deepEqual([res.status, res.body.message], [201, 'Mine']);
  });

  test('changes to other lines of the same file merge', async () => {
    const dev = r.developer.token;
    assert.equal((await call(t.app, 'POST', api('/branches'), { token: dev, body: { branch: 'lines', ref: c.first.id } })).status, 201);
    const x = await commit(dev, { branch: 'lines', commit_message: 'Six lines', actions: [{ action: 'create', file_path: 'm.txt', content: 'a\nb\nc\nd\ne\nf\n' }] });
    const y = await commit(dev, { branch: 'lines2', start_sha: x.id, commit_message: 'First line', actions: [{ action: 'update', file_path: 'm.txt', content: 'A\nb\nc\nd\ne\nf\n' }] });
    await commit(dev, { branch: 'lines', commit_message: 'Last line', actions: [{ action: 'update', file_path: 'm.txt', content: 'a\nb\nc\nd\ne\nF\n' }] });
    const read = async () => (await call(t.app, 'GET', api('/files/m.txt/raw'), { token: dev, query: { ref: 'lines' } })).text;
    const res = await call(t.app, 'POST', api(`/commits/${y.id}/cherry_pick`), { token: dev, body: { branch: 'lines' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(await read(), 'A\nb\nc\nd\ne\nF\n');
    const back = await call(t.app, 'POST', api(`/commits/${y.id}/revert`), { token: dev, body: { branch: 'lines' } });
    assert.equal(back.status, 201, JSON.stringify(back.body));
    assert.equal(await read(), 'a\nb\nc\nd\ne\nF\n');
    for (const b of ['lines', 'lines2']) assert.equal((await call(t.app, 'DELETE', api(`/branches/${b}`), { token: dev })).status, 204);
  });

  test('revert: the reference message; a second revert is refused', async () => {
    const target = await commit(r.developer.token, { branch: 'main', commit_message: 'Add notes', actions: [{ action: 'create', file_path: 'notes.txt', content: 'n\n' }] });
    let res = await call(t.app, 'POST', api(`/commits/${target.id}/revert`), { token: r.developer.token, body: { branch: 'main' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.message, `Revert "Add notes"\n\nThis reverts commit ${target.id}`);
    assert.equal(res.body.title, 'Revert "Add notes"');
    assert.equal(res.body.author_email, r.developer.user.email);
    assert.deepEqual(res.body.parent_ids, [target.id]);
    const file = await call(t.app, 'GET', api(`/files/notes.txt`), { token: r.developer.token, query: { ref: 'main' } });
    assert.equal(file.status, 404);
    res = await call(t.app, 'POST', api(`/commits/${target.id}/revert`), { token: r.developer.token, body: { branch: 'main' } });
    assert.deepEqual([res.status, res.body], [400, {
      message: 'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.',
      error_code: 'empty',
    }]);
    res = await call(t.app, 'POST', api(`/commits/${c.second.id}/revert`), { token: r.developer.token, body: { branch: 'main', dry_run: true } });
    assert.deepEqual([res.status, res.body], [200, { dry_run: 'success' }]);
  });

  test('refusals: branch, commit, parameters, protected branches, read-only', async () => {
    const post = (what: string, body: Record<string, unknown>, token = r.developer.token) => call(t.app, 'POST', api(`/commits/${what}`), { token, body });
    let res = await post(`${c.first.id}/revert`, { branch: 'nope' });
    assert.deepEqual([res.status, res.body], [404, { message: '404 Branch Not Found' }]);
    res = await post('nope/cherry_pick', { branch: 'main' });
    assert.deepEqual([res.status, res.body], [404, { message: '404 Commit Not Found' }]);
    res = await post(`${c.first.id}/revert`, {});
    assert.deepEqual([res.status, res.body], [400, { message: '400 (Bad request) "branch" not given' }]);
    res = await post(`${c.first.id}/cherry_pick`, { branch: '' });
    assert.deepEqual([res.status, res.body], [400, { error: 'branch is empty' }]);
    res = await post(`${c.first.id}/revert`, { branch: 'main', dry_run: 'maybe' });
    assert.deepEqual([res.status, res.body], [400, { error: 'dry_run is invalid' }]);
    const head = (await call(t.app, 'GET', api('/branches/main'), { token: r.developer.token })).body.commit.id;
    await call(t.app, 'POST', `/projects/${p.id}/protected_branches`, { token: r.maintainer.token, body: { name: 'main' } });
    res = await post(`${c.third.id}/revert`, { branch: 'main' });
    assert.deepEqual([res.status, res.body], [403, { message: '403 Forbidden - You are not allowed to push into this branch' }]);
    res = await post(`${c.third.id}/revert`, { branch: 'main', dry_run: true }, r.maintainer.token);
    assert.deepEqual([res.status, res.body], [200, { dry_run: 'success' }]);
    await call(t.app, 'DELETE', `/projects/${p.id}/protected_branches/main`, { token: r.maintainer.token });
    await t.app.db.updateTable('projects').set({ repository_read_only: 1 }).where('id', '=', p.id).execute();
    res = await post(`${c.third.id}/revert`, { branch: 'main' });
    await t.app.db.updateTable('projects').set({ repository_read_only: 0 }).where('id', '=', p.id).execute();
    assert.deepEqual([res.status, res.body], [400, { message: 'The repository is temporarily read-only. Please try again later.' }]);
    assert.equal((await call(t.app, 'GET', api('/branches/main'), { token: r.developer.token })).body.commit.id, head);
  });
});

describe('signatures', () => {
  const git = (args: string[], input?: string) => {
    const out = spawnSync('git', ['--git-dir', repoFor(t.app.config, p).path, ...args], { input });
    assert.equal(out.status, 0, out.stderr.toString());
    return out.stdout.toString().trim();
  };
  /** A commit object written straight into the repository, on its own branch. */
  const plant = (branch: string, message?: string) => {
    const blob = git(['hash-object', '-w', '--stdin'], SIGNED_README);
    assert.equal(git(['mktree'], `100644 blob ${blob}\tREADME.md\n`), '26a1c737e1fbde1ec497cdded6a0a1c4d89f6b2a');
    const sha = git(['hash-object', '-t', 'commit', '-w', '--stdin'], signedCommitObject(message));
    git(['update-ref', `refs/heads/${branch}`, sha]);
    return sha;
  };
  const signature = (sha: string) => call(t.app, 'GET', api(`/commits/${sha}/signature`), { token: r.reporter.token });
  const pgp = (o: Record<string, unknown>) => ({
    signature_type: 'PGP', gpg_key_id: null, gpg_key_primary_keyid: SIGNER_KEY_ID, gpg_key_user_name: null, gpg_key_user_email: null,
    verification_status: 'unknown_key', gpg_key_subkey_id: null, commit_source: 'gitaly', ...o,
  });

  test('an unsigned commit has none', async () => {
    const res = await signature(c.first.id);
    assert.deepEqual([res.status, res.body], [404, { message: '404 Signature Not Found' }]);
    const missing = await signature('nope');
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Commit Not Found' }]);
  });

  test('a GPG signature: unknown key, then verified against the key of its committer, unverified when tampered with', async () => {
    const sha = plant('signed');
    let res = await signature(sha);
    assert.deepEqual([res.status, res.body], [200, pgp({})]);
    res = await call(t.app, 'GET', api('/commits/signed/signature'), { token: r.reporter.token });
    assert.deepEqual(res.body, pgp({}));
    const signer = await makeUser(t.app, { username: 'signer' });
    const key = await call(t.app, 'POST', '/user/gpg_keys', { token: signer.token, body: { key: SIGNER_PUBLIC_KEY } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    res = await signature(sha);
    assert.deepEqual(res.body, pgp({ gpg_key_id: key.body.id, gpg_key_user_name: 'Signer', gpg_key_user_email: 'signer@example.com', verification_status: 'verified' }));
    const forged = plant('forged', 'Something else\n');
    res = await signature(forged);
    assert.deepEqual(res.body, pgp({ gpg_key_id: key.body.id, gpg_key_user_name: 'Signer', gpg_key_user_email: 'signer@example.com', verification_status: 'unverified' }));
    await t.app.db.updateTable('users').set({ email: 'someone@example.com' }).where('id', '=', signer.user.id).execute();
    res = await signature(sha);
    assert.deepEqual(res.body, pgp({ gpg_key_id: key.body.id, gpg_key_user_name: 'Signer', gpg_key_user_email: 'signer@example.com', verification_status: 'unverified_key' }));
    git(['update-ref', '-d', 'refs/heads/signed']);
    git(['update-ref', '-d', 'refs/heads/forged']);
  });
});

const blobId = () => spawnSync('git', ['--git-dir', repoFor(t.app.config, p).path, 'rev-parse', `${c.first.id}:README.md`]).stdout.toString().trim();

describe('who may', () => {
  const reads = () => [
    ['GET', api(`/blobs/${blobId()}/raw`)],
    ['GET', api(`/commits/${c.first.id}/diff`)],
    ['GET', api(`/commits/${c.first.id}/refs`)],
    ['GET', `${api('/merge_base')}?refs[]=main&refs[]=feature`],
    ['GET', api('/contributors')],
    ['GET', api(`/files/${enc('src/a.txt')}/blame?ref=main`)],
    ['GET', api('/archive.zip')],
  ];
  test('reads need download_code: Reporter and up on a private project', async () => {
    const want: Record<string, number> = { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 };
    for (const [method, url] of reads()) {
      for (const [role, status] of Object.entries(want)) {
        const user = (r as any)[role];
        const res = await call(t.app, method, url, { token: user?.token });
        assert.equal(res.status, status, `${role} ${url}`);
      }
    }
  });

  test('cherry-pick and revert need push_code: Developer and up', async () => {
    const want: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, owner: 200, admin: 200 };
    for (const [role, status] of Object.entries(want)) {
      const user = (r as any)[role];
      for (const action of ['revert', 'cherry_pick']) {
        const res = await call(t.app, 'POST', api(`/commits/${c.third.id}/${action}`), { token: user?.token, body: { branch: action === 'revert' ? 'main' : 'feature', dry_run: true } });
        assert.equal(res.status, action === 'cherry_pick' && status === 200 ? 400 : status, `${role} ${action} ${JSON.stringify(res.body)}`);
      }
    }
  });
});
