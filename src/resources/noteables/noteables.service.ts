import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { RecordNotFoundError, ValidationError } from '../../platform/errors.ts';
import { availableLabelsByTitle, DEFAULT_LABEL_COLOR, type LabelRow } from '../labels/labels.lookup.ts';

// The change steps issues and merge requests share: labels found or created and their label events, the state and
// milestone events, the assignees' users, time tracking and the resource events' queries. `type` is the noteable's
// `target_type` ('Issue', 'MergeRequest'); each step runs inside the caller's transaction.

export type NoteableType = 'Issue' | 'MergeRequest';
/** A noteable row as the shared steps name it. */
export interface NoteableRef { type: NoteableType; id: number }

export const TITLE_MAX = 255;
export const DESCRIPTION_MAX = 1_048_576;

/** The reference's checks of a title (required when creating) and a description, as field errors (empty: none). */
export function textErrors(input: { title?: string; description?: string | null }, creating: boolean): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  if (input.title !== undefined || creating) {
    const title = input.title ?? '';
    if (!title.trim()) (errors.title ??= []).push("can't be blank");
    if (title.length > TITLE_MAX) (errors.title ??= []).push(`is too long (maximum is ${TITLE_MAX} characters)`);
  }
  if (input.description && input.description.length > DESCRIPTION_MAX) {
    (errors.description ??= []).push(`is too long (maximum is ${DESCRIPTION_MAX} characters)`);
  }
  return errors;
}

/** The thumbs up and down on each row (`upvotes`, `downvotes`), in one query. */
export async function votesOf(db: Db, type: NoteableType, ids: number[]): Promise<Map<number, { up: number; down: number }>> {
  const out = new Map<number, { up: number; down: number }>();
  if (ids.length === 0) return out;
  const rows = await db.selectFrom('award_emoji').select(['awardable_id', 'name', (eb) => eb.fn.countAll<number>().as('n')])
    .where('awardable_type', '=', type).where('awardable_id', 'in', ids).where('name', 'in', ['thumbsup', 'thumbsdown'])
    .groupBy(['awardable_id', 'name']).execute();
  for (const v of rows) {
    const e = out.get(v.awardable_id) ?? { up: 0, down: 0 };
    if (v.name === 'thumbsup') e.up = Number(v.n); else e.down = Number(v.n);
    out.set(v.awardable_id, e);
  }
  return out;
}

export const splitTitles = (list: string[] | undefined) => [...new Set((list ?? []).map((s) => s.trim()).filter((s) => s && s.length <= TITLE_MAX))];

/** Label ids for titles; unknown titles become project labels with the default color when `create` is set. */
export async function labelIdsFor(trx: Db, scope: { project: { id: number } }, groupIds: readonly number[], titles: string[], create: boolean, now: number): Promise<number[]> {
  return (await labelRowsFor(trx, scope, groupIds, titles, create, now)).rows.map((l) => l.id);
}

/**
 * The labels for titles in the titles' order (unknown ones made as `labelIdsFor` does) and, when every label was
 * found at once (none made), the same labels in the database's title order (`titleOrder`).
 */
async function labelRowsFor(trx: Db, scope: { project: { id: number } }, groupIds: readonly number[], titles: string[], create: boolean, now: number): Promise<{ rows: LabelRow[]; titleOrder: LabelRow[] | null }> {
  if (titles.length === 0) return { rows: [], titleOrder: [] };
  const found = await availableLabelsByTitle(trx, scope.project.id, groupIds, titles);
  const missing = titles.filter((t) => !found.has(t));
  const inTitlesOrder = () => titles.map((t) => found.get(t)).filter((l): l is LabelRow => l !== undefined);
  if (!missing.length || !create) return { rows: inTitlesOrder(), titleOrder: [...found.values()] };
  await trx.insertInto('labels')
    .values(missing.map((title) => ({ title, color: DEFAULT_LABEL_COLOR, description: null, project_id: scope.project.id, group_id: null, created_at: now, updated_at: now })))
    .onConflict((oc) => oc.columns(['project_id', 'title']).doNothing()).execute();
  const made = await availableLabelsByTitle(trx, scope.project.id, groupIds, missing);
  for (const [t, l] of made) found.set(t, l);
  return { rows: inTitlesOrder(), titleOrder: null };
}

export async function milestoneAvailable(trx: Db, projectId: number, groupIds: readonly number[], id: number): Promise<boolean> {
  if (!fitsIntColumn(id)) return false;
  const row = await trx.selectFrom('milestones').select('id').where('id', '=', id)
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])])).executeTakeFirst();
  return !!row;
}

export async function existingUserIds(trx: Db, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids.filter((id) => id > 0 && fitsIntColumn(id)))];
  if (wanted.length === 0) return [];
  const rows = await trx.selectFrom('users').select('id').where('id', 'in', wanted).execute();
  const known = new Set(rows.map((r) => r.id));
  return wanted.filter((id) => known.has(id));
}


/** Label titles as given to `labels`, `add_labels` and `remove_labels`. */
export interface LabelInput {
  labels?: string[];
  add_labels?: string[];
  remove_labels?: string[];
}

/**
 * Labels: `labels` replaces, then `add_labels` and `remove_labels` apply; writes the label links and the label events.
 * `existing` is false for a row being created (it has no labels yet). Returns the label ids added and removed, and
 * for a new row given its labels by `labels` alone, all of them already there, its labels in the database's title
 * order (`newLabels`: what reading them back would answer).
 */
export async function changeLabels(trx: Db, scope: { project: { id: number } }, target: NoteableRef, input: LabelInput, existing: boolean, groupIds: readonly number[], uid: number | null, now: number) {
  const change = { addedLabelIds: [] as number[], removedLabelIds: [] as number[], newLabels: null as LabelRow[] | null };
  if (input.labels === undefined && input.add_labels === undefined && input.remove_labels === undefined) return change;
  const current = existing ? (await trx.selectFrom('label_links').select('label_id').where('target_type', '=', target.type).where('target_id', '=', target.id).execute()).map((r) => r.label_id) : [];
  const given = input.labels !== undefined ? await labelRowsFor(trx, scope, groupIds, splitTitles(input.labels), true, now) : null;
  if (!existing && given && input.add_labels === undefined && input.remove_labels === undefined) change.newLabels = given.titleOrder;
  const next = new Set(given ? given.rows.map((l) => l.id) : current);
  for (const id of await labelIdsFor(trx, scope, groupIds, splitTitles(input.add_labels), true, now)) next.add(id);
  for (const id of await labelIdsFor(trx, scope, groupIds, splitTitles(input.remove_labels), false, now)) next.delete(id);
  change.addedLabelIds = [...next].filter((id) => !current.includes(id));
  change.removedLabelIds = current.filter((id) => !next.has(id));
  if (change.removedLabelIds.length) {
    await trx.deleteFrom('label_links').where('target_type', '=', target.type).where('target_id', '=', target.id).where('label_id', 'in', change.removedLabelIds).execute();
  }
  if (change.addedLabelIds.length) {
    await trx.insertInto('label_links').values(change.addedLabelIds.map((label_id) => ({ label_id, target_type: target.type, target_id: target.id, created_at: now }))).execute();
  }
  const events = [
    ...change.addedLabelIds.map((label_id) => ({ label_id, action: 'add' })),
    ...change.removedLabelIds.map((label_id) => ({ label_id, action: 'remove' })),
  ];
  if (events.length) {
    await trx.insertInto('resource_label_events').values(events.map((e) => ({ ...e, target_type: target.type, target_id: target.id, user_id: uid, created_at: now }))).execute();
  }
  return change;
}

/**
 * The state event of a close or reopen (nothing when the state did not move; `before` null: a new row);
 * `sourceMergeRequestId` names the merge request whose merge closed it.
 */
export async function writeStateEvent(trx: Db, target: NoteableRef, uid: number | null, before: { state: string } | null, after: { state: string }, now: number, sourceMergeRequestId: number | null = null): Promise<void> {
  if (!before || before.state === after.state) return;
  await trx.insertInto('resource_state_events').values({
    target_type: target.type, target_id: target.id, user_id: uid, state: after.state === 'closed' ? 'closed' : 'reopened', created_at: now,
    ...(sourceMergeRequestId !== null ? { source_merge_request_id: sourceMergeRequestId } : {}),
  }).execute();
}

/** The milestone event of a milestone set, changed or removed (`before` null: a new row). */
export async function writeMilestoneEvent(trx: Db, target: NoteableRef, uid: number | null, before: { milestone_id: number | null } | null, after: { milestone_id: number | null; state: string }, now: number): Promise<void> {
  if ((before?.milestone_id ?? null) === after.milestone_id) return;
  const removed = after.milestone_id === null;
  await trx.insertInto('resource_milestone_events').values({
    target_type: target.type, target_id: target.id, user_id: uid, milestone_id: removed ? before!.milestone_id : after.milestone_id,
    action: removed ? 'remove' : 'add', state: after.state, created_at: now,
  }).execute();
}

/** Removes everything hung on a noteable by (type, id) rather than by a foreign key; the row itself is the caller's. */
export async function deleteDependents(trx: Db, target: NoteableRef): Promise<void> {
  const noteIds = trx.selectFrom('notes').select('id').where('noteable_type', '=', target.type).where('noteable_id', '=', target.id);
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute();
  await trx.deleteFrom('notes').where('noteable_type', '=', target.type).where('noteable_id', '=', target.id).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', target.type).where('awardable_id', '=', target.id).execute();
  await trx.deleteFrom('label_links').where('target_type', '=', target.type).where('target_id', '=', target.id).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', target.type).where('subscribable_id', '=', target.id).execute();
  await trx.deleteFrom('timelogs').where('target_type', '=', target.type).where('target_id', '=', target.id).execute();
  for (const table of ['resource_label_events', 'resource_state_events', 'resource_milestone_events'] as const) {
    await trx.deleteFrom(table).where('target_type', '=', target.type).where('target_id', '=', target.id).execute();
  }
}

/**
 * Subscribes or unsubscribes the user (an explicit subscription row); false when `isSubscribed` says they already were.
 */
export async function setNoteableSubscription(
  deps: ServiceDeps, userId: number, target: NoteableRef & { projectId: number }, subscribed: boolean, isSubscribed: (trx: Db) => Promise<boolean>,
): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    if ((await isSubscribed(trx)) === subscribed) return false;
    const now = deps.clock.now();
    const updated = await trx.updateTable('subscriptions').set({ subscribed: subscribed ? 1 : 0, updated_at: now })
      .where('subscribable_type', '=', target.type).where('subscribable_id', '=', target.id).where('user_id', '=', userId).executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      await trx.insertInto('subscriptions').values({
        user_id: userId, subscribable_type: target.type, subscribable_id: target.id, project_id: target.projectId, subscribed: subscribed ? 1 : 0, created_at: now, updated_at: now,
      }).execute();
    }
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Time tracking

export interface TimeStats {
  time_estimate: number;
  total_time_spent: number;
}

/** The time logged on each target (issues by default, merge requests with `type` 'MergeRequest'). */
export async function timeSpentOf(db: Db, issueIds: number[], type: string = 'Issue'): Promise<Map<number, number>> {
  const out = new Map<number, number>(issueIds.map((id) => [id, 0]));
  if (issueIds.length === 0) return out;
  const rows = await db.selectFrom('timelogs').select(['target_id', (eb) => eb.fn.sum<number>('time_spent').as('spent')])
    .where('target_type', '=', type).where('target_id', 'in', issueIds).groupBy('target_id').execute();
  for (const r of rows) out.set(r.target_id, Number(r.spent));
  return out;
}

/**
 * What time tracking reads and writes of a target: an issue (the default) or a merge request, by its row's table.
 * `project_id` is the project the time logs belong to.
 */
export interface TimeTarget { id: number; project_id: number; type?: 'Issue' | 'MergeRequest' }
const TIME_TABLES = { Issue: 'issues', MergeRequest: 'merge_requests' } as const;

export async function timeStats(db: Db, target: TimeTarget): Promise<TimeStats> {
  const type = target.type ?? 'Issue';
  const row = await db.selectFrom(TIME_TABLES[type]).select('time_estimate').where('id', '=', target.id).executeTakeFirstOrThrow();
  return { time_estimate: row.time_estimate, total_time_spent: (await timeSpentOf(db, [target.id], type)).get(target.id)! };
}

const MAX_SECONDS = 2_147_483_647;

export async function setTimeEstimate(deps: ServiceDeps, target: TimeTarget, seconds: number | null): Promise<void> {
  if (seconds === null || seconds < 0 || seconds > MAX_SECONDS) {
    throw new ValidationError({ time_estimate: ['must have a valid format and be greater than or equal to zero.'] });
  }
  await deps.db.updateTable(TIME_TABLES[target.type ?? 'Issue']).set({ time_estimate: seconds, updated_at: deps.clock.now() }).where('id', '=', target.id).execute();
}

/** Logs time (negative subtracts); `reset` logs minus the total so far. The total never goes below zero. */
export async function addSpentTime(deps: ServiceDeps, scope: { actor: Actor }, target: TimeTarget, seconds: number | 'reset' | null, summary: string | null): Promise<void> {
  if (seconds === null || (seconds !== 'reset' && Math.abs(seconds) > MAX_SECONDS)) throw new ValidationError({ time_spent: ['is invalid'] });
  const type = target.type ?? 'Issue';
  await deps.db.transaction().execute(async (trx) => {
    const total = (await timeSpentOf(trx, [target.id], type)).get(target.id)!;
    const spent = seconds === 'reset' ? -total : seconds;
    if (spent === 0) return;
    if (total + spent < 0) throw new ValidationError({ base: ['Time to subtract exceeds the total time spent'] });
    const now = deps.clock.now();
    await trx.insertInto('timelogs').values({
      target_type: type, target_id: target.id, project_id: target.project_id, user_id: scope.actor.user?.id ?? null, time_spent: spent,
      spent_at: now, summary: summary ?? null, created_at: now,
    }).execute();
    await trx.updateTable(TIME_TABLES[type]).set({ updated_at: now }).where('id', '=', target.id).execute();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Resource events

export type EventTable = 'resource_label_events' | 'resource_state_events' | 'resource_milestone_events';

/** The events of an issue (or, with `type`, of a merge request), oldest first. */
export function eventsQuery(db: Db, table: EventTable, issueId: number, type: string = 'Issue') {
  return db.selectFrom(table).selectAll().where('target_type', '=', type).where('target_id', '=', issueId).orderBy('id');
}

export async function findEvent(db: Db, table: EventTable, issueId: number, id: number, type: string = 'Issue') {
  if (!fitsIntColumn(id)) throw new RecordNotFoundError();
  const row = await db.selectFrom(table).selectAll().where('target_type', '=', type).where('target_id', '=', issueId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row as any;
}
