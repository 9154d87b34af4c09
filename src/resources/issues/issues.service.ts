import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { IssuesTable, IterationsTable, MilestonesTable } from '../../platform/db/schema.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { iidAhead, nextIid, trackIid } from '../../platform/db/internal-ids.ts';
import { AccessLevel, projectAccessLevels, type ProjectRow } from '../../platform/membership.ts';
import { canProject, issueDenial, type IssueAbility } from '../../platform/access/policy.ts';
import { serverActor, type Actor } from '../../platform/access/actor.ts';
import { checkSpam } from '../../platform/spam/spam-check.ts';
import { ForbiddenError, NotFoundError, RecordNotFoundError, RuleError, ValidationError } from '../../platform/errors.ts';
import { availableLabelsByTitle, cachedProjectAncestorGroupIds, labelsOfTargets, projectAncestorGroupIds, type LabelRow } from '../labels/labels.lookup.ts';
import {
  changeLabels, deleteDependents, textErrors, votesOf, existingUserIds, milestoneAvailable, setNoteableSubscription, timeSpentOf, writeMilestoneEvent, writeStateEvent,
} from '../noteables/noteables.service.ts';
import { usersByIds, type User } from '../users/users.service.ts';
import { attributeChanges, emitEvent, listChange, type Changes } from '../../platform/events.ts';
import type { EventContext } from './issues.presenter.ts';
import { writeIssueSystemNotes, writeMovedNotes } from '../notes/system-notes.ts';
import { copyNotes, userNotesCounts } from '../notes/notes.service.ts';

// Issues: reading one (the issue-level rules of the policy), creating with the project's next iid, changing them
// (labels found or created, assignees, milestone, iteration, state), moving, subscriptions, time tracking and
// the resource events every change writes, all in one transaction per request.

export type IssueRow = Selectable<IssuesTable>;
export const ISSUE = 'Issue';
export { TITLE_MAX, DESCRIPTION_MAX } from '../noteables/noteables.service.ts';

/** The project an issue request runs in and the caller's effective level there (administrators count as Owner). */
export interface IssueScope {
  actor: Actor;
  project: ProjectRow;
  level: number;
}

export async function assigneeIdsOf(db: Db, issueIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(issueIds.map((id) => [id, []]));
  if (issueIds.length === 0) return out;
  const rows = await db.selectFrom('issue_assignees').select(['issue_id', 'user_id']).where('issue_id', 'in', issueIds).orderBy('user_id').execute();
  for (const r of rows) out.get(r.issue_id)!.push(r.user_id);
  return out;
}

/** Whether the caller may `ability` the issue; the policy decides, this only reads the assignees it needs. */
export async function issueDenialFor(db: Db, scope: IssueScope, issue: IssueRow, ability: IssueAbility) {
  const assigneeIds = issue.confidential || ability !== 'read_issue' ? (await assigneeIdsOf(db, [issue.id])).get(issue.id)! : [];
  return issueDenial(scope.actor, ability, scope.project, scope.level, { ...issue, assigneeIds });
}

/**
 * The project's issue by iid, held to `ability`: a missing or hidden issue is "404 Not found", or "404 Issue Not
 * Found" where the reference looks it up by hand (`missing: 'Issue'`: delete, move).
 */
export async function findIssue(deps: ServiceDeps, scope: IssueScope, iid: number, ability: IssueAbility = 'read_issue', missing: 'record' | 'Issue' = 'record'): Promise<IssueRow> {
  const notFound = () => (missing === 'Issue' ? new NotFoundError('Issue') : new RecordNotFoundError());
  if (!fitsIntColumn(iid)) throw notFound();
  const issue = await deps.db.selectFrom('issues').selectAll().where('project_id', '=', scope.project.id).where('iid', '=', iid).executeTakeFirst();
  if (!issue) throw notFound();
  const denial = await issueDenialFor(deps.db, scope, issue, ability);
  if (denial === 'not_found') throw notFound();
  if (denial) throw new ForbiddenError();
  return issue;
}

/** An issue by its global id, for administrators (they read every issue); "404 Not found" when there is none. */
export async function issueById(deps: ServiceDeps, id: number): Promise<IssueRow> {
  if (!fitsIntColumn(id)) throw new RecordNotFoundError();
  const issue = await deps.db.selectFrom('issues').innerJoin('projects', 'projects.id', 'issues.project_id').selectAll('issues')
    .where('issues.id', '=', id).where('projects.pending_delete', '=', 0).executeTakeFirst();
  if (!issue) throw new RecordNotFoundError();
  return issue;
}

// ---------------------------------------------------------------------------------------------------------------
// Changes

export interface IssueInput {
  /** On create, from administrators and project owners only. */
  iid?: number;
  title?: string;
  description?: string | null;
  confidential?: boolean;
  discussion_locked?: boolean | null;
  labels?: string[];
  add_labels?: string[];
  remove_labels?: string[];
  assignee_ids?: number[];
  milestone_id?: number | null;
  iteration_id?: number | null;
  due_date?: number | null;
  weight?: number | null;
  created_at?: number;
  updated_at?: number;
  state_event?: 'close' | 'reopen';
  issue_type?: string;
}

/** What one request changed, for the system notes it calls for. */
export interface IssueChange {
  issue: IssueRow;
  before: IssueRow | null;
  actor: Actor;
  addedLabelIds: number[];
  removedLabelIds: number[];
  addedAssigneeIds: number[];
  removedAssigneeIds: number[];
  /** A new issue's labels in the database's title order, when the change knows them all (see `changeLabels`). */
  newLabels?: LabelRow[] | null;
  at: number;
  /** A close by the merge of this merge request (its iid, in the issue's project). */
  viaMergeRequest?: { id: number; iid: number };
}

/** Issue types the reference's issue API accepts. */
export const ISSUE_TYPES = ['issue', 'incident', 'test_case', 'task'] as const;

function validate(input: IssueInput, creating: boolean): void {
  const errors = textErrors(input, creating);
  if (input.weight !== undefined && input.weight !== null && (input.weight < 0 || !fitsIntColumn(input.weight))) {
    (errors.weight ??= []).push('must be greater than or equal to 0');
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

/** The caller sets labels, assignees, milestone, iteration, due date, weight and the lock only with `admin_issue` (Reporter+), as the reference. */
function metadataAllowed(scope: IssueScope): boolean {
  return canProject(scope.actor, 'admin_issue', scope.project, scope.level);
}

const may = (scope: IssueScope, ability: 'set_issue_iid' | 'set_issue_created_at' | 'set_issue_updated_at') =>
  canProject(scope.actor, ability, scope.project, scope.level);

async function iterationAvailable(trx: Db, groupIds: readonly number[], id: number): Promise<boolean> {
  if (!fitsIntColumn(id) || groupIds.length === 0) return false;
  return !!(await trx.selectFrom('iterations').select('id').where('id', '=', id).where('group_id', 'in', groupIds).executeTakeFirst());
}

/**
 * Writes a new or changed issue's labels, assignees and events inside `trx`, then runs the change hooks. `before`
 * is null for a new issue.
 */
async function applyChange(deps: ServiceDeps, trx: Db, scope: IssueScope, before: IssueRow | null, after: IssueRow, input: IssueInput, groupIds: readonly number[], now: number): Promise<IssueChange> {
  const uid = scope.actor.user?.id ?? null;
  const change: IssueChange = { issue: after, before, actor: scope.actor, addedLabelIds: [], removedLabelIds: [], addedAssigneeIds: [], removedAssigneeIds: [], at: now };
  const meta = metadataAllowed(scope);
  // Labels: `labels` replaces, then `add_labels` and `remove_labels` apply.
  if (meta) Object.assign(change, await changeLabels(trx, scope, { type: ISSUE, id: after.id }, input, !!before, groupIds, uid, now));
  if (meta && input.assignee_ids !== undefined) {
    const current = before ? (await assigneeIdsOf(trx, [after.id])).get(after.id)! : [];
    const next = await existingUserIds(trx, input.assignee_ids);
    change.addedAssigneeIds = next.filter((id) => !current.includes(id));
    change.removedAssigneeIds = current.filter((id) => !next.includes(id));
    if (change.removedAssigneeIds.length) {
      await trx.deleteFrom('issue_assignees').where('issue_id', '=', after.id).where('user_id', 'in', change.removedAssigneeIds).execute();
    }
    if (change.addedAssigneeIds.length) {
      await trx.insertInto('issue_assignees').values(change.addedAssigneeIds.map((user_id) => ({ issue_id: after.id, user_id }))).execute();
    }
  }
  await writeStateEvent(trx, { type: ISSUE, id: after.id }, uid, before, after, now);
  await writeMilestoneEvent(trx, { type: ISSUE, id: after.id }, uid, before, after, now);
  // The system notes of the change commit or roll back with it.
  await writeIssueSystemNotes(trx, change);
  return change;
}

/** The column values the input sets on an issue (metadata only for Reporters and above). */
async function columnsFrom(trx: Db, scope: IssueScope, input: IssueInput, groupIds: readonly number[], before: IssueRow | null, now: number): Promise<Partial<IssueRow>> {
  const set: Partial<IssueRow> = {};
  if (input.title !== undefined) set.title = input.title.trim();
  if (input.description !== undefined) set.description = input.description;
  if (input.confidential !== undefined) set.confidential = input.confidential ? 1 : 0;
  if (input.issue_type !== undefined) set.issue_type = input.issue_type;
  if (metadataAllowed(scope)) {
    if (input.discussion_locked !== undefined) set.discussion_locked = input.discussion_locked === null ? null : input.discussion_locked ? 1 : 0;
    if (input.due_date !== undefined) set.due_date = input.due_date;
    if (input.weight !== undefined) set.weight = input.weight;
    if (input.milestone_id !== undefined) {
      // An unknown milestone or one the project cannot use clears it, as the reference does.
      set.milestone_id = input.milestone_id && (await milestoneAvailable(trx, scope.project.id, groupIds, input.milestone_id)) ? input.milestone_id : null;
    }
    if (input.iteration_id !== undefined) {
      set.iteration_id = input.iteration_id && (await iterationAvailable(trx, groupIds, input.iteration_id)) ? input.iteration_id : null;
    }
  }
  if (input.state_event === 'close' && (before?.state ?? 'opened') !== 'closed') {
    Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: scope.actor.user?.id ?? null });
  } else if (input.state_event === 'reopen' && before?.state === 'closed') {
    Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null });
  }
  return set;
}

/** A new issue as its creating transaction wrote it, with the assignees it was given (for its answer). */
export interface CreatedIssue {
  issue: IssueRow;
  assigneeIds: number[];
  /** Its labels in the database's title order as the transaction linked them; null when they are to be read. */
  labels: LabelRow[] | null;
}

/** `within` runs inside the creating transaction once the issue is written (an alert links itself to it). */
export async function createIssue(deps: ServiceDeps, scope: IssueScope, input: IssueInput, within?: (trx: Db, issue: IssueRow) => Promise<void>): Promise<CreatedIssue> {
  validate(input, true);
  const now = deps.clock.now();
  const groupIds = await cachedProjectAncestorGroupIds(deps, scope.project, scope.actor.epoch);
  const given = may(scope, 'set_issue_iid') && input.iid !== undefined ? input.iid : undefined;
  if (given !== undefined && (given < 1 || !fitsIntColumn(given))) throw new ValidationError({ iid: ['must be greater than 0'] });
  await checkSpam(deps, scope.actor, { kind: 'Issue', project: scope.project, level: scope.level, before: null, change: input });
  // PostgreSQL: the number is taken before the transaction, so concurrent creates in the project do not wait for
  // each other's transactions (a failed create leaves a gap).
  const ahead = given === undefined ? await iidAhead(deps.db, 'issues', scope.project.id) : null;
  return deps.db.transaction().execute(async (trx) => {
    const set = await columnsFrom(trx, scope, input, groupIds, null, now);
    let iid: number;
    if (given !== undefined) {
      const taken = await trx.selectFrom('issues').select('id').where('project_id', '=', scope.project.id).where('iid', '=', given).executeTakeFirst();
      if (taken) throw new ValidationError({ iid: ['has already been taken'] });
      await trackIid(trx, 'issues', scope.project.id, given);
      iid = given;
    } else iid = ahead ?? await nextIid(trx, 'issues', scope.project.id);
    const createdAt = may(scope, 'set_issue_created_at') && input.created_at !== undefined ? input.created_at : now;
    const issue = await trx.insertInto('issues').values({
      project_id: scope.project.id, iid, title: input.title!.trim(), description: input.description ?? null, author_id: scope.actor.user?.id ?? null,
      ...set, created_at: createdAt, updated_at: createdAt,
    } as any).returningAll().executeTakeFirstOrThrow();
    const change = await applyChange(deps, trx, scope, null, issue, input, groupIds, now);
    if (within) await within(trx, issue);
    if (scope.actor.user) await emitEvent(deps, trx, { type: 'issue', action: 'open', projectId: issue.project_id, issueId: issue.id, actorId: scope.actor.user.id, changes: await issueChanges(trx, change) });
    // Its labels are the ones the change linked (none when it set none); `within` may link others.
    const labelsSet = input.labels !== undefined || input.add_labels !== undefined || input.remove_labels !== undefined;
    const labels = within ? null : change.newLabels ?? (labelsSet && metadataAllowed(scope) ? null : []);
    return { issue, assigneeIds: [...change.addedAssigneeIds].sort((a, b) => a - b), labels };
  });
}

export async function updateIssue(deps: ServiceDeps, scope: IssueScope, issue: IssueRow, input: IssueInput): Promise<IssueRow> {
  validate(input, false);
  const now = deps.clock.now();
  const groupIds = await cachedProjectAncestorGroupIds(deps, scope.project, scope.actor.epoch);
  await checkSpam(deps, scope.actor, { kind: 'Issue', project: scope.project, level: scope.level, before: issue, change: input });
  return deps.db.transaction().execute(async (trx) => {
    const set = await columnsFrom(trx, scope, input, groupIds, issue, now);
    if (set.title !== undefined && set.title !== issue.title || set.description !== undefined && set.description !== issue.description) {
      Object.assign(set, { last_edited_at: now, last_edited_by_id: scope.actor.user?.id ?? null });
    }
    if (input.created_at !== undefined && may(scope, 'set_issue_created_at')) set.created_at = input.created_at;
    set.updated_at = may(scope, 'set_issue_updated_at') && input.updated_at !== undefined ? input.updated_at : now;
    const after = await trx.updateTable('issues').set(set).where('id', '=', issue.id).returningAll().executeTakeFirstOrThrow();
    const change = await applyChange(deps, trx, scope, issue, after, input, groupIds, now);
    const action = issue.state !== after.state ? (after.state === 'closed' ? 'close' : 'reopen') : 'update';
    if (scope.actor.user) await emitEvent(deps, trx, { type: 'issue', action, projectId: issue.project_id, issueId: issue.id, actorId: scope.actor.user.id, changes: await issueChanges(trx, change) });
    return after;
  });
}

/**
 * Closes the open issues (by iid) a merge request's merge closes, inside the merge's transaction, as an explicit close
 * does: the state, the state event naming the merge request, the system note "closed via merge request !N", and the
 * issue's close event (webhooks, `close_issue` e-mail) by the user who merged.
 */
export async function closeIssuesByMerge(deps: ServiceDeps, trx: Db, projectId: number, iids: number[], mr: { id: number; iid: number }, actor: Actor, now: number): Promise<void> {
  if (!iids.length) return;
  const open = await trx.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', 'in', iids).where('state', '=', 'opened').orderBy('id').execute();
  const uid = actor.user?.id ?? null;
  for (const before of open) {
    const after = await trx.updateTable('issues').set({ state: 'closed', closed_at: now, closed_by_id: uid, updated_at: now })
      .where('id', '=', before.id).returningAll().executeTakeFirstOrThrow();
    const change: IssueChange = {
      issue: after, before, actor, addedLabelIds: [], removedLabelIds: [], addedAssigneeIds: [], removedAssigneeIds: [], at: now, viaMergeRequest: mr,
    };
    await writeStateEvent(trx, { type: ISSUE, id: after.id }, uid, before, after, now, mr.id);
    await writeIssueSystemNotes(trx, change);
    if (uid !== null) await emitEvent(deps, trx, { type: 'issue', action: 'close', projectId, issueId: after.id, actorId: uid, changes: await issueChanges(trx, change) });
  }
}

const ISSUE_CHANGE_KEYS = [
  'title', 'description', 'confidential', 'discussion_locked', 'due_date', 'weight', 'milestone_id', 'state', 'closed_at',
  'last_edited_at', 'last_edited_by_id', 'updated_at',
] as const;

/** An issue change as the hook payloads carry it (`changes`); labels and assignees as their ids before and after. */
export async function issueChanges(trx: Db, c: IssueChange): Promise<Changes> {
  const out = attributeChanges(c.before, c.issue, ISSUE_CHANGE_KEYS);
  // A new issue has exactly the labels and assignees the change added: nothing to read back.
  const created = c.before === null;
  if (c.addedLabelIds.length || c.removedLabelIds.length) {
    const now = created ? c.addedLabelIds
      : (await trx.selectFrom('label_links').select('label_id').where('target_type', '=', ISSUE).where('target_id', '=', c.issue.id).execute()).map((r) => r.label_id);
    out.label_ids = listChange(now, c.addedLabelIds, c.removedLabelIds);
  }
  if (c.addedAssigneeIds.length || c.removedAssigneeIds.length) {
    const now = created ? c.addedAssigneeIds : (await assigneeIdsOf(trx, [c.issue.id])).get(c.issue.id) ?? [];
    out.assignee_ids = listChange(now, c.addedAssigneeIds, c.removedAssigneeIds);
  }
  return out;
}

/**
 * Moves open issues into another iteration as the server does it (an iteration's roll-over): each one an issue change
 * of its own, with its system note, by nobody. Issues closed meanwhile stay where they are.
 */
export async function moveOpenIssuesToIteration(deps: ServiceDeps, issueIds: number[], iterationId: number): Promise<number> {
  if (!issueIds.length) return 0;
  const issues = await deps.db.selectFrom('issues').selectAll().where('id', 'in', issueIds).where('state', '=', 'opened').orderBy('id').execute();
  const projects = new Map((await deps.db.selectFrom('projects').selectAll().where('id', 'in', [...new Set(issues.map((i) => i.project_id))]).execute()).map((p) => [p.id, p]));
  let moved = 0;
  for (const issue of issues) {
    const project = projects.get(issue.project_id);
    if (!project || project.pending_delete) continue;
    const after = await updateIssue(deps, { actor: serverActor, project, level: AccessLevel.OWNER }, issue, { iteration_id: iterationId });
    if (after.iteration_id === iterationId) moved++;
  }
  return moved;
}

/** Removes an issue and everything hung on it by (type, id) rather than by a foreign key. */
export async function deleteIssue(deps: ServiceDeps, issue: IssueRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await deleteDependents(trx, { type: ISSUE, id: issue.id });
    await trx.deleteFrom('issues').where('id', '=', issue.id).execute();
  });
}

/**
 * Moves an issue to another project: a new issue there (next iid, same title, description, author, assignees,
 * due date, confidentiality, award emoji, time logs and notes; labels and milestone matched by title), the original
 * closed with `moved_to_id`, and the reference's "moved from" / "moved to" system notes on the two.
 * The caller needs `admin_issue` on both projects.
 */
export async function moveIssue(deps: ServiceDeps, scope: IssueScope, issue: IssueRow, target: ProjectRow): Promise<IssueRow> {
  if (target.id === scope.project.id) throw new RuleError('bad_request', 'Cannot move issue to project it originates from!');
  const actor = scope.actor;
  const targetLevel = actor.admin ? AccessLevel.OWNER : actor.user ? (await projectAccessLevels(deps.db, actor.user.id, [target])).get(target.id)?.effective ?? 0 : 0;
  if (!canProject(actor, 'admin_issue', scope.project, scope.level) || !canProject(actor, 'admin_issue', target, targetLevel)) {
    throw new RuleError('bad_request', 'Cannot move issue due to insufficient permissions!');
  }
  if (issue.moved_to_id !== null) throw new RuleError('bad_request', 'Cannot move issue which was already moved');
  const targetScope: IssueScope = { actor, project: target, level: targetLevel };
  const now = deps.clock.now();
  const [groupIds, labels, assignees] = await Promise.all([
    projectAncestorGroupIds(deps.db, target),
    labelsOfTargets(deps.db, ISSUE, [issue.id]),
    assigneeIdsOf(deps.db, [issue.id]),
  ]);
  const milestoneTitle = issue.milestone_id === null ? null
    : (await deps.db.selectFrom('milestones').select('title').where('id', '=', issue.milestone_id).executeTakeFirst())?.title ?? null;
  return deps.db.transaction().execute(async (trx) => {
    const found = await availableLabelsByTitle(trx, target.id, groupIds, labels.get(issue.id)!.map((l) => l.title));
    let milestoneId: number | null = null;
    if (milestoneTitle !== null) {
      const m = await trx.selectFrom('milestones').select('id').where('title', '=', milestoneTitle)
        .where((eb) => eb.or([eb('project_id', '=', target.id), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])])).executeTakeFirst();
      milestoneId = m?.id ?? null;
    }
    const iid = await nextIid(trx, 'issues', target.id);
    const moved = await trx.insertInto('issues').values({
      project_id: target.id, iid, title: issue.title, description: issue.description, issue_type: issue.issue_type, author_id: issue.author_id,
      confidential: issue.confidential, discussion_locked: issue.discussion_locked, due_date: issue.due_date, weight: issue.weight,
      time_estimate: issue.time_estimate, milestone_id: milestoneId, created_at: issue.created_at, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const closed = await trx.updateTable('issues').set({
      state: 'closed', closed_at: issue.state === 'closed' ? issue.closed_at : now, closed_by_id: issue.state === 'closed' ? issue.closed_by_id : actor.user?.id ?? null,
      moved_to_id: moved.id, updated_at: now,
    }).where('id', '=', issue.id).returningAll().executeTakeFirstOrThrow();
    await applyChange(deps, trx, targetScope, null, moved, {
      labels: [...found.keys()], assignee_ids: assignees.get(issue.id)!,
    }, groupIds, now);
    // Award emoji and time logs go along.
    const awards = await trx.selectFrom('award_emoji').selectAll().where('awardable_type', '=', ISSUE).where('awardable_id', '=', issue.id).execute();
    if (awards.length) {
      await trx.insertInto('award_emoji').values(awards.map(({ id: _id, ...a }) => ({ ...a, awardable_id: moved.id }))).execute();
    }
    const logs = await trx.selectFrom('timelogs').selectAll().where('target_type', '=', ISSUE).where('target_id', '=', issue.id).execute();
    if (logs.length) {
      await trx.insertInto('timelogs').values(logs.map(({ id: _id, ...l }) => ({ ...l, target_id: moved.id, project_id: target.id }))).execute();
    }
    // The notes (their award emoji with them) go along, before the move's own notes.
    await copyNotes(trx, { type: ISSUE, id: issue.id }, { type: ISSUE, id: moved.id, projectId: target.id });
    if (issue.state !== 'closed') await applyChange(deps, trx, scope, issue, closed, {}, [], now);
    await writeMovedNotes(trx, { old: closed, new: moved }, { old: scope.project, new: target }, actor.user?.id ?? null, now);
    return moved;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Subscriptions

/** Explicit subscriptions win; otherwise the author, the assignees and whoever commented are subscribed. One query. */
export async function isSubscribed(db: Db, userId: number | null, issue: IssueRow): Promise<boolean> {
  if (userId === null) return false;
  const row = await db.selectNoFrom((eb) => [
    eb.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', ISSUE).where('subscribable_id', '=', issue.id)
      .where('user_id', '=', userId).limit(1).as('explicit'),
    eb.exists(eb.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).where('user_id', '=', userId)).as('assigned'),
    eb.exists(eb.selectFrom('notes').select('id').where('noteable_type', '=', ISSUE).where('noteable_id', '=', issue.id)
      .where('author_id', '=', userId).where('system', '=', 0)).as('noted'),
  ]).executeTakeFirstOrThrow();
  if (row.explicit !== null && row.explicit !== undefined) return !!row.explicit;
  return issue.author_id === userId || !!row.assigned || !!row.noted;
}

/** Subscribes or unsubscribes the user; false when they already were (the route answers 304). */
export async function setSubscription(deps: ServiceDeps, userId: number, issue: IssueRow, subscribed: boolean): Promise<boolean> {
  return setNoteableSubscription(deps, userId, { type: ISSUE, id: issue.id, projectId: issue.project_id }, subscribed, (trx) => isSubscribed(trx, userId, issue));
}

// ---------------------------------------------------------------------------------------------------------------
// Participants

/** The author, whoever commented, then the assignees, each once, keeping only those who may read the issue. */
export async function participants(deps: ServiceDeps, issue: IssueRow, project: ProjectRow): Promise<User[]> {
  const [notes, assignees] = await Promise.all([
    deps.db.selectFrom('notes').select('author_id').where('noteable_type', '=', ISSUE).where('noteable_id', '=', issue.id)
      .where('system', '=', 0).where('internal', '=', 0).orderBy('id').execute(),
    assigneeIdsOf(deps.db, [issue.id]),
  ]);
  const ids: number[] = [];
  for (const id of [issue.author_id, ...notes.map((n) => n.author_id), ...assignees.get(issue.id)!]) {
    if (id !== null && !ids.includes(id)) ids.push(id);
  }
  if (ids.length === 0) return [];
  const users = [...(await usersByIds(deps, ids)).values()];
  const levels = await Promise.all(users.map(async (u) => [u.id, (await projectAccessLevels(deps.db, u.id, [project])).get(project.id)?.effective ?? 0] as const));
  const levelOf = new Map(levels);
  const assigneeIds = assignees.get(issue.id)!;
  const byId = new Map(users.map((u) => [u.id, u]));
  return ids.map((id) => byId.get(id)).filter((u): u is User => {
    if (!u || u.state === 'blocked') return false;
    const actor: Actor = { user: u, admin: !!u.admin, token: null, via: 'none', sudo: false };
    return !issueDenial(actor, 'read_issue', project, levelOf.get(u.id) ?? 0, { ...issue, assigneeIds });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// What the entities show

export interface IssuePresentation {
  base: string;
  users: Map<number, User>;
  assignees: Map<number, number[]>;
  labels: Map<number, LabelRow[]>;
  milestones: Map<number, Selectable<MilestonesTable>>;
  iterations: Map<number, Selectable<IterationsTable>>;
  projects: Map<number, { id: number; path: string; full_path: string; namespace_id: number }>;
  groupPaths: Map<number, string>;
  notes: Map<number, number>;
  votes: Map<number, { up: number; down: number }>;
  spent: Map<number, number>;
  /** How many merge requests close each issue (`merge_requests_count`). */
  mergeRequests: Map<number, number>;
  now: number;
  withLabelsDetails: boolean;
  /** Set for a single issue: whether the caller is subscribed. */
  subscribed: Map<number, boolean> | null;
  /** The list's context, for `references.relative`. */
  from: { projectId?: number; groupId?: number };
}

/** Everything the issue entities need, in a constant number of queries. */
export async function loadIssuePresentation(
  deps: ServiceDeps, actor: Actor, rows: IssueRow[],
  opts: {
    withLabelsDetails?: boolean; subscribed?: boolean; from?: { projectId?: number; groupId?: number };
    /**
     * The one row is an issue this request just created (in `project`, by the caller, with these assignees): nothing
     * else can refer to it yet, so it has no user notes, votes, time spent, closing merge requests or explicit
     * subscriptions, and those are not read.
     */
    created?: { project: IssueScope['project']; assigneeIds: number[]; labels?: LabelRow[] | null };
    /** The project of every row, when the request has it already (a project's issue routes): it is not read again. */
    project?: IssueScope['project'];
  } = {},
): Promise<IssuePresentation> {
  const db = deps.db;
  const ids = rows.map((r) => r.id);
  const pres: IssuePresentation = {
    base: deps.config.externalUrl, users: new Map(), assignees: new Map(), labels: new Map(), milestones: new Map(), iterations: new Map(),
    projects: new Map(), groupPaths: new Map(), notes: new Map(), votes: new Map(), spent: new Map(), mergeRequests: new Map(), now: deps.clock.now(),
    withLabelsDetails: !!opts.withLabelsDetails, subscribed: null, from: opts.from ?? {},
  };
  if (rows.length === 0) return pres;
  const milestoneIds = [...new Set(rows.map((r) => r.milestone_id).filter((x): x is number => x !== null))];
  const iterationIds = [...new Set(rows.map((r) => r.iteration_id).filter((x): x is number => x !== null))];
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const created = opts.created && rows.length === 1 ? opts.created : null;
  const known = created?.project ?? (opts.project && projectIds.every((id) => id === opts.project!.id) ? opts.project : null);
  const [assignees, labels, milestones, iterations, projects, notes, votes, spent, mergeRequests] = await Promise.all([
    created ? new Map([[rows[0].id, created.assigneeIds]]) : assigneeIdsOf(db, ids),
    created?.labels ? new Map([[rows[0].id, created.labels]]) : labelsOfTargets(db, ISSUE, ids),
    milestoneIds.length ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : [],
    iterationIds.length ? db.selectFrom('iterations').selectAll().where('id', 'in', iterationIds).execute() : [],
    known ? [known] : db.selectFrom('projects').select(['id', 'path', 'full_path', 'namespace_id']).where('id', 'in', projectIds).execute(),
    created ? new Map<number, number>() : userNotesCounts(db, ISSUE, ids),
    created ? new Map<number, { up: number; down: number }>() : votesOf(db, ISSUE, ids),
    created ? new Map<number, number>() : timeSpentOf(db, ids),
    created ? new Map<number, number>() : mergeRequestCounts(db, ids),
  ]);
  pres.mergeRequests = mergeRequests;
  pres.assignees = assignees;
  pres.labels = labels;
  pres.spent = spent;
  for (const m of milestones) pres.milestones.set(m.id, m);
  for (const i of iterations) pres.iterations.set(i.id, i);
  for (const p of projects) pres.projects.set(p.id, p);
  pres.notes = notes;
  pres.votes = votes;
  const groupIds = [...new Set([...milestones.map((m) => m.group_id), ...iterations.map((i) => i.group_id)].filter((x): x is number => x !== null))];
  const userIds = new Set<number>();
  for (const r of rows) {
    if (r.author_id !== null) userIds.add(r.author_id);
    if (r.closed_by_id !== null) userIds.add(r.closed_by_id);
    for (const a of assignees.get(r.id)!) userIds.add(a);
  }
  const [users, groups] = await Promise.all([
    usersByIds(deps, [...userIds], actor.user),
    groupIds.length ? db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute() : [],
  ]);
  pres.users = users;
  for (const g of groups) pres.groupPaths.set(g.id, g.full_path);
  if (opts.subscribed) {
    pres.subscribed = new Map();
    for (const r of rows) {
      // A new issue has no explicit subscription and no notes: its author and assignees are subscribed.
      const uid = actor.user?.id ?? null;
      pres.subscribed.set(r.id, created ? uid !== null && (r.author_id === uid || created.assigneeIds.includes(uid)) : await isSubscribed(db, uid, r));
    }
  }
  return pres;
}

/** How many merge requests close each issue (their descriptions' closing patterns, `merge_requests_closing_issues`). */
export async function mergeRequestCounts(db: Db, issueIds: number[]): Promise<Map<number, number>> {
  if (!issueIds.length) return new Map();
  const rows = await db.selectFrom('merge_requests_closing_issues').select(['issue_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('issue_id', 'in', issueIds).where('closes', '=', 1).groupBy('issue_id').execute();
  return new Map(rows.map((r) => [r.issue_id, Number(r.n)]));
}

/** Open issues of each project as the caller counts them: confidential ones only for Reporters and above. */
export async function openIssueCounts(db: Db, projectIds: number[]): Promise<Map<number, { all: number; public: number }>> {
  const out = new Map<number, { all: number; public: number }>();
  if (projectIds.length === 0) return out;
  const rows = await db.selectFrom('issues').select(['project_id', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('confidential').as('c')])
    .where('project_id', 'in', projectIds).where('state', '=', 'opened').groupBy('project_id').execute();
  for (const r of rows) out.set(r.project_id, { all: Number(r.n), public: Number(r.n) - Number(r.c ?? 0) });
  return out;
}


/** Users, labels and milestones the events show, with what embedded milestones need. */
export async function loadEventContext(deps: ServiceDeps, rows: Array<{ user_id: number | null; label_id?: number | null; milestone_id?: number | null }>): Promise<EventContext> {
  const db = deps.db;
  const ids = (pick: (r: (typeof rows)[number]) => number | null | undefined) => [...new Set(rows.map(pick).filter((x): x is number => typeof x === 'number'))];
  const userIds = ids((r) => r.user_id);
  const labelIds = ids((r) => r.label_id);
  const milestoneIds = ids((r) => r.milestone_id);
  const [users, labels, milestones] = await Promise.all([
    usersByIds(deps, userIds),
    labelIds.length ? db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute() : [],
    milestoneIds.length ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : [],
  ]);
  const projectIds = [...new Set(milestones.map((m) => m.project_id).filter((x): x is number => x !== null))];
  const groupIds = [...new Set(milestones.map((m) => m.group_id).filter((x): x is number => x !== null))];
  const [projects, groups] = await Promise.all([
    projectIds.length ? db.selectFrom('projects').select(['id', 'path', 'full_path', 'namespace_id']).where('id', 'in', projectIds).execute() : [],
    groupIds.length ? db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute() : [],
  ]);
  const base = deps.config.externalUrl;
  return {
    base,
    users,
    labels: new Map(labels.map((l) => [l.id, l])),
    milestones: new Map(milestones.map((m) => [m.id, m])),
    pres: { base, projects: new Map(projects.map((p) => [p.id, p])), groupPaths: new Map(groups.map((g) => [g.id, g.full_path])), now: deps.clock.now() },
  };
}
