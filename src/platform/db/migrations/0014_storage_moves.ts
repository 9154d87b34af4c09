import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Project repository storage moves: one row per move of a project's repository from one shard to another, with the
// state of its state machine (resources/storage-moves) and the text of its failure.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  await idColumn(db.schema.createTable('project_repository_storage_moves'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    // initial | scheduled | started | replicated | finished | failed | cleanup_failed
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_storage_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('destination_storage_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('error_message', 'varchar(256)')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_repository_storage_moves_project').on('project_repository_storage_moves').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('project_repository_storage_moves_created').on('project_repository_storage_moves').columns(['created_at', 'id']).execute();
}
