import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('users'), dialect)
    .addColumn('username', 'varchar(255)', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('email', 'varchar(255)', (c) => c.notNull())
    .addColumn('public_email', 'varchar(255)')
    .addColumn('password_digest', 'varchar(255)')
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('active'))
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('user_type', 'varchar(32)', (c) => c.notNull().defaultTo('human'))
    .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('location', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('website_url', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('organization', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('job_title', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('private_profile', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('can_create_group', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('projects_limit', 'integer', (c) => c.notNull().defaultTo(100000))
    .addColumn('external', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('note', 'text')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .addColumn('last_activity_on', t)
    .addColumn('current_sign_in_at', t)
    .addColumn('confirmed_at', t)
    .execute();
  await sql`CREATE UNIQUE INDEX users_username_lower ON users (lower(username))`.execute(db);
  await sql`CREATE UNIQUE INDEX users_email_lower ON users (lower(email))`.execute(db);

  await idColumn(db.schema.createTable('namespaces'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('path', 'varchar(255)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('parent_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(20))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('full_path', 'varchar(1024)', (c) => c.notNull())
    .addColumn('full_path_lower', 'varchar(1024)', (c) => c.notNull())
    .addColumn('full_name', 'varchar(2048)', (c) => c.notNull())
    .addColumn('traversal', 'varchar(1024)', (c) => c.notNull().defaultTo('/'))
    .addColumn('request_access_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('project_creation_level', 'varchar(32)', (c) => c.notNull().defaultTo('developer'))
    .addColumn('subgroup_creation_level', 'varchar(32)', (c) => c.notNull().defaultTo('maintainer'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('namespaces_full_path_lower').unique().on('namespaces').column('full_path_lower').execute();
  await db.schema.createIndex('namespaces_parent').on('namespaces').column('parent_id').execute();
  await db.schema.createIndex('namespaces_owner').on('namespaces').column('owner_id').execute();
  await db.schema.createIndex('namespaces_kind_name').on('namespaces').columns(['kind', 'name', 'id']).execute();
  await db.schema.createIndex('namespaces_traversal').on('namespaces').column('traversal').execute();

  await idColumn(db.schema.createTable('members'), dialect)
    .addColumn('source_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('access_level', 'integer', (c) => c.notNull())
    .addColumn('expires_at', t)
    .addColumn('created_by_id', 'integer')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('members_source_user').unique().on('members').columns(['source_type', 'source_id', 'user_id']).execute();
  await db.schema.createIndex('members_user').on('members').columns(['user_id', 'source_type', 'access_level']).execute();

  await idColumn(db.schema.createTable('personal_access_tokens'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('token_digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('scopes', 'varchar(1024)', (c) => c.notNull())
    .addColumn('impersonation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', t)
    .addColumn('last_used_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pat_digest').unique().on('personal_access_tokens').column('token_digest').execute();
  await db.schema.createIndex('pat_user').on('personal_access_tokens').column('user_id').execute();

  await idColumn(db.schema.createTable('projects'), dialect)
    .addColumn('namespace_id', 'integer', (c) => c.notNull().references('namespaces.id'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('path', 'varchar(255)', (c) => c.notNull())
    .addColumn('full_path', 'varchar(1024)', (c) => c.notNull())
    .addColumn('full_path_lower', 'varchar(1024)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('visibility_level', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('creator_id', 'integer')
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('default_branch', 'varchar(255)')
    .addColumn('repository_storage', 'varchar(255)', (c) => c.notNull().defaultTo('default'))
    .addColumn('repository_read_only', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('empty_repo', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('pending_delete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .addColumn('last_activity_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('projects_full_path_lower').unique().on('projects').column('full_path_lower').execute();
  await db.schema.createIndex('projects_namespace').on('projects').columns(['namespace_id', 'id']).execute();
  await db.schema.createIndex('projects_visibility').on('projects').columns(['visibility_level', 'id']).execute();

  await idColumn(db.schema.createTable('sessions'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('csrf_digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('last_seen_at', t, (c) => c.notNull())
    .addColumn('expires_at', t, (c) => c.notNull())
    .addColumn('ip', 'varchar(64)')
    .addColumn('user_agent', 'varchar(512)')
    .execute();
  await db.schema.createIndex('sessions_digest').unique().on('sessions').column('digest').execute();

  await idColumn(db.schema.createTable('feature_gates'), dialect)
    .addColumn('feature_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('key', 'varchar(64)', (c) => c.notNull())
    .addColumn('value', 'varchar(1024)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feature_gates_key_value').unique().on('feature_gates').columns(['feature_key', 'key', 'value']).execute();
}
