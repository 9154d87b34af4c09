import { sql } from 'kysely';
import type { Db } from './index.ts';
import { dialectOf } from './dialect.ts';

/** What an iid is counted for; each usage counts within its owner (a project, or a group). */
export type IidUsage = 'issues' | 'merge_requests' | 'project_milestones' | 'group_milestones' | 'iterations' | 'feature_flag_user_lists' | 'alert_management_alerts';

/**
 * The owner's next iid for `usage`. Call it inside the transaction that inserts the record: the counter row's upsert
 * locks it until that transaction ends, so concurrent creates in one owner run one after the other and get distinct
 * iids on both databases, and a rolled-back create hands its number out again. An iid is never reused once its
 * record was committed, even after that record is deleted. A create whose waits matter may take its number with
 * `iidAhead` before its transaction instead (PostgreSQL).
 */
export async function nextIid(trx: Db, usage: IidUsage, ownerId: number): Promise<number> {
  const row = await trx.insertInto('internal_ids').values({ usage, owner_id: ownerId, last_value: 1 })
    .onConflict((oc) => oc.columns(['usage', 'owner_id']).doUpdateSet({ last_value: sql<number>`internal_ids.last_value + 1` }))
    .returning('last_value').executeTakeFirstOrThrow();
  return row.last_value;
}

/**
 * The owner's next iid taken ahead of the creating transaction, where that shortens the wait of concurrent creates:
 * on PostgreSQL the counter row is updated in its own statement (committed at once), so concurrent creates in one
 * owner wait for each other only during that statement instead of until each creating transaction commits. Null on
 * SQLite, where the creating transaction holds the database's write lock from its start anyway and a statement of
 * its own would cost a second commit: the creating transaction calls `nextIid` instead (`takenAhead ?? await
 * nextIid(trx, ...)`).
 *
 * A number taken ahead is never handed out twice, but a create that then fails (or a process killed before its
 * commit) leaves it unused: a gap in the owner's iids, as the reference allows (docs/decisions.md, "Issue iids taken
 * ahead of the creating transaction").
 */
export async function iidAhead(db: Db, usage: IidUsage, ownerId: number): Promise<number | null> {
  return dialectOf(db) === 'postgres' ? nextIid(db, usage, ownerId) : null;
}

/**
 * Records that `value` was taken by hand (an iid given on create): the counter moves up to it, never down, so the
 * next `nextIid` continues after the highest iid in use. Call it inside the creating transaction.
 */
export async function trackIid(trx: Db, usage: IidUsage, ownerId: number, value: number): Promise<void> {
  await trx.insertInto('internal_ids').values({ usage, owner_id: ownerId, last_value: value })
    .onConflict((oc) => oc.columns(['usage', 'owner_id']).doUpdateSet({
      last_value: sql<number>`case when internal_ids.last_value > ${value} then internal_ids.last_value else ${value} end`,
    })).execute();
}
