import type { Kysely } from 'kysely';

// A kind's due jobs in claim order: the queue asks, per kind with free slots, whether one is due and claims the
// first few by (run_at, id). Through (state, run_at) or (kind, state, id) both meant reading every due job of the
// backlog (8,000 notifications after a burst of issue creations: 3-7 ms a poll, the SQLite worker's event loop held
// meanwhile); through this index each is a seek.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('jobs_due_by_kind').on('jobs').columns(['kind', 'state', 'run_at', 'id']).execute();
}
