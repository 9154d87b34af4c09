import { sql, type Expression, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../http/auth.ts';
import { parseDateTime } from '../../http/params.ts';
import { AccessLevel, userAuthorization, type Authorization } from '../../platform/membership.ts';
import { authorizedExpr, groupsAtLeast, visibleExpr } from '../../platform/access/queries.ts';
import { BadRequestError } from '../../platform/errors.ts';
import { containsText, dialectOf, startsWithText } from '../../platform/db/dialect.ts';
import { FEATURE_LEVEL, type Project } from './projects.service.ts';
import { currentKeys, type RowKey } from '../../platform/project-rows.ts';
import type { ProjectAccess } from '../../platform/membership.ts';

// The project listing: the visibility base set of the caller, every filter of GET /projects, and the
// order with its id tie-breaker, as one SQL query (the authorisation sets are computed first, in at
// most three small queries, and inlined as id lists).

export const ORDER_BY = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at', 'similarity', 'star_count', 'repository_size', 'storage_size', 'packages_size', 'wiki_size'] as const;
export const USER_ORDER_BY = ['id', 'name', 'path', 'created_at', 'updated_at', 'last_activity_at', 'similarity', 'star_count'] as const;
const ADMIN_ORDERS = new Set(['repository_size', 'storage_size', 'packages_size', 'wiki_size']);

export interface ListInput {
  archived?: boolean;
  id_after?: number;
  id_before?: number;
  imported?: boolean;
  last_activity_after?: string;
  last_activity_before?: string;
  membership?: boolean;
  min_access_level?: number;
  order_by?: string;
  owned?: boolean;
  repository_checksum_failed?: boolean;
  wiki_checksum_failed?: boolean;
  repository_storage?: string;
  search_namespaces?: boolean;
  search?: string;
  simple?: boolean;
  sort?: 'asc' | 'desc';
  starred?: boolean;
  statistics?: boolean;
  topic?: string | string[];
  topic_id?: number;
  visibility?: 'public' | 'internal' | 'private';
  with_custom_attributes?: boolean;
  with_issues_enabled?: boolean;
  with_merge_requests_enabled?: boolean;
  with_programming_language?: string;
  updated_before?: string;
  updated_after?: string;
  custom_attributes?: Record<string, unknown>;
  include_pending_delete?: boolean;
  pagination?: string;
}


/** The reference's search terms: words or "quoted phrases"; terms under 3 characters drop out when a longer one exists. */
export function searchTerms(q: string): { terms: string[]; exact: boolean } {
  const terms: string[] = [];
  const re = /"([^"]+)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(q))) terms.push((m[1] ?? m[2]).toLowerCase());
  const long = terms.filter((t) => t.length >= 3);
  if (long.length) return { terms: long, exact: false };
  return { terms: [q.toLowerCase()], exact: true };
}

function searchExpr(eb: any, q: string, columns: any[]): Expression<SqlBool> {
  const { terms, exact } = searchTerms(q);
  if (exact) return eb.or(columns.map((c) => eb(sql`lower(${c})`, '=', terms[0])));
  return eb.or(columns.map((c) => eb.and(terms.map((t) => containsText(c, t)))));
}

/**
 * The candidates of a `search_namespaces` search taken from the index of migration 0032 (the exact condition is
 * still applied): SQLite's trigram table of full path, name with namespace and description; on PostgreSQL the
 * trigram indexes of each column, which together hold every match unless a term spans the " / " between the
 * namespace's full name and the project's name (a term with a space or a slash: then no narrowing).
 */
function narrowByNamesIndex(db: ServiceDeps['db'], q: any, search: string): any {
  const { terms, exact } = searchTerms(search);
  if (exact) return q;
  if (dialectOf(db) === 'sqlite') {
    const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
    return q.where('projects.id', 'in', sql`(select rowid from project_names_search where project_names_search match ${match})`);
  }
  if (terms.some((t) => /[\s/]/.test(t))) return q;
  for (const t of terms) {
    q = q.where((eb: any) => eb.or([
      containsText('projects.full_path', t), containsText('projects.name', t), containsText('projects.description', t),
      eb('projects.namespace_id', 'in', db.selectFrom('namespaces').select('namespaces.id').where(containsText('namespaces.full_name', t))),
    ]));
  }
  return q;
}

export interface ListScope {
  /** GET /users/:user_id/projects: only that personal namespace; owned/membership do not apply. */
  namespaceId?: number;
  /** GET /projects/:id/forks */
  forkedFrom?: number;
  /**
   * GET /groups/:id/projects: the projects in these namespaces (the group, or the group and its subgroups), and
   * with `sharedWith` those shared with that group. owned/min_access_level narrow them as on GET /projects.
   */
  group?: { namespaceIds: number[]; sharedWith?: number };
  /** GET /users/:id/starred_projects: the projects that user starred. */
  starredBy?: number;
}

export interface BuiltList {
  query: any;
  /** The caller's authorisation (null when anonymous), reused to compute per-row access. */
  auth: Authorization | null;
  empty: boolean;
  orderBy: string;
  sort: 'asc' | 'desc';
}

/**
 * The listing query with every filter and the order. `empty` says the answer is known to be empty
 * (for example an unknown topic) so no query needs to run.
 */
export async function buildListQuery(deps: ServiceDeps, actor: Actor, i: ListInput, scope: ListScope = {}): Promise<BuiltList> {
  const db = deps.db;
  const now = deps.clock.now();
  if ((i.updated_before || i.updated_after) && i.order_by !== 'updated_at') {
    throw new BadRequestError('`updated_at` filter and `updated_at` sorting must be paired');
  }
  const sort = i.sort === 'asc' ? 'asc' : 'desc';
  let orderBy = i.order_by ?? 'created_at';
  if (ADMIN_ORDERS.has(orderBy) && !actor.admin) orderBy = 'created_at';
  const similarity = orderBy === 'similarity' && !!i.search && !!actor.user;
  if (orderBy === 'similarity' && !similarity) orderBy = 'created_at';

  const auth = actor.user ? await userAuthorization(deps, actor.user.id, now) : null;
  // PostgreSQL combines literal id lists with index bitmaps; SQLite is quicker reading the memberships itself.
  const inline = dialectOf(db) === 'postgres';
  let empty = false;
  // Stored names, paths and values never hold NUL (PostgreSQL text cannot): such a filter matches nothing.
  if (hasNul([i.search, i.topic, i.with_programming_language, i.repository_storage, i.custom_attributes])) {
    return { query: db.selectFrom('projects').selectAll('projects'), empty: true, orderBy, sort, auth };
  }
  let q: any = db.selectFrom('projects').selectAll('projects');
  if (!(actor.admin && i.include_pending_delete)) q = q.where('projects.pending_delete', '=', 0);

  // The visibility base set.
  const restrict = !scope.namespaceId && (i.owned || i.membership || i.min_access_level !== undefined);
  if (!actor.user) {
    if (restrict || (scope.namespaceId && i.min_access_level !== undefined)) empty = true;
    q = q.where('projects.visibility_level', '=', 20);
  } else if (!scope.namespaceId && i.owned) {
    const owned = [...auth!.personalNs, ...groupsAtLeast(auth!, AccessLevel.OWNER)];
    if (owned.length === 0) empty = true;
    else q = q.where('projects.namespace_id', 'in', owned);
  } else if (i.min_access_level !== undefined) {
    q = q.where((eb: any) => authorizedExpr(eb, auth!, i.min_access_level!, now, inline));
  } else if ((!scope.namespaceId && i.membership) || similarity) {
    q = q.where((eb: any) => authorizedExpr(eb, auth!, AccessLevel.GUEST, now, inline));
  } else if (!actor.admin) {
    q = q.where((eb: any) => visibleExpr(eb, actor, auth, now, inline)!);
  }
  if (scope.namespaceId !== undefined) q = q.where('projects.namespace_id', '=', scope.namespaceId);
  if (scope.forkedFrom !== undefined) q = q.where('projects.forked_from_project_id', '=', scope.forkedFrom);
  if (scope.group) {
    const g = scope.group;
    q = q.where((eb: any) => eb.or([
      eb('projects.namespace_id', 'in', g.namespaceIds),
      ...(g.sharedWith !== undefined ? [eb('projects.id', 'in', db.selectFrom('project_group_links').select('project_id').where('group_id', '=', g.sharedWith))] : []),
    ]));
  }
  if (scope.starredBy !== undefined) {
    q = q.where('projects.id', 'in', db.selectFrom('users_star_projects').select('project_id').where('user_id', '=', scope.starredBy));
  }

  // Filters (all AND-ed).
  if (i.archived !== undefined) q = q.where('projects.archived', '=', i.archived ? 1 : 0);
  if (i.visibility) q = q.where('projects.visibility_level', '=', { private: 0, internal: 10, public: 20 }[i.visibility]);
  if (i.id_after !== undefined) q = q.where('projects.id', '>', i.id_after);
  if (i.id_before !== undefined) q = q.where('projects.id', '<', i.id_before);
  if (i.last_activity_after) q = q.where('projects.last_activity_at', '>', parseDateTime(i.last_activity_after)!);
  if (i.last_activity_before) q = q.where('projects.last_activity_at', '<', parseDateTime(i.last_activity_before)!);
  if (i.updated_after) q = q.where('projects.updated_at', '>=', parseDateTime(i.updated_after)!);
  if (i.updated_before) q = q.where('projects.updated_at', '<=', parseDateTime(i.updated_before)!);
  if (i.starred && actor.user) {
    q = q.where('projects.id', 'in', db.selectFrom('users_star_projects').select('project_id').where('user_id', '=', actor.user.id));
  }
  if (i.imported && actor.user) q = q.where('projects.creator_id', '=', actor.user.id).where('projects.import_type', 'is not', null);
  if (i.repository_checksum_failed || i.wiki_checksum_failed) empty = true; // no checksum has ever failed
  if (i.repository_storage !== undefined && actor.admin) q = q.where('projects.repository_storage', '=', i.repository_storage);
  for (const [flag, col] of [[i.with_issues_enabled, 'issues_access_level'], [i.with_merge_requests_enabled, 'merge_requests_access_level']] as const) {
    if (!flag) continue;
    // The feature must be available to the caller: enabled, or members-only and the caller a member.
    if (actor.admin) q = q.where(`projects.${col}`, '>=', FEATURE_LEVEL.private);
    else if (!auth) q = q.where(`projects.${col}`, '>=', FEATURE_LEVEL.enabled);
    else q = q.where((eb: any) => eb.or([
      eb(`projects.${col}`, '>=', FEATURE_LEVEL.enabled),
      eb.and([eb(`projects.${col}`, '=', FEATURE_LEVEL.private), authorizedExpr(eb, auth, AccessLevel.GUEST, now, inline)]),
    ]));
  }
  if (i.with_programming_language) {
    q = q.where('projects.id', 'in', db.selectFrom('project_languages').select('project_id').where('name_lower', '=', i.with_programming_language.toLowerCase()));
  }
  const topicNames = [...new Set((Array.isArray(i.topic) ? i.topic : i.topic ? [i.topic] : []).flatMap((t) => String(t).split(',')).map((t) => t.trim().toLowerCase()).filter(Boolean))];
  if (topicNames.length) {
    const found = await db.selectFrom('topics').select(['id', 'name_lower']).where('name_lower', 'in', topicNames).execute();
    if (found.length < topicNames.length) empty = true;
    for (const t of found) q = q.where('projects.id', 'in', db.selectFrom('project_topics').select('project_id').where('topic_id', '=', t.id));
  }
  if (i.topic_id !== undefined) q = q.where('projects.id', 'in', db.selectFrom('project_topics').select('project_id').where('topic_id', '=', i.topic_id));
  if (actor.admin && i.custom_attributes && typeof i.custom_attributes === 'object') {
    for (const [k, v] of Object.entries(i.custom_attributes)) {
      q = q.where('projects.id', 'in', db.selectFrom('project_custom_attributes').select('project_id').where('key', '=', k).where('value', '=', String(v)));
    }
  }
  if (i.search) {
    if (i.search_namespaces) {
      q = q.innerJoin('namespaces as sns', 'sns.id', 'projects.namespace_id');
      q = q.where((eb: any) => searchExpr(eb, i.search!, [sql.ref('projects.full_path'), sql`(sns.full_name || ' / ' || projects.name)`, sql.ref('projects.description')]));
      q = narrowByNamesIndex(db, q, i.search);
    } else {
      q = q.where((eb: any) => searchExpr(eb, i.search!, [sql.ref('projects.path'), sql.ref('projects.name'), sql.ref('projects.description')]));
      // SQLite: the trigram index narrows the candidates to projects holding every term in some column.
      const { terms, exact } = searchTerms(i.search);
      if (!exact && dialectOf(db) === 'sqlite') {
        const match = terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
        q = q.where('projects.id', 'in', sql`(select rowid from projects_search where projects_search match ${match})`);
      }
    }
  }

  // Order: created_at is the id order; every other column gets an id tie-breaker in the same direction.
  if (similarity) {
    const s = i.search!.toLowerCase();
    q = q.orderBy(sql`case when lower(projects.path) = ${s} or lower(projects.name) = ${s} then 0 when ${startsWithText('projects.path', s)} or ${startsWithText('projects.name', s)} then 1 else 2 end`, 'asc').orderBy('projects.id', 'desc');
  } else if (orderBy === 'id' || orderBy === 'created_at') {
    q = q.orderBy('projects.id', sort);
  } else if (ADMIN_ORDERS.has(orderBy)) {
    // Every project has a statistics row (written with the project), so the join keeps them all and the
    // (size, project_id) index of the statistics table gives the order.
    q = q.innerJoin('project_statistics as ps', 'ps.project_id', 'projects.id')
      .orderBy(`ps.${orderBy}`, sort).orderBy('ps.project_id', sort);
  } else {
    q = q.orderBy(`projects.${orderBy}`, sort).orderBy('projects.id', sort);
  }
  return { query: q, empty, orderBy, sort, auth };
}

/**
 * The caller's access to a page of projects from the authorisation already loaded for the listing:
 * only the page's direct memberships and group shares remain to be read (two queries, in parallel).
 */
export async function accessFromAuthorization(deps: ServiceDeps, a: Authorization, rows: Array<Pick<Project, 'id' | 'namespace_id'>>): Promise<Map<number, ProjectAccess>> {
  const out = new Map<number, ProjectAccess>();
  if (rows.length === 0) return out;
  const now = deps.clock.now();
  const pageIds = rows.map((r) => r.id);
  const groups = [...a.groupLevels.keys()];
  const personalSet = new Set(a.personalNs);
  if (a.direct && a.shared) {
    // Everything is already known from the authorisation: no query.
    for (const r of rows) {
      const project = a.direct.get(r.id) ?? null;
      const group = a.groupLevels.get(r.namespace_id) ?? null;
      const owner = personalSet.has(r.namespace_id) ? AccessLevel.OWNER : 0;
      out.set(r.id, { project, group, effective: Math.max(project ?? 0, group ?? 0, owner, a.shared.get(r.id) ?? 0) });
    }
    return out;
  }
  const [direct, links] = await Promise.all([
    deps.db.selectFrom('members').select(['source_id', 'access_level'])
      .where('source_type', '=', 'Project').where('user_id', '=', a.userId).where('source_id', 'in', pageIds)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])).execute(),
    groups.length
      ? deps.db.selectFrom('project_group_links').select(['project_id', 'group_id', 'group_access'])
        .where('project_id', 'in', pageIds).where('group_id', 'in', groups)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)])).execute()
      : Promise.resolve([]),
  ]);
  const directById = new Map(direct.map((d) => [d.source_id, d.access_level]));
  const shared = new Map<number, number>();
  for (const l of links) {
    const level = Math.min(l.group_access, a.groupLevels.get(l.group_id) ?? 0);
    if (level > (shared.get(l.project_id) ?? 0)) shared.set(l.project_id, level);
  }
  const personal = new Set(a.personalNs);
  for (const r of rows) {
    const project = directById.get(r.id) ?? null;
    const group = a.groupLevels.get(r.namespace_id) ?? null;
    const owner = personal.has(r.namespace_id) ? AccessLevel.OWNER : 0;
    out.set(r.id, { project, group, effective: Math.max(project ?? 0, group ?? 0, owner, shared.get(r.id) ?? 0) });
  }
  return out;
}

// Counting stops at 10,001, but for a large base set even that is the costliest part of a page. A count
// that reached the cap is remembered for a minute (per caller and filters) unless a write passes; counts under
// the cap are always exact.
export async function cappedCount(deps: ServiceDeps, key: string, query: any, limit: number): Promise<number | null> {
  return deps.caches.define<string, number | null>('projects-over-cap', { max: 10_000, window: 60_000, keep: (n) => n === null }).get(key, async () => {
    const inner = query.clearSelect().clearOrderBy().select(sql<number>`1`.as('one')).limit(limit + 1);
    const counted = await sql<{ n: number | string }>`select count(*) as n from (${inner}) as counted`.execute(deps.db);
    const n = Number(counted.rows[0]?.n ?? 0);
    return n > limit ? null : n;
  });
}

// Which rows a page holds (and the listing's capped total) for a caller and a query string: a read cache (see
// platform/read-cache.ts). It keeps the ids only: the rows' versions are read with every page, so a row changed
// behind the server (another process) is read again at once (platform/project-rows.ts).
export async function cachedPage(deps: ServiceDeps, key: string, load: () => Promise<{ keys: RowKey[]; total: number | null }>): Promise<{ keys: RowKey[]; total: number | null }> {
  let loaded: { keys: RowKey[]; total: number | null } | undefined;
  const page = await deps.caches.define<string, { ids: number[]; total: number | null }>('project-pages', { max: 5_000 }).get(key, async () => {
    loaded = await load();
    return { ids: loaded.keys.map((k) => k.id), total: loaded.total };
  });
  return loaded ?? { keys: await currentKeys(deps.db, page.ids), total: page.total };
}

function hasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\0');
  if (Array.isArray(v)) return v.some(hasNul);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => k.includes('\0') || hasNul(x));
  return false;
}
