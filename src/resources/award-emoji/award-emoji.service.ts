import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { AwardEmojiTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { NotFoundError, RecordNotFoundError, UnauthorizedError } from '../../platform/errors.ts';
import type { Actor } from '../../platform/access/actor.ts';

// Award emoji on any awardable (issues and their notes now; merge requests reuse it), found by (type, id).

export type AwardRow = Selectable<AwardEmojiTable>;
export interface Awardable { type: string; id: number }

/** Emoji names as the reference stores them: lower-case words, digits, `_`, `+` and `-`. */
const NAME = /^[a-z0-9_+-]{1,64}$/;

export function awardsQuery(db: Db, target: Awardable) {
  return db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', target.type).where('awardable_id', '=', target.id).orderBy('id');
}

export async function findAward(db: Db, target: Awardable, id: number): Promise<AwardRow> {
  if (!fitsIntColumn(id)) throw new RecordNotFoundError();
  const row = await awardsQuery(db, target).where('id', '=', id).executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row;
}

/** Awards the emoji; the reference's refusals read "404 Award Emoji <reason> Not Found". */
export async function addAward(deps: ServiceDeps, actor: Actor, target: Awardable, name: string): Promise<AwardRow> {
  if (!NAME.test(name)) throw new NotFoundError('Award Emoji Name is not a valid emoji name');
  const now = deps.clock.now();
  try {
    return await deps.db.insertInto('award_emoji').values({
      name, user_id: actor.user!.id, awardable_type: target.type, awardable_id: target.id, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    if (isUniqueViolation(err)) throw new NotFoundError('Award Emoji Name has already been taken');
    throw err;
  }
}

/** Only the award's owner or an administrator removes it (401 otherwise, as the reference). */
export async function removeAward(deps: ServiceDeps, actor: Actor, award: AwardRow): Promise<void> {
  if (!actor.admin && award.user_id !== actor.user?.id) throw new UnauthorizedError();
  await deps.db.deleteFrom('award_emoji').where('id', '=', award.id).execute();
}
