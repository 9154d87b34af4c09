// A process that runs the job queue on a shared database, for the tests of claims across processes:
//   node --import tsx test/support/job-worker.ts <name> <leaseMs>
// with BELLOWS_DATA_DIR / DATABASE_URL naming the database. Kind `record` inserts one row per job into
// internal_ids (usage 'jobtest', owner = the job id), so a job run twice fails on the primary key; `hang` never ends.
import { openDatabase } from '../../src/platform/db/index.ts';
import { systemClock } from '../../src/platform/clock.ts';
import { JobQueue } from '../../src/platform/jobs/queue.ts';

const [name, lease] = process.argv.slice(2);
const database = openDatabase({ databaseUrl: process.env.DATABASE_URL ?? null, dataDir: process.env.BELLOWS_DATA_DIR! });
const q = new JobQueue({ db: database.db, clock: systemClock, pollMs: 5 });
const workerNo = Number(name.replace(/\D/g, '')) || 0;
q.define<{ sleep?: number }>('record', {
  concurrency: 4,
  leaseMs: Number(lease),
  async run(args, ctx) {
    if (args.sleep) await new Promise((r) => setTimeout(r, args.sleep));
    await database.db.insertInto('internal_ids').values({ usage: 'jobtest', owner_id: ctx.job.id, last_value: workerNo }).execute();
  },
});
q.define('hang', {
  leaseMs: Number(lease),
  async run(_args, ctx) {
    if (ctx.job.attempts === 1) {
      process.stdout.write('hanging\n');
      await new Promise(() => {});
    }
    await database.db.insertInto('internal_ids').values({ usage: 'jobtest', owner_id: ctx.job.id, last_value: workerNo }).execute();
  },
});
q.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void q.stop(1000).then(() => database.close()).then(() => process.exit(0));
});
