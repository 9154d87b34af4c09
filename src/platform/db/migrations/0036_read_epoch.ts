import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

// The read epoch (platform/read-epoch.ts): one number the database moves with every change to the tables that decide
// who a caller is and what they reach, whoever makes the change (a request, a job, the command line, another
// machine). A token's `last_used_at`, written while reading, moves nothing.
//
// On PostgreSQL the triggers are deferred constraint triggers: they run as the transaction commits, so the epoch's
// row is locked only for the commit itself, not for the rest of a transaction that changed a membership early.
// A reader sees the new number exactly when it sees the change (same transaction, same snapshot rules).

const TABLES = ['personal_access_tokens', 'oauth_access_tokens', 'users', 'members', 'namespaces', 'projects', 'project_group_links', 'group_group_links'];
const QUIET = ['last_used_at'];

async function columnsOf(db: Kysely<any>, dialect: DialectName, table: string): Promise<string[]> {
  if (dialect === 'sqlite') return (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((r) => r.name);
  return (await sql<{ name: string }>`select column_name as name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db)).rows.map((r) => r.name);
}

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.createTable('read_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('value', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('read_epoch').values({ id: 1, value: 0 }).execute();
  if (dialect === 'postgres') {
    // Once per transaction (a setting local to it remembers): a constraint trigger runs for each row, and a row
    // updated again and again in one transaction leaves a version each time that every later update walks past
    // (a transaction writing a million members would take quadratic time).
    await sql`CREATE FUNCTION bellows_read_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('bellows.read_epoch_moved', true) IS DISTINCT FROM 'on' THEN
          UPDATE read_epoch SET value = value + 1 WHERE id = 1;
          PERFORM set_config('bellows.read_epoch_moved', 'on', true);
        END IF;
        RETURN NULL;
      END $$`.execute(db);
  }
  for (const table of TABLES) {
    const columns = await columnsOf(db, dialect, table);
    const watched = columns.filter((c) => !QUIET.includes(c));
    const update = watched.length === columns.length ? 'UPDATE' : `UPDATE OF ${watched.map((c) => `"${c}"`).join(', ')}`;
    if (dialect === 'postgres') {
      await sql.raw(`CREATE CONSTRAINT TRIGGER read_epoch_${table} AFTER INSERT OR ${update} OR DELETE ON "${table}"
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bellows_read_epoch_bump()`).execute(db);
    } else {
      for (const [suffix, event] of [['ins', 'INSERT'], ['upd', update], ['del', 'DELETE']]) {
        await sql.raw(`CREATE TRIGGER read_epoch_${table}_${suffix} AFTER ${event} ON "${table}" FOR EACH ROW
          BEGIN UPDATE read_epoch SET value = value + 1 WHERE id = 1; END`).execute(db);
      }
    }
  }
}
