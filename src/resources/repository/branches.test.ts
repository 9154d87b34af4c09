import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser } from '../../../test/support/fixtures.ts';
import { makeProject, reloadProject, roleUsers, type RoleUsers } from './testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { HOUSEKEEPING_JOB, repoFor } from './repository.common.ts';
import { refReadCount } from '../../platform/git/repository.ts';
import { configureGit } from '../../platform/git/command.ts';
import { endSessionsOf } from '../../platform/git/sessions.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let t: TestApp;
let p: ProjectRow;
let pub: ProjectRow;
let u: RoleUsers;
let mainSha: string;

async function commitFile(project: ProjectRow, branch: string, path: string, text: string, extra: Record<string, unknown> = {}) {
  const r = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
    token: u.owner.token,
    body: { branch, commit_message: `add ${path}\n\nSigned-off-by: A U Thor <a@example.com>`, actions: [{ action: 'create', file_path: path, content: text }], ...extra },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

before(async () => {
  t = await buildTestApp();
  const owner = await makeUser(t.app);
  p = await makeProject(t.app, owner.user);
  pub = await makeProject(t.app, owner.user, { visibility: 20 });
  u = await roleUsers(t.app, p, owner, (o) => makeUser(t.app, o));
  mainSha = await commitFile(p, 'main', 'README.md', 'hello');
  await commitFile(pub, 'main', 'README.md', 'hello');
  // merged-1 points at main (merged); feature/x has its own commit (not merged).
  for (const [name, ref] of [['merged-1', 'main'], ['feature/x', 'main'], ['Release-2', 'main']]) {
    const r = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.owner.token, body: { branch: name, ref } });
    assert.equal(r.status, 201);
  }
  await commitFile(p, 'feature/x', 'x.txt', 'x');
});
after(async () => { await t.close(); });

describe('GET /projects/:id/repository/branches', () => {
  test('lists branches by name with every field in order', async () => {
    const r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((b: any) => b.name), ['Release-2', 'feature/x', 'main', 'merged-1']);
    const main = r.body.find((b: any) => b.name === 'main');
    assert.deepEqual(Object.keys(main), ['name', 'merged', 'protected', 'default', 'developers_can_push', 'developers_can_merge', 'can_push', 'web_url', 'commit']);
    assert.deepEqual(Object.keys(main.commit), ['id', 'short_id', 'created_at', 'parent_ids', 'title', 'message', 'author_name', 'author_email', 'authored_date', 'committer_name', 'committer_email', 'committed_date', 'trailers', 'web_url']);
    assert.equal(main.default, true);
    assert.equal(main.merged, true);
    assert.equal(main.can_push, true);
    assert.equal(main.commit.id, mainSha);
    assert.equal(main.commit.title, 'add README.md');
    assert.deepEqual(main.commit.trailers, { 'Signed-off-by': 'A U Thor <a@example.com>' });
    assert.equal(main.web_url, `http://bellows.test/${p.full_path}/-/tree/main`);
    assert.equal(main.commit.web_url, `http://bellows.test/${p.full_path}/-/commit/${mainSha}`);
    assert.match(main.commit.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000[+-]\d\d:\d\d$/);
    const fx = r.body.find((b: any) => b.name === 'feature/x');
    assert.equal(fx.merged, false);
    assert.equal(fx.default, false);
    assert.equal(r.headers['x-total'], '4');
  });

  test('search: substring with the exact match first, ^ prefix, $ suffix, case-insensitive', async () => {
    const names = async (q: Record<string, string>) =>
      (await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: q })).body.map((b: any) => b.name);
    assert.deepEqual(await names({ search: 'e' }), ['Release-2', 'feature/x', 'merged-1']);
    assert.deepEqual(await names({ search: 'MAIN' }), ['main']);
    assert.deepEqual(await names({ search: '^re' }), ['Release-2']);
    assert.deepEqual(await names({ search: '-1$' }), ['merged-1']);
    assert.deepEqual(await names({ search: 'merged-1' }), ['merged-1']);
    assert.deepEqual(await names({ regex: '^(main|feature/.*)$' }), ['feature/x', 'main']);
    assert.deepEqual(await names({ search: 'e', regex: 'x$' }), ['feature/x']);
  });

  test('an invalid regex or sort answers 400', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { regex: '(unclosed' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'regex is invalid' });
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { regex: '(?=lookahead)' } });
    assert.equal(r.status, 400);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { sort: 'nope' } });
    assert.deepEqual([r.status, r.body], [400, { error: 'sort does not have a valid value' }]);
  });

  test('pagination headers and page_token', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { per_page: '2', page: '2' } });
    assert.deepEqual(r.body.map((b: any) => b.name), ['main', 'merged-1']);
    assert.equal(r.headers['x-total-pages'], '2');
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { per_page: '2', page_token: 'feature/x' } });
    assert.deepEqual(r.body.map((b: any) => b.name), ['main', 'merged-1']);
  });

  test('a repeated read does not call git', async () => {
    await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token });
    const before = refReadCount();
    for (let i = 0; i < 3; i++) await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.developer.token, query: { search: 'e' } });
    assert.equal(refReadCount(), before);
  });

  test('access: anonymous reads a public project, not a private one; guests of a private project get 403', async () => {
    assert.equal((await call(t.app, 'GET', `/projects/${pub.id}/repository/branches`)).status, 200);
    const anon = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`);
    assert.deepEqual([anon.status, anon.body], [404, { message: '404 Project Not Found' }]);
    const stranger = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.stranger.token });
    assert.equal(stranger.status, 404);
    const guest = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.guest.token });
    assert.deepEqual([guest.status, guest.body], [403, { message: '403 Forbidden' }]);
    const reporter = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.reporter.token });
    assert.equal(reporter.status, 200);
    assert.equal(reporter.body[0].can_push, false);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: u.admin.token })).status, 200);
    const anonPub = await call(t.app, 'GET', `/projects/${pub.id}/repository/branches`);
    assert.equal(anonPub.body[0].can_push, false);
  });
});

describe('GET /projects/:id/repository/branches/:branch', () => {
  test('URL-encoded names, invalid names and missing branches', async () => {
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/feature%2Fx`, { token: u.developer.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.name, 'feature/x');
    r = await call(t.app, 'GET', `/projects/${encodeURIComponent(p.full_path)}/repository/branches/main`, { token: u.developer.token });
    assert.equal(r.status, 200);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/feature/x`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [404, { error: '404 Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/branch*`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [400, { message: 'The branch refname is invalid' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/nope`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Branch Not Found' }]);
    r = await call(t.app, 'HEAD', `/projects/${p.id}/repository/branches/feature%2Fx`, { token: u.developer.token });
    assert.deepEqual([r.status, r.text], [204, '']);
    r = await call(t.app, 'HEAD', `/projects/${p.id}/repository/branches/nope`, { token: u.developer.token });
    assert.deepEqual([r.status, r.text], [404, '']);
  });
});

describe('POST /projects/:id/repository/branches', () => {
  test('creates from a branch name or a sha, commit first', async () => {
    let r = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.developer.token, body: { branch: 'from-sha', ref: mainSha } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), ['commit', 'name', 'merged', 'protected', 'default', 'developers_can_push', 'developers_can_merge', 'can_push', 'web_url']);
    assert.equal(r.body.commit.id, mainSha);
    r = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.developer.token, form: { branch: 'from-branch', ref: 'feature/x' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.merged, false);
  });

  test('errors in the reference words', async () => {
    const post = (body: Record<string, unknown>, token = u.developer.token) => call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token, body });
    assert.deepEqual((await post({ ref: 'main' })).body, { message: '400 (Bad request) "branch" not given' });
    assert.deepEqual((await post({ branch: 'x1' })).body, { message: '400 (Bad request) "ref" not given' });
    assert.deepEqual((await post({ branch: 'x1', ref: '' })).body, { message: 'Ref is missing' });
    assert.deepEqual((await post({ branch: 'new design', ref: 'main' })).body, { message: 'Branch name is invalid' });
    assert.deepEqual((await post({ branch: '-rf', ref: 'main' })).body, { message: 'Branch name is invalid' });
    assert.deepEqual((await post({ branch: 'main', ref: 'main' })).body, { message: 'Branch already exists' });
    const bad = await post({ branch: 'x1', ref: 'foo' });
    assert.deepEqual([bad.status, bad.body], [400, { message: "Failed to create branch 'x1': invalid reference name 'foo'" }]);
    assert.deepEqual([(await post({ branch: 'x2', ref: 'main' }, u.reporter.token)).status], [403]);
    assert.deepEqual([(await post({ branch: 'x2', ref: 'main' }, u.stranger.token)).status], [404]);
    const anon = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { body: { branch: 'x2', ref: 'main' } });
    assert.deepEqual([anon.status, anon.body], [401, { message: '401 Unauthorized' }]);
    const readApi = await makeToken(t.app, u.developer.user, ['read_api']);
    assert.equal((await post({ branch: 'x2', ref: 'main' }, readApi)).status, 403);
  });
});

describe('DELETE /projects/:id/repository/branches/:branch', () => {
  test('deletes, and refuses default, protected, missing and invalid names', async () => {
    await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.developer.token, body: { branch: 'doomed/one', ref: 'main' } });
    let r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/doomed%2Fone`, { token: u.developer.token });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/doomed%2Fone`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Branch Not Found' }]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/main`, { token: u.maintainer.token });
    assert.deepEqual([r.status, r.body], [400, { message: 'The default branch of a project cannot be deleted.' }]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/a..b`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [400, { message: 'The branch refname is invalid' }]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/Release-2`, { token: u.reporter.token });
    assert.equal(r.status, 403);

    await call(t.app, 'POST', `/projects/${p.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'Release-*' } });
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/Release-2`, { token: u.developer.token });
    assert.deepEqual([r.status, r.body], [400, { message: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.' }]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/Release-2`, { token: u.maintainer.token, headers: { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    assert.deepEqual([r.status, r.body], [412, { message: '412 Precondition Failed' }]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/repository/branches/Release-2`, { token: u.maintainer.token });
    assert.equal(r.status, 204);
    await call(t.app, 'DELETE', `/projects/${p.id}/protected_branches/Release-*`, { token: u.maintainer.token });
  });
});

describe('protected flags on branches', () => {
  test('protected, developers_can_push/merge and can_push follow the rules', async () => {
    await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.developer.token, body: { branch: 'stable', ref: 'main' } });
    await call(t.app, 'POST', `/projects/${p.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'stable', push_access_level: 30, merge_access_level: 40 } });
    let r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/stable`, { token: u.developer.token });
    assert.deepEqual([r.body.protected, r.body.developers_can_push, r.body.developers_can_merge, r.body.can_push], [true, true, false, true]);
    await call(t.app, 'DELETE', `/projects/${p.id}/protected_branches/stable`, { token: u.maintainer.token });
    await call(t.app, 'POST', `/projects/${p.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'stable', push_access_level: 0 } });
    r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/stable`, { token: u.admin.token });
    assert.deepEqual([r.body.protected, r.body.developers_can_push, r.body.can_push], [true, false, false]);
    await call(t.app, 'DELETE', `/projects/${p.id}/protected_branches/stable`, { token: u.maintainer.token });
  });
});

describe('DELETE /projects/:id/repository/merged_branches', () => {
  test('202, then merged unprotected branches are gone; default, protected and unmerged stay', async () => {
    const q = await makeProject(t.app, u.owner.user);
    await commitFile(q, 'main', 'a', 'a');
    for (const b of ['m1', 'm2', 'keep-protected', 'unmerged']) {
      await call(t.app, 'POST', `/projects/${q.id}/repository/branches`, { token: u.owner.token, body: { branch: b, ref: 'main' } });
    }
    await commitFile(q, 'unmerged', 'b', 'b');
    await call(t.app, 'POST', `/projects/${q.id}/protected_branches`, { token: u.owner.token, body: { name: 'keep-*' } });
    const guestless = await call(t.app, 'DELETE', `/projects/${p.id}/repository/merged_branches`, { token: u.reporter.token });
    assert.equal(guestless.status, 403);
    const r = await call(t.app, 'DELETE', `/projects/${q.id}/repository/merged_branches`, { token: u.owner.token });
    assert.deepEqual([r.status, r.body], [202, { message: '202 Accepted' }]);
    // (The domain events of the branches made above are jobs too: only the deletion's job is looked at here.)
    // (Ref changes queue the repository's housekeeping, a delayed job of its own: left out here too.)
    const queued = await t.app.db.selectFrom('jobs').select(['kind', 'args', 'state']).where('kind', 'not like', 'events.%').where('kind', '!=', HOUSEKEEPING_JOB).execute();
    assert.deepEqual(queued, [{ kind: 'delete_merged_branches', args: JSON.stringify({ project_id: q.id }), state: 'queued' }]);
    await t.app.jobs.drain();
    assert.equal((await t.app.db.selectFrom('jobs').select('state').where('kind', '=', 'delete_merged_branches').executeTakeFirstOrThrow()).state, 'succeeded');
    const list = await call(t.app, 'GET', `/projects/${q.id}/repository/branches`, { token: u.owner.token });
    assert.deepEqual(list.body.map((b: any) => b.name), ['keep-protected', 'main', 'unmerged']);
    const proj = await reloadProject(t.app, q.id);
    assert.equal(proj.default_branch, 'main');
    assert.ok(repoFor(t.app.config, proj).exists());
  });
});

describe('git arguments and failures', () => {
  test('a 1 MiB ref on branch or tag creation is a 400 and creates nothing', async () => {
    const huge = 'a'.repeat(1 << 20);
    const b = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.owner.token, body: { branch: 'from-huge', ref: huge } });
    assert.equal(b.status, 400, JSON.stringify(b.body).slice(0, 200));
    assert.deepEqual(b.body, { message: 'ref is too long (maximum is 1024 characters)' });
    const tag = await call(t.app, 'POST', `/projects/${p.id}/repository/tags`, { token: u.owner.token, body: { tag_name: 'from-huge', ref: huge } });
    assert.equal(tag.status, 400, JSON.stringify(tag.body).slice(0, 200));
    assert.deepEqual(tag.body, { message: 'ref is too long (maximum is 1024 characters)' });
    const name = await call(t.app, 'POST', `/projects/${p.id}/repository/branches`, { token: u.owner.token, body: { branch: huge, ref: 'main' } });
    assert.equal(name.status, 400);
    const r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/from-huge`, { token: u.owner.token });
    assert.equal(r.status, 404);
  });

  test('an unexpected git failure while creating a branch is a logged 500, not "Branch already exists"', async () => {
    const lines: string[] = [];
    const app = await buildTestApp({ logger: { level: 'error', stream: { write: (l: string) => lines.push(l) } } });
    const dir = mkdtempSync(join(tmpdir(), 'bellows-git-wrapper-'));
    // A git whose ref updates fail the way a broken disk would: not an answer the server can read.
    const wrapper = join(dir, 'git');
    writeFileSync(wrapper, '#!/bin/sh\nfor a in "$@"; do [ "$a" = update-ref ] && { echo "fatal: unable to write new_sha1: Input/output error" >&2; exit 128; }; done\nexec git "$@"\n', { mode: 0o755 });
    try {
      const owner = await makeUser(app.app);
      const q = await makeProject(app.app, owner.user);
      const c = await call(app.app, 'POST', `/projects/${q.id}/repository/commits`, {
        token: owner.token, body: { branch: 'main', commit_message: 'one', actions: [{ action: 'create', file_path: 'a', content: 'a' }] },
      });
      assert.equal(c.status, 201);
      configureGit({ binary: wrapper });
      // The update-ref --stdin the commit started is ended, as a broken disk would end it.
      endSessionsOf(repoFor(app.app.config, q).path);
      const r = await call(app.app, 'POST', `/projects/${q.id}/repository/branches`, { token: owner.token, body: { branch: 'next', ref: 'main' } });
      assert.equal(r.status, 500, JSON.stringify(r.body));
      assert.deepEqual(r.body, { message: '500 Internal Server Error' });
      assert.ok(lines.some((l) => /Input\/output error/.test(l)), lines.join('\n'));
    } finally {
      configureGit({ binary: 'git' });
      await app.close();
    }
  });
});
