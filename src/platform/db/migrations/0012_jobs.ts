import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// The durable job queue (platform/jobs). A job is claimed by setting `locked_by` and a lease (`locked_until`); a
// lease that runs out means its process died, and the job may be claimed again. `unique_key` keeps the same work
// from being queued twice while it waits or runs (a partial unique index: finished jobs do not count).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  await idColumn(db.schema.createTable('jobs'), dialect)
    .addColumn('kind', 'varchar(64)', (c) => c.notNull())
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull()) // queued | running | succeeded | dead | discarded
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at', t, (c) => c.notNull())
    .addColumn('locked_by', 'varchar(128)')
    .addColumn('locked_until', t)
    .addColumn('unique_key', 'varchar(255)')
    .addColumn('last_error', 'text')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .addColumn('finished_at', t)
    .execute();
  await db.schema.createIndex('jobs_runnable').on('jobs').columns(['state', 'run_at', 'id']).execute();
  await db.schema.createIndex('jobs_unique_key').unique().on('jobs').column('unique_key')
    .where(sql<boolean>`unique_key is not null and state in ('queued', 'running')`).execute();
  await db.schema.createIndex('jobs_kind_state').on('jobs').columns(['kind', 'state', 'id']).execute();
}
