import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

// Issues: a milestone event keeps the state its issue had when the milestone changed (the entity's `state`).
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('resource_milestone_events').addColumn('state', 'varchar(16)').execute();
}
