import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, commitFiles, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';
import { createReadCaches } from '../../platform/read-cache.ts';
import { gitInvocationCount, type Repository } from '../../platform/git/index.ts';
import { repoFor } from '../repository/repository.common.ts';
import { blobsSearch } from './search.service.ts';
import { buildBlobIndex, candidatePaths, indexFile, readBlobIndex } from './blob-index.ts';

// The blob search index narrows which files `git grep` reads; it must never change what a search finds.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const get = (url: string, token: string | undefined, query: Record<string, unknown>) =>
  call(t.app, 'GET', url, { token, query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });

const WORDS = ['Heron', 'falcon', 'ibis', 'KESTREL', 'osprey', 'plover', 'rail', 'snipe', 'Tern', 'wren'];

/** Files of mixed content: words in several cases, numbers, non-ASCII text, a binary file, nested directories. */
function tree(): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {};
  for (let n = 0; n < 60; n++) {
    const lines: string[] = [];
    for (let l = 0; l < 12; l++) lines.push(`${WORDS[(n + l) % WORDS.length]}_${n} = ${WORDS[(n * 7 + l * 3) % WORDS.length]}(${l}) // ${n % 5 === 0 ? 'Grüße über' : 'plain'} ${n % 9 === 0 ? 'quasar' : ''}`);
    files[`${['src', 'docs', 'lib/deep'][n % 3]}/${WORDS[n % WORDS.length].toLowerCase()}_${n}.${['ts', 'md', 'py'][n % 3]}`] = `${lines.join('\n')}\n`;
  }
  files['bin/blob.dat'] = Buffer.from([0, 1, 2, 104, 101, 114, 111, 110, 0, 255, 0x48, 0x45, 0x52, 0x4f, 0x4e]);
  files['heron-notes.txt'] = 'short file\nwith heron once\n';
  files['ÜBER.md'] = 'Grüße heron\nÄrger\n';
  return files;
}

const QUERIES = [
  'heron', 'HERON', 'Heron_12', 'heron_1', 'falcon(3)', 'kestrel', 'ibis_4', 'wren', 'quasar', 'nothing-like-this', 'über', 'Grüße',
  'grüße über', 'Ärger', 'ern', 'on', 'x', 'plain', ' = ', '_5 =', 'tern(1', 'heron extension:md', 'heron -extension:md', 'heron path:lib*',
  'heron filename:*_2?.ts', 'heron filename:*.py', 'falcon -path:src', 'path:docs', 'extension:py', 'heron -filename:"heron-notes.txt"', '*', 'snipe_33',
  'rail_', 'ON_2', 'on_2 = ', '(11)', 'blob', 'HERO', 'ero',
];

/** The search's answer read afresh (no answer kept from an earlier call), with the index or without. */
async function answer(repo: Repository, at: { ref: string; commit: string }, search: string, limit: number, projectId?: number) {
  const deps = Object.create(t.app, { caches: { value: createReadCaches({ window: 2000 }) } });
  return blobsSearch(deps, repo, at, search, limit, projectId === undefined ? undefined : { projectId });
}

describe('search: the blob index', () => {
  test('the indexed answer equals the whole-tree answer for every query, filter and page size; a pushed file is found before and after its index', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const commit = await commitFiles(t.app, project, 'main', tree());
    const repo = repoFor(t.app.config, project);
    const at = { ref: 'main', commit };
    const treeId = (await repo.treeOf(commit))!;
    assert.equal(await readBlobIndex(repo, treeId), null);
    // The first search of the tree queues the build; until it runs the answer is the whole tree's.
    const first = await answer(repo, at, 'heron', 100, project.id);
    assert.deepEqual(first, await answer(repo, at, 'heron', 100));
    await t.app.jobs.drain();
    const index = await readBlobIndex(repo, treeId);
    assert.ok(index, 'the queued job built the index');
    assert.equal(index.paths.length, Object.keys(tree()).length);
    for (const q of QUERIES) {
      for (const limit of [3, 100]) {
        assert.deepEqual(await answer(repo, at, q, limit, project.id), await answer(repo, at, q, limit), `${q} (${limit})`);
      }
    }
    // The index narrows: a rare term reads only its files, an absent trigram none.
    assert.deepEqual(await candidatePaths(index, 'Heron_12'), ['src/ibis_12.ts']);
    assert.deepEqual(await candidatePaths(index, 'zzzq'), []);
    assert.equal(await candidatePaths(index, 'on'), null, 'under three characters: the whole tree');

    // A file added by a push: a new tree, without an index until one is built; the answer is right either way.
    const next = await commitFiles(t.app, project, 'main', { 'src/new_heron.ts': 'the Heron_12 came back\n' });
    const at2 = { ref: 'main', commit: next };
    const tree2 = (await repo.treeOf(next))!;
    const before = await answer(repo, at2, 'Heron_12', 100, project.id);
    assert.ok(before.some((b) => b.path === 'src/new_heron.ts'));
    assert.deepEqual(before, await answer(repo, at2, 'Heron_12', 100));
    assert.equal(existsSync(indexFile(repo, tree2)), false);
    await t.app.jobs.drain();
    assert.ok(await readBlobIndex(repo, tree2));
    for (const q of ['Heron_12', 'heron', 'came back', 'new_heron', 'heron path:src']) {
      assert.deepEqual(await answer(repo, at2, q, 100, project.id), await answer(repo, at2, q, 100), q);
    }
    // The old commit still answers from its own index.
    assert.deepEqual(await answer(repo, at, 'Heron_12', 100, project.id), await answer(repo, at, 'Heron_12', 100));
  });

  test('an indexed search through the API: same answer, no git process for a term the tree lacks; a commit on the default branch queues the new tree', async () => {
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { visibility: 20 });
    await commitFiles(t.app, project, 'main', tree());
    const repo = repoFor(t.app.config, project);
    const url = `/projects/${project.id}/search`;
    const unindexed = await get(url, user.token, { scope: 'blobs', search: 'kestrel_3', per_page: 50 });
    assert.equal(unindexed.status, 200);
    await t.app.jobs.drain();
    // Another page size is another answer, read with the index now.
    const indexed = await get(url, user.token, { scope: 'blobs', search: 'kestrel_3', per_page: 50, page: 1, order_by: 'x' });
    assert.deepEqual(indexed.body, unindexed.body);
    const before = gitInvocationCount(repo.path);
    const none = await get(url, user.token, { scope: 'blobs', search: 'qqqzzz' });
    assert.deepEqual(none.body, []);
    assert.equal(gitInvocationCount(repo.path) - before, 0, 'the index says no file holds it');

    // A commit through the API moves the default branch: its new tree is indexed by the job it queues.
    const r = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: (await quickUser(t.app, { admin: true })).token,
      body: { branch: 'main', commit_message: 'add', actions: [{ action: 'create', file_path: 'added/kestrel_3.md', content: 'kestrel_3 again\n' }] },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const head = (await repo.resolveCommit('refs/heads/main'))!;
    const newTree = (await repo.treeOf(head))!;
    const found = await get(url, user.token, { scope: 'blobs', search: 'kestrel_3 again' });
    assert.deepEqual(found.body.map((b: any) => b.path), ['added/kestrel_3.md']);
    await t.app.jobs.drain();
    assert.ok(await readBlobIndex(repo, newTree), 'the moved default branch has its index');
  });

  test('access is unchanged: a private repository answers [] to an outsider and a guest-less caller with the index built', async () => {
    const member = await quickUser(t.app);
    const outsider = await quickUser(t.app);
    const project = await makeProject(t.app, { visibility: 0 });
    await addMember(t.app, { type: 'Project', id: project.id }, member.user.id, Role.developer);
    const commit = await commitFiles(t.app, project, 'main', tree());
    const repo = repoFor(t.app.config, project);
    await buildBlobIndex(repo, (await repo.treeOf(commit))!);
    const url = `/projects/${project.id}/search`;
    const seen = await get(url, member.token, { scope: 'blobs', search: 'quasar' });
    assert.equal(seen.status, 200);
    assert.ok(seen.body.length > 0);
    const hidden = await get(url, outsider.token, { scope: 'blobs', search: 'quasar' });
    assert.equal(hidden.status, 404);
  });

  test('a build stopped at any point leaves no index or the whole one', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const files: Record<string, string> = {};
    for (let n = 0; n < 400; n++) files[`f/${n}.txt`] = `${'lorem ipsum dolor sit amet '.repeat(200)} item_${n}\n`;
    const commit = await commitFiles(t.app, project, 'main', files);
    const repo = repoFor(t.app.config, project);
    const treeId = (await repo.treeOf(commit))!;
    const script = `import { Repository } from './src/platform/git/index.ts';\nimport { buildBlobIndex } from './src/resources/search/blob-index.ts';\nawait buildBlobIndex(new Repository(${JSON.stringify(repo.path)}), ${JSON.stringify(treeId)});\nprocess.stdout.write('built');\n`;
    // Killed after a growing delay (the last run is not killed): each time there is no index or the whole one.
    let built = false;
    for (const delay of [300, 1000, 2000, 4000, 8000, null]) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (c) => { out += c; });
      const timer = delay === null ? null : setTimeout(() => child.kill('SIGKILL'), delay);
      await new Promise((resolve) => child.on('close', resolve));
      if (timer) clearTimeout(timer);
      const index = await readBlobIndex(repo, treeId);
      if (out === 'built') assert.ok(index, 'a finished build left its index');
      if (index) {
        // Whatever the moment of the kill, a present index answers as a whole build does.
        assert.deepEqual(await candidatePaths(index, 'item_123'), ['f/123.txt']);
        assert.equal((await candidatePaths(index, 'lorem'))!.length, 400);
        built = true;
        break;
      }
    }
    assert.ok(built);
    // A stopped build's temporary file is never read as an index.
    const dir = join(repo.path, 'search-index');
    writeFileSync(join(dir, `${'a'.repeat(40)}.tmp-1-00000000`), 'BSIX0001 cut short');
    assert.equal(await readBlobIndex(repo, 'a'.repeat(40)), null);
    // A file cut short under the final name (not what a build leaves) is refused, and the search reads the whole tree.
    writeFileSync(indexFile(repo, 'b'.repeat(40)), 'BSIX0001\u0001\u0000\u0000\u0000');
    assert.equal(await readBlobIndex(repo, 'b'.repeat(40)), null);
    assert.ok(readdirSync(dir).some((n) => n.startsWith(treeId)));
    // An aborted build leaves nothing behind either.
    const other = await commitFiles(t.app, project, 'main', { 'g.txt': 'more\n' });
    const otherTree = (await repo.treeOf(other))!;
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(buildBlobIndex(repo, otherTree, { signal: stop.signal }));
    assert.equal(await readBlobIndex(repo, otherTree), null);
    assert.ok(!readdirSync(dir).some((n) => n.startsWith(otherTree)));
  });
});
