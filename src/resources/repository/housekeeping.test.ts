import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir, writeFile, utimes, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { makeProject } from './testing.ts';
import { HOUSEKEEPING_DELAY_MS, HOUSEKEEPING_JOB, repoFor } from './repository.common.ts';
import { runHousekeeping } from './housekeeping.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

async function commit(p: ProjectRow, tok: string, branch: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, {
    token: tok, body: { branch, commit_message: `add ${path}`, actions: [{ action: 'create', file_path: path, content: path }], ...extra },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

const jobsOf = (p: ProjectRow) => t.app.db.selectFrom('jobs').select(['kind', 'args', 'state', 'run_at', 'unique_key'])
  .where('kind', '=', HOUSEKEEPING_JOB).where('unique_key', '=', `${HOUSEKEEPING_JOB}:${p.id}`).orderBy('id').execute();

/** The commits each layer of the split commit-graph holds (the last count of its OID fan-out chunk), base first. */
async function graphLayers(p: ProjectRow): Promise<number[]> {
  const dir = join(repoFor(t.app.config, p).path, 'objects', 'info', 'commit-graphs');
  const chain = (await readFile(join(dir, 'commit-graph-chain'), 'utf8')).split('\n').filter(Boolean);
  const out: number[] = [];
  for (const hash of chain) {
    const b = await readFile(join(dir, `graph-${hash}.graph`));
    assert.equal(b.subarray(0, 4).toString('latin1'), 'CGPH');
    const chunks = b[6];
    for (let i = 0; i < chunks; i++) {
      const at = 8 + i * 12;
      if (b.subarray(at, at + 4).toString('latin1') === 'OIDF') out.push(b.readUInt32BE(Number(b.readBigUInt64BE(at + 4)) + 255 * 4));
    }
  }
  return out;
}

const git = async (p: ProjectRow, args: string[]) => (await repoFor(t.app.config, p).git(args)).stdout.toString().trim();

describe('repository housekeeping (the commit-graph)', () => {
  test('a ref change queues one delayed run per project; the run writes a graph git verifies, holding every reachable commit', async () => {
    const owner = await makeUser(t.app);
    const p = await makeProject(t.app, owner.user);
    await commit(p, owner.token, 'main', 'a.txt');
    const queued = await jobsOf(p);
    assert.deepEqual(queued.map((j) => [j.kind, j.args, j.state, j.run_at]),
      [[HOUSEKEEPING_JOB, JSON.stringify({ project_id: p.id }), 'queued', t.clock.now() + HOUSEKEEPING_DELAY_MS]]);
    // More ref changes while it waits share it.
    await commit(p, owner.token, 'main', 'b.txt');
    await commit(p, owner.token, 'topic', 'c.txt', { start_branch: 'main' });
    assert.equal((await jobsOf(p)).length, 1);
    // Not due yet: nothing is written.
    await t.app.jobs.drain();
    assert.equal((await jobsOf(p))[0].state, 'queued');
    const repo = repoFor(t.app.config, p);
    assert.equal(existsSync(join(repo.path, 'objects', 'info', 'commit-graphs')), false);
    (t.clock as ManualClock).advance(HOUSEKEEPING_DELAY_MS);
    await t.app.jobs.drain();
    assert.equal((await jobsOf(p))[0].state, 'succeeded');
    await git(p, ['commit-graph', 'verify']);
    assert.deepEqual(await graphLayers(p), [Number(await git(p, ['rev-list', '--all', '--count']))]);
    assert.equal(Number(await git(p, ['rev-list', '--all', '--count'])), 3); // a, b, c
    // The next change queues a new run, which adds its commit as a new layer.
    await commit(p, owner.token, 'main', 'd.txt');
    assert.deepEqual((await jobsOf(p)).map((j) => j.state), ['succeeded', 'queued']);
    (t.clock as ManualClock).advance(HOUSEKEEPING_DELAY_MS);
    await t.app.jobs.drain();
    await git(p, ['commit-graph', 'verify']);
    const layers = await graphLayers(p);
    assert.deepEqual([layers.length, layers.reduce((a, b) => a + b, 0)], [2, 4]);
  });

  test('a lock left by a killed writer is removed once stale; a fresh one is left to its writer', async () => {
    const owner = await makeUser(t.app);
    const p = await makeProject(t.app, owner.user);
    await commit(p, owner.token, 'main', 'a.txt');
    const dir = join(repoFor(t.app.config, p).path, 'objects', 'info', 'commit-graphs');
    await mkdir(dir, { recursive: true });
    const lock = join(dir, 'commit-graph-chain.lock');
    await writeFile(lock, '');
    // A fresh lock: git refuses, the job fails (and is retried later).
    await assert.rejects(runHousekeeping(t.app, p.id));
    assert.ok(existsSync(lock));
    const old = (Date.now() - 11 * 60_000) / 1000;
    await utimes(lock, old, old);
    await runHousekeeping(t.app, p.id);
    assert.equal(existsSync(lock), false);
    await git(p, ['commit-graph', 'verify']);
    assert.equal((await graphLayers(p)).reduce((a, b) => a + b, 0), Number(await git(p, ['rev-list', '--all', '--count'])));
  });

  test('a project gone or without commits: nothing to do', async () => {
    const owner = await makeUser(t.app);
    const p = await makeProject(t.app, owner.user, { init: false });
    await runHousekeeping(t.app, p.id);
    await runHousekeeping(t.app, 999_999);
    const path = repoFor(t.app.config, p).path;
    assert.ok(!existsSync(path) || !(await readdir(join(path, 'objects', 'info')).catch(() => [])).some((f) => f.startsWith('commit-graph')));
  });
});
