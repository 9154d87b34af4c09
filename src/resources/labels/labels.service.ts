import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { canGroup } from '../../platform/access/policy.ts';
import { readableIssuesExpr } from '../../platform/access/queries.ts';
import { containsText, fitsIntColumn, isUniqueViolation, startsWithText } from '../../platform/db/dialect.ts';
import { ancestorIds, groupAccessLevels, groupOfProject, userAuthorization, type NamespaceRow } from '../../platform/membership.ts';
import type { LabelsTable } from '../../platform/db/schema.ts';
import { ConflictError, ForbiddenError, NotFoundError, RuleError, ValidationError } from '../../platform/errors.ts';
import { isValidColor, normalizeColor } from './colors.ts';
import { availableLabelsByTitle, projectAncestorGroupIds } from './labels.lookup.ts';

// Which labels a project or a group may use: a project its own and those of its group and the group's ancestors;
// a group its own and its ancestors' (and, when asked, its descendants').

export type LabelRow = Selectable<LabelsTable>;

/** The owners whose labels are available: a project (or none) and groups, the nearest group last. */
export interface LabelScope {
  projectId: number | null;
  groupIds: readonly number[];
}

/** A project's labels: its own, and its group's (with the group's ancestors unless `includeAncestors` is false). */
export async function projectLabelScope(db: Db, project: { id: number; namespace_id: number }, includeAncestors = true): Promise<LabelScope> {
  const group = await groupOfProject(db, project);
  const groupIds = group ? (includeAncestors ? ancestorIds(group) : [group.id]) : [];
  return { projectId: project.id, groupIds };
}

/** SQL condition: the `labels` row belongs to the scope. */
export function inLabelScope(eb: any, scope: LabelScope): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (scope.projectId !== null) parts.push(eb('labels.project_id', '=', scope.projectId));
  if (scope.groupIds.length) parts.push(eb('labels.group_id', 'in', scope.groupIds));
  return parts.length ? eb.or(parts) : sql<SqlBool>`1 = 0`;
}

/** Orders labels of one title: the project's own first, then the nearest group's. */
export function byNearness(scope: LabelScope) {
  const rank = (l: LabelRow) => (l.project_id !== null ? -1 : scope.groupIds.length - scope.groupIds.indexOf(l.group_id!));
  return (a: LabelRow, b: LabelRow) => rank(a) - rank(b);
}


/** Who owns a new label. */
export type LabelOwner = { projectId: number; groupId?: undefined } | { groupId: number; projectId?: undefined };

export const TITLE_MAX = 255;

/** A group's labels: its own, with its ancestors' (default) and its descendants' when asked. */
export async function groupLabelScope(db: Db, group: Pick<NamespaceRow, 'id' | 'traversal'>, o: { includeAncestors: boolean; includeDescendants?: boolean }): Promise<LabelScope> {
  const ids = o.includeAncestors ? group.traversal.split('/').filter(Boolean).map(Number) : [group.id];
  if (o.includeDescendants) {
    const below = await db.selectFrom('namespaces').select('id').where('kind', '=', 'group')
      .where(startsWithText('traversal', group.traversal)).where('id', '!=', group.id).execute();
    ids.push(...below.map((r) => r.id));
  }
  return { projectId: null, groupIds: ids };
}

/** The labels of a scope, by title (then id), optionally matching `search` in the title or description. */
export function labelListQuery(db: Db, scope: LabelScope, search?: string) {
  let q = db.selectFrom('labels').selectAll().where((eb) => inLabelScope(eb, scope));
  if (search) q = q.where((eb) => eb.or([containsText('labels.title', search), containsText('labels.description', search)]));
  return q.orderBy('labels.title', 'asc').orderBy('labels.id', 'asc');
}

/** A label of the scope by id, else by exact title (the project's own before a group's); 404 Label Not Found. */
export async function findLabel(db: Db, scope: LabelScope, idOrTitle: string): Promise<LabelRow> {
  if (/^\d+$/.test(idOrTitle) && fitsIntColumn(Number(idOrTitle))) {
    const byId = await db.selectFrom('labels').selectAll().where((eb) => inLabelScope(eb, scope)).where('id', '=', Number(idOrTitle)).executeTakeFirst();
    if (byId) return byId;
  }
  const rows = await db.selectFrom('labels').selectAll().where((eb) => inLabelScope(eb, scope)).where('title', '=', idOrTitle).execute();
  if (rows.length === 0) throw new NotFoundError('Label');
  return rows.sort(byNearness(scope))[0];
}

export interface LabelInput {
  title?: string;
  color?: string;
  description?: string | null;
}

/** The model's checks on a label's title and colour; the cleaned values. */
function checked(input: LabelInput): { title?: string; color?: string; errors: Record<string, string[]> } {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  let title: string | undefined;
  let color: string | undefined;
  if (input.title !== undefined) {
    title = input.title.trim();
    if (!title) add('title', "can't be blank");
    if (!/^[^,]+$/.test(title)) add('title', 'is invalid');
    if (title.length > TITLE_MAX) add('title', `is too long (maximum is ${TITLE_MAX} characters)`);
  }
  if (input.color !== undefined) {
    color = normalizeColor(input.color);
    if (!isValidColor(color)) add('color', 'must be a valid color code');
  }
  return { title, color, errors };
}

function checkPriority(priority: number | null | undefined, errors: Record<string, string[]>) {
  if (typeof priority === 'number' && priority < 0) (errors.priority ??= []).push('must be greater than or equal to 0');
}

async function setPriority(trx: Db, projectId: number, labelId: number, priority: number | null) {
  await trx.deleteFrom('label_priorities').where('project_id', '=', projectId).where('label_id', '=', labelId).execute();
  if (priority !== null) await trx.insertInto('label_priorities').values({ project_id: projectId, label_id: labelId, priority }).execute();
}

/** A label title the scope already holds: 409 "Label already exists", as the reference checks before creating. */
async function assertTitleFree(db: Db, scope: LabelScope, title: string) {
  const taken = await db.selectFrom('labels').select('id').where((eb) => inLabelScope(eb, scope)).where('title', '=', title).executeTakeFirst();
  if (taken) throw new ConflictError('Label already exists');
}

/** Writes a label row whose title and colour were checked. */
async function insertLabel(trx: Db, now: number, owner: LabelOwner, fields: Pick<LabelRow, 'title' | 'color' | 'description'>): Promise<LabelRow> {
  return trx.insertInto('labels').values({
    title: fields.title, color: fields.color, description: fields.description,
    project_id: owner.projectId ?? null, group_id: owner.groupId ?? null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function createLabel(deps: ServiceDeps, owner: LabelOwner, scope: LabelScope, input: Required<Pick<LabelInput, 'title' | 'color'>> & LabelInput & { priority?: number }): Promise<LabelRow> {
  const c = checked(input);
  checkPriority(input.priority, c.errors);
  if (Object.keys(c.errors).length) throw new ValidationError(c.errors);
  await assertTitleFree(deps.db, scope, c.title!);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const label = await insertLabel(trx, now, owner, { title: c.title!, color: c.color!, description: input.description ?? null });
      if (owner.projectId !== undefined && input.priority !== undefined) await setPriority(trx, owner.projectId, label.id, input.priority);
      return label;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ConflictError('Label already exists');
    throw err;
  }
}

/**
 * Holds the caller to `admin_label` on a group label's group when it is changed through a project: the project's
 * Reporter does not manage its group's labels.
 */
export async function assertMayManage(deps: ServiceDeps, actor: Actor, label: LabelRow): Promise<void> {
  if (label.group_id === null || actor.admin) return;
  const group = await deps.db.selectFrom('namespaces').selectAll().where('id', '=', label.group_id).executeTakeFirstOrThrow();
  const level = actor.user ? (await groupAccessLevels(deps.db, actor.user.id, [group], deps.clock.now())).get(group.id) ?? 0 : 0;
  if (!canGroup(actor, 'admin_label', group, level)) throw new ForbiddenError();
}

/**
 * Changes a label's title, colour or description, and (`projectId` given) its priority in that project: `null`
 * removes it. Links to issues are by id, so a renamed label stays on them.
 */
export async function updateLabel(deps: ServiceDeps, label: LabelRow, input: LabelInput & { priority?: number | null; projectId?: number }): Promise<LabelRow> {
  const c = checked(input);
  checkPriority(input.priority, c.errors);
  if (c.title !== undefined && !c.errors.title && c.title !== label.title) {
    const same = await deps.db.selectFrom('labels').select('id').where('title', '=', c.title).where('id', '!=', label.id)
      .where(label.project_id !== null ? 'project_id' : 'group_id', '=', (label.project_id ?? label.group_id)!).executeTakeFirst();
    if (same) (c.errors.title ??= []).push('has already been taken');
    else if (label.project_id !== null) {
      const project = await deps.db.selectFrom('projects').select(['id', 'namespace_id']).where('id', '=', label.project_id).executeTakeFirstOrThrow();
      const scope = await projectLabelScope(deps.db, project);
      const atGroup = scope.groupIds.length && await deps.db.selectFrom('labels').select('id').where('group_id', 'in', scope.groupIds).where('title', '=', c.title).executeTakeFirst();
      if (atGroup) {
        const group = await deps.db.selectFrom('namespaces').select('name').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
        (c.errors.title ??= []).push(`already exists at group level for ${group.name}. Please choose another one.`);
      }
    }
  }
  if (Object.keys(c.errors).length) throw new ValidationError(c.errors);
  const changes: Record<string, unknown> = {};
  if (c.title !== undefined) changes.title = c.title;
  if (c.color !== undefined) changes.color = c.color;
  if (input.description !== undefined) changes.description = input.description;
  try {
    return await deps.db.transaction().execute(async (trx) => {
      let row = label;
      if (Object.keys(changes).length) {
        row = await trx.updateTable('labels').set({ ...changes, updated_at: deps.clock.now() }).where('id', '=', label.id).returningAll().executeTakeFirstOrThrow();
      }
      if (input.projectId !== undefined && input.priority !== undefined) await setPriority(trx, input.projectId, label.id, input.priority);
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ValidationError({ title: ['has already been taken'] });
    throw err;
  }
}

/** Removes a label: its links, priorities and subscriptions go with it. */
export async function deleteLabel(deps: ServiceDeps, label: LabelRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', '=', label.id).execute();
    await trx.deleteFrom('label_links').where('label_id', '=', label.id).execute();
    await trx.deleteFrom('labels').where('id', '=', label.id).execute();
  });
}

/**
 * Subscribes (or unsubscribes) a user to a label, within a project or (`projectId` null) on its own. False when the
 * subscription was already in that state: the route answers 304.
 */
export async function setLabelSubscription(deps: ServiceDeps, label: LabelRow, userId: number, projectId: number | null, subscribed: boolean): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('subscriptions').select(['id', 'subscribed']).where('user_id', '=', userId)
      .where('subscribable_type', '=', 'Label').where('subscribable_id', '=', label.id)
      .where('project_id', projectId === null ? 'is' : '=', projectId).executeTakeFirst();
    if (!!row?.subscribed === subscribed) return false;
    const now = deps.clock.now();
    if (row) await trx.updateTable('subscriptions').set({ subscribed: subscribed ? 1 : 0, updated_at: now }).where('id', '=', row.id).execute();
    else {
      await trx.insertInto('subscriptions').values({
        user_id: userId, subscribable_type: 'Label', subscribable_id: label.id, project_id: projectId, subscribed: 1, created_at: now, updated_at: now,
      }).execute();
    }
    return true;
  });
}

export interface LabelExtras {
  priority: Map<number, number>;
  subscribed: Set<number>;
  counts: Map<number, { open: number; closed: number }> | null;
}

/**
 * What the label entity shows besides the row, for a page of labels: the priority in `projectId`, whether the caller
 * subscribed (on its own or within `projectId`), and with `withCounts` the open and closed issues the caller may see
 * carrying each label (a project label in its project, a group label in the projects of its group).
 */
export async function labelExtras(deps: ServiceDeps, actor: Actor, labels: LabelRow[], o: { projectId: number | null; withCounts: boolean }): Promise<LabelExtras> {
  const ids = labels.map((l) => l.id);
  const out: LabelExtras = { priority: new Map(), subscribed: new Set(), counts: o.withCounts ? new Map() : null };
  if (ids.length === 0) return out;
  const db = deps.db;
  if (o.projectId !== null) {
    const rows = await db.selectFrom('label_priorities').select(['label_id', 'priority']).where('project_id', '=', o.projectId).where('label_id', 'in', ids).execute();
    for (const r of rows) out.priority.set(r.label_id, r.priority);
  }
  if (actor.user) {
    const rows = await db.selectFrom('subscriptions').select(['subscribable_id', 'project_id', 'subscribed']).where('user_id', '=', actor.user.id)
      .where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', ids)
      .where((eb) => (o.projectId === null ? eb('project_id', 'is', null) : eb.or([eb('project_id', 'is', null), eb('project_id', '=', o.projectId)])))
      .execute();
    for (const r of rows) if (r.subscribed) out.subscribed.add(r.subscribable_id);
  }
  if (out.counts) {
    for (const id of ids) out.counts.set(id, { open: 0, closed: 0 });
    const now = deps.clock.now();
    const a = actor.user ? await userAuthorization(deps, actor.user.id, now) : null;
    const rows = await db.selectFrom('label_links')
      .innerJoin('labels', 'labels.id', 'label_links.label_id')
      .innerJoin('issues', 'issues.id', 'label_links.target_id')
      .innerJoin('projects', 'projects.id', 'issues.project_id')
      .select(['label_links.label_id', 'issues.state', sql<number>`count(*)`.as('n')])
      .where('label_links.target_type', '=', 'Issue').where('label_links.label_id', 'in', ids)
      .where('projects.pending_delete', '=', 0)
      .where((eb) => eb.or([eb('projects.id', '=', eb.ref('labels.project_id')), eb('projects.namespace_id', '=', eb.ref('labels.group_id'))]))
      .where((eb) => readableIssuesExpr(eb, actor, a, now) ?? sql<boolean>`1 = 1`)
      .groupBy(['label_links.label_id', 'issues.state'])
      .execute();
    for (const r of rows) {
      const c = out.counts.get(r.label_id)!;
      if (r.state === 'opened') c.open += Number(r.n);
      else if (r.state === 'closed') c.closed += Number(r.n);
    }
  }
  return out;
}

/**
 * Promotes a project label to a label of the project's group: one group label with its title, colour and description
 * takes the place of every label of that title in the group and in the group's own projects (their links, events,
 * priorities and subscriptions move to it, one subscription per user), and those labels are deleted.
 */
export async function promoteLabel(deps: ServiceDeps, actor: Actor, project: { id: number; namespace_id: number }, label: LabelRow): Promise<LabelRow> {
  const failed = new RuleError('bad_request', 'Failed to promote project label to group label');
  const group = await groupOfProject(deps.db, project);
  if (!group) throw failed;
  const level = actor.user ? (await groupAccessLevels(deps.db, actor.user.id, [group], deps.clock.now())).get(group.id) ?? 0 : 0;
  if (!canGroup(actor, 'admin_label', group, level)) throw new ForbiddenError();
  if (label.project_id === null) throw failed;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const merged = (await trx.selectFrom('labels').select('id').where('title', '=', label.title).where((eb) => eb.or([
      eb('group_id', '=', group.id),
      eb('project_id', 'in', eb.selectFrom('projects').select('id').where('namespace_id', '=', group.id)),
    ])).execute()).map((r) => r.id);
    // What hangs off the merged labels is read first: deleting them removes their links and priorities.
    const links = merged.length ? await trx.selectFrom('label_links').select(['target_type', 'target_id', 'created_at']).where('label_id', 'in', merged).orderBy('created_at').execute() : [];
    const events = merged.length ? (await trx.selectFrom('resource_label_events').select('id').where('label_id', 'in', merged).execute()).map((e) => e.id) : [];
    const priorities = merged.length ? await trx.selectFrom('label_priorities').select(['project_id', 'priority']).where('label_id', 'in', merged).execute() : [];
    const subs = merged.length ? await trx.selectFrom('subscriptions').select(['id', 'user_id']).where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', merged).orderBy('id').execute() : [];
    const latest = new Map<number, number>();
    for (const sub of subs) latest.set(sub.user_id, sub.id);
    const keep = [...latest.values()];
    let drop = trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', merged);
    if (keep.length) drop = drop.where('id', 'not in', keep);
    await drop.execute();
    await trx.deleteFrom('labels').where('id', 'in', merged).execute();
    const created = await trx.insertInto('labels').values({
      title: label.title, color: label.color, description: label.description, project_id: null, group_id: group.id, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    // A target that carried two of the merged labels keeps one link.
    const seen = new Set<string>();
    for (const l of links) {
      const key = `${l.target_type}:${l.target_id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await trx.insertInto('label_links').values({ label_id: created.id, target_type: l.target_type, target_id: l.target_id, created_at: l.created_at }).execute();
    }
    if (events.length) await trx.updateTable('resource_label_events').set({ label_id: created.id }).where('id', 'in', events).execute();
    const byProject = new Map<number, number>();
    for (const p of priorities) byProject.set(p.project_id, Math.min(byProject.get(p.project_id) ?? Infinity, p.priority));
    for (const [projectId, priority] of byProject) await trx.insertInto('label_priorities').values({ project_id: projectId, label_id: created.id, priority }).execute();
    if (keep.length) await trx.updateTable('subscriptions').set({ subscribable_id: created.id, updated_at: now }).where('id', 'in', keep).execute();
    return created;
  });
}

/**
 * After a project moved to another namespace (its row already names the new one), inside the moving transaction: the
 * group labels its issues and merge requests carry that it can no longer use (the reference's Labels::TransferService)
 * are replaced in the project by the label of that title it can use (its own, or one of its new groups'), or else by a
 * new project label with the old one's title, colour and description. The project's links and priorities move to it;
 * the group labels themselves and the label events are left as they are.
 */
export async function transferProjectLabels(trx: Db, now: number, project: { id: number; namespace_id: number }): Promise<void> {
  const targets = {
    Issue: trx.selectFrom('issues').select('issues.id').where('issues.project_id', '=', project.id),
    MergeRequest: trx.selectFrom('merge_requests').select('merge_requests.id').where('merge_requests.target_project_id', '=', project.id),
  };
  const ofProject = (eb: any) => eb.or(Object.entries(targets).map(([type, ids]) => eb.and([eb('label_links.target_type', '=', type), eb('label_links.target_id', 'in', ids)])));
  const groupIds = await projectAncestorGroupIds(trx, project);
  let q = trx.selectFrom('labels').selectAll().where('labels.group_id', 'is not', null)
    .where('labels.id', 'in', trx.selectFrom('label_links').select('label_links.label_id').where(ofProject));
  if (groupIds.length) q = q.where('labels.group_id', 'not in', groupIds);
  const moving = await q.orderBy('labels.id').execute();
  if (moving.length === 0) return;
  const usable = await availableLabelsByTitle(trx, project.id, groupIds, [...new Set(moving.map((l) => l.title))]);
  for (const label of moving) {
    let replacement = usable.get(label.title);
    if (!replacement) {
      replacement = await insertLabel(trx, now, { projectId: project.id }, label);
      usable.set(label.title, replacement);
    }
    for (const [type, ids] of Object.entries(targets)) {
      // A target already carrying the replacement keeps that one link.
      await trx.deleteFrom('label_links').where('label_id', '=', label.id).where('target_type', '=', type).where('target_id', 'in', ids)
        .where('target_id', 'in', trx.selectFrom('label_links as have').select('have.target_id').where('have.label_id', '=', replacement.id).where('have.target_type', '=', type))
        .execute();
      await trx.updateTable('label_links').set({ label_id: replacement.id }).where('label_id', '=', label.id).where('target_type', '=', type).where('target_id', 'in', ids).execute();
    }
    const priority = await trx.selectFrom('label_priorities').select('priority').where('project_id', '=', project.id).where('label_id', '=', replacement.id).executeTakeFirst();
    if (priority) await trx.deleteFrom('label_priorities').where('project_id', '=', project.id).where('label_id', '=', label.id).execute();
    else await trx.updateTable('label_priorities').set({ label_id: replacement.id }).where('project_id', '=', project.id).where('label_id', '=', label.id).execute();
  }
}

/**
 * After groups moved, inside the moving transaction: `transferProjectLabels` for each project of these namespaces
 * whose issues or merge requests carry a label of a group that is no longer above it (the others have nothing to do).
 */
export async function transferLabelsOfProjectsIn(trx: Db, now: number, namespaceIds: number[]): Promise<void> {
  if (namespaceIds.length === 0) return;
  const outside = sql<SqlBool>`substr(${sql.ref('pn.traversal')}, 1, length(${sql.ref('lg.traversal')})) <> ${sql.ref('lg.traversal')}`;
  const carrying = (type: 'Issue' | 'MergeRequest') => {
    const base = trx.selectFrom('projects').innerJoin('namespaces as pn', 'pn.id', 'projects.namespace_id');
    const withTargets = type === 'Issue'
      ? base.innerJoin('issues as target', 'target.project_id', 'projects.id')
      : base.innerJoin('merge_requests as target', 'target.target_project_id', 'projects.id');
    return withTargets
      .innerJoin('label_links', (j) => j.onRef('label_links.target_id', '=', 'target.id').on('label_links.target_type', '=', type))
      .innerJoin('labels', 'labels.id', 'label_links.label_id')
      .innerJoin('namespaces as lg', 'lg.id', 'labels.group_id')
      .select(['projects.id', 'projects.namespace_id'])
      .where('projects.namespace_id', 'in', namespaceIds).where(outside);
  };
  const rows = await carrying('Issue').union(carrying('MergeRequest')).execute();
  const projects = new Map(rows.map((r) => [r.id, r]));
  for (const id of [...projects.keys()].sort((a, b) => a - b)) await transferProjectLabels(trx, now, projects.get(id)!);
}
