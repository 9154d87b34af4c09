import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateArray } from '../../http/pagination.ts';
import { parseIdOrPath } from '../../http/params.ts';
import { canGroup, canReadVisibility } from '../../platform/access/policy.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { AccessLevel, groupAccessLevels, type NamespaceRow } from '../../platform/membership.ts';
import { containsText } from '../../platform/db/dialect.ts';
import { memberOfSelfOrAncestor } from '../../platform/access/queries.ts';
import { namespaceEntity } from './namespaces.presenter.ts';
import { Namespace } from './namespaces.schemas.ts';

/** Distinct users holding a membership in the group or any group below it. */
async function membersWithDescendants(req: ApiRequest<any>, ns: NamespaceRow): Promise<number> {
  const now = req.server.clock.now();
  const rows = await req.server.db.selectFrom('members').innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select('members.user_id').distinct()
    .where('members.source_type', '=', 'Namespace').where('namespaces.traversal', 'like', `${ns.traversal}%`)
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', now)])).execute();
  return rows.length;
}

async function present(req: ApiRequest<any>, rows: NamespaceRow[], levels: Map<number, number>) {
  const base = req.server.config.externalUrl;
  const ownerIds = rows.filter((n) => n.kind === 'user' && n.owner_id !== null).map((n) => n.owner_id!);
  const owners = ownerIds.length ? await req.server.db.selectFrom('users').select(['id', 'username']).where('id', 'in', ownerIds).execute() : [];
  const usernames = new Map(owners.map((u) => [u.id, u.username]));
  const out = [];
  for (const ns of rows) {
    const isOwner = ns.kind === 'group' && (req.actor.admin || (levels.get(ns.id) ?? 0) >= AccessLevel.OWNER);
    out.push(namespaceEntity(ns, base, {
      ownerUsername: ns.owner_id !== null ? usernames.get(ns.owner_id) : undefined,
      membersCount: isOwner ? await membersWithDescendants(req, ns) : undefined,
    }));
  }
  return out;
}

export const namespaceRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/namespaces', summary: 'Namespaces the user can create projects in', tags: ['namespaces'], access: 'authenticated',
    response: Type.Array(Namespace),
    input: Input({ search: Opt(Str()), owned_only: Opt(Bool()), top_level_only: Opt(Bool()), ...PaginationParams }),
    handler: async (req, reply) => {
      const db = req.server.db;
      const user = req.actor.user!;
      const now = req.server.clock.now();
      let q = db.selectFrom('namespaces').selectAll();
      if (!req.actor.admin) {
        q = q.where((eb) => eb.or([
          eb.and([eb('kind', '=', 'user'), eb('owner_id', '=', user.id)]),
          eb.and([eb('kind', '=', 'group'), memberOfSelfOrAncestor(user.id, now)]),
        ]));
      }
      if (req.input.search) {
        const term = String(req.input.search);
        q = q.where((eb) => eb.or([containsText('namespaces.name', term), containsText('namespaces.path', term)]));
      }
      if (req.input.top_level_only) q = q.where('parent_id', 'is', null);
      let rows = await q.orderBy('id', 'asc').execute();
      const groups = rows.filter((n) => n.kind === 'group');
      const levels = await groupAccessLevels(db, user.id, groups, now);
      if (!req.actor.admin) {
        // Groups count when the user may create projects in them; owned_only keeps the ones they own.
        rows = rows.filter((n) => n.kind === 'user' || (req.input.owned_only
          ? (levels.get(n.id) ?? 0) >= AccessLevel.OWNER
          : canGroup(req.actor, 'create_projects', n, levels.get(n.id) ?? 0)));
      } else if (req.input.owned_only) {
        rows = rows.filter((n) => (n.kind === 'user' && n.owner_id === user.id) || (levels.get(n.id) ?? 0) >= AccessLevel.OWNER);
      }
      return present(req, paginateArray(req, reply, rows), levels);
    },
  },
  {
    method: 'GET', url: '/namespaces/:id', summary: 'One namespace by id or path', tags: ['namespaces'], access: 'authenticated',
    response: Namespace,
    input: Input({ id: Str() }),
    handler: async (req) => {
      const db = req.server.db;
      const key = parseIdOrPath(req.input.id);
      let q = db.selectFrom('namespaces').selectAll();
      q = 'id' in key ? q.where('id', '=', key.id) : q.where('full_path_lower', '=', key.path.toLowerCase());
      const ns = await q.executeTakeFirst();
      if (!ns) throw new NotFoundError('Namespace');
      const user = req.actor.user!;
      const levels = ns.kind === 'group' ? await groupAccessLevels(db, user.id, [ns], req.server.clock.now()) : new Map<number, number>();
      const readable = ns.kind === 'user'
        ? req.actor.admin || ns.owner_id === user.id
        : canReadVisibility(req.actor, ns.visibility_level, levels.get(ns.id) ?? 0);
      if (!readable) throw new NotFoundError('Namespace');
      return (await present(req, [ns], levels))[0];
    },
  },
];
