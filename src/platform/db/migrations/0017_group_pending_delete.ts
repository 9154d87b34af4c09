import type { Kysely } from 'kysely';

// A group being deleted: `DELETE /groups/:id` marks the group and its subgroups (and their projects, through
// `projects.pending_delete`) and queues the job that removes them; until it ran they are hidden from every read.
// Comments on commits are notes with `noteable_id` 0, found by project and sha.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('namespaces').addColumn('pending_delete', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('notes_commit').on('notes').columns(['project_id', 'commit_id', 'created_at', 'id']).execute();
}
