import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { CommaList, DateOnly, Enum, Input, IntEnum, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { parsePathId } from '../../http/params.ts';
import { NotFoundError, UnauthorizedError } from '../../platform/errors.ts';
import { ROLE_LEVELS } from '../../platform/membership.ts';
import { personalAccessToken } from '../access-tokens/access-tokens.presenter.ts';
import { findSource, sourceLookup, type SourceKind } from './members.routes.ts';
import type { MemberSource } from './members.service.ts';
import {
  BOT_SCOPES, canManageTokens, createResourceToken, revokeResourceToken, rotateResourceToken, tokensQuery, type ResourceTokenRow,
} from './resource-access-tokens.service.ts';
import { ResourceAccessToken } from './members.schemas.ts';

// The resource access token entity: the personal token fields, then the bot's role and its resource.
function present(row: ResourceTokenRow, source: MemberSource, now: number, secret?: string) {
  const { token, ...pat } = personalAccessToken(row, now, secret) as Record<string, unknown>;
  return {
    ...pat,
    last_used_ips: [],
    access_level: row.bot_access_level,
    resource_type: source.type === 'Namespace' ? 'group' : 'project',
    resource_id: source.id,
    ...(token !== undefined ? { token } : {}),
  };
}

async function tokenOr404(req: ApiRequest<any>, source: MemberSource, label: string): Promise<ResourceTokenRow> {
  // An id beyond the id column names no token (PostgreSQL would refuse the comparison).
  const id = parsePathId(String(req.input.token_id)) ?? -1;
  const row = await tokensQuery(req.server, source).where('personal_access_tokens.id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError(`${label} Access Token`);
  return row as ResourceTokenRow;
}

function routesFor(kind: SourceKind): RouteDef<any>[] {
  const label = kind === 'groups' ? 'group' : 'project';
  const tags = ['access_tokens'];
  const base = `/${kind}/:id/access_tokens`;
  const readable = (req: ApiRequest<any>, source: MemberSource) => {
    // The reference answers 401 to members who may not see the tokens.
    if (!canManageTokens(req.actor, source)) throw new UnauthorizedError();
  };
  return [
    {
      method: 'GET', url: base, summary: `List the ${label} access tokens`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: Type.Array(ResourceAccessToken),
      input: Input({ id: Str(), state: Opt(Enum(['active', 'inactive'] as const)), ...PaginationParams }),
      handler: async (req, reply) => {
        const source = await findSource(req, kind);
        readable(req, source);
        const now = req.server.clock.now();
        let q = tokensQuery(req.server, source);
        if (req.input.state === 'active') {
          q = q.where('personal_access_tokens.revoked', '=', 0)
            .where((eb) => eb.or([eb('personal_access_tokens.expires_at', 'is', null), eb('personal_access_tokens.expires_at', '>', now)]));
        }
        if (req.input.state === 'inactive') {
          q = q.where((eb) => eb.or([eb('personal_access_tokens.revoked', '=', 1), eb('personal_access_tokens.expires_at', '<=', now)]));
        }
        const rows = await paginateQuery(req, reply, q.orderBy('personal_access_tokens.id', 'asc'));
        return rows.map((r) => present(r as ResourceTokenRow, source, now));
      },
    },
    {
      method: 'GET', url: `${base}/:token_id`, summary: `One ${label} access token`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: ResourceAccessToken,
      input: Input({ id: Str(), token_id: Str() }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        readable(req, source);
        return present(await tokenOr404(req, source, label), source, req.server.clock.now());
      },
    },
    {
      method: 'POST', url: base, summary: `Create a ${label} access token`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: ResourceAccessToken,
      input: Input({
        id: Str(), name: Str(), scopes: CommaList(Enum(BOT_SCOPES), { minItems: 1 }), description: Opt(Str()),
        expires_at: Opt(DateOnly()), access_level: Opt(IntEnum(ROLE_LEVELS, { default: 40 })),
      }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const i = req.input;
        const { row, token } = await createResourceToken(req.server, req.actor, source, {
          name: i.name, scopes: i.scopes, expiresAt: i.expires_at ?? null, accessLevel: i.access_level ?? 40, description: i.description,
        });
        return present(row, source, req.server.clock.now(), token);
      },
    },
    {
      method: 'DELETE', url: `${base}/:token_id`, summary: `Revoke a ${label} access token`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: null,
      input: Input({ id: Str(), token_id: Str() }),
      handler: async (req) => {
        const source = await findSource(req, kind);
        const row = await tokenOr404(req, source, label);
        await revokeResourceToken(req.server, req.actor, source, row);
        return undefined;
      },
    },
    {
      method: 'POST', url: `${base}/:token_id/rotate`, summary: `Rotate a ${label} access token`, tags, access: 'authenticated', ...sourceLookup(kind),
      response: ResourceAccessToken,
      input: Input({ id: Str(), token_id: Str(), expires_at: Opt(DateOnly()) }),
      handler: async (req, reply) => {
        const source = await findSource(req, kind);
        // Only administrators learn whether a token they cannot rotate exists.
        const id = /^\d+$/.test(req.input.token_id) ? Number(req.input.token_id) : -1;
        const row = canManageTokens(req.actor, source)
          ? await tokensQuery(req.server, source).where('personal_access_tokens.id', '=', id).executeTakeFirst()
          : undefined;
        if (!row) throw req.actor.admin ? new NotFoundError() : new UnauthorizedError();
        const { row: fresh, token } = await rotateResourceToken(req.server, row as ResourceTokenRow, req.input.expires_at ?? null);
        // A rotation answers 200, not the 201 of a creation.
        return reply.code(200).send(present(fresh, source, req.server.clock.now(), token));
      },
    },
  ];
}

export const resourceAccessTokenRoutes: RouteDef<any>[] = [...routesFor('groups'), ...routesFor('projects')];
