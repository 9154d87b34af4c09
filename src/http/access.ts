import type { Db } from '../platform/db/index.ts';
import { NotFoundError, ForbiddenError } from '../platform/errors.ts';
import {
  AccessLevel, groupAccessLevels, projectAccessLevels, type NamespaceRow, type ProjectAccess, type ProjectRow,
} from '../platform/membership.ts';
import type { Actor } from './auth.ts';
import { parseIdOrPath } from './params.ts';

// Roles and visibility, written once: what a caller cannot read answers 404, never 403.

export interface ProjectContext {
  project: ProjectRow;
  access: ProjectAccess;
  /** Effective role level; administrators count as Owner. */
  level: number;
}

export interface GroupContext {
  group: NamespaceRow;
  level: number;
}

/** Ids beyond 32 bits and paths with a NUL match nothing; asking the database would only make it complain. */
function storable(key: { id: number } | { path: string }): boolean {
  return 'id' in key ? key.id <= 2_147_483_647 : !key.path.includes('\u0000');
}

const NO_ACCESS: ProjectAccess = { project: null, group: null, effective: 0 };

export function canReadVisibility(actor: Actor, visibilityLevel: number, level: number): boolean {
  if (actor.admin) return true;
  if (visibilityLevel >= 20) return true;
  if (visibilityLevel >= 10 && actor.user && !actor.user.external) return true;
  return level >= AccessLevel.GUEST;
}

export async function projectAccessFor(db: Db, actor: Actor, project: ProjectRow): Promise<ProjectAccess> {
  if (!actor.user) return NO_ACCESS;
  return (await projectAccessLevels(db, actor.user.id, [project])).get(project.id) ?? NO_ACCESS;
}

/** Looks a project up by id or full path; 404 "Project Not Found" when missing or unreadable. */
export async function findProject(db: Db, actor: Actor, idOrPath: string | number): Promise<ProjectContext> {
  const key = parseIdOrPath(String(idOrPath));
  if (!storable(key)) throw new NotFoundError('Project');
  let q = db.selectFrom('projects').selectAll().where('pending_delete', '=', 0);
  if ('id' in key) q = q.where('id', '=', key.id);
  else if (key.path.includes('/')) q = q.where('full_path_lower', '=', key.path.toLowerCase());
  else throw new NotFoundError('Project');
  const project = await q.executeTakeFirst();
  if (!project) throw new NotFoundError('Project');
  const access = await projectAccessFor(db, actor, project);
  if (!canReadVisibility(actor, project.visibility_level, access.effective)) throw new NotFoundError('Project');
  return { project, access, level: actor.admin ? AccessLevel.OWNER : access.effective };
}

/** The caller must hold at least `min` on the project (administrators always do); readable but below it is 403. */
export function requireProjectLevel(ctx: ProjectContext, min: number): void {
  if (ctx.level < min) throw new ForbiddenError();
}

/** Looks a group up by id or full path (no redirects); 404 "Group Not Found" when missing or unreadable. */
export async function findGroup(db: Db, actor: Actor, idOrPath: string | number): Promise<GroupContext> {
  const key = parseIdOrPath(String(idOrPath));
  if (!storable(key)) throw new NotFoundError('Group');
  let q = db.selectFrom('namespaces').selectAll().where('kind', '=', 'group');
  q = 'id' in key ? q.where('id', '=', key.id) : q.where('full_path_lower', '=', key.path.toLowerCase());
  const group = await q.executeTakeFirst();
  if (!group) throw new NotFoundError('Group');
  const level = actor.user ? (await groupAccessLevels(db, actor.user.id, [group])).get(group.id) ?? 0 : 0;
  if (!canReadVisibility(actor, group.visibility_level, level)) throw new NotFoundError('Group');
  return { group, level: actor.admin ? AccessLevel.OWNER : level };
}

export function requireGroupLevel(ctx: GroupContext, min: number): void {
  if (ctx.level < min) throw new ForbiddenError();
}
