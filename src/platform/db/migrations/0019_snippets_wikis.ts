import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Snippets: personal (no project) and project snippets. Their files live in each snippet's own bare repository
// (`@snippets/...` on `repository_storage`); the row keeps what lists and permissions need. `file_name` is the
// first file's name as last written, for listings. The user agent and address of the creating request are kept
// for `GET /snippets/:id/user_agent_detail`. Wikis need no table: a wiki is its repository.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  await idColumn(db.schema.createTable('snippets'), dialect)
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('visibility_level', 'integer', (c) => c.notNull())
    .addColumn('file_name', 'varchar(255)')
    .addColumn('repository_storage', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_agent', 'varchar(255)')
    .addColumn('ip_address', 'varchar(64)')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snippets_author').on('snippets').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('snippets_project').on('snippets').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('snippets_visibility').on('snippets').columns(['visibility_level', 'id']).execute();
}
