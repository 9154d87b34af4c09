import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Repository, type Identity } from './repository.ts';
import { runGit, gitInvocationCount } from './command.ts';
import { peekRefCache } from './ref-cache.ts';

const peekBranches = (repo: Repository) => peekRefCache(repo.path, 'branches') !== undefined;
import {
  FileExistsError,
  FileNotFoundError,
  InvalidPathError,
  InvalidRefNameError,
  RefExistsError,
  RefMovedError,
  RefNotFoundError,
  RepositoryExistsError,
  StartRefMissingError,
} from './errors.ts';

describe('Repository', { concurrency: true }, () => {
  let root: string;
  let n = 0;
  const alice: Identity = { name: 'Alice Example', email: 'alice@example.com', date: '2024-03-01T10:00:00+02:00' };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'bellows-repo-test-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function freshRepo(): Promise<Repository> {
    return Repository.init(join(root, `r${++n}.git`), { defaultBranch: 'main' });
  }

  // Built once through createCommit, then copied on disk per test: most tests need the same two commits.
  let template: Promise<Repository> | undefined;
  async function buildTemplate(): Promise<Repository> {
    const repo = await freshRepo();
    await repo.createCommit({
      branch: 'main',
      message: 'Initial commit\n\nSet up the project.\n\nSigned-off-by: Alice Example <alice@example.com>\nCo-authored-by: Bob <bob@example.com>\n',
      author: alice,
      actions: [
        { action: 'create', file_path: 'README.md', content: '# Demo\n' },
        { action: 'create', file_path: 'src/app.ts', content: 'export const x = 1;\n'.repeat(10) },
        { action: 'create', file_path: 'scripts/run.sh', content: '#!/bin/sh\necho hi\n', executable: true },
      ],
    });
    await repo.createCommit({
      branch: 'main',
      message: 'Touch the docs',
      author: { ...alice, date: '2024-03-02T10:00:00Z' },
      actions: [{ action: 'update', file_path: 'README.md', content: '# Demo\n\nMore.\n' }],
    });
    return repo;
  }
  async function seeded(): Promise<Repository> {
    template ??= buildTemplate();
    const path = join(root, `s${++n}.git`);
    await cp((await template).path, path, { recursive: true });
    return new Repository(path);
  }

  test('init creates a bare repository whose HEAD names the default branch', async () => {
    const repo = await Repository.init(join(root, 'nested', 'deeper', 'init.git'), { defaultBranch: 'trunk' });
    assert.equal(await repo.defaultBranch(), 'trunk');
    assert.equal(await repo.isEmpty(), true);
    assert.deepEqual(await repo.listBranches(), []);
    assert.equal(await repo.resolveRef('HEAD'), null);
    await assert.rejects(Repository.init(repo.path), RepositoryExistsError);
    await assert.rejects(Repository.init(join(root, 'bad.git'), { defaultBranch: 'a..b' }), InvalidRefNameError);
  });

  test('init writes the server settings, and finishes a repository cut short while being made', async () => {
    const repo = await Repository.init(join(root, 'settings.git'));
    const get = async (key: string) => (await runGit(['config', '--get', key], { gitDir: repo.path })).stdout.toString().trim();
    assert.equal(await get('receive.fsckObjects'), 'true');
    assert.equal(await get('receive.advertisePushOptions'), 'false');
    assert.equal(await get('uploadpack.allowFilter'), 'true');
    assert.equal(await get('uploadpack.allowAnySHA1InWant'), 'false');
    // HEAD written, object store not yet: not a repository, and init completes it in place.
    await rm(join(repo.path, 'objects'), { recursive: true });
    assert.equal(Repository.exists(repo.path), false);
    const again = await Repository.init(repo.path, { defaultBranch: 'trunk' });
    assert.equal(Repository.exists(again.path), true);
    assert.equal(await again.isEmpty(), true);
  });

  test('createCommit applies every action type without a working tree', async () => {
    const repo = await seeded();
    assert.equal(existsSync(join(repo.path, 'index')), false, 'no index left in the repository');
    const before = await repo.resolveRef('main');
    const r = await repo.createCommit({
      branch: 'main',
      message: 'Many changes',
      author: alice,
      actions: [
        { action: 'create', file_path: 'docs/new.md', content: Buffer.from('new\n') },
        { action: 'update', file_path: 'src/app.ts', content: 'export const x = 2;\n' },
        { action: 'move', file_path: 'lib/app.ts', previous_path: 'src/app.ts' },
        { action: 'delete', file_path: 'README.md' },
        { action: 'chmod', file_path: 'docs/new.md', executable: true },
        { action: 'chmod', file_path: 'scripts/run.sh', executable: false },
      ],
    });
    assert.equal(r.parentSha, before);
    assert.equal(r.branchCreated, false);
    assert.equal(await repo.resolveRef('main'), r.sha);
    const tree = await repo.readTree('main', '', { recursive: true });
    assert.deepEqual(
      tree!.filter((e) => e.type === 'blob').map((e) => `${e.mode} ${e.path}`),
      ['100755 docs/new.md', '100644 lib/app.ts', '100644 scripts/run.sh'],
    );
    assert.equal((await repo.readBlob('main', 'lib/app.ts'))!.content.toString(), 'export const x = 2;\n');
    const commit = (await repo.getCommit(r.sha))!;
    assert.equal(commit.message, 'Many changes');
    assert.equal(commit.author_name, 'Alice Example');
    assert.equal(commit.authored_date, '2024-03-01T10:00:00+02:00');
    assert.deepEqual(commit.parent_ids, [before]);
  });

  test('move keeps content unless new content is given; update keeps the executable bit', async () => {
    const repo = await seeded();
    await repo.createCommit({
      branch: 'main',
      message: 'mv',
      author: alice,
      actions: [
        { action: 'move', file_path: 'bin/run.sh', previous_path: 'scripts/run.sh' },
        { action: 'update', file_path: 'bin/run.sh', content: '#!/bin/sh\necho bye\n' },
        { action: 'move', file_path: 'README.txt', previous_path: 'README.md', content: 'plain\n' },
      ],
    });
    const run = (await repo.readBlob('main', 'bin/run.sh'))!;
    assert.equal(run.mode, '100755');
    assert.equal(run.content.toString(), '#!/bin/sh\necho bye\n');
    assert.equal((await repo.readBlob('main', 'README.txt'))!.content.toString(), 'plain\n');
    assert.equal(await repo.blobExists('main', 'scripts/run.sh'), false);

    // Later actions see files made by earlier ones in the same commit.
    await repo.createCommit({
      branch: 'main', message: 'chain', author: alice,
      actions: [
        { action: 'create', file_path: 'tmp/a.txt', content: 'chained' },
        { action: 'move', file_path: 'b.txt', previous_path: 'tmp/a.txt' },
        { action: 'chmod', file_path: 'b.txt', executable: true },
      ],
    });
    const chained = (await repo.readBlob('main', 'b.txt'))!;
    assert.deepEqual([chained.mode, chained.content.toString()], ['100755', 'chained']);
    assert.equal(await repo.readTree('main', 'tmp'), null);
  });

  test('createCommit reports file conflicts with typed errors and changes nothing', async () => {
    const repo = await seeded();
    const head = await repo.resolveRef('main');
    const attempt = (actions: any[]) => repo.createCommit({ branch: 'main', message: 'x', author: alice, actions });
    await assert.rejects(attempt([{ action: 'create', file_path: 'README.md', content: 'x' }]), FileExistsError);
    await assert.rejects(attempt([{ action: 'create', file_path: 'src', content: 'x' }]), FileExistsError, 'a directory');
    await assert.rejects(attempt([{ action: 'create', file_path: 'README.md/inner', content: 'x' }]), FileExistsError, 'under a file');
    await assert.rejects(attempt([{ action: 'update', file_path: 'nope.txt', content: 'x' }]), FileNotFoundError);
    await assert.rejects(attempt([{ action: 'update', file_path: 'src', content: 'x' }]), FileNotFoundError, 'a directory');
    await assert.rejects(attempt([{ action: 'delete', file_path: 'nope.txt' }]), FileNotFoundError);
    await assert.rejects(attempt([{ action: 'chmod', file_path: 'nope.txt', executable: true }]), FileNotFoundError);
    await assert.rejects(attempt([{ action: 'move', file_path: 'x.md', previous_path: 'nope.md' }]), FileNotFoundError);
    await assert.rejects(attempt([{ action: 'move', file_path: 'src/app.ts', previous_path: 'README.md' }]), FileExistsError);
    await assert.rejects(
      attempt([{ action: 'create', file_path: 'a.txt', content: '1' }, { action: 'create', file_path: 'a.txt', content: '2' }]),
      FileExistsError,
      'actions see earlier actions',
    );
    await assert.rejects(attempt([{ action: 'create', file_path: '../escape', content: 'x' }]), InvalidPathError);
    await assert.rejects(attempt([{ action: 'create', file_path: '.git/config', content: 'x' }]), InvalidPathError);
    assert.equal(await repo.resolveRef('main'), head);

    // Deleting a file frees its name for a directory in the same commit.
    await attempt([{ action: 'delete', file_path: 'README.md' }, { action: 'create', file_path: 'README.md/index.md', content: 'ok' }]);
    assert.equal((await repo.readBlob('main', 'README.md/index.md'))!.content.toString(), 'ok');
  });

  test('createCommit: start points, new branches and compare-and-swap', async () => {
    const repo = await seeded();
    const main = (await repo.resolveRef('main'))!;
    const base = { message: 'feature', author: alice, actions: [{ action: 'create' as const, file_path: 'f.txt', content: 'f' }] };

    await assert.rejects(repo.createCommit({ ...base, branch: 'feature', startBranch: 'missing' }), StartRefMissingError);
    await assert.rejects(repo.createCommit({ ...base, branch: 'feature' }), StartRefMissingError, 'no start, no branch');
    await assert.rejects(repo.createCommit({ ...base, branch: 'main', expectedOldSha: '0'.repeat(40) }), RefMovedError);
    await assert.rejects(repo.createCommit({ ...base, branch: 'bad name' }), InvalidRefNameError);

    const created = await repo.createCommit({ ...base, branch: 'feature', startBranch: 'main' });
    assert.equal(created.branchCreated, true);
    assert.equal(created.parentSha, main);
    await assert.rejects(repo.createCommit({ ...base, branch: 'feature', startBranch: 'main' }), RefExistsError);

    const forced = await repo.createCommit({ ...base, branch: 'feature', startSha: main, force: true, expectedOldSha: created.sha });
    assert.equal(forced.parentSha, main);
    assert.equal(await repo.resolveRef('feature'), forced.sha);
  });

  test('concurrent commits on one branch never lose a commit', async () => {
    const repo = await seeded();
    for (let round = 0; round < 4; round++) {
      const results = await Promise.allSettled(
        [0, 1].map((i) =>
          repo.createCommit({
            branch: 'main',
            message: `writer ${i} round ${round}`,
            author: alice,
            actions: [{ action: 'create', file_path: `w${i}-${round}.txt`, content: String(i) }],
          }),
        ),
      );
      const ok = results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<any>).value);
      const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      assert.ok(ok.length >= 1, 'at least one writer wins');
      for (const f of failed) assert.ok(f.reason instanceof RefMovedError, String(f.reason));
      const head = (await repo.resolveRef('main'))!;
      const reachable = await repo.mergedInto(head, ok.map((c) => c.sha));
      assert.equal(reachable.size, ok.length, 'every successful commit is in the branch history');
      if (ok.length === 2) assert.ok(ok.some((c) => c.parentSha === ok.find((o) => o !== c).sha), 'serialized');
    }
  });

  test('listBranches uses one git call and then the cache until invalidated', async () => {
    const repo = await seeded();
    await repo.createBranch('feature/b', 'main');
    repo.invalidate();
    let calls = gitInvocationCount(repo.path);
    const branches = await repo.listBranches();
    assert.equal(gitInvocationCount(repo.path) - calls, 1);
    calls = gitInvocationCount(repo.path);
    await repo.listBranches();
    await new Repository(repo.path).listBranches();
    assert.equal(await repo.isEmpty(), false);
    assert.equal(gitInvocationCount(repo.path) - calls, 0, 'cache hit');

    assert.deepEqual(branches.map((b) => b.name), ['feature/b', 'main']);
    const c = branches[1].commit;
    assert.equal(c.title, 'Touch the docs');
    assert.equal(c.message, 'Touch the docs');
    assert.equal(c.short_id, c.id.slice(0, 8));
    assert.equal(c.parent_ids.length, 1);
    assert.equal(c.committed_date, '2024-03-02T10:00:00Z'.replace('Z', '+00:00'));
    const first = (await repo.getCommit(c.parent_ids[0]))!;
    assert.equal(first.title, 'Initial commit');
    assert.deepEqual(first.trailers, { 'Signed-off-by': 'Alice Example <alice@example.com>', 'Co-authored-by': 'Bob <bob@example.com>' });
    assert.deepEqual(first.parent_ids, []);

    // A ref changed behind the cache's back stays invisible until invalidate().
    await runGit(['update-ref', 'refs/heads/outside', branches[1].sha], { gitDir: repo.path });
    assert.equal((await repo.listBranches()).length, 2);
    repo.invalidate();
    assert.equal((await repo.listBranches()).length, 3);
    // Writes through the class invalidate by themselves.
    await repo.deleteBranch('outside');
    assert.equal((await repo.listBranches()).length, 2);
  });

  test('branchHeads reads the named refs from the ref files, else in one git call without listing the branches, and the list when it is cached', async () => {
    const repo = await seeded();
    await repo.createBranch('feature/h', 'main');
    repo.invalidate();
    const main = (await repo.resolveRef('main'))!;
    let calls = gitInvocationCount(repo.path);
    const heads = await repo.branchHeads(['main', 'feature/h', 'missing', '-x', 'main']);
    assert.deepEqual([...heads], [['main', main], ['feature/h', main]]);
    assert.equal(gitInvocationCount(repo.path) - calls, 0, 'loose refs and a missing one: the files answer');
    assert.equal(peekBranches(repo), false, 'the branch list was not read');
    // Packed refs (as after `git gc`), one of them moved since as a loose ref again.
    await repo.git(['pack-refs', '--all', '--prune']);
    const tip = await repo.createCommit({ branch: 'feature/h', message: 'h', author: alice, actions: [{ action: 'create', file_path: 'h.txt', content: 'h\n' }] });
    repo.invalidate();
    calls = gitInvocationCount(repo.path);
    assert.deepEqual([...(await repo.branchHeads(['feature/h', 'main', 'missing']))], [['feature/h', tip.sha], ['main', main]]);
    assert.equal(gitInvocationCount(repo.path) - calls, 0, 'packed-refs read without git');
    assert.deepEqual([...(await repo.branchHeads(['mai', 'ain', 'feature']))], [], 'only whole names match in packed-refs');
    // A symbolic ref: git resolves it, in one call.
    await repo.git(['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    calls = gitInvocationCount(repo.path);
    assert.deepEqual([...(await repo.branchHeads(['alias', 'main']))], [['main', main], ['alias', main]]);
    assert.equal(gitInvocationCount(repo.path) - calls, 1, 'one lookup for what the files cannot tell');
    assert.deepEqual([...(await repo.branchHeads(['-x']))], [], 'an option-like name asks git nothing');
    await repo.listBranches();
    calls = gitInvocationCount(repo.path);
    assert.deepEqual([...(await repo.branchHeads(['main', 'missing']))], [['main', main]]);
    assert.equal(gitInvocationCount(repo.path) - calls, 0, 'answered from the cached list');
  });

  test('branch and tag refs: create, delete, errors', async () => {
    const repo = await seeded();
    const main = (await repo.resolveRef('main'))!;
    const b = await repo.createBranch('topic', main.slice(0, 10));
    assert.equal(b.sha, main);
    assert.equal(b.commit.id, main);
    await assert.rejects(repo.createBranch('topic', 'main'), RefExistsError);
    await assert.rejects(repo.createBranch('other', 'nope'), RefNotFoundError);
    await assert.rejects(repo.createBranch('-x', 'main'), InvalidRefNameError);
    await assert.rejects(repo.deleteBranch('topic', '1'.repeat(40)), RefMovedError);
    assert.equal(await repo.deleteBranch('topic'), main);
    await assert.rejects(repo.deleteBranch('topic'), RefNotFoundError);

    const light = await repo.createTag('v1', 'main');
    assert.equal(light.annotated, false);
    assert.equal(light.target, main);
    assert.equal(light.message, null);
    const annotated = await repo.createTag('v2', 'main~1', 'Release 2\n\nNotes.', { name: 'Rel Eng', email: 'rel@example.com', date: new Date('2024-04-01T00:00:00Z') });
    assert.equal(annotated.annotated, true);
    assert.notEqual(annotated.target, annotated.sha);
    assert.equal(annotated.message, 'Release 2\n\nNotes.\n');
    assert.deepEqual(annotated.tagger, { name: 'Rel Eng', email: 'rel@example.com', date: '2024-04-01T00:00:00+00:00' });
    assert.equal(annotated.commit!.title, 'Initial commit');
    await assert.rejects(repo.createTag('v1', 'main'), RefExistsError);
    assert.deepEqual((await repo.listTags()).map((t) => t.name), ['v1', 'v2']);
    await repo.deleteTag('v2');
    assert.deepEqual((await repo.listTags()).map((t) => t.name), ['v1']);
    // A tag named like the branch stays distinct: full refs are never ambiguous.
    await repo.createTag('main', 'main~1');
    assert.equal(await repo.resolveRef('refs/heads/main'), main);
  });

  test('mergedInto and mergedBranchNames decide ancestry in a constant number of calls', async () => {
    const repo = await seeded();
    const main = (await repo.resolveRef('main'))!;
    const old = (await repo.resolveRef('main~1'))!;
    const side = await repo.createCommit({
      branch: 'side', startBranch: 'main', message: 's', author: alice,
      actions: [{ action: 'create', file_path: 's.txt', content: 's' }],
    });
    await repo.createBranch('old', old);
    const unknown = 'f'.repeat(40);
    const calls = gitInvocationCount(repo.path);
    const merged = await repo.mergedInto(main, [main, old, side.sha, unknown]);
    assert.ok(gitInvocationCount(repo.path) - calls <= 3);
    assert.deepEqual([...merged].sort(), [main, old].sort());
    assert.deepEqual([...(await repo.mergedBranchNames('main'))].sort(), ['main', 'old']);
    assert.deepEqual([...(await repo.mergedInto('side', [main, old]))].sort(), [main, old].sort());
  });

  test('log: paths, paging, dates, ranges and unknown refs', async () => {
    const repo = await seeded();
    const all = await repo.log({ ref: 'main' });
    assert.deepEqual(all.map((c) => c.title), ['Touch the docs', 'Initial commit']);
    assert.deepEqual((await repo.log({ ref: 'main', path: 'src/app.ts' })).map((c) => c.title), ['Initial commit']);
    assert.deepEqual((await repo.log({ ref: 'main', path: 'src' })).map((c) => c.title), ['Initial commit']);
    assert.deepEqual((await repo.log({ ref: 'main', skip: 1, limit: 1 })).map((c) => c.title), ['Initial commit']);
    assert.deepEqual((await repo.log({ ref: 'main', since: '2024-03-02T00:00:00Z' })).map((c) => c.title), ['Touch the docs']);
    assert.deepEqual((await repo.log({ ref: 'main', until: new Date('2024-03-01T12:00:00Z') })).map((c) => c.title), ['Initial commit']);
    assert.deepEqual((await repo.log({ ref: 'main~1..main' })).map((c) => c.title), ['Touch the docs']);
    assert.deepEqual(await repo.log({ ref: 'main', path: 'nothing/here' }), []);
    await assert.rejects(repo.log({ ref: 'nope' }), RefNotFoundError);
    await assert.rejects(repo.log({ ref: '--all' }), InvalidRefNameError);
    assert.equal(await repo.countCommits('main'), 2);
    assert.equal(await repo.countCommits('main', { path: 'README.md' }), 2);
    await assert.rejects(repo.countCommits('nope'), RefNotFoundError);
  });

  test('getCommits fetches many commits in two calls and skips unknown names', async () => {
    const repo = await seeded();
    const tree = (await runGit(['rev-parse', 'main^{tree}'], { gitDir: repo.path })).stdout.toString().trim();
    const calls = gitInvocationCount(repo.path);
    const got = await repo.getCommits(['main', 'main~1', 'f'.repeat(40), 'nope', tree, 'main']);
    assert.equal(gitInvocationCount(repo.path) - calls, 2);
    assert.deepEqual([...got.keys()].sort(), ['main', 'main~1']);
    assert.equal(got.get('main~1')!.title, 'Initial commit');
    assert.equal(await repo.getCommit('f'.repeat(40)), null);
  });

  test('readTree, readBlob and blobExists', async () => {
    const repo = await seeded();
    const rootTree = (await repo.readTree('main'))!;
    assert.deepEqual(rootTree.map((e) => `${e.type} ${e.path}`), ['blob README.md', 'tree scripts', 'tree src']);
    assert.equal(rootTree[0].size, '# Demo\n\nMore.\n'.length);
    assert.equal(rootTree[1].size, null);
    const src = (await repo.readTree('main', 'src/'))!;
    assert.deepEqual(src.map((e) => [e.path, e.name]), [['src/app.ts', 'app.ts']]);
    const deep = (await repo.readTree('main', '', { recursive: true }))!;
    assert.deepEqual(deep.map((e) => e.path), ['README.md', 'scripts', 'scripts/run.sh', 'src', 'src/app.ts']);
    assert.equal(await repo.readTree('main', 'missing'), null);
    assert.equal(await repo.readTree('main', 'README.md'), null);
    assert.equal(await repo.readTree('nope'), null);
    await assert.rejects(repo.readTree('main', '../x'), InvalidPathError);

    const blob = (await repo.readBlob('main', 'scripts/run.sh'))!;
    assert.equal(blob.content.toString(), '#!/bin/sh\necho hi\n');
    assert.equal(blob.mode, '100755');
    assert.equal(blob.size, blob.content.length);
    assert.match(blob.id, /^[0-9a-f]{40}$/);
    assert.equal(await repo.readBlob('main', 'src'), null);
    assert.equal(await repo.readBlob('main', 'nope'), null);
    assert.equal(await repo.readBlob('nope', 'README.md'), null);
    assert.equal(await repo.readBlob('main~1', 'README.md').then((b) => b!.content.toString()), '# Demo\n');
    assert.equal(await repo.blobExists('main', 'README.md'), true);
    assert.equal(await repo.blobExists('main', 'src'), false);
    const chunks: Buffer[] = [];
    for await (const c of repo.blobStream(blob.id)) chunks.push(c as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), '#!/bin/sh\necho hi\n');
  });

  test('a file name that looks like pathspec magic or an option is just a name', async () => {
    const repo = await freshRepo();
    await repo.createCommit({
      branch: 'main', message: 'odd names', author: alice,
      actions: [
        { action: 'create', file_path: '-rf', content: 'dash' },
        { action: 'create', file_path: ':(glob)*', content: 'magic' },
        { action: 'create', file_path: 'a*b', content: 'star' },
        { action: 'create', file_path: 'axb', content: 'x' },
      ],
    });
    assert.equal((await repo.readBlob('main', '-rf'))!.content.toString(), 'dash');
    assert.equal((await repo.readBlob('main', ':(glob)*'))!.content.toString(), 'magic');
    assert.equal((await repo.readBlob('main', 'a*b'))!.content.toString(), 'star');
    await repo.createCommit({ branch: 'main', message: 'rm', author: alice, actions: [{ action: 'delete', file_path: 'a*b' }] });
    assert.equal(await repo.blobExists('main', 'axb'), true);
    assert.deepEqual((await repo.log({ ref: 'main', path: 'a*b' })).map((c) => c.title), ['rm', 'odd names']);
  });

  test('languages, diff, mergeBase, grep', async () => {
    const repo = await seeded();
    assert.deepEqual(await repo.languages('main'), { TypeScript: 91.74, Shell: 8.26 });
    assert.deepEqual(await repo.languages('nope'), {});

    const base = (await repo.resolveRef('main'))!;
    const next = await repo.createCommit({
      branch: 'main', message: 'diffable', author: alice,
      actions: [
        { action: 'update', file_path: 'README.md', content: '# Demo\n\nChanged.\n' },
        { action: 'move', file_path: 'lib/app.ts', previous_path: 'src/app.ts' },
        { action: 'delete', file_path: 'scripts/run.sh' },
        { action: 'create', file_path: 'logo.png', content: Buffer.from([0x89, 0x50, 0, 1, 2, 0]) },
      ],
    });
    const files = await repo.diff(base, next.sha);
    const byPath = Object.fromEntries(files.map((f) => [f.new_path, f]));
    assert.equal(byPath['README.md'].diff, '@@ -1,3 +1,3 @@\n # Demo\n \n-More.\n+Changed.\n');
    assert.equal(byPath['lib/app.ts'].renamed_file, true);
    assert.equal(byPath['lib/app.ts'].old_path, 'src/app.ts');
    assert.equal(byPath['lib/app.ts'].diff, '');
    assert.equal(byPath['scripts/run.sh'].deleted_file, true);
    assert.equal(byPath['scripts/run.sh'].a_mode, '100755');
    assert.equal(byPath['logo.png'].new_file, true);
    assert.match(byPath['logo.png'].diff, /^Binary files/);
    assert.equal(await repo.mergeBase(base, next.sha), base);

    const hits = await repo.grep('main', 'demo', { ignoreCase: true });
    assert.deepEqual(hits, [{ path: 'README.md', line: 1, text: '# Demo' }]);
    assert.deepEqual(await repo.grep('main', '-x', { fixed: true }), []);
    assert.equal((await repo.grep('main~1', 'export const', { fixed: true, limit: 3 })).length, 3);
  });

  test('copyFrom copies refs and objects; remove deletes; checksum matches', async () => {
    const repo = await seeded();
    await repo.createTag('v1', 'main', 'one', alice);
    await runGit(['update-ref', 'refs/merge-requests/1/head', 'main'], { gitDir: repo.path });
    await repo.setDefaultBranch('main');
    const copy = await Repository.copyFrom(repo.path, join(root, 'copy.git'));
    assert.equal(await copy.defaultBranch(), 'main');
    assert.equal(await copy.checksum(), await repo.checksum());
    assert.notEqual(await repo.checksum(), '0'.repeat(40));
    assert.equal((await copy.getTag('v1'))!.message, 'one\n');
    const fork = await Repository.copyFrom(repo.path, join(root, 'fork.git'), { refs: 'branches-and-tags' });
    assert.equal(await fork.resolveRef('refs/merge-requests/1/head'), null);
    assert.equal(await fork.resolveRef('main'), await repo.resolveRef('main'));
    const cfg = (await runGit(['config', '--list', '--local'], { gitDir: fork.path })).stdout.toString();
    assert.doesNotMatch(cfg, /remote\./, 'no remote left behind');
    assert.ok((await copy.sizeBytes()) > 0);

    await copy.remove();
    assert.equal(existsSync(copy.path), false);
    await assert.rejects(copy.listBranches(), /repository not found/);
    assert.equal(await (await freshRepo()).checksum(), '0'.repeat(40));
  });

  test('unsafe input is refused before git runs', async () => {
    const repo = await seeded();
    const calls = gitInvocationCount(repo.path);
    await assert.rejects(repo.resolveRef('--output=/tmp/x'), InvalidRefNameError);
    await assert.rejects(repo.resolveRef('main:README.md'), InvalidRefNameError);
    await assert.rejects(repo.readBlob('-p', 'README.md'), InvalidRefNameError);
    await assert.rejects(repo.getCommits(['main\n--all']), InvalidRefNameError);
    await assert.rejects(repo.grep('main', 'a\nb'), /invalid pattern/);
    assert.throws(() => new Repository('relative/path.git'), InvalidPathError);
    assert.equal(gitInvocationCount(repo.path), calls);
  });

  test('commitTree writes the very commit git commit-tree writes, without a process when its bytes are known and its tree is loose', async () => {
    const repo = await seeded();
    const main = (await repo.resolveCommit('main'))!;
    const first = (await repo.resolveCommit('main~1'))!;
    const blob = (await repo.git(['hash-object', '-w', '--stdin'], { input: 'merged\n' })).stdout.toString().trim();
    // A new tree, loose as merge-tree leaves the trees it makes.
    const tree = (await repo.git(['mktree'], { input: `100644 blob ${blob}\tmerged.txt\n` })).stdout.toString().trim();
    const byGit = async (o: { tree: string; parents: string[]; message: string; author: Identity; committer?: Identity }) => {
      const date = (d: Identity['date']) => (d instanceof Date ? `@${Math.floor(d.getTime() / 1000)} +0000` : String(d));
      const c = o.committer ?? o.author;
      const env = {
        GIT_AUTHOR_NAME: o.author.name, GIT_AUTHOR_EMAIL: o.author.email, GIT_AUTHOR_DATE: date(o.author.date),
        GIT_COMMITTER_NAME: c.name, GIT_COMMITTER_EMAIL: c.email, GIT_COMMITTER_DATE: date(c.date ?? o.author.date),
      };
      return (await repo.git(['commit-tree', o.tree, ...o.parents.flatMap((p) => ['-p', p])], { env, input: o.message })).stdout.toString().trim();
    };
    const cases: Array<{ o: { tree: string; parents: string[]; message: string; author: Identity; committer?: Identity }; processes: number }> = [
      // A merge: two parents, a Date, the message as given (no newline added).
      { o: { tree, parents: [main, first], message: "Merge branch 'a' into 'main'\n\nSee merge request g/p!1", author: { name: 'Maintainer One', email: 'm@example.com', date: new Date(1_750_000_000_123) } }, processes: 0 },
      // A rebased commit: git's raw date with a zone, another committer, text beyond ASCII.
      { o: { tree, parents: [main], message: 'Zoë’s change\n', author: { name: 'Zoë Ünïcode', email: 'zoe@example.com', date: '@1700000000 +0530' }, committer: { name: 'Rebaser', email: 'r@example.com', date: new Date(1_760_000_000_000) } }, processes: 0 },
      // Left to git: a name git trims, a date git parses, a zone git may rewrite.
      { o: { tree, parents: [main], message: 'x', author: { name: 'J. Doe Jr.', email: 'j@example.com', date: new Date(1_750_000_000_000) } }, processes: 1 },
      { o: { tree, parents: [main], message: 'x', author: { name: 'Jo', email: 'j@example.com', date: '2024-03-01T10:00:00+02:00' } }, processes: 1 },
      { o: { tree, parents: [main], message: 'x', author: { name: 'Jo', email: 'j@example.com', date: '@1700000000 -0000' } }, processes: 1 },
    ];
    for (const { o, processes } of cases) {
      const calls = gitInvocationCount(repo.path);
      const sha = await repo.commitTree(o);
      assert.equal(gitInvocationCount(repo.path) - calls, processes, o.author.name);
      // git reads what was written, and writes the same object itself.
      assert.equal((await repo.git(['cat-file', '-t', sha])).stdout.toString().trim(), 'commit');
      assert.equal(sha, await byGit(o), o.author.name);
    }
    await repo.git(['fsck', '--strict', '--no-dangling']);
    // A tree git holds only in a pack (main's, packed and its loose copy pruned): git writes the commit, checking the tree.
    await repo.git(['repack', '-a', '-d', '-q']);
    const packed = (await repo.treeOf(main))!;
    const o = { tree: packed, parents: [main], message: 'packed', author: { name: 'Jo', email: 'j@example.com', date: new Date(1_750_000_000_000) } };
    const calls = gitInvocationCount(repo.path);
    assert.equal(await repo.commitTree(o), await byGit(o));
    assert.equal(gitInvocationCount(repo.path) - calls - 1, 1);
  });

  test('trailers parses a free-standing message like stored commits', async () => {
    const repo = await freshRepo();
    assert.deepEqual(await repo.trailers('Fix\n\nBody\n\nChangelog: fixed\nSigned-off-by: A <a@b>\n'), {
      Changelog: 'fixed',
      'Signed-off-by': 'A <a@b>',
    });
    assert.deepEqual(await repo.trailers('Just a title'), {});
  });
});
