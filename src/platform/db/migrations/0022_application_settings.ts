import type { Kysely } from 'kysely';
import { timeType, type DialectName } from '../dialect.ts';

// Instance-wide settings (`GET/PUT /application/settings`): one row per setting an administrator changed, its
// value as JSON; a setting without a row has its default (platform/application-settings.ts), so a new setting needs
// no migration. A project imported from a URL keeps the URL it fetches from, credentials included, beside the
// project (never in the row that answers carry) until the import ended.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.createTable('application_settings')
    .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', timeType(dialect), (c) => c.notNull())
    .execute();
  await db.schema.createTable('project_import_data')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('created_at', timeType(dialect), (c) => c.notNull())
    .execute();
}
