import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Repository } from './repository.ts';
import { runGit, gitInvocationCount, GitError } from './command.ts';
import { RefExistsError, RefMovedError } from './errors.ts';
import { configureGitSessions, liveSessions, sessionFor, sessionStartCount } from './sessions.ts';

let root: string;
let n = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'bellows-sessions-test-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A repository with two commits on main; answers their shas. */
async function repoWithCommits(): Promise<{ repo: Repository; first: string; second: string }> {
  const repo = await Repository.init(join(root, `s${++n}.git`), { defaultBranch: 'main' });
  const stream = [1, 2].map((i) => `commit refs/heads/main\nmark :${i}\ncommitter A <a@example.com> ${1_700_000_000 + i} +0000\ndata 2\nc${i}\n${i === 2 ? 'from :1\n' : ''}M 100644 inline f.txt\ndata 2\n${i}\n\n`).join('');
  await runGit(['fast-import', '--quiet'], { gitDir: repo.path, input: stream });
  const [first, second] = (await runGit(['rev-parse', 'main~1', 'main'], { gitDir: repo.path })).stdout.toString().trim().split('\n');
  return { repo, first: first!, second: second! };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('long-lived git processes', () => {
  test('objects are read through one process per repository, reused, and a missing object reads null', async () => {
    const { repo, first, second } = await repoWithCommits();
    const before = gitInvocationCount(repo.path);
    const [a, b, none] = await repo.readObjects([first, second, 'f'.repeat(40)]);
    assert.equal(a!.type, 'commit');
    assert.match(b!.content.toString(), new RegExp(`^tree [0-9a-f]{40}\\nparent ${first}\\n`));
    assert.equal(none, null);
    await Promise.all(Array.from({ length: 20 }, () => repo.readObjects([second])));
    assert.equal(gitInvocationCount(repo.path), before + 1);
    // An object written after the process started is found.
    await runGit(['update-ref', 'refs/heads/x', second], { gitDir: repo.path });
    const blob = (await runGit(['hash-object', '-w', '--stdin'], { gitDir: repo.path, input: 'written later\n' })).stdout.toString().trim();
    assert.equal((await repo.readObjects([blob]))[0]!.content.toString(), 'written later\n');
  });

  test('a killed process fails what it held with an error, and the next call runs on a new one', async () => {
    const { repo, second } = await repoWithCommits();
    await repo.readObjects([second]);
    const session = sessionFor('cat-file', repo.path)!;
    const pid = session.pid!;
    process.kill(pid, 'SIGKILL');
    const starts = sessionStartCount();
    // Whichever comes first, the death or this request, the caller gets an error or the right object, never another.
    const got = await repo.readObjects([second]).catch((e: unknown) => e);
    if (got instanceof Error) assert.ok(got instanceof GitError);
    else assert.equal((got as Awaited<ReturnType<Repository['readObjects']>>)[0]!.type, 'commit');
    const again = await repo.readObjects([second]);
    assert.equal(again[0]!.type, 'commit');
    assert.ok(sessionStartCount() > starts);
    assert.notEqual(sessionFor('cat-file', repo.path)!.pid, pid);
  });

  test('a process that does not answer is killed after the timeout and replaced', async () => {
    const { repo, second } = await repoWithCommits();
    await repo.readObjects([second]);
    const session = sessionFor('cat-file', repo.path)!;
    const pid = session.pid!;
    process.kill(pid, 'SIGSTOP');
    const err = await session.request(`${second}\n`, () => null, 300).catch((e: unknown) => e);
    assert.ok(err instanceof GitError);
    assert.equal(err.reason, 'timeout');
    assert.equal(session.alive, false);
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(alive(pid), false, 'the hung process is gone');
    assert.equal((await repo.readObjects([second]))[0]!.type, 'commit');
  });

  test('an idle process ends by itself', async () => {
    configureGitSessions({ idleMs: 100 });
    try {
      const { repo, second } = await repoWithCommits();
      await repo.readObjects([second]);
      const pid = sessionFor('cat-file', repo.path)!.pid!;
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(alive(pid), false);
      assert.equal((await repo.readObjects([second]))[0]!.type, 'commit');
    } finally {
      configureGitSessions({ idleMs: 15_000 });
    }
  });

  test('at most the configured number of processes per kind; past it a call runs its own process', async () => {
    configureGitSessions({ max: 2 });
    try {
      const repos = await Promise.all([1, 2, 3].map(() => repoWithCommits()));
      for (const r of repos) assert.equal((await r.repo.readObjects([r.second]))[0]!.type, 'commit');
      assert.ok(liveSessions('cat-file') <= 2);
      const all = await Promise.all(repos.map((r) => r.repo.readObjects([r.first])));
      assert.deepEqual(all.map((x) => x[0]!.type), ['commit', 'commit', 'commit']);
      assert.ok(liveSessions('cat-file') <= 2);
    } finally {
      configureGitSessions({ max: 16 });
    }
  });
});

describe('ref transactions through update-ref --stdin', () => {
  test('compare-and-swap kept: create, refuse an existing ref, move only from the expected value', async () => {
    const { repo, first, second } = await repoWithCommits();
    await repo.updateRef('refs/merge-requests/1/head', first, null);
    assert.equal(await repo.revParse('refs/merge-requests/1/head'), first);
    await assert.rejects(repo.updateRef('refs/merge-requests/1/head', second, null), RefExistsError);
    await assert.rejects(repo.updateRef('refs/merge-requests/1/head', first, second), RefMovedError);
    assert.equal(await repo.revParse('refs/merge-requests/1/head'), first);
    await repo.updateRef('refs/merge-requests/1/head', second, first);
    assert.equal(await repo.revParse('refs/merge-requests/1/head'), second);
    // The branch list read before sees the change (the ref cache is dropped).
    await repo.listBranches();
    await repo.updateRef('refs/heads/other', first, null);
    assert.deepEqual((await repo.listBranches()).map((b) => b.name), ['main', 'other']);
  });

  test('concurrent creations of one ref: exactly one wins, the others are refused, the rest go on', async () => {
    const { repo, first, second } = await repoWithCommits();
    const before = gitInvocationCount(repo.path);
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => repo.updateRef('refs/merge-requests/7/head', i % 2 ? first : second, null)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof RefExistsError, String(o.reason));
    const made = await Promise.all(Array.from({ length: 10 }, (_, i) => repo.updateRef(`refs/merge-requests/${100 + i}/head`, first, null)));
    assert.equal(made.length, 10);
    for (let i = 0; i < 10; i++) assert.equal(await repo.revParse(`refs/merge-requests/${100 + i}/head`), first);
    // Ten creations in a row ran in one process (the refusals above each ended one).
    assert.ok(gitInvocationCount(repo.path) - before < 8 * 3 + 10, 'not one process per update');
  });

  test('a killed update-ref process leaves no lock behind, its update is still made, and it is replaced', async () => {
    const { repo, first } = await repoWithCommits();
    await repo.updateRef('refs/merge-requests/1/head', first, null);
    const pid = sessionFor('update-ref', repo.path)!.pid!;
    process.kill(pid, 'SIGKILL');
    // The update that finds the process gone is made by a process of its own.
    await repo.updateRef('refs/merge-requests/2/head', first, null);
    assert.equal(await repo.revParse('refs/merge-requests/2/head'), first);
    await repo.updateRef('refs/merge-requests/3/head', first, null);
    assert.equal(await repo.revParse('refs/merge-requests/3/head'), first);
  });
});
