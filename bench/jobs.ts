// Job queue throughput: how many no-op jobs per second one runner claims, runs and completes.
//
//   npm run bench:jobs -- [--jobs 20000] [--concurrency 64] [--data-dir /tmp/bench-jobs]
//   DATABASE_URL=postgres://... npm run bench:jobs
//
// The jobs are queued first (their insert rate is reported too), then one started queue drains them; the figure
// is jobs completed per second of draining. Target: ≥ 1,000/s on SQLite and on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/platform/db/index.ts';
import { systemClock } from '../src/platform/clock.ts';
import { JobQueue } from '../src/platform/jobs/queue.ts';

const { values: args } = parseArgs({ options: { jobs: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '64' }, 'data-dir': { type: 'string' } } });
const N = Number(args.jobs);
const dataDir = args['data-dir'] ?? mkdtempSync(join(tmpdir(), 'bench-jobs-'));
const database = openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir });
await database.migrate();
await database.db.deleteFrom('jobs').where('kind', '=', 'noop').execute();
const q = new JobQueue({ db: database.db, clock: systemClock, pollMs: 50 });
let done = 0;
q.define('noop', { concurrency: Number(args.concurrency), async run() { done++; } });
const load = loadavg()[0];
let t = performance.now();
for (let i = 0; i < N; i += 500) {
  await database.db.transaction().execute(async (trx) => {
    for (let j = i; j < Math.min(N, i + 500); j++) await q.enqueue(trx, 'noop', { j });
  });
}
const queued = (performance.now() - t) / 1000;
t = performance.now();
q.start();
while (done < N) await new Promise((r) => setTimeout(r, 20));
await q.stop();
const drained = (performance.now() - t) / 1000;
const left = await sql<{ n: number }>`select count(*) as n from jobs where kind = 'noop' and state <> 'succeeded'`.execute(database.db);
console.log(JSON.stringify({
  database: database.dialect, jobs: N, concurrency: Number(args.concurrency), queuedPerSecond: Math.round(N / queued), completedPerSecond: Math.round(N / drained),
  notSucceeded: Number(left.rows[0]?.n ?? 0), loadAverageBefore: Math.round(load * 10) / 10,
}));
await database.close();
if (!args['data-dir']) rmSync(dataDir, { recursive: true, force: true });
