import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { MembersTable } from '../../platform/db/schema.ts';
import { containsText, isUniqueViolation } from '../../platform/db/dialect.ts';
import { ConflictError, ForbiddenError, NotFoundError, RecordNotFoundError, ValidationError } from '../../platform/errors.ts';
import { AccessLevel, ancestorIds, type NamespaceRow, type ProjectRow } from '../../platform/membership.ts';
import type { Actor } from '../../http/auth.ts';

export type MemberRow = Selectable<MembersTable>;
export type SourceType = 'Namespace' | 'Project';

/** A group or a project whose members are managed, with the caller's effective level on it. */
export interface MemberSource {
  type: SourceType;
  id: number;
  /** The group itself, or the project's namespace. */
  namespace: NamespaceRow;
  project: ProjectRow | null;
  /** The caller's level; administrators count as Owner. */
  level: number;
}

const ROLE_NAMES: Record<number, string> = { 5: 'Minimal Access', 10: 'Guest', 15: 'Planner', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };

const activeAt = (now: number) => (eb: any) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);

/** Ids of the groups above the source whose members it inherits, nearest last. */
export function inheritedGroupIds(source: MemberSource): number[] {
  if (source.namespace.kind !== 'group') return [];
  const ids = ancestorIds(source.namespace);
  return source.type === 'Namespace' ? ids.filter((id) => id !== source.id) : ids;
}

export function directMembersQuery(deps: ServiceDeps, source: MemberSource) {
  return deps.db.selectFrom('members').selectAll()
    .where('source_type', '=', source.type).where('source_id', '=', source.id).where(activeAt(deps.clock.now()));
}

/**
 * Direct and inherited members, one per user: the membership with the highest level, and among
 * equal levels the one nearest to the source.
 */
export async function allMembers(deps: ServiceDeps, source: MemberSource): Promise<MemberRow[]> {
  const now = deps.clock.now();
  const groupIds = inheritedGroupIds(source);
  const rows = await deps.db.selectFrom('members').selectAll()
    .where((eb) => eb.or([
      eb.and([eb('source_type', '=', source.type), eb('source_id', '=', source.id)]),
      ...(groupIds.length ? [eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', groupIds)])] : []),
    ]))
    .where(activeAt(now)).execute();
  // Distance from the source: 0 for the source itself, then ancestors nearest first.
  const distance = (m: MemberRow) => (m.source_type === source.type && m.source_id === source.id ? 0 : groupIds.length - groupIds.indexOf(m.source_id));
  const best = new Map<number, MemberRow>();
  for (const m of rows) {
    const cur = best.get(m.user_id);
    if (!cur || m.access_level > cur.access_level || (m.access_level === cur.access_level && distance(m) < distance(cur))) best.set(m.user_id, m);
  }
  return [...best.values()].sort((a, b) => a.id - b.id);
}

export async function findDirectMember(deps: ServiceDeps, source: MemberSource, userId: number): Promise<MemberRow> {
  const m = await directMembersQuery(deps, source).where('user_id', '=', userId).executeTakeFirst();
  if (!m) throw new RecordNotFoundError();
  return m;
}

/** The highest level the user already holds through the groups above the source, and where. */
async function inheritedLevel(deps: ServiceDeps, source: MemberSource, userId: number): Promise<{ level: number; groupName: string } | null> {
  const ids = inheritedGroupIds(source);
  if (!ids.length) return null;
  const rows = await deps.db.selectFrom('members').innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select(['members.access_level', 'namespaces.name'])
    .where('members.source_type', '=', 'Namespace').where('members.source_id', 'in', ids).where('members.user_id', '=', userId)
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', deps.clock.now())]))
    .orderBy('members.access_level', 'desc').execute();
  return rows.length ? { level: rows[0].access_level, groupName: rows[0].name } : null;
}

function parseExpiry(deps: ServiceDeps, expiresAt: string | null | undefined): number | null | undefined {
  if (expiresAt === undefined) return undefined;
  if (expiresAt === null || expiresAt === '') return null;
  const day = Date.parse(`${expiresAt.slice(0, 10)}T00:00:00Z`);
  const now = deps.clock.now();
  const today = now - (now % 86_400_000);
  if (day < today) throw new ValidationError({ expires_at: ['cannot be a date in the past'] });
  return day;
}

async function checkAgainstInherited(deps: ServiceDeps, source: MemberSource, userId: number, level: number) {
  const inherited = await inheritedLevel(deps, source, userId);
  if (inherited && level < inherited.level) {
    throw new ValidationError({
      access_level: [`should be greater than or equal to ${ROLE_NAMES[inherited.level] ?? inherited.level} inherited membership from group ${inherited.groupName}`],
    });
  }
}

/** Maintainers manage members; only Owners grant Owner or change an Owner's membership. */
function requireManage(source: MemberSource, levels: number[]) {
  if (source.level < AccessLevel.MAINTAINER) throw new ForbiddenError();
  if (levels.some((l) => l >= AccessLevel.OWNER) && source.level < AccessLevel.OWNER) throw new ForbiddenError();
}

/** A group keeps at least one human Owner across itself and its ancestors. */
async function assertNotLastOwner(deps: ServiceDeps, source: MemberSource, member: MemberRow) {
  if (source.type !== 'Namespace' || member.access_level < AccessLevel.OWNER) return;
  const owners = await deps.db.selectFrom('members').innerJoin('users', 'users.id', 'members.user_id')
    .select('members.user_id').distinct()
    .where('members.source_type', '=', 'Namespace').where('members.source_id', 'in', ancestorIds(source.namespace))
    .where('members.access_level', '>=', AccessLevel.OWNER).where('users.user_type', '=', 'human')
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', deps.clock.now())]))
    .execute();
  if (owners.length <= 1 && owners.every((o) => o.user_id === member.user_id)) throw new ForbiddenError();
}

export async function addMember(deps: ServiceDeps, actor: Actor, source: MemberSource, input: { userId: number; accessLevel: number; expiresAt?: string | null }): Promise<MemberRow> {
  requireManage(source, [input.accessLevel]);
  const existing = await deps.db.selectFrom('members').select('id')
    .where('source_type', '=', source.type).where('source_id', '=', source.id).where('user_id', '=', input.userId).executeTakeFirst();
  if (existing) throw new ConflictError('Member already exists');
  const user = await deps.db.selectFrom('users').select(['id']).where('id', '=', input.userId).executeTakeFirst();
  if (!user) throw new NotFoundError('User');
  const expiresAt = parseExpiry(deps, input.expiresAt) ?? null;
  await checkAgainstInherited(deps, source, input.userId, input.accessLevel);
  const now = deps.clock.now();
  try {
    return await deps.db.insertInto('members').values({
      source_type: source.type, source_id: source.id, user_id: input.userId, access_level: input.accessLevel,
      expires_at: expiresAt, created_by_id: actor.user?.id ?? null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  } catch (e) {
    if (isUniqueViolation(e)) throw new ConflictError('Member already exists');
    throw e;
  }
}

export async function updateMember(deps: ServiceDeps, source: MemberSource, member: MemberRow, input: { accessLevel: number; expiresAt?: string | null }): Promise<MemberRow> {
  requireManage(source, [input.accessLevel, member.access_level]);
  if (input.accessLevel < member.access_level) await assertNotLastOwner(deps, source, member);
  const expiresAt = parseExpiry(deps, input.expiresAt);
  await checkAgainstInherited(deps, source, member.user_id, input.accessLevel);
  const set: Record<string, unknown> = { access_level: input.accessLevel, updated_at: deps.clock.now() };
  if (expiresAt !== undefined) set.expires_at = expiresAt;
  return deps.db.updateTable('members').set(set).where('id', '=', member.id).returningAll().executeTakeFirstOrThrow();
}

/**
 * Removes a membership (a member may always leave). Removing a group membership also removes the
 * user's memberships in the groups and projects below it unless `skipSubresources`.
 */
export async function removeMember(deps: ServiceDeps, actor: Actor, source: MemberSource, member: MemberRow, opts: { skipSubresources?: boolean } = {}): Promise<void> {
  const self = actor.user?.id === member.user_id;
  if (!self) requireManage(source, [member.access_level]);
  await assertNotLastOwner(deps, source, member);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('members').where('id', '=', member.id).execute();
    if (source.type !== 'Namespace' || opts.skipSubresources) return;
    const below = (await trx.selectFrom('namespaces').select('id').where('traversal', 'like', `${source.namespace.traversal}%`).execute()).map((r) => r.id);
    const subgroups = below.filter((id) => id !== source.id);
    if (subgroups.length) {
      await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', subgroups).where('user_id', '=', member.user_id).execute();
    }
    const projects = (await trx.selectFrom('projects').select('id').where('namespace_id', 'in', below).execute()).map((r) => r.id);
    if (projects.length) {
      await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', 'in', projects).where('user_id', '=', member.user_id).execute();
    }
  });
}

/** A project as a member source: its members inherit from the groups of its namespace. */
export async function projectMemberSource(deps: ServiceDeps, project: ProjectRow, level: number): Promise<MemberSource> {
  const namespace = await deps.db.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  return { type: 'Project', id: project.id, namespace, project, level };
}

/** Ids of the users whose username or name contains the term, for the `query` filter of member lists. */
export async function userIdsMatching(deps: ServiceDeps, query: string): Promise<number[]> {
  const rows = await deps.db.selectFrom('users').select('id')
    .where((eb) => eb.or([containsText('users.username', query), containsText('users.name', query)])).execute();
  return rows.map((r) => r.id);
}
