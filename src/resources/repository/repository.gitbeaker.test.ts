import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject } from '../../../test/support/fixtures.ts';

// The repository area driven by @gitbeaker/rest over real HTTP: what it calls for blobs, archives, blame, a commit's
// diff, refs and signature, cherry-pick, revert, merge bases and contributors.

let t: TestApp;
let host: string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  const port = await freePort();
  host = `http://127.0.0.1:${port}`;
  t = await buildTestApp({ config: { externalUrl: host } });
  await t.app.listen({ port, host: '127.0.0.1' });
});
after(async () => { await t.close(); });

test('gitbeaker: a branch in an empty repository, files with blame, blobs, archives', async () => {
  const p = await makeProject(t.app, { path: 'beaker', repository: true });
  const roles = await castRoles(t.app, p);
  const api = new Gitlab({ host, token: roles.developer.token });
  const branch = await api.Branches.create(p.id, 'topic', 'main');
  assert.deepEqual([branch.name, (branch.commit as any).title], ['topic', 'Add README.md']);
  await api.RepositoryFiles.create(p.id, 'docs/a.md', 'main', 'alpha\nbeta\n', 'Add a');
  const blame = await api.RepositoryFiles.allFileBlames(p.id, 'docs/a.md', 'main', { range: { start: 2, end: 2 } });
  assert.deepEqual(blame.map((g: any) => [g.commit.message, g.lines]), [['Add a', ['beta']]]);
  const file = await api.RepositoryFiles.show(p.id, 'docs/a.md', 'main');
  const blob = await api.Repositories.showBlob(p.id, file.blob_id as string);
  assert.deepEqual([blob.size, Buffer.from(blob.content as string, 'base64').toString()], [11, 'alpha\nbeta\n']);
  const raw = await api.Repositories.showBlobRaw(p.id, file.blob_id as string);
  // A text/plain answer comes back as a string.
  assert.equal(raw as unknown, 'alpha\nbeta\n');
  const zip = await api.Repositories.showArchive(p.id, { fileType: 'zip', path: 'docs' });
  assert.equal(Buffer.from(await zip.arrayBuffer()).subarray(0, 2).toString(), 'PK');
  const tgz = await api.Repositories.showArchive(p.id, { sha: 'topic' });
  assert.deepEqual([...Buffer.from(await tgz.arrayBuffer()).subarray(0, 2)], [0x1f, 0x8b]);
});

test('gitbeaker: commit diff, refs, signature, cherry-pick, revert, merge base, contributors', async () => {
  const p = await makeProject(t.app, { path: 'beaker-commits', repository: true });
  const roles = await castRoles(t.app, p);
  const api = new Gitlab({ host, token: roles.developer.token });
  const first = await api.Commits.create(p.id, 'main', 'First', [{ action: 'create', filePath: 'a.txt', content: 'a\n' }]);
  await api.Branches.create(p.id, 'side', 'main');
  const second = await api.Commits.create(p.id, 'main', 'Second', [{ action: 'create', filePath: 'b.txt', content: 'b\n' }]);
  const diff = await api.Commits.showDiff(p.id, second.id as string);
  assert.deepEqual(diff.map((d: any) => [d.new_path, d.new_file]), [['b.txt', true]]);
  const refs = await api.Commits.allReferences(p.id, first.id as string, { type: 'branch' });
  assert.deepEqual(refs, [{ type: 'branch', name: 'main' }, { type: 'branch', name: 'side' }]);
  await assert.rejects(api.Commits.showGPGSignature(p.id, first.id as string), (e: any) => e.cause?.response?.status === 404);
  const dry = await api.Commits.cherryPick(p.id, second.id as string, 'side', { dryRun: true });
  assert.deepEqual(dry, { dry_run: 'success' });
  const picked = await api.Commits.cherryPick(p.id, second.id as string, 'side');
  assert.equal(picked.message, `Second\n\n(cherry picked from commit ${second.id})`);
  await assert.rejects(api.Commits.cherryPick(p.id, second.id as string, 'side'), (e: any) => e.cause?.response?.status === 400);
  const reverted = await api.Commits.revert(p.id, second.id as string, 'main');
  assert.equal(reverted.message, `Revert "Second"\n\nThis reverts commit ${second.id}`);
  const base = await api.Repositories.mergeBase(p.id, ['main', 'side']);
  assert.equal(base.id, first.id);
  const people = await api.Repositories.allContributors(p.id, { orderBy: 'commits', sort: 'desc' });
  assert.deepEqual(people.map((c: any) => [c.email, c.commits]), [[roles.developer.user.email, 3]]);
});
