import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Protected branches and tags: rules matched by name (wildcards allowed) against refs pushed or changed.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('protected_branches'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('allow_force_push', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('code_owner_approval_required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_branches_project_name').unique().on('protected_branches').columns(['project_id', 'name']).execute();

  // kind: push | merge | unprotect. Exactly one of access_level (a role), user_id, group_id, deploy_key_id is the subject.
  await idColumn(db.schema.createTable('protected_branch_access_levels'), dialect)
    .addColumn('protected_branch_id', 'integer', (c) => c.notNull().references('protected_branches.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('access_level', 'integer')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('deploy_key_id', 'integer')
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_branch_access_levels_branch').on('protected_branch_access_levels').columns(['protected_branch_id', 'kind']).execute();

  await idColumn(db.schema.createTable('protected_tags'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_tags_project_name').unique().on('protected_tags').columns(['project_id', 'name']).execute();

  await idColumn(db.schema.createTable('protected_tag_create_access_levels'), dialect)
    .addColumn('protected_tag_id', 'integer', (c) => c.notNull().references('protected_tags.id').onDelete('cascade'))
    .addColumn('access_level', 'integer')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('deploy_key_id', 'integer')
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('protected_tag_create_access_levels_tag').on('protected_tag_create_access_levels').column('protected_tag_id').execute();
}
