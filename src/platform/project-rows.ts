import type { Selectable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from './db/index.ts';
import type { ProjectsTable } from './db/schema.ts';
import { readCacheState } from './membership.ts';

// Project rows of listing pages are reused while their row_version (moved by the database on every update of the
// row, whoever makes it: another worker, another process) is the one the page query returns, so a page reads two
// columns per row instead of all of them. A lookup by id follows the rule of the other read caches instead: the
// row is reused for the credential-cache window on reads and dropped by any write through the server, in every
// worker (a push's project update included), so a repeated read costs no query at all. Rows are frozen: shared.

type Row = Selectable<ProjectsTable>;
export interface RowKey {
  id: number;
  row_version: number;
}

type Rows = LRUCache<number, Row>;
const byDatabase = new WeakMap<object, Rows>();
const lookups = new WeakMap<object, LRUCache<number, { row: Row | undefined; at: number; gen: number }>>();

function cacheOf(db: Db): Rows {
  let rows = byDatabase.get(db);
  if (!rows) byDatabase.set(db, (rows = new LRUCache<number, Row>({ max: 20_000 })));
  return rows;
}

function remember(rows: Rows, r: Row): Row {
  rows.set(r.id, Object.freeze(r));
  return r;
}

/** The rows of the keys (from a query selecting `projects.id` and `projects.row_version`), in the keys' order. */
export async function projectRows(db: Db, keys: RowKey[]): Promise<Row[]> {
  const rows = cacheOf(db);
  const missing = keys.filter((k) => rows.get(k.id)?.row_version !== k.row_version).map((k) => k.id);
  if (missing.length) {
    for (const r of await db.selectFrom('projects').selectAll().where('id', 'in', missing).execute()) remember(rows, r);
  }
  // A row deleted between the two reads drops out.
  return keys.map((k) => rows.get(k.id)).filter((r): r is Row => r !== undefined);
}

/** The live (not pending deletion) project with this id. The caller gets its own copy, which it may update. */
export async function liveProjectById(db: Db, id: number): Promise<Row | undefined> {
  const { ttl, gen } = readCacheState(db);
  let cache = lookups.get(db);
  if (!cache) lookups.set(db, (cache = new LRUCache({ max: 20_000 })));
  const hit = ttl > 0 ? cache.get(id) : undefined;
  if (hit && hit.gen === gen && Date.now() - hit.at < ttl) return hit.row && { ...hit.row };
  const at = Date.now();
  const found = await db.selectFrom('projects').selectAll().where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
  const row = found ? remember(cacheOf(db), found) : undefined;
  // A row read while a write passed may be stale: it serves this request only.
  if (ttl > 0 && readCacheState(db).gen === gen) cache.set(id, { row, at, gen });
  return row && { ...row };
}
