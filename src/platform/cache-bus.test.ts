import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import pg from 'pg';
import { buildTestApp } from '../../test/support/app.ts';
import { makeUser } from '../../test/support/fixtures.ts';
import { cachingAllowed, onCacheVoid, startDatabaseBus } from './cache-bus.ts';
import { Storage } from './git/storage.ts';
import { nextIid } from './db/internal-ids.ts';

// Between machines: the database's own notifications. (Between the workers of one machine: test/core/workers.test.ts;
// two real machines: test/integration/multi-machine.test.ts.)

const pgOnly = !process.env.DATABASE_URL && 'the database bus is PostgreSQL LISTEN/NOTIFY: runs only when DATABASE_URL is PostgreSQL';

function recorder() {
  const heard: string[] = [];
  const stops = [onCacheVoid('all', () => heard.push('all')), onCacheVoid('refs', (k) => heard.push(`refs ${k}`))];
  return { heard, stop: () => stops.forEach((s) => s()) };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a committed change notifies, a rolled-back one and bookkeeping columns do not; ref moves travel by shard name', { skip: pgOnly }, async () => {
  const t = await buildTestApp();
  const rec = recorder();
  const other = new Storage([{ name: 'default', path: '/mnt/elsewhere/repos', weight: 1 }]);
  const bus = await startDatabaseBus({ databaseUrl: t.config.databaseUrl!, paths: other });
  // What the channel carries, read by a plain listener: notifications arrive in commit order, so everything a write
  // notified arrives before a marker sent after it.
  const listener = new pg.Client({ connectionString: t.config.databaseUrl! });
  const payloads: string[] = [];
  await listener.connect();
  listener.on('notification', (n) => payloads.push(n.payload ?? ''));
  await listener.query('LISTEN bellows_cache');
  let markers = 0;
  const marker = async () => {
    const m = `marker-${++markers}`;
    await listener.query('select pg_notify($1, $2)', ['bellows_cache', m]);
    await until(() => payloads.includes(m), m);
  };
  const notified = async (write: () => Promise<unknown>) => {
    await marker();
    payloads.length = 0;
    await write();
    await marker();
    return payloads.filter((p) => p === 'all').length;
  };
  try {
    const { user } = await makeUser(t.app);
    const db = t.app.db;
    assert.equal(await notified(() => db.updateTable('users').set({ name: 'changed' }).where('id', '=', user.id).execute()), 1, 'a change');
    assert.equal(await notified(() => db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ name: 'one' }).where('id', '=', user.id).execute();
      await trx.updateTable('users').set({ name: 'two' }).where('id', '=', user.id).execute();
      await trx.updateTable('personal_access_tokens').set({ name: 'three' }).where('user_id', '=', user.id).execute();
    })), 1, 'one transaction, one notification');
    assert.equal(await notified(() => db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ name: 'never' }).where('id', '=', user.id).execute();
      throw new Error('rollback');
    }).catch(() => {})), 0, 'rolled back');
    assert.equal(await notified(() => db.updateTable('personal_access_tokens').set({ last_used_at: 1 }).where('user_id', '=', user.id).execute()), 0, 'last_used_at only');
    assert.equal(await notified(() => db.updateTable('personal_access_tokens').set({ last_used_at: 2, revoked: 1 }).where('user_id', '=', user.id).execute()), 1, 'last_used_at and more');
    assert.equal(await notified(() => db.deleteFrom('jobs').execute()), 0, 'bookkeeping tables');
    assert.equal(await notified(() => db.deleteFrom('rate_limit_counters').execute()), 0, 'bookkeeping tables');
    assert.equal(await notified(() => nextIid(db, 'issues', 987_654)), 0, 'an iid taken ahead of its creation');
    // The buses hear it.
    rec.heard.length = 0;
    await db.updateTable('users').set({ name: 'heard' }).where('id', '=', user.id).execute();
    await until(() => rec.heard.includes('all'), 'the buses');

    // Published by this process under the shard's name, heard here under the path another mount gives it.
    rec.heard.length = 0;
    const repo = join(t.config.storage[0]!.path, '@hashed/ab/cd/x.git');
    const app = await startDatabaseBus({ databaseUrl: t.config.databaseUrl!, paths: new Storage(t.config.storage) });
    app.publish(repo);
    await until(() => rec.heard.includes('refs /mnt/elsewhere/repos/@hashed/ab/cd/x.git'), 'the ref move');
    app.publish('/not/a/shard/x.git');
    await until(() => rec.heard.includes('refs '), 'a ref move outside the shards (every repository)');
    await app.close();
  } finally {
    rec.stop();
    await listener.end();
    await bus.close();
    await t.close();
  }
});

test('a lost listening connection drops everything and stops caching until it is back', { skip: pgOnly }, async () => {
  const t = await buildTestApp();
  const rec = recorder();
  const bus = await startDatabaseBus({ databaseUrl: t.config.databaseUrl!, paths: new Storage(t.config.storage), retryMs: 200 });
  const admin = new pg.Client({ connectionString: t.config.databaseUrl! });
  await admin.connect();
  try {
    assert.equal(cachingAllowed(), true);
    // The application's own reads are cached while listening.
    const { token } = await makeUser(t.app);
    const cache = t.app.caches.define<string, number>('bus-test', { max: 10, window: 60_000 });
    let loads = 0;
    const read = () => cache.get('k', async () => ++loads);
    await read();
    await read();
    assert.equal(loads, 1);
    rec.heard.length = 0;
    const killed = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()`, [`bellows cache bus ${process.pid}/${process.pid}`]);
    assert.ok(killed.rowCount! >= 1);
    await until(() => !cachingAllowed(), 'the loss');
    assert.ok(rec.heard.includes('all') && rec.heard.includes('refs '), 'everything dropped');
    await read();
    await read();
    assert.equal(loads, 3, 'nothing kept while not listening');
    await until(() => cachingAllowed(), 'the return');
    await read();
    await read();
    assert.equal(loads, 4, 'cached again');
    void token;
  } finally {
    rec.stop();
    await admin.end();
    await bus.close();
    await t.close();
  }
});
