import type { Db } from '../db/index.ts';
import type { Clock } from '../clock.ts';
import type { JobRow } from './queue.ts';

// What an administrator does with the queue from the command line (`bellows jobs`).

export const JOB_STATES = ['queued', 'running', 'succeeded', 'dead', 'discarded'] as const;

export function listJobs(db: Db, o: { state?: string; kind?: string; limit: number }): Promise<JobRow[]> {
  let q = db.selectFrom('jobs').selectAll().orderBy('id', 'desc').limit(o.limit);
  if (o.state) q = q.where('state', '=', o.state);
  if (o.kind) q = q.where('kind', '=', o.kind);
  return q.execute();
}

/** A dead or discarded job runs again now, with a fresh set of attempts; false when the job is not in such a state. */
export async function retryJob(db: Db, clock: Clock, id: number): Promise<boolean> {
  const now = clock.now();
  const r = await db.updateTable('jobs').set({ state: 'queued', attempts: 0, run_at: now, finished_at: null, updated_at: now })
    .where('id', '=', id).where('state', 'in', ['dead', 'discarded']).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** A waiting or dead job will not run; false when the job is running or finished. */
export async function discardJob(db: Db, clock: Clock, id: number): Promise<boolean> {
  const now = clock.now();
  const r = await db.updateTable('jobs').set({ state: 'discarded', finished_at: now, updated_at: now })
    .where('id', '=', id).where('state', 'in', ['queued', 'dead']).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
