import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { LabelsTable } from '../../platform/db/schema.ts';
import { ancestorIds } from '../../platform/membership.ts';

// The labels a project may use — its own and those of its namespace's ancestor groups — read straight from the
// labels table. Shared by the labels area and by every labelled record (issues now, merge requests next).

export type LabelRow = Selectable<LabelsTable>;

/** The color of a label created without one (the reference's Label::DEFAULT_COLOR). */
export const DEFAULT_LABEL_COLOR = '#6699cc';

/** The groups whose labels (and milestones, iterations) reach a project: its namespace and that namespace's ancestors, when a group. */
export async function projectAncestorGroupIds(db: Db, project: { namespace_id: number }): Promise<number[]> {
  const ns = await db.selectFrom('namespaces').select(['kind', 'traversal']).where('id', '=', project.namespace_id).executeTakeFirst();
  return ns && ns.kind === 'group' ? ancestorIds(ns) : [];
}

/**
 * The same through the read cache (a namespace's place follows the read epoch, see platform/read-epoch.ts), at the
 * read epoch of a state-changing request when it has one.
 */
export function cachedProjectAncestorGroupIds(deps: ServiceDeps, project: { namespace_id: number }, epoch?: number): Promise<readonly number[]> {
  return deps.caches.define<number, readonly number[]>('namespace-ancestor-groups', { max: 10_000, epoch: true })
    .get(project.namespace_id, async () => Object.freeze(await projectAncestorGroupIds(deps.db, project)), epoch);
}

/**
 * The labels with these titles that the project may use (exact titles). Where a project label and a group label
 * share a title, the project's own wins; between groups, the nearest. The map's order is the database's title
 * order (as `labelsOfTargets` lists a record's labels).
 */
export async function availableLabelsByTitle(db: Db, projectId: number, groupIds: readonly number[], titles: string[]): Promise<Map<string, LabelRow>> {
  const out = new Map<string, LabelRow>();
  if (titles.length === 0) return out;
  const rows = await db.selectFrom('labels').selectAll().where('title', 'in', titles)
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])])).orderBy('title').execute();
  // Nearest first: the project, then the groups from the innermost out; then back into the database's title order.
  const rank = (l: LabelRow) => (l.project_id !== null ? -1 : groupIds.length - groupIds.indexOf(l.group_id!));
  const position = new Map(rows.map((l, i) => [l, i]));
  const nearest = new Map<string, LabelRow>();
  for (const l of [...rows].sort((a, b) => rank(a) - rank(b))) if (!nearest.has(l.title)) nearest.set(l.title, l);
  for (const l of [...nearest.values()].sort((a, b) => position.get(a)! - position.get(b)!)) out.set(l.title, l);
  return out;
}

/** A project's or ancestor group's label by id, or undefined when the project may not use it. */
export async function availableLabelById(db: Db, projectId: number, groupIds: readonly number[], id: number): Promise<LabelRow | undefined> {
  return db.selectFrom('labels').selectAll().where('id', '=', id)
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])])).executeTakeFirst();
}

/** The labels linked to each target (e.g. 'Issue'), sorted by title. */
export async function labelsOfTargets(db: Db, targetType: string, targetIds: number[]): Promise<Map<number, LabelRow[]>> {
  const out = new Map<number, LabelRow[]>(targetIds.map((id) => [id, []]));
  if (targetIds.length === 0) return out;
  const rows = await db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
    .selectAll('labels').select('label_links.target_id').where('label_links.target_type', '=', targetType)
    .where('label_links.target_id', 'in', targetIds).orderBy('labels.title').execute();
  for (const { target_id, ...label } of rows) out.get(target_id)!.push(label);
  return out;
}
