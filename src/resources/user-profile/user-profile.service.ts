import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { EmailsTable, UserCustomAttributesTable, UserStatusesTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { EMAIL_RE } from '../users/users.service.ts';

// A user's further e-mail addresses, status, custom attributes and memberships.

export type EmailRow = Selectable<EmailsTable>;
export type StatusRow = Selectable<UserStatusesTable>;
export type CustomAttributeRow = Selectable<UserCustomAttributesTable>;

// ---- e-mail addresses ----

export function emailsQuery(db: Db, userId: number) {
  return db.selectFrom('emails').selectAll().where('user_id', '=', userId).orderBy('id', 'asc');
}

export async function getEmailOr404(db: Db, userId: number, emailId: number): Promise<EmailRow> {
  const row = fitsIntColumn(emailId) ? await db.selectFrom('emails').selectAll().where('user_id', '=', userId).where('id', '=', emailId).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError('Email');
  return row;
}

/** An address is unique among every user's primary and further addresses, case-insensitively. */
export async function addEmail(deps: ServiceDeps, userId: number, email: string, confirmed: boolean): Promise<EmailRow> {
  const lower = email.trim().toLowerCase();
  const taken = () => { throw new ValidationError({ email: ['has already been taken'] }); };
  if (!EMAIL_RE.test(email.trim()) || email.length > 255) throw new ValidationError({ email: ['is invalid'] });
  const primary = await deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', lower)).executeTakeFirst();
  if (primary) taken();
  const now = deps.clock.now();
  try {
    return await deps.db.insertInto('emails')
      .values({ user_id: userId, email: email.trim(), email_lower: lower, confirmed_at: confirmed ? now : null, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow();
  } catch (e) {
    if (isUniqueViolation(e)) taken();
    throw e;
  }
}

export async function removeEmail(deps: ServiceDeps, row: EmailRow): Promise<void> {
  await deps.db.deleteFrom('emails').where('id', '=', row.id).execute();
}

// ---- status ----

export const AVAILABILITIES = ['not_set', 'busy'] as const;
export const CLEAR_AFTER: Record<string, number> = {
  '30_minutes': 30 * 60_000, '3_hours': 3 * 3_600_000, '8_hours': 8 * 3_600_000,
  '1_day': 86_400_000, '3_days': 3 * 86_400_000, '7_days': 7 * 86_400_000, '30_days': 30 * 86_400_000,
};
const DEFAULT_EMOJI = 'speech_balloon';
const MESSAGE_MAX = 100;

/** The user's status, or null; a status past its clearing time is no status. */
export async function getStatus(deps: ServiceDeps, userId: number): Promise<StatusRow | null> {
  const row = await deps.db.selectFrom('user_statuses').selectAll().where('user_id', '=', userId).executeTakeFirst();
  if (!row || (row.clear_status_at !== null && row.clear_status_at <= deps.clock.now())) return null;
  return row;
}

export interface StatusInput {
  emoji?: string;
  message?: string;
  availability?: (typeof AVAILABILITIES)[number];
  clearStatusAfter?: string;
}

/** Sets the status; with nothing to show (no emoji, no message, availability not set) the status is removed. */
export async function setStatus(deps: ServiceDeps, userId: number, input: StatusInput): Promise<StatusRow | null> {
  const emoji = input.emoji?.trim() ?? '';
  const message = input.message?.trim() ?? '';
  const availability = input.availability ?? 'not_set';
  const errors: Record<string, string[]> = {};
  if (emoji && !/^[a-z0-9_+-]{1,64}$/.test(emoji)) errors.emoji = ['is not a valid emoji name'];
  if (message.length > MESSAGE_MAX) errors.message = [`is too long (maximum is ${MESSAGE_MAX} characters)`];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  if (!emoji && !message && availability === 'not_set') {
    await deps.db.deleteFrom('user_statuses').where('user_id', '=', userId).execute();
    return null;
  }
  const row = {
    user_id: userId,
    emoji: emoji || DEFAULT_EMOJI,
    message: message || null,
    availability,
    clear_status_at: input.clearStatusAfter ? deps.clock.now() + CLEAR_AFTER[input.clearStatusAfter] : null,
  };
  await deps.db.insertInto('user_statuses').values(row)
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ emoji: row.emoji, message: row.message, availability: row.availability, clear_status_at: row.clear_status_at }))
    .execute();
  return row;
}

// ---- custom attributes ----

export function customAttributesQuery(db: Db, userId: number) {
  return db.selectFrom('user_custom_attributes').selectAll().where('user_id', '=', userId).orderBy('id', 'asc');
}

export async function getCustomAttributeOr404(db: Db, userId: number, key: string): Promise<CustomAttributeRow> {
  const row = await db.selectFrom('user_custom_attributes').selectAll().where('user_id', '=', userId).where('key', '=', key).executeTakeFirst();
  if (!row) throw new NotFoundError('Custom Attribute');
  return row;
}

export async function setCustomAttribute(deps: ServiceDeps, userId: number, key: string, value: string): Promise<CustomAttributeRow> {
  const errors: Record<string, string[]> = {};
  if (key.length > 255) errors.key = ['is too long (maximum is 255 characters)'];
  if (!value.trim()) errors.value = ["can't be blank"];
  if (value.length > 255) errors.value = ['is too long (maximum is 255 characters)'];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = deps.clock.now();
  return deps.db.insertInto('user_custom_attributes')
    .values({ user_id: userId, key, value, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'key']).doUpdateSet({ value, updated_at: now }))
    .returningAll().executeTakeFirstOrThrow();
}

export async function deleteCustomAttribute(deps: ServiceDeps, row: CustomAttributeRow): Promise<void> {
  await deps.db.deleteFrom('user_custom_attributes').where('id', '=', row.id).execute();
}

// ---- memberships ----

/** Every direct membership of a user, in projects and groups, with the name of what it is a membership of. */
export function membershipsQuery(db: Db, userId: number, type?: 'Project' | 'Namespace') {
  let q = db.selectFrom('members')
    .leftJoin('projects', (j) => j.onRef('projects.id', '=', 'members.source_id').on('members.source_type', '=', 'Project'))
    .leftJoin('namespaces', (j) => j.onRef('namespaces.id', '=', 'members.source_id').on('members.source_type', '=', 'Namespace'))
    .select(['members.id', 'members.source_id', 'members.source_type', 'members.access_level', 'projects.name as project_name', 'namespaces.name as group_name'])
    .where('members.user_id', '=', userId);
  if (type) q = q.where('members.source_type', '=', type);
  return q.orderBy('members.id', 'asc');
}
