import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// What groups, projects and users keep beyond their rows: whether a project's default branch protection was applied, avatars (the stored file's name; the file lives under the
// data dir's uploads), group shares (a group invited into another with a role), group custom attributes, and the
// files uploaded into a project for its Markdown (`/uploads/:secret/:filename`).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  for (const table of ['users', 'namespaces', 'projects', 'topics']) {
    await db.schema.alterTable(table).addColumn('avatar', 'varchar(255)').execute();
  }
  // Whether the default branch protection was applied to the project's first default branch (once, as the
  // reference does when that branch is created); projects that already have commits count as done.
  await db.schema.alterTable('projects').addColumn('default_branch_protection_applied', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.updateTable('projects').set({ default_branch_protection_applied: 1 }).where('empty_repo', '=', 0).execute();

  await idColumn(db.schema.createTable('group_group_links'), dialect)
    .addColumn('shared_group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('shared_with_group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('group_access', 'integer', (c) => c.notNull())
    .addColumn('expires_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('group_group_links_pair').unique().on('group_group_links').columns(['shared_group_id', 'shared_with_group_id']).execute();
  await db.schema.createIndex('group_group_links_with').on('group_group_links').column('shared_with_group_id').execute();

  await idColumn(db.schema.createTable('group_custom_attributes'), dialect)
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('key', 'varchar(255)', (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('group_custom_attributes_key').unique().on('group_custom_attributes').columns(['group_id', 'key']).execute();

  await idColumn(db.schema.createTable('project_uploads'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('secret', 'varchar(64)', (c) => c.notNull())
    .addColumn('filename', 'varchar(255)', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('uploaded_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_uploads_secret').unique().on('project_uploads').columns(['project_id', 'secret', 'filename']).execute();
}
