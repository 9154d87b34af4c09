import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { castRoles, commitFiles, makeFork, makeMergeRequest, makeProject, quickUser, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { gitClient } from '../repository/testing.ts';
import { repoFor } from '../repository/repository.common.ts';
import { MESSAGES } from '../git-http/push-policy.ts';

// Merge requests from forks that allow collaboration: `git push` into the fork's source branch by whoever may update
// the target branch (only that branch, only while possible), the entity's effective `allow_collaboration`, and who
// may set it.

let t: TestApp;
let host: string;
const g = gitClient();
before(async () => {
  t = await buildTestApp();
  host = new URL(await listening(t)).host;
});
after(async () => { await t.close(); });

const git = async (p: ProjectRow, args: string[]) => (await repoFor(t.app.config, p).git(args)).stdout.toString().trim();
const stored = async (id: number) => (await t.app.db.selectFrom('merge_requests').select('allow_collaboration').where('id', '=', id).executeTakeFirstOrThrow()).allow_collaboration;
const url = (p: ProjectRow, who: TestUser) => `http://anyone:${who.token}@${host}/${p.full_path}.git`;

interface Setup {
  upstream: ProjectRow;
  fork: ProjectRow;
  roles: RoleCast;
  author: TestUser;
  mr: any;
  url: string;
}

/** A public upstream with a role cast; a public fork (branches `fix` and `other`) whose owner asks to merge `fix` into upstream's `main`. */
async function forkSetup(o: { allowCollaboration?: boolean; forkVisibility?: number } = {}): Promise<Setup> {
  const upstream = await makeProject(t.app, { visibility: 20, repository: true });
  const roles = await castRoles(t.app, upstream);
  await commitFiles(t.app, upstream, 'main', { 'README.md': 'one\n' });
  const author = await quickUser(t.app);
  const fork = await makeFork(t.app, upstream, author.user, 'fix', { 'fix.txt': 'fixed\n' });
  await commitFiles(t.app, fork, 'other', { 'other.txt': 'other\n' }, { from: 'main' });
  if (o.forkVisibility !== undefined) await t.app.db.updateTable('projects').set({ visibility_level: o.forkVisibility }).where('id', '=', fork.id).execute();
  const mr = await makeMergeRequest(t.app, author.token, fork, {
    source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: upstream.id, allow_collaboration: o.allowCollaboration ?? true,
  });
  t.app.caches.voidAll();
  return { upstream, fork, roles, author, mr, url: `/projects/${upstream.id}/merge_requests/${mr.iid}` };
}

let dirs = 0;
/** A clone of the fork made by `who` (a public project: anyone clones it), one new commit on `fix`. */
async function cloneWithCommit(s: Setup, who: TestUser): Promise<{ dir: string; sha: string }> {
  const dir = join(g.home, `clone-${++dirs}`);
  const c = await g.run(['clone', '-q', url(s.fork, who), dir]);
  assert.equal(c.code, 0, c.stderr);
  await g.run(['checkout', '-q', 'fix'], dir);
  await g.run(['commit', '--allow-empty', '-q', '-m', `by ${who.user.username}`], dir);
  return { dir, sha: (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim() };
}

/** Pushes `refspec` from `dir` as `who`: true when it went through, else the server's message (asserted present). */
async function push(s: Setup, who: TestUser, dir: string, refspec: string | string[], extra: string[] = []): Promise<true | string> {
  const r = await g.run(['push', ...extra, url(s.fork, who), ...(Array.isArray(refspec) ? refspec : [refspec])], dir);
  if (r.code === 0) return true;
  for (const m of Object.values(MESSAGES)) if (r.stderr.includes(m)) return m;
  return r.stderr;
}

describe('git push over HTTP into a fork by a collaborator', () => {
  test('whoever may update the target branch pushes to the source branch; the merge request follows', async () => {
    const s = await forkSetup();
    const { dir, sha } = await cloneWithCommit(s, s.roles.developer);
    assert.equal(await push(s, s.roles.developer, dir, 'HEAD:fix'), true);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), sha);
    await t.app.jobs.drain();
    const got = await call(t.app, 'GET', s.url, { token: s.author.token });
    assert.equal(got.body.sha, sha);
    assert.equal(await git(s.upstream, ['rev-parse', `refs/merge-requests/${s.mr.iid}/head`]), sha);
    // A force push to the (unprotected) branch is a push like any other.
    await g.run(['commit', '--amend', '--allow-empty', '-q', '-m', 'amended'], dir);
    const amended = (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
    assert.equal(await push(s, s.roles.developer, dir, 'HEAD:fix', ['--force']), true);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), amended);
  });

  test('only that branch: another branch, a new branch, a tag or deleting the branch are refused, nothing moves', async () => {
    const s = await forkSetup();
    const { dir } = await cloneWithCommit(s, s.roles.maintainer);
    const before = { fix: await git(s.fork, ['rev-parse', 'fix']), other: await git(s.fork, ['rev-parse', 'other']) };
    for (const refspec of ['+HEAD:other', 'HEAD:refs/heads/brand-new', 'HEAD:refs/tags/v1', ':fix']) {
      assert.equal(await push(s, s.roles.maintainer, dir, refspec), MESSAGES.pushCode, refspec);
    }
    // Several refs at once: the allowed one does not carry the others, the whole push is declined.
    assert.equal(await push(s, s.roles.maintainer, dir, ['HEAD:fix', '+HEAD:other']), MESSAGES.pushCode);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), before.fix);
    assert.equal(await git(s.fork, ['rev-parse', 'other']), before.other);
    assert.equal(await git(s.fork, ['tag', '--list']), '');
    assert.equal(await git(s.fork, ['rev-parse', '--verify', '-q', 'refs/heads/brand-new']).catch(() => ''), '');
  });

  test('role table: upstream Developers and up (who may update main) push; Guests, Reporters and non-members do not', async () => {
    const s = await forkSetup();
    const table: Array<[keyof RoleCast, true | string]> = [
      ['nonMember', MESSAGES.pushCode], ['guest', MESSAGES.pushCode], ['reporter', MESSAGES.pushCode],
      ['developer', true], ['maintainer', true], ['owner', true], ['admin', true],
    ];
    for (const [role, expected] of table) {
      const who = s.roles[role] as TestUser;
      const { dir, sha } = await cloneWithCommit(s, who);
      await g.run(['fetch', '-q', 'origin'], dir);
      await g.run(['rebase', '-q', 'origin/fix'], dir);
      const head = (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
      assert.equal(await push(s, who, dir, 'HEAD:fix'), expected, role);
      assert.equal(await git(s.fork, ['rev-parse', 'fix']) === head, expected === true, `${role} ${sha}`);
    }
  });

  test('upstream protects main for Maintainers: its Developers no longer collaborate, its Maintainers still do', async () => {
    const s = await forkSetup();
    const prot = await call(t.app, 'POST', `/projects/${s.upstream.id}/protected_branches`, {
      token: s.roles.maintainer.token, body: { name: 'main', push_access_level: 40, merge_access_level: 40 },
    });
    assert.equal(prot.status, 201, JSON.stringify(prot.body));
    const dev = await cloneWithCommit(s, s.roles.developer);
    assert.equal(await push(s, s.roles.developer, dev.dir, 'HEAD:fix'), MESSAGES.pushCode);
    const maint = await cloneWithCommit(s, s.roles.maintainer);
    assert.equal(await push(s, s.roles.maintainer, maint.dir, 'HEAD:fix'), true);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), maint.sha);
  });

  test('no collaboration: the branch protected in the fork, the merge request closed or merged, collaboration off, a private upstream', async () => {
    const s = await forkSetup();
    const { dir, sha } = await cloneWithCommit(s, s.roles.maintainer);
    const before = await git(s.fork, ['rev-parse', 'fix']);
    // Protected in the fork (even allowing force pushes to Developers): nobody upstream pushes, the fork's owner does.
    const own = await call(t.app, 'POST', `/projects/${s.fork.id}/protected_branches`, { token: s.author.token, body: { name: 'fix', push_access_level: 30, allow_force_push: true } });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.equal(await push(s, s.roles.maintainer, dir, 'HEAD:fix'), MESSAGES.pushCode);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), before);
    assert.equal((await call(t.app, 'DELETE', `/projects/${s.fork.id}/protected_branches/fix`, { token: s.author.token })).status, 204);
    // Closed: refused; reopened: allowed again.
    assert.equal((await call(t.app, 'PUT', s.url, { token: s.author.token, body: { state_event: 'close' } })).body.state, 'closed');
    assert.equal(await push(s, s.roles.maintainer, dir, 'HEAD:fix'), MESSAGES.pushCode);
    assert.equal((await call(t.app, 'PUT', s.url, { token: s.author.token, body: { state_event: 'reopen' } })).body.state, 'opened');
    // Collaboration turned off by the author: refused.
    assert.equal((await call(t.app, 'PUT', s.url, { token: s.author.token, body: { allow_collaboration: false } })).status, 200);
    assert.equal(await push(s, s.roles.maintainer, dir, 'HEAD:fix'), MESSAGES.pushCode);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), before);
    assert.equal((await call(t.app, 'PUT', s.url, { token: s.author.token, body: { allow_collaboration: true } })).status, 200);
    assert.equal(await push(s, s.roles.maintainer, dir, 'HEAD:fix'), true);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), sha);
    // Merged: refused.
    const merged = await call(t.app, 'PUT', `${s.url}/merge`, { token: s.roles.maintainer.token, body: { sha } });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    await g.run(['commit', '--allow-empty', '-q', '-m', 'after merge'], dir);
    assert.equal(await push(s, s.roles.maintainer, dir, 'HEAD:fix'), MESSAGES.pushCode);
    assert.equal(await git(s.fork, ['rev-parse', 'fix']), sha);
    // An upstream made private: collaboration is for public and internal projects only.
    const p = await forkSetup();
    await t.app.db.updateTable('projects').set({ visibility_level: 0 }).where('id', '=', p.upstream.id).execute();
    t.app.caches.voidAll();
    const c = await cloneWithCommit(p, p.roles.maintainer);
    assert.equal(await push(p, p.roles.maintainer, c.dir, 'HEAD:fix'), MESSAGES.pushCode);
  });

  test('a token without write_repository is refused before collaboration is considered', async () => {
    const s = await forkSetup();
    const { dir } = await cloneWithCommit(s, s.roles.maintainer);
    const r = await call(t.app, 'POST', `/users/${s.roles.maintainer.user.id}/personal_access_tokens`, {
      token: s.roles.admin.token, body: { name: 'read', scopes: ['read_repository'] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const reader = { ...s.roles.maintainer, token: r.body.token };
    assert.equal(await push(s, reader, dir, 'HEAD:fix'), MESSAGES.pushScope);
  });
});

describe('the entity\'s allow_collaboration: stored on and possible', () => {
  const shown = async (s: Setup) => {
    const r = await call(t.app, 'GET', s.url, { token: s.roles.admin.token });
    assert.equal(r.status, 200);
    const listed = await call(t.app, 'GET', `/projects/${s.upstream.id}/merge_requests`, { token: s.roles.admin.token, query: { 'iids[]': String(s.mr.iid) } });
    assert.equal(listed.body[0].allow_collaboration, r.body.allow_collaboration);
    return [r.body.allow_collaboration, r.body.allow_maintainer_to_push];
  };

  test('on while possible; off while the fork protects the branch, the fork or the upstream is private', async () => {
    const s = await forkSetup();
    assert.deepEqual(await shown(s), [true, true]);
    const own = await call(t.app, 'POST', `/projects/${s.fork.id}/protected_branches`, { token: s.author.token, body: { name: 'fi*' } });
    assert.equal(own.status, 201);
    assert.deepEqual(await shown(s), [false, false]);
    assert.equal(await stored(s.mr.id), 1);
    assert.equal((await call(t.app, 'DELETE', `/projects/${s.fork.id}/protected_branches/fi*`, { token: s.author.token })).status, 204);
    assert.deepEqual(await shown(s), [true, true]);
    for (const id of [s.fork.id, s.upstream.id]) {
      await t.app.db.updateTable('projects').set({ visibility_level: 0 }).where('id', '=', id).execute();
      t.app.caches.voidAll();
      assert.deepEqual(await shown(s), [false, false], String(id));
      await t.app.db.updateTable('projects').set({ visibility_level: 10 }).where('id', '=', id).execute();
      t.app.caches.voidAll();
      assert.deepEqual(await shown(s), [true, true], String(id));
    }
    // As the reference, the state does not enter the entity's value (pushes need an open merge request).
    assert.equal((await call(t.app, 'PUT', s.url, { token: s.author.token, body: { state_event: 'close' } })).body.allow_collaboration, true);
  });

  test('a same-project merge request does not show it', async () => {
    const project = await makeProject(t.app, { visibility: 20, repository: true });
    const roles = await castRoles(t.app, project);
    await commitFiles(t.app, project, 'main', { 'a.txt': 'a\n' });
    await commitFiles(t.app, project, 'f', { 'b.txt': 'b\n' }, { from: 'main' });
    const mr = await makeMergeRequest(t.app, roles.developer.token, project, { source_branch: 'f', target_branch: 'main', title: 'F', allow_collaboration: true });
    assert.equal('allow_collaboration' in mr, false);
    assert.equal(await stored(mr.id), 0);
  });
});

describe('who may set allow_collaboration (ignored otherwise, as the reference)', () => {
  test('on creation: ignored from a private fork and for a branch the fork protects', async () => {
    const hidden = await forkSetup({ forkVisibility: 0 });
    assert.equal(hidden.mr.allow_collaboration, false);
    assert.equal(await stored(hidden.mr.id), 0);

    const upstream = await makeProject(t.app, { visibility: 20, repository: true });
    await commitFiles(t.app, upstream, 'main', { 'README.md': 'one\n' });
    const author = await quickUser(t.app);
    const fork = await makeFork(t.app, upstream, author.user, 'fix', { 'fix.txt': 'fixed\n' });
    assert.equal((await call(t.app, 'POST', `/projects/${fork.id}/protected_branches`, { token: author.token, body: { name: 'fix' } })).status, 201);
    const mr = await makeMergeRequest(t.app, author.token, fork, { source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: upstream.id, allow_collaboration: true });
    assert.equal(mr.allow_collaboration, false);
    assert.equal(await stored(mr.id), 0);
  });

  test('on update: only who may push to the fork changes it; others are ignored with a 200', async () => {
    const s = await forkSetup();
    // The upstream Maintainer edits the merge request but cannot push to the fork: the value stays.
    const r = await call(t.app, 'PUT', s.url, { token: s.roles.maintainer.token, body: { allow_collaboration: false, title: 'Fix it' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.title, r.body.allow_collaboration], ['Fix it', true]);
    assert.equal(await stored(s.mr.id), 1);
    // The author (the fork's owner) may.
    const off = await call(t.app, 'PUT', s.url, { token: s.author.token, body: { allow_maintainer_to_push: false } });
    assert.deepEqual([off.status, off.body.allow_collaboration, off.body.allow_maintainer_to_push], [200, false, false]);
    assert.equal(await stored(s.mr.id), 0);
    // Once the fork protects the branch, even its owner cannot turn it on.
    assert.equal((await call(t.app, 'POST', `/projects/${s.fork.id}/protected_branches`, { token: s.author.token, body: { name: 'fix' } })).status, 201);
    const on = await call(t.app, 'PUT', s.url, { token: s.author.token, body: { allow_collaboration: true } });
    assert.deepEqual([on.status, on.body.allow_collaboration], [200, false]);
    assert.equal(await stored(s.mr.id), 0);
  });
});
