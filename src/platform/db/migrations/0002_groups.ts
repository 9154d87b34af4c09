import type { Kysely } from 'kysely';
import { timeType, type DialectName } from '../dialect.ts';

// Group settings the v4 group entity exposes and PUT /groups/:id changes, and the bookkeeping of
// the bot users behind group and project access tokens.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  const add = (name: string, type: 'integer' | 'varchar(255)', build?: (c: any) => any) =>
    db.schema.alterTable('namespaces').addColumn(name, type, build ?? ((c) => c)).execute();
  await add('share_with_group_lock', 'integer', (c) => c.notNull().defaultTo(0));
  await add('require_two_factor_authentication', 'integer', (c) => c.notNull().defaultTo(0));
  await add('two_factor_grace_period', 'integer', (c) => c.notNull().defaultTo(48));
  await add('auto_devops_enabled', 'integer');
  await add('emails_enabled', 'integer', (c) => c.notNull().defaultTo(1));
  await add('mentions_disabled', 'integer');
  await add('lfs_enabled', 'integer', (c) => c.notNull().defaultTo(1));
  await add('default_branch_protection', 'integer', (c) => c.notNull().defaultTo(2));
  await add('default_branch', 'varchar(255)');

  // One row per bot user: which group or project it serves and the role its token was created with
  // (kept after revocation, when the bot's membership is gone).
  await db.schema.createTable('resource_bots')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('source_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_id', 'integer', (c) => c.notNull())
    .addColumn('access_level', 'integer', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resource_bots_source').on('resource_bots').columns(['source_type', 'source_id']).execute();
}
