import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { openDatabase } from '../db/index.ts';
import { systemClock } from '../clock.ts';
import { scratch } from '../../../test/core/processes.ts';
import { JobQueue } from './queue.ts';

// Real processes sharing one database (a file on SQLite, a database on PostgreSQL): claims never overlap, and a
// job whose process was killed with SIGKILL runs again once its lease ran out, and completes once.

function worker(env: Record<string, string>, name: string, leaseMs: number): { child: ChildProcess; ready: Promise<void>; saw(text: string): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/job-worker.ts', name, String(leaseMs)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d) => { out += d; waiters.splice(0).forEach((w) => w()); });
  const saw = (text: string) => new Promise<void>((resolve, reject) => {
    const check = () => (out.includes(text) ? resolve() : waiters.push(check));
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before "${text}"`)));
    check();
  });
  return { child, ready: saw('ready'), saw };
}

const stopped = (c: ChildProcess) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode ? resolve() : c.once('exit', () => resolve())));

async function until(check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('two processes on one queue never run the same job twice', { timeout: 120_000 }, async () => {
  const s = await scratch();
  const database = openDatabase({ databaseUrl: s.databaseUrl, dataDir: s.dataDir });
  try {
    await database.migrate();
    const q = new JobQueue({ db: database.db, clock: systemClock });
    q.define('record', { async run() {} });
    const a = worker(s.env, 'w1', 30_000);
    const b = worker(s.env, 'w2', 30_000);
    await Promise.all([a.ready, b.ready]);
    const N = 200;
    for (let i = 0; i < N; i++) await q.enqueue(database.db, 'record', { sleep: i % 5 });
    await until(async () => Number((await database.db.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('state', '=', 'succeeded').executeTakeFirstOrThrow()).n) === N);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    await Promise.all([stopped(a.child), stopped(b.child)]);
    const jobs = await database.db.selectFrom('jobs').select(['state', 'attempts', 'last_error']).execute();
    assert.deepEqual(jobs.filter((j) => j.state !== 'succeeded' || j.attempts !== 1 || j.last_error), [], 'every job ran once, first time');
    const runs = await database.db.selectFrom('internal_ids').select(['owner_id', 'last_value']).where('usage', '=', 'jobtest').execute();
    assert.equal(runs.length, N);
    const byWorker = new Set(runs.map((r) => r.last_value));
    assert.deepEqual([...byWorker].sort(), [1, 2], 'both processes took work');
  } finally {
    await database.close();
    await s.cleanup();
  }
});

test('a job whose process was killed with SIGKILL runs again after its lease, and completes once', { timeout: 120_000 }, async () => {
  const s = await scratch();
  const database = openDatabase({ databaseUrl: s.databaseUrl, dataDir: s.dataDir });
  try {
    await database.migrate();
    const q = new JobQueue({ db: database.db, clock: systemClock });
    q.define('hang', { async run() {} });
    const a = worker(s.env, 'w1', 1500);
    await a.ready;
    const id = (await q.enqueue(database.db, 'hang', {}))!;
    await a.saw('hanging');
    a.child.kill('SIGKILL');
    await stopped(a.child);
    const held = await database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([held.state, held.attempts], ['running', 1]);
    const b = worker(s.env, 'w2', 1500);
    await b.ready;
    await until(async () => (await database.db.selectFrom('jobs').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state === 'succeeded');
    b.child.kill('SIGTERM');
    await stopped(b.child);
    const done = await database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([done.state, done.attempts, done.locked_by], ['succeeded', 2, null]);
    const runs = await database.db.selectFrom('internal_ids').select('last_value').where('usage', '=', 'jobtest').execute();
    assert.deepEqual(runs, [{ last_value: 2 }]);
  } finally {
    await database.close();
    await s.cleanup();
  }
});
