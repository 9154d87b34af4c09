import { sql, type Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { DAY_MS, dayOf } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/index.ts';
import type { IterationCadencesTable, IterationsTable } from '../../platform/db/schema.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { readableGroups } from '../../platform/access/queries.ts';
import { containsText } from '../../platform/db/dialect.ts';
import { nextIid } from '../../platform/db/internal-ids.ts';
import { ancestorIds, groupOfProject, type NamespaceRow } from '../../platform/membership.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { moveOpenIssuesToIteration } from '../issues/issues.service.ts';

export type CadenceRow = Selectable<IterationCadencesTable>;
export type IterationRow = Selectable<IterationsTable>;


/** The reference's integers: 1 upcoming, 2 current, 3 closed, from the dates and today's date. */
export function iterationState(i: Pick<IterationRow, 'start_date' | 'due_date'>, today: number): 1 | 2 | 3 {
  if (i.start_date > today) return 1;
  return i.due_date >= today ? 2 : 3;
}

export type IterationStateFilter = 'opened' | 'upcoming' | 'started' | 'current' | 'closed' | 'all';

export interface IterationFilters {
  state: IterationStateFilter;
  search?: string;
  in: Array<'title' | 'cadence_title'>;
  updatedBefore?: number | null;
  updatedAfter?: number | null;
}

/**
 * The groups whose iterations a group or project lists: the group (a project's own group; none for a personal
 * project) and, with `includeAncestors`, its ancestors the caller may read.
 */
export async function iterationGroupIds(deps: ServiceDeps, actor: Actor, group: Pick<NamespaceRow, 'id' | 'traversal'> | null, includeAncestors: boolean): Promise<number[]> {
  if (!group) return [];
  if (!includeAncestors) return [group.id];
  const ancestors = ancestorIds(group).filter((id) => id !== group.id);
  const readable = ancestors.length
    ? (await deps.db.selectFrom('namespaces').select('id').where('id', 'in', ancestors).where(readableGroups(actor, deps.clock.now()) as any).execute()).map((r) => r.id)
    : [];
  return [...readable, group.id];
}


/** A project lists its group's iterations (and its ancestors'); a personal project has none. */
export async function projectIterationGroupIds(deps: ServiceDeps, actor: Actor, project: { namespace_id: number }, includeAncestors: boolean): Promise<number[]> {
  return iterationGroupIds(deps, actor, await groupOfProject(deps.db, project), includeAncestors);
}

/** Iterations of the groups, by due date, then title, then id. */
export function iterationListQuery(db: Db, groupIds: number[], f: IterationFilters, today: number) {
  let q = db.selectFrom('iterations').selectAll('iterations').where('iterations.group_id', 'in', groupIds.length ? groupIds : [0]);
  const state = f.state === 'started' ? 'current' : f.state;
  if (state === 'upcoming') q = q.where('iterations.start_date', '>', today);
  else if (state === 'current') q = q.where('iterations.start_date', '<=', today).where('iterations.due_date', '>=', today);
  else if (state === 'opened') q = q.where('iterations.due_date', '>=', today);
  else if (state === 'closed') q = q.where('iterations.due_date', '<', today);
  if (f.search) {
    const term = f.search;
    q = q.where((eb) => eb.or([
      ...(f.in.includes('title') ? [containsText('iterations.title', term)] : []),
      ...(f.in.includes('cadence_title') ? [eb('iterations.cadence_id', 'in', eb.selectFrom('iteration_cadences').select('iteration_cadences.id').where(containsText('iteration_cadences.title', term)))] : []),
    ]));
  }
  if (f.updatedBefore != null) q = q.where('iterations.updated_at', '<', f.updatedBefore);
  if (f.updatedAfter != null) q = q.where('iterations.updated_at', '>', f.updatedAfter);
  return q.orderBy('iterations.due_date', 'asc').orderBy(sql`case when iterations.title is null then 1 else 0 end`).orderBy('iterations.title', 'asc').orderBy('iterations.id', 'asc');
}

/** The full paths of the iterations' groups, for their web URLs. */
export async function groupPaths(db: Db, rows: Array<{ group_id: number }>): Promise<Map<number, string>> {
  const ids = [...new Set(rows.map((r) => r.group_id))];
  if (ids.length === 0) return new Map();
  return new Map((await db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', ids).execute()).map((g) => [g.id, g.full_path]));
}

// ---- Cadences (a Bellows extension: the reference manages them through GraphQL only) ----

export function cadenceListQuery(db: Db, groupId: number) {
  return db.selectFrom('iteration_cadences').selectAll().where('group_id', '=', groupId).orderBy('title', 'asc').orderBy('id', 'asc');
}

export async function getCadence(db: Db, groupId: number, id: number): Promise<CadenceRow> {
  const row = await db.selectFrom('iteration_cadences').selectAll().where('group_id', '=', groupId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('Iteration cadence');
  return row;
}

export interface CadenceInput {
  title?: string;
  description?: string | null;
  automatic?: boolean;
  /** A day, epoch ms at 00:00 UTC. */
  startDate?: number | null;
  durationInWeeks?: number | null;
  iterationsInAdvance?: number | null;
  rollOver?: boolean;
}

const TITLE_MAX = 255;
const DESCRIPTION_MAX = 5000;

const dateText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const medium = (ms: number) => new Date(ms).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
const period = (i: IterationRow) => `${medium(i.start_date)} - ${medium(i.due_date)}`;

type CadenceFields = Pick<CadenceRow, 'title' | 'description' | 'automatic' | 'start_date' | 'duration_in_weeks' | 'iterations_in_advance' | 'roll_over'>;

/** The model's checks; `existing`: the cadence's iterations when it is edited. */
function checkCadence(c: CadenceFields, realign: boolean, existing: IterationRow[], today: number) {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!c.title.trim()) add('title', "can't be blank");
  if (c.title.length > TITLE_MAX) add('title', `is too long (maximum is ${TITLE_MAX} characters)`);
  if ((c.description ?? '').length > DESCRIPTION_MAX) add('description', `is too long (maximum is ${DESCRIPTION_MAX} characters)`);
  if (c.duration_in_weeks !== null && (c.duration_in_weeks < 1 || c.duration_in_weeks > 4)) add('duration_in_weeks', 'is not included in the list');
  if (c.iterations_in_advance !== null && (c.iterations_in_advance < 0 || c.iterations_in_advance > 10)) add('iterations_in_advance', 'is not included in the list');
  if (c.automatic) {
    if (c.start_date === null) add('start_date', "can't be blank");
    if (c.duration_in_weeks === null) add('duration_in_weeks', "can't be blank");
    if (c.iterations_in_advance === null) add('iterations_in_advance', "can't be blank");
  }
  if (!Object.keys(errors).length && c.automatic && realign) {
    const start = c.start_date!;
    const current = existing.find((i) => i.start_date <= today && i.due_date >= today);
    const past = existing.filter((i) => i.due_date < today).sort((a, b) => a.due_date - b.due_date).pop();
    const earliest = today - c.duration_in_weeks! * 7 * DAY_MS + DAY_MS;
    if (current && start <= current.due_date) add('base', `The automation start date must come after the active iteration ${period(current)}.`);
    else if (!current && past && start <= past.due_date) add('base', `The automation start date must come after the past iteration ${period(past)}.`);
    else if (!current && start < earliest) add('base', `The automation start date would retroactively create a past iteration. ${dateText(earliest)} is the earliest possible start date.`);
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

/** Numbers a cadence's iterations 1, 2, 3, ... by start date. */
async function renumber(trx: Db, cadenceId: number) {
  const rows = await trx.selectFrom('iterations').select(['id', 'sequence']).where('cadence_id', '=', cadenceId).orderBy('start_date').orderBy('id').execute();
  for (const [i, r] of rows.entries()) if (r.sequence !== i + 1) await trx.updateTable('iterations').set({ sequence: i + 1 }).where('id', '=', r.id).execute();
}

/**
 * Keeps an automatic cadence's schedule: iterations back to back from its start date (or after its latest one),
 * `duration_in_weeks` long, the current one and `iterations_in_advance` upcoming ones existing. With `realign`
 * (new start date or duration), the upcoming iterations move onto the new schedule; iterations are never deleted.
 */
async function schedule(trx: Db, cadence: CadenceRow, realign: boolean, today: number, now: number) {
  if (!cadence.automatic || !cadence.duration_in_weeks || cadence.start_date === null || cadence.iterations_in_advance === null) return;
  const span = cadence.duration_in_weeks * 7 * DAY_MS;
  const all = await trx.selectFrom('iterations').selectAll().where('cadence_id', '=', cadence.id).orderBy('start_date').orderBy('id').execute();
  let next: number;
  if (realign) {
    next = cadence.start_date;
    for (const i of all.filter((x) => x.start_date > today)) {
      await trx.updateTable('iterations').set({ start_date: next, due_date: next + span - DAY_MS, updated_at: now }).where('id', '=', i.id).execute();
      next += span;
    }
  } else {
    next = all.length ? all[all.length - 1].due_date + DAY_MS : cadence.start_date;
  }
  let upcoming = Number((await trx.selectFrom('iterations').select(sql<number>`count(*)`.as('n')).where('cadence_id', '=', cadence.id).where('start_date', '>', today).executeTakeFirstOrThrow()).n);
  for (let guard = 0; guard < 1000 && (upcoming < cadence.iterations_in_advance || next <= today); guard++) {
    const iid = await nextIid(trx, 'iterations', cadence.group_id);
    await trx.insertInto('iterations').values({
      iid, group_id: cadence.group_id, cadence_id: cadence.id, sequence: 0, title: null, description: null,
      start_date: next, due_date: next + span - DAY_MS, created_at: now, updated_at: now,
    }).execute();
    if (next > today) upcoming++;
    next += span;
  }
  await renumber(trx, cadence.id);
}

export async function createCadence(deps: ServiceDeps, groupId: number, input: CadenceInput): Promise<CadenceRow> {
  const now = deps.clock.now();
  const today = dayOf(now);
  const automatic = input.automatic ?? true;
  const fields: CadenceFields = {
    title: (input.title ?? '').trim(), description: input.description ?? null, automatic: automatic ? 1 : 0,
    start_date: input.startDate ?? null,
    duration_in_weeks: automatic ? input.durationInWeeks ?? null : null,
    iterations_in_advance: automatic ? input.iterationsInAdvance ?? null : null,
    roll_over: automatic && input.rollOver ? 1 : 0,
  };
  checkCadence(fields, true, [], today);
  return deps.db.transaction().execute(async (trx) => {
    const cadence = await trx.insertInto('iteration_cadences').values({ group_id: groupId, ...fields, last_run_date: automatic ? today : null, created_at: now, updated_at: now })
      .returningAll().executeTakeFirstOrThrow();
    await schedule(trx, cadence, true, today, now);
    return cadence;
  });
}

export async function updateCadence(deps: ServiceDeps, cadence: CadenceRow, input: CadenceInput): Promise<CadenceRow> {
  const now = deps.clock.now();
  const today = dayOf(now);
  const automatic = input.automatic ?? !!cadence.automatic;
  const toManual = !automatic && !!cadence.automatic;
  const fields: CadenceFields = {
    title: input.title !== undefined ? input.title.trim() : cadence.title,
    description: input.description !== undefined ? input.description : cadence.description,
    automatic: automatic ? 1 : 0,
    start_date: input.startDate !== undefined ? input.startDate : cadence.start_date,
    duration_in_weeks: input.durationInWeeks !== undefined ? input.durationInWeeks : cadence.duration_in_weeks,
    iterations_in_advance: input.iterationsInAdvance !== undefined ? input.iterationsInAdvance : cadence.iterations_in_advance,
    roll_over: input.rollOver !== undefined ? (input.rollOver ? 1 : 0) : cadence.roll_over,
  };
  // A cadence made manual forgets its automation.
  if (toManual || !automatic) Object.assign(fields, { duration_in_weeks: null, iterations_in_advance: null, roll_over: 0 });
  const realign = automatic && fields.start_date !== null
    && (!cadence.automatic || fields.start_date !== cadence.start_date || fields.duration_in_weeks !== cadence.duration_in_weeks);
  const existing = await deps.db.selectFrom('iterations').selectAll().where('cadence_id', '=', cadence.id).execute();
  checkCadence(fields, realign, existing, today);
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('iteration_cadences').set({ ...fields, ...(automatic ? { last_run_date: today } : {}), updated_at: now })
      .where('id', '=', cadence.id).returningAll().executeTakeFirstOrThrow();
    await schedule(trx, row, realign, today, now);
    return row;
  });
}

/**
 * The daily run of automatic cadences (the reference's CreateIterationsInAdvanceService and RollOverIssuesService),
 * for the run due at `at`: each cadence keeps its current iteration and `iterations_in_advance` upcoming ones, and with
 * `roll_over` the open issues of its iterations that closed since the previous run (ended on the day before `at`, or
 * later) move to its current iteration, or the next one when none is current, each as an issue change with its note.
 */
export async function runAutomaticCadences(deps: ServiceDeps, at: number): Promise<void> {
  const now = deps.clock.now();
  const today = dayOf(now);
  const since = dayOf(at) - DAY_MS;
  const cadences = await deps.db.selectFrom('iteration_cadences').select('id').where('automatic', '=', 1).orderBy('id').execute();
  for (const { id } of cadences) {
    const cadence = await deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('iteration_cadences').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row || !row.automatic) return null;
      await schedule(trx, row, false, today, now);
      await trx.updateTable('iteration_cadences').set({ last_run_date: today }).where('id', '=', id).execute();
      return row;
    });
    if (!cadence?.roll_over) continue;
    const iterations = await deps.db.selectFrom('iterations').selectAll().where('cadence_id', '=', id).orderBy('start_date').execute();
    const closed = iterations.filter((i) => i.due_date < today && i.due_date >= since).map((i) => i.id);
    const target = iterations.find((i) => iterationState(i, today) === 2) ?? iterations.find((i) => iterationState(i, today) === 1);
    if (!closed.length || !target) continue;
    const open = await deps.db.selectFrom('issues').select('id').where('iteration_id', 'in', closed).where('state', '=', 'opened').orderBy('id').execute();
    await moveOpenIssuesToIteration(deps, open.map((r) => r.id), target.id);
  }
}

/** Removes a cadence with its iterations; issues in them keep going without an iteration. */
export async function deleteCadence(deps: ServiceDeps, cadence: CadenceRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const ids = trx.selectFrom('iterations').select('id').where('cadence_id', '=', cadence.id);
    await trx.updateTable('issues').set({ iteration_id: null }).where('iteration_id', 'in', ids).execute();
    await trx.deleteFrom('iterations').where('cadence_id', '=', cadence.id).execute();
    await trx.deleteFrom('iteration_cadences').where('id', '=', cadence.id).execute();
  });
}

export interface IterationInput {
  cadenceId: number;
  title?: string;
  description?: string;
  startDate: number;
  dueDate: number;
}

/** An iteration added by hand to a manual cadence: its dates may not overlap another iteration of the cadence. */
export async function createIteration(deps: ServiceDeps, groupId: number, input: IterationInput): Promise<IterationRow> {
  const cadence = await getCadence(deps.db, groupId, input.cadenceId);
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (cadence.automatic) add('base', 'Iterations cannot be manually added to cadences that use automatic scheduling');
  const title = input.title?.trim() || null;
  if (title && title.length > TITLE_MAX) add('title', `is too long (maximum is ${TITLE_MAX} characters)`);
  if ((input.description ?? '').length > DESCRIPTION_MAX) add('description', `is too long (maximum is ${DESCRIPTION_MAX} characters)`);
  if (input.dueDate < input.startDate) add('due_date', 'must be greater than start date');
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    if (!errors.due_date) {
      const overlap = await trx.selectFrom('iterations').select('id').where('cadence_id', '=', cadence.id)
        .where('start_date', '<=', input.dueDate).where('due_date', '>=', input.startDate).executeTakeFirst();
      if (overlap) add('base', 'Dates cannot overlap with other existing Iterations within this iterations cadence');
    }
    if (title && !errors.title) {
      const taken = await trx.selectFrom('iterations').select('id').where('cadence_id', '=', cadence.id).where('title', '=', title).executeTakeFirst();
      if (taken) add('title', 'has already been taken');
    }
    if (Object.keys(errors).length) throw new ValidationError(errors);
    const iid = await nextIid(trx, 'iterations', groupId);
    const row = await trx.insertInto('iterations').values({
      iid, group_id: groupId, cadence_id: cadence.id, sequence: 0, title, description: input.description ?? null,
      start_date: input.startDate, due_date: input.dueDate, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    await renumber(trx, cadence.id);
    return trx.selectFrom('iterations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  });
}
