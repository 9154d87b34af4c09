import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

// A version per project row, moved by the database on every update whoever makes it (this server, another
// process, a script): caches of project rows compare it instead of trusting announcements.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('projects').addColumn('row_version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // The default listing (newest first) decides visibility and reads the row versions from this index alone.
  await db.schema.createIndex('projects_listing').ifNotExists().on('projects')
    .columns(['pending_delete', 'id', 'visibility_level', 'namespace_id', 'row_version']).execute();
  if (dialect === 'sqlite') {
    // The inner update leaves row_version changed, so the WHEN clause stops it from firing the trigger again.
    await sql`CREATE TRIGGER projects_row_version AFTER UPDATE ON projects FOR EACH ROW
      WHEN new.row_version = old.row_version BEGIN
      UPDATE projects SET row_version = old.row_version + 1 WHERE id = new.id; END`.execute(db);
  } else {
    await sql`CREATE FUNCTION projects_bump_row_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.row_version := OLD.row_version + 1; RETURN NEW; END $$`.execute(db);
    await sql`CREATE TRIGGER projects_row_version BEFORE UPDATE ON projects FOR EACH ROW
      EXECUTE FUNCTION projects_bump_row_version()`.execute(db);
  }
}
