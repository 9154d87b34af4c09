import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../http/auth.ts';
import { canGroup, canReadVisibility } from '../../platform/access/policy.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { AccessLevel, groupAccessLevels, type NamespaceRow } from '../../platform/membership.ts';
import { containsText } from '../../platform/db/dialect.ts';
import { memberOfSelfOrAncestor } from '../../platform/access/queries.ts';

/** Namespaces with the caller's level on each group among them. */
export interface NamespacesWithLevels {
  rows: NamespaceRow[];
  levels: Map<number, number>;
}

export interface NamespaceListFilter {
  search?: string;
  ownedOnly?: boolean;
  topLevelOnly?: boolean;
}

/** The namespaces a signed-in user can create projects in (administrators: every one), oldest first. */
export async function creatableNamespaces(deps: ServiceDeps, actor: Actor, f: NamespaceListFilter): Promise<NamespacesWithLevels> {
  const db = deps.db;
  const user = actor.user!;
  const now = deps.clock.now();
  let q = db.selectFrom('namespaces').selectAll().where('pending_delete', '=', 0);
  if (!actor.admin) {
    q = q.where((eb) => eb.or([
      eb.and([eb('kind', '=', 'user'), eb('owner_id', '=', user.id)]),
      eb.and([eb('kind', '=', 'group'), memberOfSelfOrAncestor(user.id, now)]),
    ]));
  }
  if (f.search) {
    const term = String(f.search);
    q = q.where((eb) => eb.or([containsText('namespaces.name', term), containsText('namespaces.path', term)]));
  }
  if (f.topLevelOnly) q = q.where('parent_id', 'is', null);
  let rows = await q.orderBy('id', 'asc').execute();
  const groups = rows.filter((n) => n.kind === 'group');
  const levels = await groupAccessLevels(db, user.id, groups, now);
  if (!actor.admin) {
    // Groups count when the user may create projects in them; owned_only keeps the ones they own.
    rows = rows.filter((n) => n.kind === 'user' || (f.ownedOnly
      ? (levels.get(n.id) ?? 0) >= AccessLevel.OWNER
      : canGroup(actor, 'create_projects', n, levels.get(n.id) ?? 0)));
  } else if (f.ownedOnly) {
    rows = rows.filter((n) => (n.kind === 'user' && n.owner_id === user.id) || (levels.get(n.id) ?? 0) >= AccessLevel.OWNER);
  }
  return { rows, levels };
}

/** One namespace the signed-in caller may read, by id or full path; anything else is 404. */
export async function readableNamespaceOr404(deps: ServiceDeps, actor: Actor, key: { id: number } | { path: string }): Promise<NamespacesWithLevels> {
  const db = deps.db;
  let q = db.selectFrom('namespaces').selectAll().where('pending_delete', '=', 0);
  q = 'id' in key ? q.where('id', '=', key.id) : q.where('full_path_lower', '=', key.path.toLowerCase());
  const ns = await q.executeTakeFirst();
  if (!ns) throw new NotFoundError('Namespace');
  const user = actor.user!;
  const levels = ns.kind === 'group' ? await groupAccessLevels(db, user.id, [ns], deps.clock.now()) : new Map<number, number>();
  const readable = ns.kind === 'user'
    ? actor.admin || ns.owner_id === user.id
    : canReadVisibility(actor, ns.visibility_level, levels.get(ns.id) ?? 0);
  if (!readable) throw new NotFoundError('Namespace');
  return { rows: [ns], levels };
}

/** Whether the caller sees the group's member count: administrators and the group's owners do. */
export function seesMemberCount(actor: Actor, ns: NamespaceRow, levels: Map<number, number>): boolean {
  return ns.kind === 'group' && (actor.admin || (levels.get(ns.id) ?? 0) >= AccessLevel.OWNER);
}

/** Distinct users holding a membership in the group or any group below it. */
export async function membersWithDescendants(deps: ServiceDeps, ns: NamespaceRow): Promise<number> {
  const now = deps.clock.now();
  const rows = await deps.db.selectFrom('members').innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select('members.user_id').distinct()
    .where('members.source_type', '=', 'Namespace').where('namespaces.traversal', 'like', `${ns.traversal}%`)
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', now)])).execute();
  return rows.length;
}

/**
 * GET /namespaces/:path/exists: whether a namespace with this path exists at the top level (or under `parentId`),
 * compared case-insensitively, and if so the first free path made by appending a number, as the reference suggests.
 */
export async function namespaceExists(deps: ServiceDeps, path: string, parentId: number | null): Promise<{ exists: boolean; suggests: string[] }> {
  const taken = async (p: string) => !!(await deps.db.selectFrom('namespaces').select('id')
    .where((eb) => eb(eb.fn('lower', ['path']), '=', p.toLowerCase()))
    .where('parent_id', parentId === null ? 'is' : '=', parentId as any).executeTakeFirst());
  if (!(await taken(path))) return { exists: false, suggests: [] };
  for (let n = 1; n < 1000; n++) if (!(await taken(`${path}${n}`))) return { exists: true, suggests: [`${path}${n}`] };
  return { exists: true, suggests: [] };
}
