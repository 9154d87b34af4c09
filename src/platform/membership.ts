import type { Selectable } from 'kysely';
import type { Db } from './db/index.ts';
import { dialectOf, type DialectName } from './db/dialect.ts';
import type { NamespacesTable, ProjectsTable } from './db/schema.ts';
import type { ServiceDeps } from './deps.ts';

export const AccessLevel = {
  NO_ACCESS: 0,
  MINIMAL_ACCESS: 5,
  GUEST: 10,
  PLANNER: 15,
  REPORTER: 20,
  DEVELOPER: 30,
  MAINTAINER: 40,
  OWNER: 50,
} as const;

export const ROLE_LEVELS = [10, 20, 30, 40, 50] as const;
export const ALL_ACCESS_LEVELS = [0, 5, 10, 15, 20, 30, 40, 50] as const;

export const Visibility = { private: 0, internal: 10, public: 20 } as const;
export type VisibilityName = keyof typeof Visibility;

export function visibilityName(level: number): VisibilityName {
  return level >= 20 ? 'public' : level >= 10 ? 'internal' : 'private';
}

export type NamespaceRow = Selectable<NamespacesTable>;
export type ProjectRow = Selectable<ProjectsTable>;

/** Ids from the root down to the namespace itself, read from its traversal path "/1/4/9/". */
export function ancestorIds(ns: Pick<NamespaceRow, 'traversal'>): number[] {
  return ns.traversal.split('/').filter(Boolean).map(Number);
}

/** The group a project belongs to (its namespace, when that is a group); null for a personal project. */
export async function groupOfProject(db: Db, project: Pick<ProjectRow, 'namespace_id'>): Promise<NamespaceRow | null> {
  return (await db.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).where('kind', '=', 'group').executeTakeFirst()) ?? null;
}

const active = (now: number) => (eb: any) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);

/**
 * The user's effective level in each group: the highest of its own membership, the memberships inherited from
 * every ancestor group, and the group shares of the group or an ancestor (a group shared with another group gives
 * that group's members the lower of the share's level and their level there). Two queries for any number of groups.
 */
export async function groupAccessLevels(db: Db, userId: number, groups: Array<Pick<NamespaceRow, 'id' | 'traversal'>>, now = Date.now()): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (groups.length === 0) return out;
  const ids = new Set<number>();
  for (const g of groups) for (const a of ancestorIds(g)) ids.add(a);
  const links = await db.selectFrom('group_group_links as l').innerJoin('namespaces as w', 'w.id', 'l.shared_with_group_id')
    .select(['l.shared_group_id', 'l.group_access', 'w.traversal'])
    .where('l.shared_group_id', 'in', [...ids])
    .where((eb) => eb.or([eb('l.expires_at', 'is', null), eb('l.expires_at', '>', now)])).execute();
  const memberOf = new Set(ids);
  for (const l of links) for (const a of ancestorIds(l)) memberOf.add(a);
  const rows = await db.selectFrom('members').select(['source_id', 'access_level'])
    .where('source_type', '=', 'Namespace').where('user_id', '=', userId)
    .where('source_id', 'in', [...memberOf]).where(active(now)).execute();
  const direct = new Map(rows.map((r) => [r.source_id, r.access_level]));
  const inherited = (n: Pick<NamespaceRow, 'traversal'>) => Math.max(0, ...ancestorIds(n).map((a) => direct.get(a) ?? 0));
  const viaShares = new Map<number, number>();
  for (const l of links) {
    const level = Math.min(l.group_access, inherited(l));
    if (level > (viaShares.get(l.shared_group_id) ?? 0)) viaShares.set(l.shared_group_id, level);
  }
  for (const g of groups) {
    let best = 0;
    for (const a of ancestorIds(g)) best = Math.max(best, direct.get(a) ?? 0, viaShares.get(a) ?? 0);
    if (best > 0) out.set(g.id, best);
  }
  return out;
}

export interface ProjectAccess {
  /** Direct membership of the project (null when none). */
  project: number | null;
  /** Highest membership through the project's group hierarchy (null when none or a personal project). */
  group: number | null;
  /** What the user may do: the highest of the above, Owner for the personal namespace's owner. */
  effective: number;
}

/**
 * Access of one user to many projects, in a constant number of queries: direct memberships, the
 * project's group hierarchy, the personal namespace's owner, and groups the project is shared with
 * (a share grants the lower of the link's level and the user's level in that group).
 */
export async function projectAccessLevels(
  db: Db,
  userId: number,
  projects: Array<Pick<ProjectRow, 'id' | 'namespace_id'>>,
  now = Date.now(),
): Promise<Map<number, ProjectAccess>> {
  const out = new Map<number, ProjectAccess>();
  if (projects.length === 0) return out;
  const nsIds = [...new Set(projects.map((p) => p.namespace_id))];
  const projectIds = projects.map((p) => p.id);
  const [namespaces, direct, links] = await Promise.all([
    db.selectFrom('namespaces').select(['id', 'kind', 'owner_id', 'traversal']).where('id', 'in', nsIds).execute(),
    db.selectFrom('members').select(['source_id', 'access_level'])
      .where('source_type', '=', 'Project').where('user_id', '=', userId)
      .where('source_id', 'in', projectIds).where(active(now)).execute(),
    db.selectFrom('project_group_links as l').innerJoin('namespaces as g', 'g.id', 'l.group_id')
      .select(['l.project_id', 'l.group_id', 'l.group_access', 'g.traversal'])
      .where('l.project_id', 'in', projectIds)
      .where((eb) => eb.or([eb('l.expires_at', 'is', null), eb('l.expires_at', '>', now)])).execute(),
  ]);
  const nsById = new Map(namespaces.map((n) => [n.id, n]));
  const groups = new Map<number, Pick<NamespaceRow, 'id' | 'traversal'>>();
  for (const n of namespaces) if (n.kind === 'group') groups.set(n.id, n);
  for (const l of links) groups.set(l.group_id, { id: l.group_id, traversal: l.traversal });
  const groupLevels = await groupAccessLevels(db, userId, [...groups.values()], now);
  const directById = new Map(direct.map((r) => [r.source_id, r.access_level]));
  const sharedById = new Map<number, number>();
  for (const l of links) {
    const level = Math.min(l.group_access, groupLevels.get(l.group_id) ?? 0);
    if (level > (sharedById.get(l.project_id) ?? 0)) sharedById.set(l.project_id, level);
  }
  for (const p of projects) {
    const ns = nsById.get(p.namespace_id);
    const projectLevel = directById.get(p.id) ?? null;
    const groupLevel = ns?.kind === 'group' ? groupLevels.get(ns.id) ?? null : null;
    const ownerLevel = ns?.kind === 'user' && ns.owner_id === userId ? AccessLevel.OWNER : 0;
    const shared = sharedById.get(p.id) ?? 0;
    out.set(p.id, { project: projectLevel, group: groupLevel, effective: Math.max(projectLevel ?? 0, groupLevel ?? 0, ownerLevel, shared) });
  }
  return out;
}

/** The groups a user reaches through memberships (each with its effective level) and their personal namespace. */
export interface Authorization {
  userId: number;
  /** The database it was read from: how its id lists are written into that database's SQL (`inIdList`). */
  dialect: DialectName;
  personalNs: number[];
  groupLevels: Map<number, number>;
  /**
   * Projects reached by direct membership or a group share, with the level each gives (null when there
   * are too many to inline; the query then reads them itself).
   */
  projectLevels: Map<number, number> | null;
  /** The direct memberships and the share levels behind projectLevels (null with it). */
  direct: Map<number, number> | null;
  shared: Map<number, number> | null;
}

/** Above this many, authorised project ids stay a subquery instead of a literal list. */
const INLINE_LIMIT = 2000;

/** The user's authorisation, reused for the read-cache window (see read-cache.ts). */
export function userAuthorization(deps: ServiceDeps, userId: number, now = Date.now()): Promise<Authorization> {
  return deps.caches.define<number, Authorization>('authorizations', { max: 10_000 }).get(userId, () => readAuthorization(deps.db, userId, now));
}

async function readAuthorization(db: Db, userId: number, now: number): Promise<Authorization> {
  const [personal, memberships, projects] = await Promise.all([
    db.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', userId).execute(),
    db.selectFrom('members as m').innerJoin('namespaces as n', 'n.id', 'm.source_id')
      .select(['n.id', 'n.traversal', 'm.access_level'])
      .where('m.source_type', '=', 'Namespace').where('m.user_id', '=', userId)
      .where((eb) => eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', now)])).execute(),
    db.selectFrom('members').select(['source_id', 'access_level'])
      .where('source_type', '=', 'Project').where('user_id', '=', userId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])).limit(INLINE_LIMIT + 1).execute(),
  ]);
  const groupLevels = new Map<number, number>();
  if (memberships.length) {
    const direct = new Map(memberships.map((m) => [m.id, m.access_level]));
    // Descendants of every group the user belongs to: traversal paths with the group's path as prefix
    // ("/1/4/" .. "/1/40" is exactly the "/1/4/..." range, since '0' follows '/').
    // (No filter on kind: ids are unique across namespaces, so only groups lie under a group's prefix,
    // and the ranges alone let the index answer.)
    const rows = await db.selectFrom('namespaces').select(['id', 'traversal'])
      .where((eb) => eb.or(memberships.map((m) => eb.and([eb('traversal', '>=', m.traversal), eb('traversal', '<', `${m.traversal.slice(0, -1)}0`)]))))
      .execute();
    for (const g of rows) {
      let best = 0;
      for (const a of ancestorIds(g)) best = Math.max(best, direct.get(a) ?? 0);
      if (best > 0) groupLevels.set(g.id, best);
    }
    // Groups shared with a group the user reaches, and everything below them, at the lower of the share's level
    // and the user's level in the group shared with.
    const links = await db.selectFrom('group_group_links as l').innerJoin('namespaces as s', 's.id', 'l.shared_group_id')
      .select(['l.shared_with_group_id', 'l.group_access', 's.traversal'])
      .where('l.shared_with_group_id', 'in', [...groupLevels.keys()])
      .where((eb) => eb.or([eb('l.expires_at', 'is', null), eb('l.expires_at', '>', now)])).execute();
    if (links.length) {
      const below = await db.selectFrom('namespaces').select(['id', 'traversal'])
        .where((eb) => eb.or(links.map((l) => eb.and([eb('traversal', '>=', l.traversal), eb('traversal', '<', `${l.traversal.slice(0, -1)}0`)]))))
        .execute();
      const byMembership = new Map(groupLevels);
      for (const g of below) {
        for (const l of links) {
          if (!g.traversal.startsWith(l.traversal)) continue;
          const level = Math.min(l.group_access, byMembership.get(l.shared_with_group_id) ?? 0);
          if (level > (groupLevels.get(g.id) ?? 0)) groupLevels.set(g.id, level);
        }
      }
    }
  }
  // Literal id lists (rather than subqueries) let PostgreSQL combine the arms of the authorisation test
  // with index bitmaps instead of filtering every row.
  let projectLevels: Map<number, number> | null = null;
  let direct: Map<number, number> | null = null;
  let shared: Map<number, number> | null = null;
  if (projects.length <= INLINE_LIMIT) {
    direct = new Map(projects.map((m) => [m.source_id, m.access_level]));
    shared = new Map();
    const groups = [...groupLevels.keys()];
    if (groups.length) {
      const links = await db.selectFrom('project_group_links').select(['project_id', 'group_id', 'group_access'])
        .where('group_id', 'in', groups).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .limit(INLINE_LIMIT + 1).execute();
      if (links.length + direct.size > INLINE_LIMIT) direct = shared = null;
      else {
        for (const l of links) {
          const level = Math.min(l.group_access, groupLevels.get(l.group_id) ?? 0);
          if (level > (shared.get(l.project_id) ?? 0)) shared.set(l.project_id, level);
        }
      }
    }
    if (direct && shared) {
      projectLevels = new Map(direct);
      for (const [id, l] of shared) if (l > (projectLevels.get(id) ?? 0)) projectLevels.set(id, l);
    }
  }
  return { userId, dialect: dialectOf(db), personalNs: personal.map((p) => p.id), groupLevels, projectLevels, direct, shared };
}


/** The access of the authorised user to one project, from the authorisation alone; null when it is not all inlined. */
export function accessFromAuthorizationOf(a: Authorization, p: Pick<ProjectRow, 'id' | 'namespace_id'>): ProjectAccess | null {
  if (!a.direct || !a.shared) return null;
  const project = a.direct.get(p.id) ?? null;
  const group = a.groupLevels.get(p.namespace_id) ?? null;
  const owner = a.personalNs.includes(p.namespace_id) ? AccessLevel.OWNER : 0;
  return { project, group, effective: Math.max(project ?? 0, group ?? 0, owner, a.shared.get(p.id) ?? 0) };
}
