import { sql, type Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { MilestonesTable } from '../../platform/db/schema.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { readableGroups, visibleExpr } from '../../platform/access/queries.ts';
import { containsText, isUniqueViolation, startsWithText } from '../../platform/db/dialect.ts';
import { nextIid } from '../../platform/db/internal-ids.ts';
import { ancestorIds, groupAccessLevels, groupOfProject, userAuthorization, type NamespaceRow, type ProjectRow } from '../../platform/membership.ts';
import { canGroup } from '../../platform/access/policy.ts';
import { ForbiddenError, RecordNotFoundError, RuleError } from '../../platform/errors.ts';

export type MilestoneRow = Selectable<MilestonesTable>;

/** A milestone's owner: a project or a group. */
export type MilestoneParent = { kind: 'project'; project: Pick<ProjectRow, 'id' | 'namespace_id'> } | { kind: 'group'; group: Pick<NamespaceRow, 'id' | 'traversal'> };

export const TITLE_MAX = 255;

/** The owners whose milestones a list reads. */
export interface MilestoneScope {
  projectIds: number[];
  groupIds: number[];
}

async function projectGroupIds(db: Db, project: { namespace_id: number }): Promise<number[]> {
  const group = await groupOfProject(db, project);
  return group ? ancestorIds(group) : [];
}

/** Ids of the group's descendant groups (not the group itself). */
async function descendantGroupIds(db: Db, group: Pick<NamespaceRow, 'id' | 'traversal'>, actor?: Actor, now = 0): Promise<number[]> {
  let q = db.selectFrom('namespaces').select('id').where('kind', '=', 'group').where(startsWithText('traversal', group.traversal)).where('id', '!=', group.id);
  if (actor) q = q.where(readableGroups(actor, now) as any);
  return (await q.execute()).map((r) => r.id);
}

/**
 * Where a list looks: a project's own milestones, with `includeParents` also its group's and the group's ancestors';
 * a group's own, with `includeParents` its ancestors' (those the caller may read), and with `includeDescendants`
 * its subgroups' and the milestones of the projects below it that the caller may read.
 */
export async function milestoneScope(deps: ServiceDeps, actor: Actor, parent: MilestoneParent, o: { includeParents: boolean; includeDescendants?: boolean }): Promise<MilestoneScope> {
  const db = deps.db;
  if (parent.kind === 'project') {
    return { projectIds: [parent.project.id], groupIds: o.includeParents ? await projectGroupIds(db, parent.project) : [] };
  }
  const now = deps.clock.now();
  const g = parent.group;
  let groupIds = [g.id];
  if (o.includeParents) {
    const ancestors = ancestorIds(g).filter((id) => id !== g.id);
    const readable = ancestors.length
      ? (await db.selectFrom('namespaces').select('id').where('id', 'in', ancestors).where(readableGroups(actor, now) as any).execute()).map((r) => r.id)
      : [];
    groupIds = [...readable, g.id];
  }
  let projectIds: number[] = [];
  if (o.includeDescendants) {
    const below = await descendantGroupIds(db, g, actor, now);
    groupIds.push(...below);
    const a = actor.user ? await userAuthorization(deps, actor.user.id, now) : null;
    projectIds = (await db.selectFrom('projects').select('projects.id').where('projects.namespace_id', 'in', [g.id, ...below])
      .where('projects.pending_delete', '=', 0).where((eb) => visibleExpr(eb, actor, a, now, true) ?? sql<boolean>`1 = 1`).execute()).map((r) => r.id);
  }
  return { projectIds, groupIds };
}

export interface MilestoneFilters {
  state?: 'active' | 'closed' | 'all';
  iids?: number[];
  title?: string;
  search?: string;
  updatedBefore?: number | null;
  updatedAfter?: number | null;
}

/** The milestones of a scope, by due date (none last), then id. */
export function milestoneListQuery(db: Db, scope: MilestoneScope, f: MilestoneFilters) {
  let q = db.selectFrom('milestones').selectAll().where((eb) => {
    const parts = [];
    if (scope.projectIds.length) parts.push(eb('milestones.project_id', 'in', scope.projectIds));
    if (scope.groupIds.length) parts.push(eb('milestones.group_id', 'in', scope.groupIds));
    return parts.length ? eb.or(parts) : sql<boolean>`1 = 0`;
  });
  if (f.state === 'active' || f.state === 'closed') q = q.where('state', '=', f.state);
  if (f.iids?.length) q = q.where('iid', 'in', f.iids);
  if (f.title !== undefined) q = q.where('title', '=', f.title);
  if (f.search) q = q.where((eb) => eb.or([containsText('milestones.title', f.search!), containsText('milestones.description', f.search!)]));
  if (f.updatedBefore != null) q = q.where('updated_at', '<', f.updatedBefore);
  if (f.updatedAfter != null) q = q.where('updated_at', '>', f.updatedAfter);
  return q.orderBy(sql`case when milestones.due_date is null then 1 else 0 end`).orderBy('milestones.due_date', 'asc').orderBy('milestones.id', 'asc');
}

/** One milestone of the parent by id; the reference's record lookup answers "404 Not found". */
export async function getMilestone(db: Db, parent: MilestoneParent, id: number): Promise<MilestoneRow> {
  const row = await db.selectFrom('milestones').selectAll().where('id', '=', id)
    .where(parent.kind === 'project' ? 'project_id' : 'group_id', '=', parent.kind === 'project' ? parent.project.id : parent.group.id).executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row;
}

/** The paths the presenter builds web URLs from: of each project and group owning one of the milestones. */
export async function ownerPaths(db: Db, rows: MilestoneRow[]): Promise<{ projects: Map<number, string>; groups: Map<number, string> }> {
  const pids = [...new Set(rows.map((r) => r.project_id).filter((x): x is number => x !== null))];
  const gids = [...new Set(rows.map((r) => r.group_id).filter((x): x is number => x !== null))];
  const projects = new Map((pids.length ? await db.selectFrom('projects').select(['id', 'full_path']).where('id', 'in', pids).execute() : []).map((p) => [p.id, p.full_path]));
  const groups = new Map((gids.length ? await db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', gids).execute() : []).map((g) => [g.id, g.full_path]));
  return { projects, groups };
}

export interface MilestoneInput {
  title?: string;
  description?: string | null;
  /** Epoch ms of the day (00:00 UTC), null to clear. */
  startDate?: number | null;
  dueDate?: number | null;
  stateEvent?: 'close' | 'activate';
}


/** Ruby's inspection of an errors hash, as the reference writes it into "Failed to create milestone ...". */
function inspectErrors(errors: Record<string, string[]>): string {
  return `{${Object.entries(errors).map(([k, v]) => `:${k}=>[${v.map((m) => JSON.stringify(m)).join(', ')}]`).join(', ')}}`;
}

/** Titles are unique across a project's milestones and those of its group hierarchy, and across a group's hierarchy and projects. */
async function titleTaken(db: Db, parent: MilestoneParent, title: string, exceptId?: number): Promise<boolean> {
  let projectIds: number[];
  let groupIds: number[];
  if (parent.kind === 'project') {
    projectIds = [parent.project.id];
    groupIds = await projectGroupIds(db, parent.project);
  } else {
    const below = await descendantGroupIds(db, parent.group);
    groupIds = [...ancestorIds(parent.group), ...below];
    projectIds = (await db.selectFrom('projects').select('id').where('namespace_id', 'in', [parent.group.id, ...below]).execute()).map((r) => r.id);
  }
  let q = db.selectFrom('milestones').select('id').where('title', '=', title).where((eb) => eb.or([
    ...(projectIds.length ? [eb('project_id', 'in', projectIds)] : []),
    eb('group_id', 'in', groupIds.length ? groupIds : [0]),
  ]));
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return !!(await q.executeTakeFirst());
}

async function validate(db: Db, parent: MilestoneParent, merged: { title: string | null; start_date: number | null; due_date: number | null }, titleChanged: boolean, exceptId?: number) {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!merged.title) add('title', "can't be blank");
  else if (merged.title.length > TITLE_MAX) add('title', `is too long (maximum is ${TITLE_MAX} characters)`);
  else if (titleChanged && (await titleTaken(db, parent, merged.title, exceptId))) add('title', 'already being used for another group or project milestone.');
  if (merged.start_date !== null && merged.due_date !== null && merged.due_date <= merged.start_date) add('due_date', 'must be greater than start date');
  return errors;
}

const ownerColumns = (parent: MilestoneParent) => (parent.kind === 'project' ? { project_id: parent.project.id, group_id: null } : { project_id: null, group_id: parent.group.id });
const TAKEN = { title: ['already being used for another group or project milestone.'] };

/** Writes a milestone row whose fields were checked, with the owner's next milestone iid. */
async function insertMilestone(trx: Db, now: number, parent: MilestoneParent, fields: Pick<MilestoneRow, 'title' | 'description' | 'state' | 'start_date' | 'due_date'>): Promise<MilestoneRow> {
  const owner = ownerColumns(parent);
  const iid = await nextIid(trx, parent.kind === 'project' ? 'project_milestones' : 'group_milestones', owner.project_id ?? owner.group_id!);
  return trx.insertInto('milestones').values({
    ...owner, iid, title: fields.title, description: fields.description, state: fields.state,
    start_date: fields.start_date, due_date: fields.due_date, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function createMilestone(deps: ServiceDeps, parent: MilestoneParent, input: MilestoneInput): Promise<MilestoneRow> {
  // A blank title is no title (the reference's setter ignores it).
  const title = input.title?.trim() || null;
  const fields = { title, start_date: input.startDate ?? null, due_date: input.dueDate ?? null };
  const errors = await validate(deps.db, parent, fields, true);
  if (Object.keys(errors).length) throw new RuleError('bad_request', `Failed to create milestone ${inspectErrors(errors)}`);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => insertMilestone(trx, now, parent, {
        title: title!, description: input.description ?? null, state: 'active', start_date: fields.start_date, due_date: fields.due_date,
      }));
    } catch (err) {
      if (isUniqueViolation(err)) throw new RuleError('bad_request', `Failed to create milestone ${inspectErrors(TAKEN)}`);
      throw err;
    }
  }

  export async function updateMilestone(deps: ServiceDeps, parent: MilestoneParent, m: MilestoneRow, input: MilestoneInput): Promise<MilestoneRow> {
    const title = input.title === undefined ? m.title : input.title.trim() || m.title;
    const merged = {
      title,
      start_date: input.startDate === undefined ? m.start_date : input.startDate,
      due_date: input.dueDate === undefined ? m.due_date : input.dueDate,
    };
    const errors = await validate(deps.db, parent, merged, title !== m.title, m.id);
    if (Object.keys(errors).length) throw new RuleError('bad_request', `Failed to update milestone ${inspectErrors(errors)}`);
    const changes: Record<string, unknown> = { title, start_date: merged.start_date, due_date: merged.due_date };
    if (input.description !== undefined) changes.description = input.description;
    if (input.stateEvent) changes.state = input.stateEvent === 'close' ? 'closed' : 'active';
    try {
      return await deps.db.transaction().execute(async (trx) =>
        trx.updateTable('milestones').set({ ...changes, updated_at: deps.clock.now() }).where('id', '=', m.id).returningAll().executeTakeFirstOrThrow());
    } catch (err) {
      if (isUniqueViolation(err)) throw new RuleError('bad_request', `Failed to update milestone ${inspectErrors(TAKEN)}`);
      throw err;
    }
  }

  /** Removes a milestone; its issues keep going without one. */
  export async function deleteMilestone(deps: ServiceDeps, m: MilestoneRow): Promise<void> {
    await deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('issues').set({ milestone_id: null }).where('milestone_id', '=', m.id).execute();
      await trx.deleteFrom('milestones').where('id', '=', m.id).execute();
    });
  }

  /**
   * Promotes a project milestone to the project's group (the reference's PromoteService): a new group milestone with
   * its title, description and dates takes the issues of every milestone of that title in the group's own projects
   * (not subgroups'), which are removed. Needs `admin_milestone` on the group too; a project outside a group is refused
   * (403) as the reference's check on the missing group is.
   */
  export async function promoteMilestone(deps: ServiceDeps, actor: Actor, project: Pick<ProjectRow, 'id' | 'namespace_id'>, milestoneId: number): Promise<MilestoneRow> {
    const group = await groupOfProject(deps.db, project);
    if (!group) throw new ForbiddenError();
    const level = actor.user ? (await groupAccessLevels(deps.db, actor.user.id, [group], deps.clock.now())).get(group.id) ?? 0 : 0;
    if (!canGroup(actor, 'admin_milestone', group, level)) throw new ForbiddenError();
    const m = await getMilestone(deps.db, { kind: 'project', project }, milestoneId);
    const failed = (message: string) => new RuleError('bad_request', `Promotion failed - ${message}`);
    if (m.project_id === null) throw failed('Only project milestones can be promoted.');
    const now = deps.clock.now();
    const TITLE_USED = 'Title already being used for another group or project milestone.';
    try {
      return await deps.db.transaction().execute(async (trx) => {
      const projectIds = trx.selectFrom('projects').select('id').where('namespace_id', '=', group.id);
      const merged = (await trx.selectFrom('milestones').select('id').where('title', '=', m.title).where('project_id', 'in', projectIds).execute()).map((r) => r.id);
      const iid = await nextIid(trx, 'group_milestones', group.id);
      const created = await trx.insertInto('milestones').values({
        project_id: null, group_id: group.id, iid, title: m.title, description: m.description, state: 'active',
        start_date: m.start_date, due_date: m.due_date, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow();
      await trx.updateTable('issues').set({ milestone_id: created.id }).where('milestone_id', 'in', merged).where('project_id', 'in', projectIds).execute();
      // The issues' milestone events keep naming the milestone they were about, now the group's.
      await trx.updateTable('resource_milestone_events').set({ milestone_id: created.id }).where('milestone_id', 'in', merged).execute();
      await trx.updateTable('issues').set({ milestone_id: null }).where('milestone_id', 'in', merged).execute();
      await trx.deleteFrom('milestones').where('id', 'in', merged).execute();
      // Rolled back when the title is still used elsewhere in the hierarchy (a subgroup's project, an ancestor group).
      if (await titleTaken(trx, { kind: 'group', group }, m.title, created.id)) {
        throw failed(TITLE_USED);
      }
      return created;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw failed(TITLE_USED);
    throw err;
  }
}

/**
 * After a project moved out of the group `oldGroup` (its row already names the new namespace), inside the moving
 * transaction: each milestone of `oldGroup` or its ancestors that the project's issues or merge requests carry (the
 * reference's Milestones::TransferService) is replaced in the project by the milestone of that title it can use in
 * its new place (its own or one of its new groups'), or else by a new project milestone with the old one's title,
 * description, dates and state. The group milestones themselves and the milestone events are left as they are.
 */
export async function transferProjectMilestones(trx: Db, now: number, project: Pick<ProjectRow, 'id' | 'namespace_id'>, oldGroup: Pick<NamespaceRow, 'traversal'>): Promise<void> {
  const issues = () => trx.updateTable('issues').where('project_id', '=', project.id);
  const mergeRequests = () => trx.updateTable('merge_requests').where('target_project_id', '=', project.id);
  const moving = await trx.selectFrom('milestones').selectAll().where('group_id', 'in', ancestorIds(oldGroup)).where((eb) => eb.or([
    eb('id', 'in', eb.selectFrom('issues').select('issues.milestone_id').where('issues.project_id', '=', project.id).where('issues.milestone_id', 'is not', null)),
    eb('id', 'in', eb.selectFrom('merge_requests').select('merge_requests.milestone_id').where('merge_requests.target_project_id', '=', project.id).where('merge_requests.milestone_id', 'is not', null)),
  ])).orderBy('id').execute();
  if (moving.length === 0) return;
  const groupIds = await projectGroupIds(trx, project);
  for (const m of moving) {
    const usable = await trx.selectFrom('milestones').selectAll().where('title', '=', m.title)
      .where((eb) => eb.or([eb('project_id', '=', project.id), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])]))
      .orderBy('id').executeTakeFirst();
    const replacement = usable ?? await insertMilestone(trx, now, { kind: 'project', project }, m);
    if (replacement.id === m.id) continue;
    await issues().set({ milestone_id: replacement.id }).where('milestone_id', '=', m.id).execute();
    await mergeRequests().set({ milestone_id: replacement.id }).where('milestone_id', '=', m.id).execute();
  }
}
