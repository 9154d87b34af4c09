import type { Db } from './db/index.ts';

/**
 * Whether an instance feature gate is fully on: a `boolean` gate with value `true`.
 * (Percentage and actor gates are read by the Features area; here they count as off.)
 */
export async function isFeatureEnabled(db: Db, name: string): Promise<boolean> {
  const row = await db.selectFrom('feature_gates').select('value')
    .where('feature_key', '=', name).where('key', '=', 'boolean').executeTakeFirst();
  return row?.value === 'true';
}
