// One project through every layer: created by the Projects API, written by git over HTTP and by the
// repository API, read back through branches, statistics, languages and the listing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, listening, type TestApp } from '../support/app.ts';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import { gitClient } from '../../src/resources/repository/testing.ts';

let t: TestApp;
let host: string;
let owner: TestUser;
const g = gitClient();

before(async () => {
  t = await buildTestApp();
  host = new URL(await listening(t)).host;
  owner = await makeUser(t.app);
});
after(async () => { await t.close(); });

test('create, push, commit through the API, and read it all back', async () => {
  const created = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'Lifecycle', visibility: 'private' } });
  assert.equal(created.status, 201, created.text);
  const p = created.body;
  assert.equal(p.empty_repo, true);
  assert.equal(p.http_url_to_repo, `http://bellows.test/${owner.user.username}/lifecycle.git`);

  // An empty repository clones; the first push picks the default branch and fills the statistics.
  const remote = `http://x:${owner.token}@${host}/${owner.user.username}/lifecycle.git`;
  let r = await g.run(['clone', '-q', remote, 'lc']);
  assert.equal(r.code, 0, r.stderr);
  const dir = join(g.home, 'lc');
  writeFileSync(join(dir, 'main.ts'), 'export const answer: number = 42;\n'.repeat(20));
  writeFileSync(join(dir, 'run.sh'), 'echo hi\n');
  await g.run(['add', '.'], dir);
  await g.run(['commit', '-q', '-m', 'First commit'], dir);
  (t.clock as unknown as { advance(ms: number): void }).advance(60_000);
  r = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
  assert.equal(r.code, 0, r.stderr);

  const after1 = await call(t.app, 'GET', `/projects/${p.id}?statistics=true`, { token: owner.token });
  assert.equal(after1.body.empty_repo, false);
  assert.equal(after1.body.default_branch, 'main');
  assert.ok(Date.parse(after1.body.last_activity_at) > Date.parse(p.last_activity_at));
  assert.equal(after1.body.statistics.commit_count, 1);
  assert.ok(after1.body.statistics.repository_size > 0);

  // The languages of the default branch are stored: the listing filters by them.
  const ts = await call(t.app, 'GET', '/projects?with_programming_language=typescript', { token: owner.token });
  assert.deepEqual(ts.body.map((x: { id: number }) => x.id), [p.id]);

  // A commit through the API is a real commit that a fetch brings back.
  const c = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, {
    token: owner.token,
    body: { branch: 'main', commit_message: 'Add README', actions: [{ action: 'create', file_path: 'README.md', content: '# Lifecycle\n' }] },
  });
  assert.equal(c.status, 201, c.text);
  r = await g.run(['pull', '-q', 'origin', 'main'], dir);
  assert.equal(r.code, 0, r.stderr);
  r = await g.run(['log', '--format=%s'], dir);
  assert.deepEqual(r.stdout.trim().split('\n'), ['Add README', 'First commit']);

  const branches = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: owner.token });
  assert.deepEqual(branches.body.map((b: { name: string; default: boolean }) => [b.name, b.default]), [['main', true]]);
  assert.equal(branches.body[0].commit.id, c.body.id);

  const after2 = await call(t.app, 'GET', `/projects/${p.id}?statistics=true`, { token: owner.token });
  assert.equal(after2.body.statistics.commit_count, 2);
  assert.equal(after2.body.readme_url, `http://bellows.test/${owner.user.username}/lifecycle/-/blob/main/README.md`);

  // A push to another branch moves activity but leaves the default branch's facts alone.
  r = await g.run(['push', '-q', 'origin', 'HEAD:feature/x'], dir);
  assert.equal(r.code, 0, r.stderr);
  const names = await call(t.app, 'GET', `/projects/${p.id}/repository/branches?search=feature`, { token: owner.token });
  assert.deepEqual(names.body.map((b: { name: string }) => b.name), ['feature/x']);
});
