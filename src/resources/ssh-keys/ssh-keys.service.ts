import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { DeployKeysTable, SshKeysTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { validateNewKey, type NewKeyInput } from '../deploy-keys/deploy-keys.service.ts';

// A user's SSH keys. They follow the deploy keys' validation (one Key model in the reference), and a fingerprint
// names at most one key of either kind.

export type SshKeyRow = Selectable<SshKeysTable>;
export type UsageType = 'auth' | 'signing' | 'auth_and_signing';
export const USAGE_TYPES: readonly UsageType[] = ['auth', 'signing', 'auth_and_signing'];

export function userKeysQuery(db: Db, userId: number) {
  return db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).orderBy('id', 'asc');
}

export async function getUserKeyOr404(db: Db, userId: number, keyId: number): Promise<SshKeyRow> {
  const key = fitsIntColumn(keyId)
    ? await db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).where('id', '=', keyId).executeTakeFirst()
    : undefined;
  if (!key) throw new NotFoundError('Key');
  return key;
}

export async function createUserKey(deps: ServiceDeps, userId: number, input: NewKeyInput & { usageType: UsageType }): Promise<SshKeyRow> {
  const fields = await validateNewKey(deps, input);
  const now = deps.clock.now();
  try {
    return await deps.db.insertInto('ssh_keys')
      .values({ ...fields, user_id: userId, usage_type: input.usageType, last_used_at: null, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow();
  } catch (e) {
    // Another request added the same key between the check and the insert.
    if (isUniqueViolation(e)) throw new ValidationError({ fingerprint_sha256: ['has already been taken'] });
    throw e;
  }
}

export async function deleteUserKey(deps: ServiceDeps, key: SshKeyRow): Promise<void> {
  await deps.db.deleteFrom('ssh_keys').where('id', '=', key.id).execute();
}

export async function getKeyOr404(db: Db, id: number): Promise<SshKeyRow> {
  const key = fitsIntColumn(id) ? await db.selectFrom('ssh_keys').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
  if (!key) throw new NotFoundError('Key');
  return key;
}

export type FoundKey = { kind: 'ssh'; key: SshKeyRow } | { kind: 'deploy'; key: Selectable<DeployKeysTable> };

/**
 * A key by fingerprint: `SHA256:<base64>` or the MD5 colon form; user keys first, then deploy keys. Both columns
 * are indexed on both tables.
 */
export async function findKeyByFingerprint(db: Db, fingerprint: string): Promise<FoundKey> {
  const sha = fingerprint.startsWith('SHA256:') ? fingerprint.slice('SHA256:'.length) : null;
  const column = sha !== null ? 'fingerprint_sha256' : 'fingerprint';
  const value = sha ?? fingerprint;
  const ssh = await db.selectFrom('ssh_keys').selectAll().where(column, '=', value).orderBy('id', 'asc').executeTakeFirst();
  if (ssh) return { kind: 'ssh', key: ssh };
  const deploy = await db.selectFrom('deploy_keys').selectAll().where(column, '=', value).orderBy('id', 'asc').executeTakeFirst();
  if (deploy) return { kind: 'deploy', key: deploy };
  throw new NotFoundError('Key');
}
