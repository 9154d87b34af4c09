import type { Db } from '../../platform/db/index.ts';
import type { Project } from './projects.service.ts';

// Project rows of listing pages, reused while their row_version (moved by the database on every update of the
// row) is the one the page query returns: a page reads two narrow columns per row instead of all of them, and
// a row changed by anyone (another worker, another process) is read again. Rows are frozen: they are shared.

const LIMIT = 20_000;
const rows = new Map<number, Project>();

/** The rows of a page whose query selects `projects.id` and `projects.row_version`, in the page's order. */
export async function pageRows(db: Db, keys: Array<{ id: number; row_version: number }>): Promise<Project[]> {
  const missing = keys.filter((k) => rows.get(k.id)?.row_version !== k.row_version).map((k) => k.id);
  if (missing.length) {
    const fresh = await db.selectFrom('projects').selectAll().where('id', 'in', missing).execute() as Project[];
    for (const r of fresh) {
      if (rows.size >= LIMIT) rows.delete(rows.keys().next().value!);
      rows.delete(r.id);
      rows.set(r.id, Object.freeze(r));
    }
  }
  // A row deleted between the two reads drops out of the page.
  return keys.map((k) => rows.get(k.id)).filter((r): r is Project => r !== undefined);
}
