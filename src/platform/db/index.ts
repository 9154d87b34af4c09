import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import type { DB } from './schema.ts';
import type { DialectName } from './dialect.ts';
import { migrations } from './migrations/index.ts';

export type { DB } from './schema.ts';
export type Db = Kysely<DB>;

export interface Database {
  db: Db;
  dialect: DialectName;
  migrate(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// int8 (bigint) holds our epoch-millisecond datetimes; they fit a JS number exactly.
pg.types.setTypeParser(20, (v: string) => Number(v));

/**
 * Kysely prepares every query anew; preparing costs more than running most of ours. Reuse prepared statements
 * by SQL text (a statement still iterating a stream is busy, so that case gets a fresh one).
 */
function cacheStatements(handle: SQLite.Database, max = 1000): void {
  const prepare = handle.prepare.bind(handle);
  const cache = new Map<string, SQLite.Statement>();
  (handle as any).prepare = (source: string) => {
    const hit = cache.get(source);
    if (hit && !hit.busy) return hit;
    const stmt = prepare(source);
    if (!hit) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(source, stmt);
    }
    return stmt;
  };
}

export function openDatabase(opts: { databaseUrl: string | null; dataDir: string; sqliteFile?: string }): Database {
  let db: Db;
  let dialect: DialectName;
  if (opts.databaseUrl) {
    dialect = 'postgres';
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle connection closed by the server (restart, pg_terminate_backend) is dropped from the pool and
    // replaced on next use; without a listener its 'error' event would end the process.
    pool.on('error', () => {});
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  } else {
    dialect = 'sqlite';
    mkdirSync(opts.dataDir, { recursive: true });
    const file = opts.sqliteFile ?? join(opts.dataDir, 'bellows.sqlite3');
    const handle = new SQLite(file);
    handle.pragma('journal_mode = WAL');
    handle.pragma('synchronous = NORMAL');
    handle.pragma('foreign_keys = ON');
    handle.pragma('busy_timeout = 5000');
    cacheStatements(handle);
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: handle }) });
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
      const migrator = new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
      const { error, results } = await migrator.migrateToLatest();
      if (error) throw error;
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}
