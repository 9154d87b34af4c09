import type { Db } from '../platform/db/index.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { NotFoundError, ForbiddenError, ProjectMovedError, RuleError } from '../platform/errors.ts';
import { isFeatureEnabled } from '../platform/features.ts';
import { liveProjectById } from '../platform/project-rows.ts';
import {
  AccessLevel, accessFromAuthorizationOf, groupAccessLevels, projectAccessLevels, userAuthorization,
  type NamespaceRow, type ProjectAccess, type ProjectRow,
} from '../platform/membership.ts';
import { groupDenial, projectDenial, type Denial, type GroupAbility, type ProjectAbility } from '../platform/access/policy.ts';
import type { Actor } from '../platform/access/actor.ts';
import { parseIdOrPath } from './params.ts';

// Finding a project or group for a request and holding the caller to an ability of the access policy:
// what the caller cannot read answers 404, what it can read but not do answers 403.

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

export interface AccessLookup {
  /**
   * The answer serves this request only: a state-changing request, which voided every read cache as it began. The
   * access is then computed for this project alone (a few indexed queries) rather than from the user's whole
   * authorisation (every membership, group and share), which nothing after the request would reuse; at the
   * request's read epoch (the actor's), the access computed at the same epoch is reused.
   */
  once?: boolean;
}

export async function projectAccessFor(deps: ServiceDeps, actor: Actor, project: ProjectRow, o: AccessLookup = {}): Promise<ProjectAccess> {
  const user = actor.user;
  if (!user) return NO_ACCESS;
  const read = async () => (await projectAccessLevels(deps.db, user.id, [project])).get(project.id) ?? NO_ACCESS;
  if (o.once) {
    if (actor.epoch === undefined) return read();
    return deps.caches.define<string, ProjectAccess>('project-access', { max: 10_000, epoch: true }).get(`${user.id}:${project.id}`, read, actor.epoch);
  }
  // The user's memberships, usually cached for a moment, answer without a query about this project. A
  // state-changing request voided the caches as it began, so for it they would be read whole for one answer.
  return accessFromAuthorizationOf(await userAuthorization(deps, user.id), project) ?? read();
}

/** The answer to a refusal, in the reference's words. */
function refusal(denial: Denial, what: 'Project' | 'Group'): Error {
  if (denial === 'not_found') return new NotFoundError(what);
  if (denial === 'read_only') return new RuleError('bad_request', 'The repository is temporarily read-only. Please try again later.');
  return new ForbiddenError();
}

/**
 * Looks a project up by id or full path and holds the caller to `ability` (read_project by default).
 * An old path (a redirect route left by a rename or transfer) reaches the project too: with the
 * instance feature `api_redirect_moved_projects` on, the caller is sent to the id URL instead (301).
 */
export async function findProject(deps: ServiceDeps, actor: Actor, idOrPath: string | number, ability: ProjectAbility = 'read_project', o: AccessLookup = {}): Promise<ProjectContext> {
  const { db } = deps;
  const key = parseIdOrPath(String(idOrPath));
  if (!storable(key)) throw new NotFoundError('Project');
  let project: ProjectRow | undefined;
  let moved = false;
  if ('id' in key) {
    project = await liveProjectById(deps, key.id, o.once ? actor.epoch : undefined);
  } else if (key.path.includes('/')) {
    const lower = key.path.toLowerCase();
    project = await db.selectFrom('projects').selectAll().where('full_path_lower', '=', lower).where('pending_delete', '=', 0).executeTakeFirst();
    if (!project) {
      project = await db.selectFrom('redirect_routes as r').innerJoin('projects as p', 'p.id', 'r.source_id')
        .selectAll('p').where('r.source_type', '=', 'Project').where('r.path_lower', '=', lower)
        .where('p.pending_delete', '=', 0).executeTakeFirst();
      moved = !!project;
    }
  }
  if (!project) throw new NotFoundError('Project');
  const access = await projectAccessFor(deps, actor, project, o);
  if (projectDenial(actor, 'read_project', project, access.effective)) throw new NotFoundError('Project');
  if (moved && (await isFeatureEnabled(db, 'api_redirect_moved_projects'))) throw new ProjectMovedError(project.id);
  const denial = projectDenial(actor, ability, project, access.effective);
  if (denial) throw refusal(denial, 'Project');
  return { project, access, level: actor.admin ? AccessLevel.OWNER : access.effective };
}

/** Looks a group up by id or full path (no redirects) and holds the caller to `ability` (read_group by default). */
export async function findGroup(db: Db, actor: Actor, idOrPath: string | number, ability: GroupAbility = 'read_group'): Promise<GroupContext> {
  const key = parseIdOrPath(String(idOrPath));
  if (!storable(key)) throw new NotFoundError('Group');
  let q = db.selectFrom('namespaces').selectAll().where('kind', '=', 'group').where('pending_delete', '=', 0);
  q = 'id' in key ? q.where('id', '=', key.id) : q.where('full_path_lower', '=', key.path.toLowerCase());
  const group = await q.executeTakeFirst();
  if (!group) throw new NotFoundError('Group');
  const level = actor.user ? (await groupAccessLevels(db, actor.user.id, [group])).get(group.id) ?? 0 : 0;
  const denial = groupDenial(actor, ability, group, level);
  if (denial) throw refusal(denial, 'Group');
  return { group, level: actor.admin ? AccessLevel.OWNER : level };
}
