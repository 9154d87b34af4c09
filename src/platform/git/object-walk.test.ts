import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Repository } from './repository.ts';
import { runGit, gitInvocationCount } from './command.ts';
import { CommitGraph } from './commit-graph.ts';
import { parseCommit } from './object-walk.ts';

// The merge base, the two sides' counts and the changed-file count computed from raw objects must be git's own
// answers: each case builds a history with git fast-import and asks both.

type Change = { path: string; content?: string; mode?: string; delete?: boolean };
interface Spec {
  mark: string;
  parents: string[];
  changes?: Change[];
  /** Replace the whole tree (no parent's files kept). */
  fresh?: boolean;
}

let root: string;
let n = 0;
let clock = 1_700_000_000;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'bellows-walk-test-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes the commits (each a commit date one minute after the last) and answers mark → sha. */
async function build(specs: Spec[], refs: Record<string, string> = {}): Promise<{ repo: Repository; sha: Record<string, string> }> {
  const repo = await Repository.init(join(root, `w${++n}.git`), { defaultBranch: 'main' });
  const marks = new Map<string, number>();
  let stream = '';
  specs.forEach((s, i) => {
    marks.set(s.mark, i + 1);
    const t = (clock += 60);
    const msg = `commit ${s.mark}\n`;
    stream += `commit refs/heads/tmp-${s.mark}\nmark :${i + 1}\ncommitter A <a@example.com> ${t} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
    if (s.parents[0]) stream += `from :${marks.get(s.parents[0])}\n`;
    for (const p of s.parents.slice(1)) stream += `merge :${marks.get(p)}\n`;
    if (s.fresh) stream += 'deleteall\n';
    for (const c of s.changes ?? [{ path: `f-${s.mark}.txt`, content: `${s.mark}\n` }]) {
      if (c.delete) stream += `D ${c.path}\n`;
      else stream += `M ${c.mode ?? '100644'} inline ${c.path}\ndata ${Buffer.byteLength(c.content ?? '')}\n${c.content ?? ''}\n`;
    }
    stream += '\n';
  });
  for (const [name, mark] of Object.entries(refs)) stream += `reset refs/heads/${name}\nfrom :${marks.get(mark)}\n\n`;
  await runGit(['fast-import', '--quiet', `--export-marks=${join(repo.path, 'marks')}`], { gitDir: repo.path, input: stream });
  const exported = (await runGit(['cat-file', '--batch-check=%(objectname)'], { gitDir: repo.path, input: specs.map((s) => `refs/heads/tmp-${s.mark}\n`).join('') })).stdout.toString().trim().split('\n');
  const sha: Record<string, string> = {};
  specs.forEach((s, i) => (sha[s.mark] = exported[i]!));
  return { repo, sha };
}

/** git's answers: `rev-list --left-right --count a...b` and `merge-base a b`. */
async function gitAnswers(repo: Repository, a: string, b: string) {
  const counts = (await runGit(['rev-list', '--left-right', '--count', `${a}...${b}`], { gitDir: repo.path })).stdout.toString().trim().split(/\s+/).map(Number);
  const mb = await runGit(['merge-base', a, b], { gitDir: repo.path, okExitCodes: [1] });
  return { behind: counts[0], ahead: counts[1], base: mb.code === 0 ? mb.stdout.toString().trim() : null };
}

async function sameAsGit(repo: Repository, a: string, b: string) {
  const want = await gitAnswers(repo, a, b);
  const got = await repo.walkDivergenceAndBase(a, b);
  assert.equal(got.behind, want.behind, 'behind');
  assert.equal(got.ahead, want.ahead, 'ahead');
  assert.equal(got.base ?? (await repo.mergeBase(a, b)), want.base, 'merge base');
  return got;
}

const linear = (prefix: string, from: string | null, count: number): Spec[] =>
  Array.from({ length: count }, (_, i) => ({ mark: `${prefix}${i}`, parents: i === 0 ? (from ? [from] : []) : [`${prefix}${i - 1}`] }));

describe('history walk from raw objects', { concurrency: true }, () => {
  test('diverged branches, either order, ancestors and the same commit', async () => {
    const { repo, sha } = await build([...linear('m', null, 6), ...linear('f', 'm2', 4)]);
    for (const [a, b] of [['m5', 'f3'], ['f3', 'm5'], ['m2', 'f3'], ['f3', 'm2'], ['m0', 'm5'], ['m5', 'm0'], ['m3', 'm3']]) {
      await sameAsGit(repo, sha[a]!, sha[b]!);
    }
    const r = await repo.walkDivergenceAndBase(sha.m5!, sha.f3!);
    assert.deepEqual(r, { behind: 3, ahead: 4, base: sha.m2 });
  });

  test('merges on both sides: main merged into the branch, another branch merged into main', async () => {
    const { repo, sha } = await build([
      ...linear('m', null, 4),
      ...linear('f', 'm1', 3),
      ...linear('s', 'm2', 2),
      { mark: 'm4', parents: ['m3', 's1'] },
      { mark: 'fm', parents: ['f2', 'm3'] },
      ...linear('g', 'fm', 2).map((s, i) => (i === 0 ? { ...s, parents: ['fm'] } : s)),
      { mark: 'm5', parents: ['m4'] },
    ]);
    for (const [a, b] of [['m5', 'g1'], ['g1', 'm5'], ['m4', 'fm'], ['s1', 'g1']]) await sameAsGit(repo, sha[a]!, sha[b]!);
    assert.equal((await repo.walkDivergenceAndBase(sha.m5!, sha.g1!)).base, sha.m3);
  });

  test('criss-cross: two merge bases, git chooses; no common history: null', async () => {
    const { repo, sha } = await build([
      { mark: 'a', parents: [] },
      { mark: 'b1', parents: ['a'] },
      { mark: 'c1', parents: ['a'] },
      { mark: 'b2', parents: ['b1', 'c1'] },
      { mark: 'c2', parents: ['c1', 'b1'] },
      { mark: 'b3', parents: ['b2'] },
      { mark: 'c3', parents: ['c2'] },
      { mark: 'o0', parents: [], fresh: true },
      { mark: 'o1', parents: ['o0'] },
    ]);
    const cc = await sameAsGit(repo, sha.b3!, sha.c3!);
    assert.ok(cc.base === sha.b1 || cc.base === sha.c1 || cc.base === undefined);
    const none = await sameAsGit(repo, sha.b3!, sha.o1!);
    assert.equal(none.base, null);
    assert.deepEqual([none.behind, none.ahead], [5, 2]);
  });

  test('a 1,000-commit branch: the same counts, read through one process', async () => {
    const { repo, sha } = await build([...linear('m', null, 30), ...linear('f', 'm10', 1000)]);
    await repo.readObjects([sha.m0!]);
    const before = gitInvocationCount(repo.path);
    const got = await repo.walkDivergenceAndBase(sha.m29!, sha.f999!);
    assert.equal(gitInvocationCount(repo.path), before, 'no process started for the walk');
    assert.deepEqual(got, { behind: 19, ahead: 1000, base: sha.m10 });
    await sameAsGit(repo, sha.m29!, sha.f999!);
    // Past its bound the walk leaves the answer to git, which gives the same.
    const bounded = await repo.walkDivergenceAndBase(sha.m29!, sha.f999!, 100);
    assert.deepEqual(bounded, got);
    assert.ok(gitInvocationCount(repo.path) > before);
  });
});

describe('changed-file count from trees', { concurrency: true }, () => {
  async function pair(changes: Change[], baseFiles: Change[] = [
    { path: 'a.txt', content: 'a\n' }, { path: 'dir/b.txt', content: 'b\n' }, { path: 'dir/deep/c.txt', content: 'c\n' },
    { path: 'dir/deep/d.txt', content: 'some longer text that stays the same\nline 2\nline 3\nline 4\n' }, { path: 'e.sh', content: 'echo\n' },
  ]) {
    const { repo, sha } = await build([{ mark: 'base', parents: [], changes: baseFiles }, { mark: 'next', parents: ['base'], changes }]);
    const want = await repo.changedFileCount(sha.base!, sha.next!);
    const got = await repo.treeDiffCount(sha.base!, sha.next!);
    assert.equal(got, want);
    assert.equal(await repo.treeDiffCount(sha.next!, sha.base!), await repo.changedFileCount(sha.next!, sha.base!));
    return { repo, sha, got };
  }

  test('modified, added and removed files, nested directories, mode changes', async () => {
    assert.equal((await pair([{ path: 'dir/deep/c.txt', content: 'changed\n' }])).got, 1);
    assert.equal((await pair([{ path: 'new/one.txt', content: '1\n' }, { path: 'new/sub/two.txt', content: '2\n' }, { path: 'a.txt', content: 'x\n' }])).got, 3);
    assert.equal((await pair([{ path: 'dir', delete: true }])).got, 3);
    assert.equal((await pair([{ path: 'e.sh', content: 'echo\n', mode: '100755' }])).got, 1);
    assert.equal((await pair([{ path: 'a.txt', content: 'a\n' }])).got, 0);
  });

  test('renames, a file that became a directory, a type change: the count is still git\'s', async () => {
    const { repo, sha } = await pair([{ path: 'dir/deep/d.txt', delete: true }, { path: 'moved/d.txt', content: 'some longer text that stays the same\nline 2\nline 3\nline 4 changed\n' }]);
    assert.equal(await repo.treeDiffCount(sha.base!, sha.next!), 1, 'an edited rename counts once');
    await pair([{ path: 'a.txt', delete: true }, { path: 'b.txt', content: 'a\n' }]);
    await pair([{ path: 'a.txt', delete: true }, { path: 'a.txt/inside.txt', content: 'now a directory\n' }]);
    await pair([{ path: 'a.txt', content: 'target', mode: '120000' }]);
  });

  test('one changed file among 2,000 reads only the trees on its path, through the long-lived reader', async () => {
    const files: Change[] = Array.from({ length: 2000 }, (_, i) => ({ path: `d${i % 20}/s${i % 7}/f${i}.txt`, content: `${i}\n` }));
    const { repo, sha } = await build([{ mark: 'base', parents: [], changes: files }, { mark: 'next', parents: ['base'], changes: [{ path: 'd3/s2/f23.txt', content: 'x\n' }] }]);
    await repo.readObjects([sha.base!]);
    const before = gitInvocationCount(repo.path);
    assert.equal(await repo.treeDiffCount(sha.base!, sha.next!), 1);
    assert.equal(await repo.treeDiffCount(sha.next!, sha.base!), 1);
    assert.equal(gitInvocationCount(repo.path), before);
    assert.equal(await repo.changedFileCount(sha.base!, sha.next!), 1);
  });
});

describe('history walk over the commit-graph', { concurrency: true }, () => {
  const graphWrite = (repo: Repository, ...extra: string[]) =>
    runGit(['commit-graph', 'write', '--reachable', '--no-progress', ...extra], { gitDir: repo.path });

  test('every commit of a split graph reads as its object: parents in order (an octopus merge), tree, a date past 2106', async () => {
    const { repo, sha } = await build([
      ...linear('m', null, 5),
      ...linear('f', 'm1', 3),
      ...linear('g', 'm2', 2),
      { mark: 'oct', parents: ['m4', 'f2', 'g1'] },
      { mark: 'mm', parents: ['oct', 'f1'] },
    ]);
    await graphWrite(repo, '--split=no-merge');
    // A second layer on top of the first, then a commit the graph does not hold.
    const late = `commit refs/heads/late\ncommitter A <a@example.com> 4400000000 +0000\ndata 5\nlate\nfrom ${sha.mm}\nM 100644 inline late.txt\ndata 2\nl\n\n`;
    await runGit(['fast-import', '--quiet'], { gitDir: repo.path, input: late });
    const lateSha = (await runGit(['rev-parse', 'refs/heads/late'], { gitDir: repo.path })).stdout.toString().trim();
    await graphWrite(repo, '--split=no-merge');
    const chain = (await readFile(join(repo.path, 'objects/info/commit-graphs/commit-graph-chain'), 'latin1')).trim().split('\n');
    assert.equal(chain.length, 2, 'two layers');
    const after = `commit refs/heads/after\ncommitter A <a@example.com> 1800000000 +0000\ndata 6\nafter\nfrom ${lateSha}\n\n`;
    await runGit(['fast-import', '--quiet'], { gitDir: repo.path, input: after });
    const afterSha = (await runGit(['rev-parse', 'refs/heads/after'], { gitDir: repo.path })).stdout.toString().trim();

    const graph = await CommitGraph.open(repo.path);
    assert.ok(graph);
    assert.equal(graph.size, Object.keys(sha).length + 1);
    for (const id of [...Object.values(sha), lateSha]) {
      const [raw] = await repo.readObjects([id]);
      assert.deepEqual(graph.lookup(id), parseCommit(raw!.content), id);
    }
    assert.deepEqual(graph.lookup(sha.oct!)!.parents, [sha.m4, sha.f2, sha.g1]);
    assert.equal(graph.lookup(lateSha)!.date, 4_400_000_000);
    assert.equal(graph.lookup(afterSha), undefined, 'written after the graph');
    assert.equal(graph.lookup('0'.repeat(40)), undefined);
    await sameAsGit(repo, afterSha, sha.g1!);
    await sameAsGit(repo, sha.g1!, sha.oct!);
  });

  test('a 1,000-commit branch in the graph is walked without a process even when only a few commits may be read', async () => {
    const { repo, sha } = await build([...linear('m', null, 30), ...linear('f', 'm10', 1000)]);
    await repo.readObjects([sha.m0!]);
    // Without a graph the bound sends the walk to git.
    let before = gitInvocationCount(repo.path);
    const want = { behind: 19, ahead: 1000, base: sha.m10 };
    assert.deepEqual(await repo.walkDivergenceAndBase(sha.m29!, sha.f999!, 2_000, { outsideGraph: 10 }), want);
    assert.ok(gitInvocationCount(repo.path) > before, 'git walked');
    await graphWrite(repo, '--split');
    before = gitInvocationCount(repo.path);
    assert.deepEqual(await repo.walkDivergenceAndBase(sha.m29!, sha.f999!, 2_000, { outsideGraph: 10 }), want);
    assert.equal(gitInvocationCount(repo.path), before, 'no process started');
  });

  test('a graph that is not as git writes it is not used, and the answers stay git\'s', async () => {
    const { repo, sha } = await build([...linear('m', null, 6), ...linear('f', 'm2', 4)]);
    await graphWrite(repo, '--split');
    const dir = join(repo.path, 'objects/info/commit-graphs');
    const [layer] = (await readFile(join(dir, 'commit-graph-chain'), 'latin1')).trim().split('\n');
    const file = join(dir, `graph-${layer}.graph`);
    const good = await readFile(file);
    assert.ok(await CommitGraph.open(repo.path));
    for (const bad of [good.subarray(0, 200), Buffer.concat([Buffer.from('XGPH'), good.subarray(4)]), Buffer.from(good).fill(0xff, 8, 20)]) {
      await writeFile(file, bad);
      assert.equal(await CommitGraph.open(repo.path), null);
      await sameAsGit(repo, sha.m5!, sha.f3!);
    }
    await writeFile(join(dir, 'commit-graph-chain'), `${'a'.repeat(40)}\n`);
    assert.equal(await CommitGraph.open(repo.path), null, 'a chain naming a missing layer');
    await writeFile(file, good);
    await writeFile(join(dir, 'commit-graph-chain'), `${layer}\n`);
    assert.ok(await CommitGraph.open(repo.path));
    await writeFile(join(repo.path, 'shallow'), `${sha.m0}\n`);
    assert.equal(await CommitGraph.open(repo.path), null, 'git uses no graph in a shallow repository');
  });
});
