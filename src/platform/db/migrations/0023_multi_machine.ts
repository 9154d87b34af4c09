import { sql, type Kysely } from 'kysely';
import { timeType, type DialectName } from '../dialect.ts';

// Several machines on one database.
// - `rate_limit_counters`: the request throttles' fixed windows, one row per key and window, counted by every
//   machine of the installation. Counters are worth nothing after a crash, so on PostgreSQL the table is UNLOGGED
//   (no write-ahead log: cheaper writes; emptied by a crash recovery, which only forgives the current window).
// - `machines`: the server processes running now, each with the storage shard names it was started with and when it
//   was last seen; a machine whose shard list differs from a live one's refuses to start.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  if (dialect === 'postgres') {
    await sql`create unlogged table rate_limit_counters (
      key varchar(300) not null,
      window_start bigint not null,
      count integer not null,
      primary key (key, window_start)
    )`.execute(db);
  } else {
    await db.schema.createTable('rate_limit_counters')
      .addColumn('key', 'varchar(300)', (c) => c.notNull())
      .addColumn('window_start', t, (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('rate_limit_counters_pkey', ['key', 'window_start'])
      .execute();
  }
  await db.schema.createTable('machines')
    .addColumn('id', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('hostname', 'varchar(255)', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    // The storage shard names, sorted, comma-separated.
    .addColumn('shards', 'text', (c) => c.notNull())
    .addColumn('started_at', t, (c) => c.notNull())
    .addColumn('seen_at', t, (c) => c.notNull())
    .execute();
}
