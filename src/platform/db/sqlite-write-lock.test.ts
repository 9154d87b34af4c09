import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from './index.ts';

// Two SQLite connections to one file, as two workers have: a transaction waits for the other's write lock without
// blocking its process, then runs; the lock is never shared.
test('SQLite: a transaction waits for another connection\'s write lock without blocking the process', { skip: !!process.env.DATABASE_URL }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bellows-lock-'));
  const a = openDatabase({ databaseUrl: null, dataDir: dir });
  const b = openDatabase({ databaseUrl: null, dataDir: dir });
  try {
    await sql`create table t (n integer not null)`.execute(a.db);
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let entered!: () => void;
    const inside = new Promise<void>((r) => { entered = r; });
    const first = a.db.transaction().execute(async (trx) => {
      await sql`insert into t (n) values (1)`.execute(trx);
      entered();
      await held;
      order.push('a commits');
    });
    await inside;
    const second = b.db.transaction().execute(async (trx) => {
      order.push('b has the lock');
      const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(trx);
      await sql`insert into t (n) values (2)`.execute(trx);
      return rows[0].n;
    });
    // While b waits, the process runs timers: the ticks happen, and a releases the lock from one of them.
    let ticks = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (++ticks === 5) { clearInterval(timer); resolve(); }
      }, 5);
    });
    assert.deepEqual(order, []);
    release();
    await first;
    // b began only after a committed, so it saw a's row.
    assert.equal(await second, 1);
    assert.deepEqual(order, ['a commits', 'b has the lock']);
    const { rows } = await sql<{ n: number }>`select n from t order by rowid`.execute(a.db);
    assert.deepEqual(rows.map((r) => r.n), [1, 2]);
    // A connection not waiting for a lock still answers at once, and the wait left the busy timeout in place for
    // statements outside transactions.
    const { rows: timeout } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(b.db);
    assert.equal(Object.values(timeout[0])[0], 5000);
    // Checkpoints every 10,000 WAL pages (SQLite's default is 1,000).
    const { rows: checkpoint } = await sql<Record<string, number>>`pragma wal_autocheckpoint`.execute(b.db);
    assert.equal(Object.values(checkpoint[0])[0], 10_000);
  } finally {
    await a.close();
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
