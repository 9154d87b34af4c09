import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type { DB } from './schema.ts';
import { PLANNED_FOR_VALUES, type DialectName } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import { installChangeNotifications } from './change-notify.ts';
import { postgresClient } from './pg-client.ts';
import { defineMemo, defineObjectMemo, ownedMemo, type Memo } from '../read-cache.ts';

export type { DB } from './schema.ts';
export type Db = Kysely<DB>;

export interface Database {
  db: Db;
  dialect: DialectName;
  migrate(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connections of the PostgreSQL pool (SQLite: one connection in the process, never waited for). */
  poolStats(): { total: number; idle: number; waiting: number; max: number };
}

/** How long a statement waits for another SQLite connection's lock before it fails. */
const BUSY_TIMEOUT_MS = 5000;

/** WAL pages (4 KB each) after which a commit checkpoints; SQLite's default is 1,000. */
const WAL_CHECKPOINT_PAGES = 10_000;

export function openDatabase(opts: { databaseUrl: string | null; dataDir: string; sqliteFile?: string }): Database {
  let db: Db;
  let dialect: DialectName;
  let poolStats = () => ({ total: 1, idle: 1, waiting: 0, max: 1 });
  if (opts.databaseUrl) {
    dialect = 'postgres';
    const pool = new (postgresClient().Pool)({ connectionString: opts.databaseUrl, max: 10 });
    poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: 10 });
    // An idle connection closed by the server (restart, administrator) is dropped and replaced by the
    // pool; without a listener its error would end the process.
    pool.on('error', () => {});
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }) });
  } else {
    dialect = 'sqlite';
    mkdirSync(opts.dataDir, { recursive: true });
    const file = opts.sqliteFile ?? join(opts.dataDir, 'bellows.sqlite3');
    const handle = new SQLite(file);
    // First, so that a process opening the file while another turns it to WAL waits instead of failing.
    handle.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    handle.pragma('journal_mode = WAL');
    handle.pragma('synchronous = NORMAL');
    handle.pragma('foreign_keys = ON');
    // 64 MB of page cache per connection instead of 2 MB: the hot index and table pages stay in memory.
    handle.pragma('cache_size = -65536');
    // Checkpoints (the WAL copied into the database file, with its fsyncs) every ~40 MB of WAL instead of every
    // ~4 MB: each one blocks the process that commits past the threshold, and the pages every commit rewrites (the
    // last leaf of each table and index) are copied once per checkpoint rather than ten times. A killed process loses
    // nothing either way (the WAL is replayed when the file is opened next).
    handle.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect(withStatementCache(handle)) });
  }
  (db as any).__dialect = dialect;

  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const m of migrations) out[m.name] = { up: (k) => m.up(k, dialect) };
      return out;
    },
  };

  return {
    db,
    dialect,
    async migrate() {
      // The usual start has nothing to apply: one query answers that, instead of the migrator's table checks, lock
      // and listing. A database not made yet (no table) or behind goes through the migrator.
      const applied = await sql<{ name: string }>`select name from schema_migrations`.execute(db)
        .then((r) => new Set(r.rows.map((x) => x.name)), () => null);
      if (applied && migrations.every((m) => applied.has(m.name))) {
        if (dialect === 'postgres') await installChangeNotifications(db);
        return [];
      }
      const migrator = new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error;
      if (dialect === 'postgres') await installChangeNotifications(db);
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
    poolStats: () => poolStats(),
  };
}

/**
 * Reuses prepared statements by SQL text: the query builder produces the same text for the same query
 * shape, and preparing is a large part of a small query's cost. A statement still being iterated is busy
 * and cannot be reused, so such a caller gets a fresh one.
 */
/**
 * Transactions take the write lock when they begin. A deferred transaction that reads and then writes fails with
 * SQLITE_BUSY_SNAPSHOT, without waiting, when another connection (another worker) wrote in between; an immediate
 * one waits its turn instead, up to the busy timeout.
 *
 * It waits without blocking the process: SQLite's own busy wait sleeps the whole thread (1, 2, 5, 10 ms ... between
 * tries), so a worker whose transaction found the lock taken served nobody meanwhile and overslept its turn. Here
 * the begin is tried without waiting and, while another worker holds the lock, tried again after giving the event
 * loop a turn (the process's other requests parse, present and answer), soon at first, then every millisecond.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #handle: SQLite.Database;

  constructor(handle: SQLite.Database) {
    super({ database: handle });
    this.#handle = handle;
  }

  override createDriver() {
    const driver = super.createDriver();
    const handle = this.#handle;
    const begin = handle.prepare('begin immediate');
    // The busy timeout pragma takes effect when its statement is prepared: it is prepared each time.
    driver.beginTransaction = async () => {
      const started = performance.now();
      handle.pragma('busy_timeout = 0');
      try {
        for (let tries = 0; ; tries++) {
          try {
            begin.run();
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== 'SQLITE_BUSY' || performance.now() - started > BUSY_TIMEOUT_MS) throw err;
          }
          await new Promise((resolve) => (tries < 20 ? setImmediate(resolve) : setTimeout(resolve, 1)));
        }
      } finally {
        handle.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    };
    return driver;
  }
}

// A handle's statements by SQL text (an object memo: they live as long as the handle).
const sqliteStatements = defineObjectMemo<SQLite.Database, Memo<string, SQLite.Statement>>('sqlite-statements');

function withStatementCache(handle: SQLite.Database): SQLite.Database {
  const cache = sqliteStatements.of(handle, () => ownedMemo({ max: 2000 }));
  const prepare = handle.prepare.bind(handle);
  const cached = (text: string) => {
    let stmt = cache.get(text);
    if (stmt && !stmt.busy) return stmt;
    stmt = prepare(text);
    cache.set(text, stmt);
    return stmt;
  };
  return new Proxy(handle, {
    get(target, prop) {
      if (prop === 'prepare') return cached;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * The reads of one API request. On PostgreSQL a statement it runs outside a transaction is stopped by the server
 * after `timeoutMs` (0: never), so that a read nobody waits for any more, or one that runs away, stops costing;
 * statements in transactions (the writes) keep the database's own limit. `open` turns false when the request ends:
 * work it started that goes on afterwards (jobs, cache refreshes) is not limited.
 */
export interface ReadScope {
  timeoutMs: number;
  open: boolean;
}

const readScopes = new AsyncLocalStorage<ReadScope>();

/** Runs `fn`, and everything it starts, as the reads of `scope`. */
export function runInReadScope<T>(scope: ReadScope, fn: () => T): T {
  return readScopes.run(scope, fn);
}

// The statement timeout each pool connection's session has now (undefined: the database's own).
const sessionTimeouts = defineObjectMemo<pg.PoolClient, number | undefined>('pg-session-timeouts');

// A statement's name derives from its text alone; a pool connection's wrapper lives as long as the connection.
const statementNames = defineMemo<string, string>('pg-statement-names', { max: 5000 });
const wrappedClients = defineObjectMemo<pg.PoolClient, PostgresPoolClient>('pg-clients');

/**
 * Sends parameterised reads and writes as named prepared statements (named by a digest of their text),
 * so each connection parses and plans a query shape once instead of on every execution. Statements
 * without parameters (transactions, DDL), and those marked to be planned for their values (`plannedForValues`),
 * go through unchanged: unnamed, parsed and planned with their values on every execution.
 */
function withNamedStatements(pool: pg.Pool): PostgresPool {
  const nameOf = (text: string) => {
    let n = statementNames.get(text);
    if (!n) {
      n = `k${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
      statementNames.set(text, n);
    }
    return n;
  };
  return {
    async connect() {
      const client = await pool.connect();
      // The connection's session limit follows whoever takes it: the timeout of an open API request's reads, or the
      // database's own. It is sent only when it changes.
      const scope = readScopes.getStore();
      const wanted = scope?.open && scope.timeoutMs > 0 ? scope.timeoutMs : undefined;
      if (sessionTimeouts.get(client) !== wanted) {
        try {
          await client.query(wanted === undefined ? 'reset statement_timeout' : `set statement_timeout = ${Math.floor(wanted)}`);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
        sessionTimeouts.set(client, wanted);
      }
      let w = wrappedClients.get(client);
      if (!w) {
        w = {
          query: ((text: any, values?: readonly unknown[]) => {
            if (typeof text === 'string' && values && values.length > 0 && /^(select|insert|update|delete|with)\b/i.test(text) && !text.includes(PLANNED_FOR_VALUES)) {
              return client.query({ name: nameOf(text), text, values: values as unknown[] });
            }
            // A transaction is not cut short by a request's limit: it runs under the database's own.
            if (typeof text === 'string' && sessionTimeouts.get(client) !== undefined && /^(begin|start transaction)\b/i.test(text)) {
              return (client.query as any)(`${text}; set local statement_timeout to default`);
            }
            return (client.query as any)(text, values);
          }) as PostgresPoolClient['query'],
          release: () => client.release(),
        };
        wrappedClients.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}
