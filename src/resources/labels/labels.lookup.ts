import { sql, type Expression, type Selectable, type SqlBool } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { LabelsTable } from '../../platform/db/schema.ts';
import { ancestorIds } from '../../platform/membership.ts';

// Which labels a project or a group may use: a project its own and those of its group and the group's ancestors;
// a group its own and its ancestors'. Issues resolve label names through `findLabelsForProject`.

export type LabelRow = Selectable<LabelsTable>;

/** The owners whose labels are available: a project (or none) and groups, the nearest group last. */
export interface LabelScope {
  projectId: number | null;
  groupIds: number[];
}

/** A project's labels: its own, and its group's (with the group's ancestors unless `includeAncestors` is false). */
export async function projectLabelScope(db: Db, project: { id: number; namespace_id: number }, includeAncestors = true): Promise<LabelScope> {
  const ns = await db.selectFrom('namespaces').select(['id', 'kind', 'traversal']).where('id', '=', project.namespace_id).executeTakeFirst();
  const groupIds = ns && ns.kind === 'group' ? (includeAncestors ? ancestorIds(ns) : [ns.id]) : [];
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

/**
 * The labels named `names` (exact titles) that the project may use, one per title: the project's own label, else
 * the nearest group's. Titles nobody defines are left out; the result follows the order of `names`.
 */
export async function findLabelsForProject(db: Db, projectId: number, names: string[]): Promise<LabelRow[]> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return [];
  const project = await db.selectFrom('projects').select(['id', 'namespace_id']).where('id', '=', projectId).executeTakeFirst();
  if (!project) return [];
  const scope = await projectLabelScope(db, project);
  const rows = await db.selectFrom('labels').selectAll().where((eb) => inLabelScope(eb, scope)).where('title', 'in', wanted).execute();
  rows.sort(byNearness(scope));
  const first = new Map<string, LabelRow>();
  for (const r of rows) if (!first.has(r.title)) first.set(r.title, r);
  return wanted.map((n) => first.get(n)).filter((r): r is LabelRow => !!r);
}
