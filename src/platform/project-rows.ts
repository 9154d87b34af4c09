import type { Selectable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from './db/index.ts';
import type { ProjectsTable } from './db/schema.ts';

// Project rows reused while their row_version (moved by the database on every update of the row, whoever makes
// it: another worker, another process) is the one a narrow query returns: a listing page or a lookup by id reads
// two columns instead of all of them, and a changed row is read again. Rows are frozen: they are shared.

type Row = Selectable<ProjectsTable>;
export interface RowKey {
  id: number;
  row_version: number;
}

type Rows = LRUCache<number, Row>;
const byDatabase = new WeakMap<object, Rows>();

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

/**
 * The live (not pending deletion) project with this id: one narrow query when its row is known. The caller gets
 * its own copy, which it may update as it writes.
 */
export async function liveProjectById(db: Db, id: number): Promise<Row | undefined> {
  const rows = cacheOf(db);
  let row: Row | undefined;
  if (rows.has(id)) {
    const key = await db.selectFrom('projects').select(['id', 'row_version']).where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
    row = key ? (await projectRows(db, [key]))[0] : undefined;
  } else {
    const found = await db.selectFrom('projects').selectAll().where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
    row = found ? remember(rows, found) : undefined;
  }
  return row ? { ...row } : undefined;
}
