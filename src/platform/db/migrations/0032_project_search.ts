import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

/**
 * Project search by full path, "namespace full name / project name" and description (what `search_namespaces`
 * and the search API match) through an index, so that a search does not read every project.
 * SQLite: an FTS5 trigram table holding those three texts per project (contentless: the name with namespace is
 * made from two tables), kept current by triggers on projects and namespaces in the writing transaction.
 * PostgreSQL: trigram GIN indexes on the lower-cased full path and namespace full name (name and description have
 * theirs since 0003); the query narrows by them.
 */
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm; EXCEPTION WHEN OTHERS THEN NULL; END $$`.execute(db);
    const have = await sql`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
    if (have.rows.length === 0) return;
    await sql`CREATE INDEX IF NOT EXISTS projects_full_path_trgm ON projects USING gin (lower(full_path) gin_trgm_ops)`.execute(db);
    await sql`CREATE INDEX IF NOT EXISTS namespaces_full_name_trgm ON namespaces USING gin (lower(full_name) gin_trgm_ops)`.execute(db);
    return;
  }
  const row = (p: string) => `${p}.id, ${p}.full_path, coalesce((SELECT full_name FROM namespaces WHERE id = ${p}.namespace_id), '') || ' / ' || ${p}.name, ${p}.description`;
  await sql`CREATE VIRTUAL TABLE project_names_search USING fts5(full_path, name_with_namespace, description, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
  await sql.raw(`CREATE TRIGGER project_names_search_ai AFTER INSERT ON projects BEGIN
    INSERT INTO project_names_search(rowid, full_path, name_with_namespace, description) SELECT ${row('new')}; END`).execute(db);
  await sql`CREATE TRIGGER project_names_search_ad AFTER DELETE ON projects BEGIN
    DELETE FROM project_names_search WHERE rowid = old.id; END`.execute(db);
  await sql.raw(`CREATE TRIGGER project_names_search_au AFTER UPDATE OF name, full_path, description, namespace_id ON projects BEGIN
    DELETE FROM project_names_search WHERE rowid = old.id;
    INSERT INTO project_names_search(rowid, full_path, name_with_namespace, description) SELECT ${row('new')}; END`).execute(db);
  await sql.raw(`CREATE TRIGGER project_names_search_nu AFTER UPDATE OF full_name ON namespaces BEGIN
    DELETE FROM project_names_search WHERE rowid IN (SELECT id FROM projects WHERE namespace_id = new.id);
    INSERT INTO project_names_search(rowid, full_path, name_with_namespace, description) SELECT ${row('p')} FROM projects p WHERE p.namespace_id = new.id; END`).execute(db);
  await sql.raw(`INSERT INTO project_names_search(rowid, full_path, name_with_namespace, description) SELECT ${row('p')} FROM projects p`).execute(db);
}
