import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

// Lists of issues across projects (`/issues`, `/groups/:id/issues`) are newest first or most recently updated first
// over every project the caller reads: without these the database sorts every candidate issue for each page.
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.createIndex('issues_created').on('issues').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('issues_updated').on('issues').columns(['updated_at', 'id']).execute();
}
