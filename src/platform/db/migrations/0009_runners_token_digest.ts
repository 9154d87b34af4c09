import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';

// Runner registration tokens were stored as they are; like every other secret, only their SHA-256 digest is kept
// from now on. Existing tokens are converted, so a token handed out before still matches its digest.
// The digest is computed here rather than through the crypto module, so this step stays what it was when it ran.
export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('projects').addColumn('runners_token_digest', 'varchar(64)').execute();
  const rows = await db.selectFrom('projects').select(['id', 'runners_token']).where('runners_token', 'is not', null).execute();
  for (const r of rows as Array<{ id: number; runners_token: string }>) {
    const d = createHash('sha256').update(r.runners_token, 'utf8').digest('hex');
    await db.updateTable('projects').set({ runners_token_digest: d }).where('id', '=', r.id).execute();
  }
  await db.schema.alterTable('projects').dropColumn('runners_token').execute();
}
