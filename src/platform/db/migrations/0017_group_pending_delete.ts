import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// A group being deleted: `DELETE /groups/:id` marks the group and its subgroups (and their projects, through
// `projects.pending_delete`) and queues the job that removes them; until it ran they are hidden from every read.
// Comments on commits are notes with `noteable_id` 0, found by project and sha. A user's identities at external
// providers (`PUT /users/:id` with `provider` and `extern_uid`): one per provider and user, an uid once per provider.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('namespaces').addColumn('pending_delete', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('notes_commit').on('notes').columns(['project_id', 'commit_id', 'created_at', 'id']).execute();
  await idColumn(db.schema.createTable('identities'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'varchar(255)', (c) => c.notNull())
    .addColumn('extern_uid', 'varchar(255)', (c) => c.notNull())
    .addColumn('extern_uid_lower', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', timeType(dialect), (c) => c.notNull())
    .addColumn('updated_at', timeType(dialect), (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identities_user_provider').unique().on('identities').columns(['user_id', 'provider']).execute();
  await db.schema.createIndex('identities_provider_uid').unique().on('identities').columns(['provider', 'extern_uid_lower']).execute();
}
