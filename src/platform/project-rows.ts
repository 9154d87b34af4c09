import type { Selectable } from 'kysely';
import type { Db } from './db/index.ts';
import type { ProjectsTable } from './db/schema.ts';
import type { ServiceDeps } from './deps.ts';
import { defineObjectMemo } from './read-cache.ts';

// Project rows of listing pages are reused while their row_version (moved by the database on every update of the
// row, whoever makes it: another worker, another process) is the one the page asks for, so a page reads two
// columns per row instead of all of them. A lookup by id follows the rule of the other read caches instead (see
// read-cache.ts), so a repeated read costs no query at all. Rows are frozen: shared.

type Row = Selectable<ProjectsTable>;
export interface RowKey {
  id: number;
  row_version: number;
}

/** The rows of the keys (from a query selecting `projects.id` and `projects.row_version`), in the keys' order. */
export async function projectRows(deps: ServiceDeps, keys: RowKey[]): Promise<Row[]> {
  const rows = await deps.caches.define<number, Row>('project-rows', { max: 20_000, version: (r) => r.row_version })
    .getMany(keys.map((k) => k.id), async (missing) => {
      const found = await deps.db.selectFrom('projects').selectAll().where('id', 'in', missing).execute();
      return new Map(found.map((r) => [r.id, Object.freeze(r)]));
    }, keys.map((k) => k.row_version));
  // A row deleted between the two reads drops out.
  return keys.map((k) => rows.get(k.id)).filter((r): r is Row => r !== undefined);
}

/** The current keys of these projects, in the ids' order (a page remembered by ids reads its rows' versions). */
export async function currentKeys(db: Db, ids: number[]): Promise<RowKey[]> {
  if (ids.length === 0) return [];
  const found = await db.selectFrom('projects').select(['id', 'row_version']).where('id', 'in', ids).execute();
  const byId = new Map(found.map((k) => [k.id, k]));
  return ids.map((id) => byId.get(id)).filter((k): k is RowKey => k !== undefined);
}

/**
 * The live (not pending deletion) project with this id (`epoch`: the read epoch of a state-changing request, see
 * read-epoch.ts). The caller gets its own copy, which it may update.
 */
export async function liveProjectById(deps: ServiceDeps, id: number, epoch?: number): Promise<Row | undefined> {
  const row = await deps.caches.define<number, Row | undefined>('projects-by-id', { max: 20_000, epoch: true }).get(id, async () => {
    const found = await deps.db.selectFrom('projects').selectAll().where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
    return found && Object.freeze(found);
  }, epoch);
  return row && { ...row };
}

/**
 * The live project at this full path (lower-cased), read afresh (`reuse` false) or through the read cache: git
 * fetches and clones make two to four requests each, and visibility, archiving, deletion, renames and membership
 * changes are all writes, which void it.
 */
export async function liveProjectByPath(deps: ServiceDeps, pathLower: string, reuse = true): Promise<Row | undefined> {
  const load = () => deps.db.selectFrom('projects').selectAll()
    .where('full_path_lower', '=', pathLower).where('pending_delete', '=', 0).executeTakeFirst();
  if (!reuse) return load();
  const row = await deps.caches.define<string, Row | undefined>('projects-by-path', { max: 10_000 })
    .get(pathLower, async () => { const r = await load(); return r && Object.freeze(r); });
  return row && { ...row };
}

// The JSON `settings` column of a row, parsed once per row object (an object memo: rows are frozen and a changed
// row is a new object, so the parse can never be stale; it lives exactly as long as the row it belongs to).
const parsedSettings = defineObjectMemo<{ settings: string }, Readonly<Record<string, unknown>>>('project-settings');

function parseSettings(text: string): Readonly<Record<string, unknown>> {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}

/** The settings stored on a project row (an unreadable value counts as none). */
export function storedSettings(p: { settings: string }): Readonly<Record<string, unknown>> {
  return parsedSettings.of(p, () => parseSettings(p.settings));
}
