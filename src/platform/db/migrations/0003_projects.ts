import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Projects: the columns every filter and order of the listing needs (each with an index), and the
// tables around a project: topics, stars, group shares, custom attributes, moved paths, statistics, languages.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  const add = async (name: string, type: any, build?: (c: any) => any) => {
    await db.schema.alterTable('projects').addColumn(name, type, build ?? ((c: any) => c)).execute();
  };
  await add('star_count', 'integer', (c) => c.notNull().defaultTo(0));
  await add('forks_count', 'integer', (c) => c.notNull().defaultTo(0));
  await add('forked_from_project_id', 'integer');
  await add('issues_access_level', 'integer', (c) => c.notNull().defaultTo(20));
  await add('merge_requests_access_level', 'integer', (c) => c.notNull().defaultTo(20));
  await add('repository_access_level', 'integer', (c) => c.notNull().defaultTo(20));
  await add('forking_access_level', 'integer', (c) => c.notNull().defaultTo(20));
  await add('import_url', 'varchar(2048)');
  await add('import_type', 'varchar(64)');
  await add('import_status', 'varchar(32)', (c) => c.notNull().defaultTo('none'));
  await add('import_error', 'text');
  await add('readme_path', 'varchar(1024)');
  await add('marked_for_deletion_at', t);
  await add('runners_token', 'varchar(128)');
  // The long tail of per-project settings that are stored and returned but never filtered on.
  await add('settings', 'text', (c) => c.notNull().defaultTo('{}'));

  // Every filter and order of GET /projects, with id as tie-breaker (pending_delete leads: always filtered).
  const idx = (name: string, cols: string[]) => db.schema.createIndex(name).on('projects').columns(cols).execute();
  await idx('projects_pd_id', ['pending_delete', 'id']);
  await idx('projects_pd_vis_id', ['pending_delete', 'visibility_level', 'id']);
  await idx('projects_name_id', ['pending_delete', 'name', 'id']);
  await idx('projects_path_id', ['pending_delete', 'path', 'id']);
  await idx('projects_updated_id', ['pending_delete', 'updated_at', 'id']);
  await idx('projects_activity_id', ['pending_delete', 'last_activity_at', 'id']);
  await idx('projects_star_id', ['pending_delete', 'star_count', 'id']);
  await idx('projects_archived_id', ['archived', 'id']);
  await idx('projects_storage_id', ['repository_storage', 'id']);
  await idx('projects_creator_import', ['creator_id', 'import_type']);
  await idx('projects_forked_from', ['forked_from_project_id', 'id']);
  await idx('projects_issues_level_id', ['issues_access_level', 'id']);
  await idx('projects_mrs_level_id', ['merge_requests_access_level', 'id']);

  await idColumn(db.schema.createTable('topics'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('name_lower', 'varchar(255)', (c) => c.notNull())
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('total_projects_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('topics_name_lower').unique().on('topics').column('name_lower').execute();
  await db.schema.createIndex('topics_count').on('topics').columns(['total_projects_count', 'id']).execute();

  await db.schema.createTable('project_topics')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('topic_id', 'integer', (c) => c.notNull().references('topics.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('project_topics_pk', ['project_id', 'topic_id'])
    .execute();
  await db.schema.createIndex('project_topics_topic').on('project_topics').columns(['topic_id', 'project_id']).execute();

  await idColumn(db.schema.createTable('users_star_projects'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stars_user_project').unique().on('users_star_projects').columns(['user_id', 'project_id']).execute();
  await db.schema.createIndex('stars_project').on('users_star_projects').columns(['project_id', 'id']).execute();

  await idColumn(db.schema.createTable('project_group_links'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('group_access', 'integer', (c) => c.notNull())
    .addColumn('expires_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pgl_project_group').unique().on('project_group_links').columns(['project_id', 'group_id']).execute();
  await db.schema.createIndex('pgl_group').on('project_group_links').columns(['group_id', 'project_id']).execute();

  await idColumn(db.schema.createTable('project_custom_attributes'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('key', 'varchar(255)', (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pca_project_key').unique().on('project_custom_attributes').columns(['project_id', 'key']).execute();
  await db.schema.createIndex('pca_key_value').on('project_custom_attributes').columns(['key', 'value', 'project_id']).execute();

  await idColumn(db.schema.createTable('redirect_routes'), dialect)
    .addColumn('source_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('path', 'varchar(1024)', (c) => c.notNull())
    .addColumn('path_lower', 'varchar(1024)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('redirect_routes_path_lower').unique().on('redirect_routes').column('path_lower').execute();
  await db.schema.createIndex('redirect_routes_source').on('redirect_routes').columns(['source_type', 'source_id']).execute();

  await db.schema.createTable('project_statistics')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('commit_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('storage_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('repository_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('wiki_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lfs_objects_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('job_artifacts_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pipeline_artifacts_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('packages_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('snippets_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('uploads_size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  for (const col of ['repository_size', 'storage_size', 'packages_size', 'wiki_size']) {
    await db.schema.createIndex(`ps_${col}`).on('project_statistics').columns([col, 'project_id']).execute();
  }

  await db.schema.createTable('project_languages')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'varchar(64)', (c) => c.notNull())
    .addColumn('name_lower', 'varchar(64)', (c) => c.notNull())
    .addColumn('share', 'real', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_languages_pk', ['project_id', 'name_lower'])
    .execute();
  await db.schema.createIndex('project_languages_name').on('project_languages').columns(['name_lower', 'project_id']).execute();


  await createSearchIndex(db, dialect);
}

/**
 * Substring search over name, path and description without scanning every project: an FTS5 trigram index
 * kept in step by triggers on SQLite, trigram GIN indexes (pg_trgm) on PostgreSQL when the extension can be
 * installed. The listing still applies its exact conditions; the index only narrows the candidates.
 */
export async function createSearchIndex(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`CREATE VIRTUAL TABLE projects_search USING fts5(name, path, description, content='projects', content_rowid='id', tokenize='trigram')`.execute(db);
    await sql`CREATE TRIGGER projects_search_ai AFTER INSERT ON projects BEGIN
      INSERT INTO projects_search(rowid, name, path, description) VALUES (new.id, new.name, new.path, new.description); END`.execute(db);
    await sql`CREATE TRIGGER projects_search_ad AFTER DELETE ON projects BEGIN
      INSERT INTO projects_search(projects_search, rowid, name, path, description) VALUES ('delete', old.id, old.name, old.path, old.description); END`.execute(db);
    await sql`CREATE TRIGGER projects_search_au AFTER UPDATE OF name, path, description ON projects BEGIN
      INSERT INTO projects_search(projects_search, rowid, name, path, description) VALUES ('delete', old.id, old.name, old.path, old.description);
      INSERT INTO projects_search(rowid, name, path, description) VALUES (new.id, new.name, new.path, new.description); END`.execute(db);
    await sql`INSERT INTO projects_search(projects_search) VALUES ('rebuild')`.execute(db);
    return;
  }
  await sql`DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; EXCEPTION WHEN OTHERS THEN NULL; END $$`.execute(db);
  const have = await sql`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
  if (have.rows.length === 0) return;
  for (const col of ['name', 'path', 'description']) {
    await sql.raw(`CREATE INDEX projects_${col}_trgm ON projects USING gin (lower(${col}) gin_trgm_ops)`).execute(db);
  }
}
