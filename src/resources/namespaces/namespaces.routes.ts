import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateArray } from '../../http/pagination.ts';
import { parseIdOrPath } from '../../http/params.ts';
import type { NamespaceRow } from '../../platform/membership.ts';
import { usersByIds } from '../users/users.service.ts';
import { creatableNamespaces, membersWithDescendants, namespaceExists, readableNamespaceOr404, seesMemberCount } from './namespaces.service.ts';
import { Entity } from '../../http/response-schemas.ts';
import { namespaceEntity } from './namespaces.presenter.ts';
import { Namespace } from './namespaces.schemas.ts';

async function present(req: ApiRequest<any>, rows: NamespaceRow[], levels: Map<number, number>) {
  const base = req.server.config.externalUrl;
  const ownerIds = rows.filter((n) => n.kind === 'user' && n.owner_id !== null).map((n) => n.owner_id!);
  const owners = await usersByIds(req.server, ownerIds);
  const out = [];
  for (const ns of rows) {
    out.push(namespaceEntity(ns, base, {
      ownerUsername: ns.owner_id !== null ? owners.get(ns.owner_id)?.username : undefined,
      membersCount: seesMemberCount(req.actor, ns, levels) ? await membersWithDescendants(req.server, ns) : undefined,
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
      const i = req.input;
      const { rows, levels } = await creatableNamespaces(req.server, req.actor, { search: i.search, ownedOnly: i.owned_only, topLevelOnly: i.top_level_only });
      return present(req, paginateArray(req, reply, rows), levels);
    },
  },
  {
    method: 'GET', url: '/namespaces/:id', summary: 'One namespace by id or path', tags: ['namespaces'], access: 'authenticated',
    response: Namespace,
    input: Input({ id: Str() }),
    handler: async (req) => {
      const { rows, levels } = await readableNamespaceOr404(req.server, req.actor, parseIdOrPath(req.input.id));
      return (await present(req, rows, levels))[0];
    },
  },
  {
    method: 'GET', url: '/namespaces/:id/exists', summary: 'Whether a namespace path is taken, with a free one suggested', tags: ['namespaces'], access: 'authenticated',
    response: Entity({ exists: Type.Boolean(), suggests: Type.Array(Type.String()) }),
    input: Input({ id: Str(), parent_id: Opt(Int()) }),
    handler: async (req) => namespaceExists(req.server, req.input.id, req.input.parent_id ?? null),
  },
];
