import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { GpgKeysTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { parseGpgPublicKey } from '../../platform/crypto/gpg-keys.ts';

// A user's GPG keys, known by their primary key's fingerprint (unique in the instance).

export type GpgKeyRow = Selectable<GpgKeysTable>;

const INVALID = "is invalid. A valid public GPG key begins with '-----BEGIN PGP PUBLIC KEY BLOCK-----'";

export function gpgKeysQuery(db: Db, userId: number) {
  return db.selectFrom('gpg_keys').selectAll().where('user_id', '=', userId).orderBy('id', 'asc');
}

export async function getGpgKeyOr404(db: Db, userId: number, keyId: number): Promise<GpgKeyRow> {
  const row = fitsIntColumn(keyId) ? await db.selectFrom('gpg_keys').selectAll().where('user_id', '=', userId).where('id', '=', keyId).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError('GPG Key');
  return row;
}

export async function addGpgKey(deps: ServiceDeps, userId: number, key: string): Promise<GpgKeyRow> {
  const text = key.trim();
  if (!text) throw new ValidationError({ key: ["can't be blank"] });
  const parsed = parseGpgPublicKey(text);
  if (!parsed) throw new ValidationError({ key: [INVALID] });
  const taken = () => { throw new ValidationError({ fingerprint: ['has already been taken'] }); };
  if (await deps.db.selectFrom('gpg_keys').select('id').where('fingerprint', '=', parsed.fingerprint).executeTakeFirst()) taken();
  const now = deps.clock.now();
  try {
    return await deps.db.insertInto('gpg_keys')
      .values({ user_id: userId, key: text, fingerprint: parsed.fingerprint, primary_keyid: parsed.primaryKeyId, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow();
  } catch (e) {
    if (isUniqueViolation(e)) taken();
    throw e;
  }
}

/** Removing and revoking are the same here: no signature is verified against a key that is gone. */
export async function removeGpgKey(deps: ServiceDeps, row: GpgKeyRow): Promise<void> {
  await deps.db.deleteFrom('gpg_keys').where('id', '=', row.id).execute();
}
