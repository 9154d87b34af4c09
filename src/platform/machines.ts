import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import type { Db } from './db/index.ts';
import { dialectOf } from './db/dialect.ts';
import type { Clock } from './clock.ts';

// The machines of an installation: each running `bellows serve` keeps a row of `machines` with the storage shard names
// it serves, refreshed while it runs. Every machine must know every shard (a project's repository lives on one named
// shard, whichever machine serves it), so a machine whose list differs from that of a machine seen running refuses to
// start. A changed list therefore takes effect by stopping every machine, then starting them with the new one.

export const HEARTBEAT_MS = 10_000;
/** A machine not seen for this long has stopped (killed, or its host is gone). */
export const STALE_MS = 3 * HEARTBEAT_MS;

export class ShardListMismatchError extends Error {
  override name = 'ShardListMismatchError';
}

export interface Machine {
  readonly id: string;
  /** Removes this machine's row (it stops). */
  leave(): Promise<void>;
}

export function shardList(names: readonly string[]): string {
  return [...names].sort().join(',');
}

/** Records this machine with its shards, or throws ShardListMismatchError when a running machine has other shards. */
export async function joinInstallation(o: { db: Db; clock: Clock; shards: readonly string[]; heartbeatMs?: number; log?: { warn(obj: object, msg: string): void } }): Promise<Machine> {
  const { db, clock } = o;
  const id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`.slice(0, 100);
  const shards = shardList(o.shards);
  const row = () => ({ id, hostname: hostname().slice(0, 255), pid: process.pid, shards, started_at: clock.now(), seen_at: clock.now() });
  await db.transaction().execute(async (trx) => {
    // Machines starting together take turns (SQLite's transactions take the write lock when they begin).
    if (dialectOf(trx) === 'postgres') await sql`select pg_advisory_xact_lock(7262017232)`.execute(trx);
    const now = clock.now();
    await trx.deleteFrom('machines').where('seen_at', '<', now - STALE_MS).execute();
    const other = await trx.selectFrom('machines').select(['hostname', 'pid', 'shards']).where('shards', '<>', shards).orderBy('seen_at', 'desc').executeTakeFirst();
    if (other) {
      throw new ShardListMismatchError(`storage shards differ from those of the running machine ${other.hostname} (pid ${other.pid}): `
        + `there [${other.shards}], here [${shards}]; stop every machine to change the shard list`);
    }
    await trx.insertInto('machines').values(row()).execute();
  });
  const timer = setInterval(() => {
    void (async () => {
      const res = await db.updateTable('machines').set({ seen_at: clock.now() }).where('id', '=', id).executeTakeFirst();
      // Paused for longer than STALE_MS and removed by a starting machine meanwhile: here again.
      if (Number(res.numUpdatedRows) === 0) await db.insertInto('machines').values(row()).execute();
    })().catch((err) => o.log?.warn({ err }, 'machine heartbeat failed'));
  }, o.heartbeatMs ?? HEARTBEAT_MS);
  timer.unref();
  return {
    id,
    async leave() {
      clearInterval(timer);
      await db.deleteFrom('machines').where('id', '=', id).execute().catch(() => {});
    },
  };
}

/**
 * Runs a machine's first steps (migrations, the root account, joining) while no other machine runs its own, so that
 * machines started together never both create what must exist once. PostgreSQL only; SQLite has one machine.
 */
export async function oneStartAtATime<T>(db: Db, fn: () => Promise<T>): Promise<T> {
  if (dialectOf(db) !== 'postgres') return fn();
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(7262017233)`.execute(conn);
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(7262017233)`.execute(conn);
    }
  });
}
