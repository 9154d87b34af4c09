import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, Input, Int, IntEnum, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateArray, paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { ParamError, RecordNotFoundError } from '../../platform/errors.ts';
import { ROLE_LEVELS } from '../../platform/membership.ts';
import { usersByIds } from '../users/users.service.ts';
import {
  addMember, allMembers, directMembersQuery, findDirectMember, projectMemberSource, removeMember, updateMember, userIdsMatching,
  type MemberRow, type MemberSource,
} from './members.service.ts';
import { memberEntity } from './members.presenter.ts';
import { Member } from './members.schemas.ts';

export type SourceKind = 'groups' | 'projects';

/** What the routes of a member source declare: the group or project of `:id`, readable (404 otherwise). */
export function sourceLookup(kind: SourceKind) {
  return kind === 'groups' ? { group: { ability: 'read_group' as const } } : { project: { ability: 'read_project' as const } };
}

/** The group or project the route layer found, as a member source. */
export async function findSource(req: ApiRequest<any>, kind: SourceKind): Promise<MemberSource> {
  if (kind === 'groups') return { type: 'Namespace', id: req.group.group.id, namespace: req.group.group, project: null, level: req.group.level };
  return projectMemberSource(req.server, req.project.project, req.project.level);
}

async function present(req: ApiRequest<any>, rows: MemberRow[]) {
  const ids = [...new Set(rows.flatMap((m) => [m.user_id, ...(m.created_by_id ? [m.created_by_id] : [])]))];
  const byId = await usersByIds(req.server, ids);
  const base = req.server.config.externalUrl;
  return rows.filter((m) => byId.has(m.user_id)).map((m) => memberEntity(m, byId.get(m.user_id)!, m.created_by_id ? byId.get(m.created_by_id) : undefined, base));
}

/** `user_ids` as an array or a comma-separated list of integers. */
function userIds(raw: string[] | undefined): number[] | undefined {
  if (!raw) return undefined;
  const out: number[] = [];
  for (const part of raw.flatMap((v) => String(v).split(','))) {
    const t = part.trim();
    if (t === '') continue;
    if (!/^\d+$/.test(t)) throw ParamError.of('user_ids', 'invalid');
    out.push(Number(t));
  }
  return out;
}

const ListParams = {
  id: Str(),
  query: Opt(Str()),
  user_ids: Opt(Type.Array(Type.String())),
  show_seat_info: Opt(Bool()),
  ...PaginationParams,
};

function routesFor(kind: SourceKind): RouteDef<any>[] {
  const label = kind === 'groups' ? 'group' : 'project';
  const tags = [`${label}_members`];
  const base = `/${kind}/:id/members`;
  return [
    {
      method: 'GET', url: base, summary: `List the direct members of a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Type.Array(Member),
      input: Input(ListParams),
      handler: async (req, reply) => {
        const source = await findSource(req, kind);
        let q = directMembersQuery(req.server, source);
        const ids = userIds(req.input.user_ids);
        if (ids) q = ids.length ? q.where('user_id', 'in', ids) : q.where(({ lit }) => lit(false));
        if (req.input.query) {
          const matching = await userIdsMatching(req.server, req.input.query);
          q = matching.length ? q.where('user_id', 'in', matching) : q.where(({ lit }) => lit(false));
        }
        return present(req, await paginateQuery(req, reply, q.orderBy('id', 'asc')));
      },
    },
    {
      method: 'GET', url: `${base}/all`, summary: `List the direct and inherited members of a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Type.Array(Member),
      input: Input(ListParams),
      handler: async (req, reply) => {
        const source = await findSource(req, kind);
        let rows = await allMembers(req.server, source);
        const ids = userIds(req.input.user_ids);
        if (ids) rows = rows.filter((m) => ids.includes(m.user_id));
        if (req.input.query) {
          const matching = new Set(await userIdsMatching(req.server, req.input.query));
          rows = rows.filter((m) => matching.has(m.user_id));
        }
        return present(req, paginateArray(req, reply, rows));
      },
    },
    {
      method: 'GET', url: `${base}/all/:user_id`, summary: `One direct or inherited member of a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Member,
      input: Input({ id: Str(), user_id: Int() }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const m = (await allMembers(req.server, source)).find((r) => r.user_id === req.input.user_id);
        if (!m) throw new RecordNotFoundError();
        return (await present(req, [m]))[0];
      },
    },
    {
      method: 'GET', url: `${base}/:user_id`, summary: `One direct member of a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Member,
      input: Input({ id: Str(), user_id: Int() }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        return (await present(req, [await findDirectMember(req.server, source, req.input.user_id)]))[0];
      },
    },
    {
      method: 'POST', url: base, summary: `Add a member to a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Member,
      input: Input({ id: Str(), access_level: IntEnum(ROLE_LEVELS), user_id: Int(), expires_at: Opt(DateTime()), invite_source: Opt(Str()) }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const m = await addMember(req.server, req.actor, source, { userId: req.input.user_id, accessLevel: req.input.access_level, expiresAt: req.input.expires_at });
        return (await present(req, [m]))[0];
      },
    },
    {
      method: 'PUT', url: `${base}/:user_id`, summary: `Change a member of a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Member,
      input: Input({ id: Str(), user_id: Int(), access_level: IntEnum(ROLE_LEVELS), expires_at: Opt(Type.Union([DateTime(), Type.Null()])) }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const member = await findDirectMember(req.server, source, req.input.user_id);
        const m = await updateMember(req.server, source, member, { accessLevel: req.input.access_level, expiresAt: req.input.expires_at });
        return (await present(req, [m]))[0];
      },
    },
    {
      method: 'DELETE', url: `${base}/:user_id`, summary: `Remove a member from a ${label}`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: null,
      input: Input({ id: Str(), user_id: Int(), skip_subresources: Opt(Bool({ default: false })), unassign_issuables: Opt(Bool({ default: false })) }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const member = await findDirectMember(req.server, source, req.input.user_id);
        checkUnmodifiedSince(req, member.updated_at);
        await removeMember(req.server, req.actor, source, member, { skipSubresources: req.input.skip_subresources });
        return undefined;
      },
    },
  ];
}

export const memberRoutes: RouteDef<any>[] = [...routesFor('groups'), ...routesFor('projects')];
