import type { ServiceDeps } from '../deps.ts';
import { sql, type Expression, type SqlBool } from 'kysely';
import { AccessLevel, Visibility, userAuthorization, type Authorization } from '../membership.ts';
import type { Db } from '../db/index.ts';
import { inIdList, jsonTextField, type DialectName, dialectOf } from '../db/dialect.ts';
import type { Actor } from './actor.ts';
import { FEATURE_LEVEL, settingFeatureDefault, type ProjectFeature } from './policy.ts';

// The access policy as SQL conditions, for listings that filter in the database: which projects a user is
// authorised for at a level, which projects and groups a caller may read. They follow the same rules as
// `policy.ts` (read_project, read_group) and the authorisation of `membership.ts`.

export function groupsAtLeast(a: Authorization, level: number): number[] {
  return [...a.groupLevels.entries()].filter(([, l]) => l >= level).map(([id]) => id);
}

/**
 * How a condition names the user's projects and groups: `true`, literal id lists (one parameter per id); `'bound'`,
 * each list as one parameter (`inIdList`: the statement's text does not depend on the user, so it is prepared once,
 * and binding stays cheap with hundreds of ids); `false`, subqueries over the memberships.
 */
export type IdLists = boolean | 'bound';

/** Projects the user is authorised for at `level` or higher, as one boolean expression. */
export function authorizedExpr(eb: any, a: Authorization, level: number, now: number, inline: IdLists): Expression<SqlBool> {
  const groups = groupsAtLeast(a, level);
  const parts: Expression<SqlBool>[] = [];
  if (a.projectLevels && inline === 'bound') {
    const ids = [...a.projectLevels.entries()].filter(([, l]) => l >= level).map(([id]) => id);
    const namespaces = [...a.personalNs, ...groups];
    if (ids.length) parts.push(inIdList(a.dialect, 'projects.id', ids));
    if (namespaces.length) parts.push(inIdList(a.dialect, 'projects.namespace_id', namespaces));
    return parts.length ? eb.or(parts) : sql<SqlBool>`1 = 0`;
  }
  if (a.projectLevels && inline) {
    const ids = [...a.projectLevels.entries()].filter(([, l]) => l >= level).map(([id]) => id);
    if (ids.length) parts.push(eb('projects.id', 'in', ids));
  } else {
    parts.push(eb('projects.id', 'in', eb.selectFrom('members').select('source_id')
      .where('source_type', '=', 'Project').where('user_id', '=', a.userId).where('access_level', '>=', level)
      .where((e: any) => e.or([e('expires_at', 'is', null), e('expires_at', '>', now)]))));
    if (groups.length) {
      parts.push(eb('projects.id', 'in', eb.selectFrom('project_group_links').select('project_id')
        .where('group_id', 'in', groups).where('group_access', '>=', level)
        .where((e: any) => e.or([e('expires_at', 'is', null), e('expires_at', '>', now)]))));
    }
  }
  if (a.personalNs.length) parts.push(eb('projects.namespace_id', 'in', a.personalNs));
  if (groups.length) parts.push(eb('projects.namespace_id', 'in', groups));
  if (parts.length === 0) return sql<SqlBool>`1 = 0`;
  return eb.or(parts);
}

/** What any caller may see: public, internal for signed-in non-external users, authorised, everything for admins. */
export function visibleExpr(eb: any, actor: Actor, a: Authorization | null, now: number, inline: IdLists): Expression<SqlBool> | null {
  if (actor.admin) return null;
  if (!actor.user || !a) return eb('projects.visibility_level', '=', 20);
  const open = eb('projects.visibility_level', '>=', actor.user.external ? 20 : 10);
  if (inline) return eb.or([open, authorizedExpr(eb, a, AccessLevel.GUEST, now, inline)]);
  // SQLite walks the id (or order) index and tests each row: most rows pass on visibility alone, and the
  // few private ones are each one unique-index probe, cheaper than building the membership list per query.
  const groups = groupsAtLeast(a, AccessLevel.GUEST);
  const active = (e: any) => e.or([e('expires_at', 'is', null), e('expires_at', '>', now)]);
  const parts: Expression<SqlBool>[] = [
    open,
    eb.exists(eb.selectFrom('members').select(sql`1`.as('one'))
      .where('source_type', '=', 'Project').whereRef('source_id', '=', 'projects.id').where('user_id', '=', a.userId)
      .where('access_level', '>=', AccessLevel.GUEST).where(active)),
  ];
  const namespaces = [...a.personalNs, ...groups];
  if (namespaces.length) parts.push(eb('projects.namespace_id', 'in', namespaces));
  if (groups.length) {
    parts.push(eb.exists(eb.selectFrom('project_group_links').select(sql`1`.as('one'))
      .whereRef('project_id', '=', 'projects.id').where('group_id', 'in', groups).where(active)));
  }
  return eb.or(parts);
}

/**
 * SQL condition: the namespace row `namespaces` is the user's through a membership of it or of an ancestor, or
 * through a share of it or of an ancestor with a group the user is a member of (at the lower of the two levels).
 */
export function memberOfSelfOrAncestor(userId: number, now: number, minLevel = 0) {
  return sql<boolean>`(exists (select 1 from members m join namespaces a on a.id = m.source_id
    where m.source_type = 'Namespace' and m.user_id = ${userId} and m.access_level >= ${minLevel}
      and (m.expires_at is null or m.expires_at > ${now})
      and namespaces.traversal like a.traversal || '%')
    or exists (select 1 from group_group_links l join namespaces sg on sg.id = l.shared_group_id
      join namespaces wg on wg.id = l.shared_with_group_id
      join members m2 on m2.source_type = 'Namespace' and m2.user_id = ${userId}
      join namespaces a2 on a2.id = m2.source_id
    where l.group_access >= ${minLevel} and m2.access_level >= ${minLevel}
      and (l.expires_at is null or l.expires_at > ${now}) and (m2.expires_at is null or m2.expires_at > ${now})
      and namespaces.traversal like sg.traversal || '%' and wg.traversal like a2.traversal || '%'))`;
}

/** SQL condition: groups the actor may read (not pending deletion; public; internal for signed-in non-external users; members; admins all). */
export function readableGroups(actor: Actor, now: number) {
  // A group pending deletion is no one's to read.
  if (actor.admin) return sql<boolean>`namespaces.pending_delete = 0`;
  if (!actor.user) return sql<boolean>`(namespaces.pending_delete = 0 and namespaces.visibility_level >= ${Visibility.public})`;
  const min = actor.user.external ? Visibility.public : Visibility.internal;
  return sql<boolean>`(namespaces.pending_delete = 0 and (namespaces.visibility_level >= ${min} or ${memberOfSelfOrAncestor(actor.user.id, now)}))`;
}


/** Ids of the live projects a user is authorised for at `min` or higher (memberships, group hierarchy, shares, own namespace). */
export async function authorizedProjectIds(deps: ServiceDeps, userId: number, min: number, now: number): Promise<Set<number>> {
  const a = await userAuthorization(deps, userId, now);
  const rows = await deps.db.selectFrom('projects').select('id').where('pending_delete', '=', 0)
    .where((eb) => authorizedExpr(eb, a, min, now, true)).execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * SQL condition on `issues` joined with `projects`: the issues the caller may read in listings and counts — the
 * project readable and its issues feature open to the caller (`read_issue`), and a confidential issue only for its
 * author, its assignees, Reporters and above, and administrators (`readsConfidentialIssue` in policy.ts).
 * `projectLevel`: one project whose `read_issue` the route already decided, with the caller's level there; only
 * confidentiality remains.
 */
export function readableIssuesExpr(eb: any, actor: Actor, a: Authorization | null, now: number, projectLevel?: number): Expression<SqlBool> | null {
  // Administrators read every issue, except where the feature is disabled (nobody uses it there, as in policy.ts).
  if (actor.admin) return projectLevel === undefined ? eb('projects.issues_access_level', '>', 0) : null;
  const parts: Expression<SqlBool>[] = [];
  if (projectLevel === undefined) {
    const visible = visibleExpr(eb, actor, a, now, 'bound');
    if (visible) parts.push(visible);
    // Features: enabled/public for whoever reads the project, private for members (Guest+), disabled for nobody.
    const open = eb('projects.issues_access_level', '>=', 20);
    parts.push(a ? eb.or([open, eb.and([eb('projects.issues_access_level', '>=', 10), authorizedExpr(eb, a, AccessLevel.GUEST, now, 'bound')])]) : open);
  }
  if (projectLevel !== undefined && projectLevel >= AccessLevel.REPORTER) return parts.length ? eb.and(parts) : null;
  if (!actor.user) parts.push(eb('issues.confidential', '=', 0));
  else {
    parts.push(eb.or([
      eb('issues.confidential', '=', 0),
      eb('issues.author_id', '=', actor.user.id),
      eb.exists(eb.selectFrom('issue_assignees').select(sql`1`.as('one'))
        .whereRef('issue_assignees.issue_id', '=', 'issues.id').where('issue_assignees.user_id', '=', actor.user.id)),
      ...(projectLevel === undefined && a ? [authorizedExpr(eb, a, AccessLevel.REPORTER, now, 'bound')] : []),
    ]));
  }
  return parts.length ? eb.and(parts) : null;
}

/**
 * SQL condition on `merge_requests` joined with `projects` (the target project): the merge requests the caller may
 * read in listings (`read_merge_request` of policy.ts): the project readable, its merge requests feature open to
 * the caller (private: Reporters and up), and its repository too (private: members; Reporters in a private project).
 */
export function readableMergeRequestsExpr(eb: any, actor: Actor, a: Authorization | null, now: number): Expression<SqlBool> | null {
  if (actor.admin) return eb.and([eb('projects.merge_requests_access_level', '>', 0), eb('projects.repository_access_level', '>', 0)]);
  const parts: Expression<SqlBool>[] = [];
  const visible = visibleExpr(eb, actor, a, now, 'bound');
  if (visible) parts.push(visible);
  const mrOpen = eb('projects.merge_requests_access_level', '>=', 20);
  const repoOpen = eb('projects.repository_access_level', '>=', 20);
  if (!a) {
    parts.push(mrOpen, repoOpen);
    return eb.and(parts);
  }
  const reporter = authorizedExpr(eb, a, AccessLevel.REPORTER, now, 'bound');
  const guest = authorizedExpr(eb, a, AccessLevel.GUEST, now, 'bound');
  parts.push(eb.or([mrOpen, eb.and([eb('projects.merge_requests_access_level', '>=', 10), reporter])]));
  parts.push(eb.or([repoOpen, eb.and([eb('projects.repository_access_level', '>=', 10), guest])]));
  parts.push(eb.or([eb('projects.visibility_level', '>=', 10), reporter]));
  return eb.and(parts);
}

/**
 * SQL expression on `projects`: the stored access level of a feature kept in `settings` (wiki, snippets, ...), as
 * `featureLevel` of policy.ts reads it: the name stored, or the feature's default when absent or unknown. Only for
 * features that are not columns.
 */
export function settingFeatureLevelSql(dialect: DialectName, feature: ProjectFeature): Expression<number> {
  const name = jsonTextField(dialect, 'projects.settings', `${feature}_access_level`);
  const cases = Object.entries(FEATURE_LEVEL).map(([n, level]) => sql`when ${n} then ${sql.lit(level)}`);
  return sql<number>`(case ${name} ${sql.join(cases, sql` `)} else ${sql.lit(settingFeatureDefault(feature))} end)`;
}

type Feature = 'issues' | 'merge_requests' | 'snippets';

/**
 * SQL condition on `projects`: the caller reads the project and its `feature`: enabled or public for whoever
 * reads the project, private for members from the feature's minimum role (Reporter for merge requests, Guest
 * otherwise), disabled for nobody, administrators included (the `feature` rule of policy.ts). The project part of
 * `read_issue`, `read_milestone` (issues or merge requests) and `read_snippet`.
 */
export function readableFeatureExpr(eb: any, db: Db, actor: Actor, a: Authorization | null, now: number, feature: Feature): Expression<SqlBool> {
  const level = feature === 'snippets' ? settingFeatureLevelSql(dialectOf(db), feature) : sql.ref(`projects.${feature}_access_level`);
  if (actor.admin) return eb(level, '>', 0);
  const visible = visibleExpr(eb, actor, a, now, 'bound');
  const open = eb(level, '>=', 20);
  const min = feature === 'merge_requests' ? AccessLevel.REPORTER : AccessLevel.GUEST;
  const readable = a ? eb.or([open, eb.and([eb(level, '>=', 10), authorizedExpr(eb, a, min, now, 'bound')])]) : open;
  return visible ? eb.and([visible, readable]) : readable;
}

/**
 * SQL condition on `snippets` left-joined with `projects`: the snippets the caller may read (`snippetDenial` of
 * policy.ts with `read_snippet`). A personal snippet: public to all, internal to signed-in users who are not
 * external, private to its author; administrators read all. A project snippet: its project live and readable, the
 * snippets feature open to the caller (private: members; disabled: nobody, administrators included), and the snippet
 * public or internal as above, or the caller its author or a member. `projectLevel`: one project whose
 * `read_snippet` the route already decided, with the caller's level there; only the snippet's own rule remains.
 */
export function readableSnippetsExpr(
  eb: any, actor: Actor, a: Authorization | null, now: number, dialect: DialectName, projectLevel?: number,
): Expression<SqlBool> | null {
  const uid = actor.user?.id;
  const min = actor.user && !actor.user.external ? Visibility.internal : Visibility.public;
  const ownOrOpen = [eb('snippets.visibility_level', '>=', min), ...(uid !== undefined ? [eb('snippets.author_id', '=', uid)] : [])];
  if (projectLevel !== undefined) return actor.admin || projectLevel >= AccessLevel.GUEST ? null : eb.or(ownOrOpen);
  const level = settingFeatureLevelSql(dialect, 'snippets');
  const inProject = [eb('snippets.project_id', 'is not', null), eb('projects.pending_delete', '=', 0)];
  if (actor.admin) return eb.or([eb('snippets.project_id', 'is', null), eb.and([...inProject, eb(level, '>', FEATURE_LEVEL.disabled)])]);
  const member = a ? authorizedExpr(eb, a, AccessLevel.GUEST, now, 'bound') : null;
  const visible = visibleExpr(eb, actor, a, now, 'bound')!;
  const feature = member
    ? eb.or([eb(level, '>=', FEATURE_LEVEL.enabled), eb.and([eb(level, '>=', FEATURE_LEVEL.private), member])])
    : eb(level, '>=', FEATURE_LEVEL.enabled);
  return eb.or([
    eb.and([eb('snippets.project_id', 'is', null), eb.or(ownOrOpen)]),
    eb.and([...inProject, visible, feature, eb.or([...ownOrOpen, ...(member ? [member] : [])])]),
  ]);
}
