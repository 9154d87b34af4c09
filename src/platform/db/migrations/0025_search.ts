import type { Kysely } from 'kysely';
import { createTextIndex, type DialectName } from '../dialect.ts';

/**
 * Search: substring indexes over the records the search API reads from the database, kept current in the
 * writing transaction and filled from the rows already there (projects have theirs since 0003). The queries
 * name them through `indexedContains` (dialect.ts).
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await createTextIndex(db, dialect, { table: 'issues', columns: ['title', 'description'] });
  await createTextIndex(db, dialect, { table: 'merge_requests', columns: ['title', 'description'] });
  await createTextIndex(db, dialect, { table: 'milestones', columns: ['title', 'description'] });
  await createTextIndex(db, dialect, { table: 'notes', columns: ['body'] });
  await createTextIndex(db, dialect, { table: 'snippets', columns: ['title', 'description', 'file_name'] });
  await createTextIndex(db, dialect, { table: 'users', columns: ['name', 'username'] });
}
