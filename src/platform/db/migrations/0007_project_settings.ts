import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Deploy keys (and their per-project links), error-tracking settings and client keys, feature-flag user lists.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('deploy_keys'), dialect)
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    // What SSH authentication needs: the algorithm, the decoded blob (base64) and its fingerprints.
    .addColumn('key_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('key_bits', 'integer', (c) => c.notNull())
    .addColumn('key_blob', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(128)', (c) => c.notNull())
    .addColumn('fingerprint_sha256', 'varchar(128)', (c) => c.notNull())
    .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', t)
    .addColumn('last_used_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_keys_fingerprint_sha256').unique().on('deploy_keys').column('fingerprint_sha256').execute();
  await db.schema.createIndex('deploy_keys_public').on('deploy_keys').columns(['public', 'id']).execute();

  await idColumn(db.schema.createTable('deploy_keys_projects'), dialect)
    .addColumn('deploy_key_id', 'integer', (c) => c.notNull().references('deploy_keys.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('can_push', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_keys_projects_key_project').unique().on('deploy_keys_projects').columns(['deploy_key_id', 'project_id']).execute();
  await db.schema.createIndex('deploy_keys_projects_project').on('deploy_keys_projects').columns(['project_id', 'id']).execute();

  await idColumn(db.schema.createTable('error_tracking_settings'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('integrated', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('project_name', 'varchar(255)')
    .addColumn('api_url', 'varchar(1024)')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('error_tracking_settings_project').unique().on('error_tracking_settings').column('project_id').execute();

  await idColumn(db.schema.createTable('error_tracking_client_keys'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('public_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('error_tracking_client_keys_public_key').unique().on('error_tracking_client_keys').column('public_key').execute();
  await db.schema.createIndex('error_tracking_client_keys_project').on('error_tracking_client_keys').columns(['project_id', 'id']).execute();

  await idColumn(db.schema.createTable('feature_flag_user_lists'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_xids', 'text', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feature_flag_user_lists_project_iid').unique().on('feature_flag_user_lists').columns(['project_id', 'iid']).execute();
  // The last iid handed out per project: never reused, even after the newest list is deleted.
  await db.schema.createTable('feature_flag_user_list_iids')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('last_iid', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('feature_flag_user_lists_project_name').unique().on('feature_flag_user_lists').columns(['project_id', 'name']).execute();
}
