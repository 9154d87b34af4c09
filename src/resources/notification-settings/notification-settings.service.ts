import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { NotificationSettingsTable, UsersTable } from '../../platform/db/schema.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { ancestorIds } from '../../platform/membership.ts';

// Notification settings per user: one global setting, and optional overrides per group and per project.
// E-mail delivery resolves the one that applies with effectiveNotificationLevel().

export const LEVELS = ['disabled', 'participating', 'watch', 'global', 'mention', 'custom'] as const;
export type Level = (typeof LEVELS)[number];

/**
 * Event kinds in the spec's order, with the reference's `change_reviewer_merge_request` after
 * `reassign_merge_request` (where its EMAIL_EVENTS has it). `new_epic` belongs to groups only (epics live in groups).
 */
export const EVENTS = [
  'new_note', 'new_issue', 'reopen_issue', 'close_issue', 'reassign_issue', 'issue_due',
  'new_merge_request', 'push_to_merge_request', 'reopen_merge_request', 'close_merge_request', 'reassign_merge_request',
  'change_reviewer_merge_request', 'merge_merge_request', 'failed_pipeline', 'fixed_pipeline', 'success_pipeline', 'moved_project',
  'merge_when_pipeline_succeeds', 'new_epic',
] as const;
export type EventName = (typeof EVENTS)[number];

/** Events that read as on until a user says otherwise, as the reference does. */
const ON_BY_DEFAULT: ReadonlySet<string> = new Set(['failed_pipeline', 'fixed_pipeline']);

export type SourceType = 'Global' | 'Namespace' | 'Project';
export interface Source {
  type: SourceType;
  /** 0 for the global setting. */
  id: number;
}
export const GLOBAL: Source = { type: 'Global', id: 0 };

export type SettingRow = Selectable<NotificationSettingsTable>;
type User = Selectable<UsersTable>;

/** The setting as stored, or the default a new one has (participating globally, `global` elsewhere). */
export interface Setting {
  level: Level;
  events: Partial<Record<EventName, boolean>>;
  notificationEmail: string | null;
}

export function eventsFor(source: Source): readonly EventName[] {
  return source.type === 'Namespace' ? EVENTS : EVENTS.filter((e) => e !== 'new_epic');
}

/** Every event of the source's scope with its value (defaults filled in). */
export function eventValues(source: Source, events: Partial<Record<EventName, boolean>>): Record<string, boolean> {
  return Object.fromEntries(eventsFor(source).map((e) => [e, events[e] ?? ON_BY_DEFAULT.has(e)]));
}

function parseEvents(text: string): Partial<Record<EventName, boolean>> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

function fromRow(row: SettingRow | undefined, source: Source): Setting {
  if (!row) return { level: source.type === 'Global' ? 'participating' : 'global', events: {}, notificationEmail: null };
  return { level: row.level as Level, events: parseEvents(row.events), notificationEmail: row.notification_email };
}

export async function getNotificationSetting(deps: ServiceDeps, userId: number, source: Source): Promise<Setting> {
  const row = await deps.db.selectFrom('notification_settings').selectAll()
    .where('user_id', '=', userId).where('source_type', '=', source.type).where('source_id', '=', source.id).executeTakeFirst();
  return fromRow(row, source);
}

export interface SettingUpdate {
  level?: string;
  /** Global setting only; '' goes back to the primary e-mail. */
  notification_email?: string;
  events?: Partial<Record<EventName, boolean>>;
}

/** The addresses a user has verified: the primary e-mail and the public e-mail. */
function verifiedEmails(user: Pick<User, 'email' | 'public_email'>): string[] {
  return [user.email, user.public_email].filter((e): e is string => !!e).map((e) => e.toLowerCase());
}

export async function updateNotificationSetting(deps: ServiceDeps, user: User, source: Source, update: SettingUpdate): Promise<Setting> {
  const errors: Record<string, string[]> = {};
  if (update.level !== undefined && !(LEVELS as readonly string[]).includes(update.level)) errors.level = ['is not included in the list'];
  let email: string | null | undefined;
  if (source.type === 'Global' && update.notification_email !== undefined) {
    email = update.notification_email.trim() === '' ? null : update.notification_email.trim();
    if (email !== null && !verifiedEmails(user).includes(email.toLowerCase())) errors.notification_email = ['must be an email you have verified'];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const current = await getNotificationSetting(deps, user.id, source);
  const events: Partial<Record<EventName, boolean>> = { ...current.events };
  for (const e of eventsFor(source)) if (update.events?.[e] !== undefined) events[e] = update.events[e];
  const next: Setting = {
    level: (update.level as Level | undefined) ?? current.level,
    events,
    notificationEmail: email === undefined ? current.notificationEmail : email,
  };
  const now = deps.clock.now();
  const values = { level: next.level, events: JSON.stringify(events), notification_email: source.type === 'Global' ? next.notificationEmail : null, updated_at: now };
  await deps.db.insertInto('notification_settings')
    .values({ user_id: user.id, source_type: source.type, source_id: source.id, created_at: now, ...values })
    .onConflict((oc) => oc.columns(['user_id', 'source_type', 'source_id']).doUpdateSet(values))
    .execute();
  return next;
}

export interface EffectiveSetting {
  level: Exclude<Level, 'global'>;
  /** Every event with its value; they decide who is notified when `level` is `custom`. */
  events: Record<string, boolean>;
  /** Where the level came from. */
  source: Source;
}

/**
 * The setting that applies to a user for a project or group: the project's own setting, else the nearest
 * group up the chain whose setting is not `global`, else the user's global setting (participating by default).
 */
export async function effectiveNotificationLevel(deps: ServiceDeps, userId: number, where: { projectId?: number; groupId?: number } = {}): Promise<EffectiveSetting> {
  const chain: Source[] = [];
  let groupId = where.groupId;
  if (where.projectId !== undefined) {
    const project = await deps.db.selectFrom('projects').select(['id', 'namespace_id']).where('id', '=', where.projectId).executeTakeFirst();
    if (!project) throw new NotFoundError('Project');
    chain.push({ type: 'Project', id: project.id });
    groupId ??= project.namespace_id;
  }
  if (groupId !== undefined) {
    const ns = await deps.db.selectFrom('namespaces').select(['id', 'kind', 'traversal']).where('id', '=', groupId).executeTakeFirst();
    if (!ns && where.projectId === undefined) throw new NotFoundError('Group');
    if (ns?.kind === 'group') for (const id of ancestorIds(ns).reverse()) chain.push({ type: 'Namespace', id });
  }
  chain.push(GLOBAL);
  const rows = await deps.db.selectFrom('notification_settings').selectAll().where('user_id', '=', userId)
    .where((eb) => eb.or(chain.map((s) => eb.and([eb('source_type', '=', s.type), eb('source_id', '=', s.id)])))).execute();
  const key = (s: { type: string; id: number }) => `${s.type}:${s.id}`;
  const byKey = new Map(rows.map((r) => [key({ type: r.source_type, id: r.source_id }), r]));
  for (const s of chain) {
    const setting = fromRow(byKey.get(key(s)), s);
    if (setting.level !== 'global') return { level: setting.level, events: eventValues(s, setting.events), source: s };
  }
  // A global setting of `global` points nowhere: read it as the default.
  return { level: 'participating', events: eventValues(GLOBAL, fromRow(byKey.get(key(GLOBAL)), GLOBAL).events), source: GLOBAL };
}
