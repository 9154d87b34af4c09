import type { Db } from './db/index.ts';
import { dialectOf } from './db/dialect.ts';

// The counts behind the request throttles (http/rate-limit.ts): how many requests a key (an address, a user) made
// in a fixed window. On PostgreSQL they are counted in the database, one atomic upsert per request, so that every
// machine and worker of the installation counts against the same number; on SQLite (one machine) in the process.

export interface RateCounter {
  /** Counts one more request of `key` in the window starting at `windowStart` (epoch s); answers the count so far. */
  hit(key: string, windowStart: number): Promise<number>;
}

export function createRateCounter(db: Db): RateCounter {
  return dialectOf(db) === 'postgres' ? databaseCounter(db) : memoryCounter();
}

function memoryCounter(): RateCounter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;
  return {
    async hit(key, windowStart) {
      if (windowStart !== lastSweep) {
        for (const [k, w] of windows) if (w.start < windowStart) windows.delete(k);
        lastSweep = windowStart;
      }
      let w = windows.get(key);
      if (!w || w.start !== windowStart) windows.set(key, (w = { start: windowStart, count: 0 }));
      return ++w.count;
    },
  };
}

function databaseCounter(db: Db): RateCounter {
  let lastSweep = 0;
  return {
    async hit(key, windowStart) {
      if (windowStart !== lastSweep) {
        // Past windows are worth nothing; any machine may drop them.
        lastSweep = windowStart;
        await db.deleteFrom('rate_limit_counters').where('window_start', '<', windowStart).execute();
      }
      const row = await db.insertInto('rate_limit_counters').values({ key: key.slice(0, 300), window_start: windowStart, count: 1 })
        .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet({ count: (eb) => eb('rate_limit_counters.count', '+', 1) }))
        .returning('count').executeTakeFirstOrThrow();
      return row.count;
    },
  };
}
