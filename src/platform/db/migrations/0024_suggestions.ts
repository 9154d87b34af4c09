import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Suggestions written in merge-request diff notes (one row per fenced `suggestion` block, in the note's order, with
// the lines they replace as they were when written and the commit that applied them), and a merge request's context
// commits (commits of the target project added for context; each is also kept by a ref so garbage collection keeps it).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const time = timeType(dialect);
  await idColumn(db.schema.createTable('suggestions'), dialect)
    .addColumn('note_id', 'integer', (c) => c.notNull().references('notes.id').onDelete('cascade'))
    .addColumn('relative_order', 'integer', (c) => c.notNull())
    .addColumn('lines_above', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lines_below', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('from_content', 'text', (c) => c.notNull())
    .addColumn('to_content', 'text', (c) => c.notNull())
    .addColumn('applied', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('commit_id', 'varchar(64)')
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('suggestions_note_order').unique().on('suggestions').columns(['note_id', 'relative_order']).execute();

  await idColumn(db.schema.createTable('merge_request_context_commits'), dialect)
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('sha', 'varchar(64)', (c) => c.notNull())
    .addColumn('relative_order', 'integer', (c) => c.notNull())
    .addColumn('created_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mr_context_commits_sha').unique().on('merge_request_context_commits').columns(['merge_request_id', 'sha']).execute();
}
