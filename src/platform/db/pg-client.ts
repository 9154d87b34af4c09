import { createRequire } from 'node:module';
import type pg from 'pg';

// The PostgreSQL client package, in a module of its own: the database module and the cache bus both load it, and
// the cache bus is itself loaded by the read caches the database module uses, so it cannot come from there.

let pgModule: typeof pg | null = null;

/**
 * The PostgreSQL client package, loaded on first use: a server on SQLite never reads it (loading it costs a start
 * about 50 ms, most of it Node's fetch implementation, which pg touches as it loads).
 */
export function postgresClient(): typeof pg {
  if (pgModule) return pgModule;
  const loaded = createRequire(import.meta.url)('pg') as typeof pg;
  // int8 (bigint) holds our epoch-millisecond datetimes; they fit a JS number exactly.
  loaded.types.setTypeParser(20, (v: string) => Number(v));
  return (pgModule = loaded);
}
