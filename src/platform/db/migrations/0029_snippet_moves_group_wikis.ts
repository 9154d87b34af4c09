import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Snippet repository storage moves: one row per move of a snippet's repository between shards, driven by the same
// state machine as project moves (resources/storage-moves); and a snippet's repository is read-only while it moves.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  await idColumn(db.schema.createTable('snippet_repository_storage_moves'), dialect)
    .addColumn('snippet_id', 'integer', (c) => c.notNull().references('snippets.id').onDelete('cascade'))
    // initial | scheduled | started | replicated | finished | failed | cleanup_failed
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_storage_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('destination_storage_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('error_message', 'varchar(256)')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snippet_repository_storage_moves_snippet').on('snippet_repository_storage_moves').columns(['snippet_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('snippet_repository_storage_moves_created').on('snippet_repository_storage_moves').columns(['created_at', 'id']).execute();
  await db.schema.alterTable('snippets').addColumn('repository_read_only', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('snippets_repository_storage').on('snippets').columns(['repository_storage', 'id']).execute();
}
