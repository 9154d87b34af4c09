import { sql, type Kysely } from 'kysely';

// On PostgreSQL every table the read caches may read announces its changes on the cache channel, from a
// statement-level trigger: the NOTIFY belongs to the writing transaction, so it is committed exactly when the change
// is (and never for a change rolled back), whoever wrote (a request, a job, the command line, another machine), and
// the writer's answer comes after it. PostgreSQL folds equal notifications of one transaction into one.
//
// Installed after the migrations at every start, for every table of the schema, so that tables added by later
// migrations are covered without each one remembering; a trigger is rewritten only when what it should watch changed.

/** The channel of cache voids (platform/cache-bus.ts listens to it): `all` from these triggers, `refs:...` for ref moves. */
export const CACHE_CHANNEL = 'bellows_cache';
const TRIGGER = 'bellows_cache_void';

/**
 * Bookkeeping tables no read cache reads: their writes (every job heartbeat, every counted request, every iid taken
 * ahead of its creating transaction) void nothing.
 */
export const QUIET_TABLES: readonly string[] = ['jobs', 'sign_in_throttles', 'rate_limit_counters', 'machines', 'schema_migrations', 'schema_migrations_lock', 'internal_ids',
  // Moved only with changes of other tables, which announce themselves.
  'read_epoch'];
/** Columns written while reading (a token's last use, at most once a minute): updating only these voids nothing. */
export const QUIET_COLUMNS: readonly string[] = ['last_used_at'];

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** What the trigger of a table with these columns fires on (also its comment, by which it is recognised). */
export function triggerEvents(columns: readonly string[]): string {
  const watched = columns.filter((c) => !QUIET_COLUMNS.includes(c));
  if (watched.length === columns.length) return 'INSERT OR UPDATE OR DELETE OR TRUNCATE';
  return `INSERT OR DELETE OR TRUNCATE OR UPDATE OF ${watched.map(quote).join(', ')}`;
}

export async function installChangeNotifications(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Machines starting together take turns; the number is this installer's own.
    await sql`select pg_advisory_xact_lock(7262017231)`.execute(trx);
    await sql.raw(`create or replace function ${TRIGGER}() returns trigger language plpgsql as $$
      begin
        perform pg_notify('${CACHE_CHANNEL}', 'all');
        return null;
      end $$`).execute(trx);
    const tables = (await sql<{ name: string; columns: string[] }>`
      select c.relname as name, array_agg(a.attname::text order by a.attnum) as columns
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
      group by c.relname`.execute(trx)).rows;
    const existing = new Map((await sql<{ name: string; events: string | null }>`
      select c.relname as name, obj_description(t.oid, 'pg_trigger') as events
      from pg_trigger t
      join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and t.tgname = ${TRIGGER}`.execute(trx)).rows.map((r) => [r.name, r.events]));
    for (const t of tables) {
      const on = quote(t.name);
      if (QUIET_TABLES.includes(t.name)) {
        if (existing.has(t.name)) await sql.raw(`drop trigger ${TRIGGER} on ${on}`).execute(trx);
        continue;
      }
      const events = triggerEvents(t.columns);
      if (existing.get(t.name) === events) continue;
      await sql.raw(`create or replace trigger ${TRIGGER} after ${events} on ${on} for each statement execute function ${TRIGGER}()`).execute(trx);
      await sql.raw(`comment on trigger ${TRIGGER} on ${on} is '${events.replace(/'/g, "''")}'`).execute(trx);
    }
  });
}
