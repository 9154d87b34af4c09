import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { FeatureFlagUserListsTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { nextIid } from '../../platform/db/internal-ids.ts';
import { RecordNotFoundError, RuleError } from '../../platform/errors.ts';
import { containsText } from '../../platform/db/dialect.ts';

export type UserListRow = Selectable<FeatureFlagUserListsTable>;

export const NAME_TAKEN = 'Name has already been taken';
export const XIDS_INVALID = 'User xids user_xids must be a string of unique comma separated values each 256 characters or less';
const XID_MAX = 256;

/** Comma-separated external user ids: no blanks, no surrounding spaces, no line breaks or tabs, no duplicates. */
export function validUserXids(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (/[\n\r\t]/.test(value) || value.includes(',,')) return false;
  const ids = value.split(',');
  if (ids.some((id) => id.length === 0 || id.length > XID_MAX || id.trim() !== id)) return false;
  return new Set(ids).size === ids.length;
}

/** The attribute checks as full sentences, in the reference's order (presence, uniqueness, length). */
function attributeErrors(input: { name?: string; userXids?: string }, nameIsTaken = false): string[] {
  const errors: string[] = [];
  if (input.name !== undefined) {
    if (!input.name.trim()) errors.push("Name can't be blank");
    if (nameIsTaken) errors.push(NAME_TAKEN);
    if (input.name.length < 1) errors.push('Name is too short (minimum is 1 character)');
    if (input.name.length > 255) errors.push('Name is too long (maximum is 255 characters)');
  }
  if (input.userXids !== undefined && !validUserXids(input.userXids)) errors.push(XIDS_INVALID);
  return errors;
}

async function nameTaken(db: Db, projectId: number, name: string, exceptId?: number): Promise<boolean> {
  let q = db.selectFrom('feature_flag_user_lists').select('id').where('project_id', '=', projectId).where('name', '=', name);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return !!(await q.executeTakeFirst());
}

/** 400 with the list of full messages, the way this API reports a model that failed validation. */
function refuse(errors: string[]): never {
  throw new RuleError('bad_request', errors);
}

/** Search words: "quoted phrases" stay whole, the rest splits on spaces; every word must match. */
export function searchWords(search: string): string[] {
  const squished = search.trim().replace(/\s+/g, ' ');
  const quoted = squished.match(/"[^"]+"/g) ?? [];
  let rest = squished;
  for (const q of quoted) rest = rest.replace(q, '');
  return [...rest.split(' ').filter(Boolean), ...quoted.map((q) => q.slice(1, -1))];
}

export function listQuery(db: Db, projectId: number, search?: string) {
  let q = db.selectFrom('feature_flag_user_lists').selectAll().where('project_id', '=', projectId);
  for (const word of searchWords(search ?? '')) q = q.where(containsText('name', word));
  return q.orderBy('id', 'asc');
}

/** Looks a list up by its iid; anything that is not a known iid of the project is 404 "Not found". */
export async function getByIid(db: Db, projectId: number, iid: string | number): Promise<UserListRow> {
  const s = String(iid);
  if (!/^\d+$/.test(s) || !fitsIntColumn(Number(s))) throw new RecordNotFoundError();
  const row = await db.selectFrom('feature_flag_user_lists').selectAll().where('project_id', '=', projectId).where('iid', '=', Number(s)).executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row;
}

/** Creates a list with the project's next iid (claimed first, so concurrent creates never share one). */
export async function createUserList(deps: ServiceDeps, projectId: number, input: { name: string; userXids: string }): Promise<UserListRow> {
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const iid = await nextIid(trx, 'feature_flag_user_lists', projectId);
      const errors = attributeErrors(input, !!input.name && (await nameTaken(trx, projectId, input.name)));
      if (errors.length) refuse(errors);
      const now = deps.clock.now();
      return trx.insertInto('feature_flag_user_lists')
        .values({ project_id: projectId, iid, name: input.name, user_xids: input.userXids, created_at: now, updated_at: now })
        .returningAll().executeTakeFirstOrThrow();
    });
  } catch (err) {
    if (isUniqueViolation(err)) refuse([NAME_TAKEN]);
    throw err;
  }
}

/** Partial update: only the attributes given change. */
export async function updateUserList(deps: ServiceDeps, list: UserListRow, input: { name?: string; userXids?: string }): Promise<UserListRow> {
  const taken = !!input.name && input.name !== list.name && (await nameTaken(deps.db, list.project_id, input.name, list.id));
  const errors = attributeErrors(input, taken);
  if (errors.length) refuse(errors);
  if (input.name === undefined && input.userXids === undefined) return list;
  try {
    return await deps.db.updateTable('feature_flag_user_lists')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.userXids !== undefined ? { user_xids: input.userXids } : {}),
        updated_at: deps.clock.now(),
      })
      .where('id', '=', list.id).returningAll().executeTakeFirstOrThrow();
  } catch (err) {
    if (isUniqueViolation(err)) refuse([NAME_TAKEN]);
    throw err;
  }
}

export async function deleteUserList(deps: ServiceDeps, list: UserListRow): Promise<void> {
  await deps.db.deleteFrom('feature_flag_user_lists').where('id', '=', list.id).execute();
}
