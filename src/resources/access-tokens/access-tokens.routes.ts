import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, DateOnly, Enum, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { RuleError, NotFoundError } from '../../platform/errors.ts';
import { ALL_SCOPES } from '../../http/auth.ts';
import { getUserOr404 } from '../users/users.service.ts';
import {
  createPersonalAccessToken, impersonationTokenOr404, impersonationTokensQuery, ownTokenOr404, personalTokensQuery, revokeToken, tokenById,
  type TokenCaller, type TokenRow,
} from './access-tokens.service.ts';
import { personalAccessToken } from './access-tokens.presenter.ts';
import { PersonalAccessToken } from './access-tokens.schemas.ts';

const Scopes = CommaList(Enum(ALL_SCOPES), { minItems: 1 });

function callerOf(req: ApiRequest<any>): TokenCaller {
  return { userId: req.actor.user!.id, admin: req.actor.admin };
}

export const accessTokenRoutes: RouteDef<any>[] = [
  {
    method: 'POST', url: '/users/:user_id/personal_access_tokens', summary: 'Create a personal access token for a user', tags: ['personal_access_tokens'], access: 'admin',
    response: PersonalAccessToken,
    input: Input({ user_id: Int(), name: Str(), scopes: Scopes, expires_at: Opt(DateOnly()), description: Opt(Str()) }),
    handler: async (req) => {
      const user = await getUserOr404(req.server, req.input.user_id);
      const { row, token } = await createPersonalAccessToken(req.server, user, { name: req.input.name, scopes: req.input.scopes, expiresAt: req.input.expires_at ?? null, description: req.input.description });
      return personalAccessToken(row, req.server.clock.now(), token);
    },
  },
  {
    method: 'GET', url: '/personal_access_tokens', summary: 'List personal access tokens', tags: ['personal_access_tokens'], access: 'authenticated',
    response: Type.Array(PersonalAccessToken),
    input: Input({
      user_id: Opt(Int()), state: Opt(Enum(['active', 'inactive'] as const)), revoked: Opt(Bool()), search: Opt(Str()),
      created_after: Opt(Str()), last_used_after: Opt(Str()), ...PaginationParams,
    }),
    handler: async (req, reply) => {
      const i = req.input;
      const now = req.server.clock.now();
      const q = personalTokensQuery(req.server.db, callerOf(req), { userId: i.user_id, state: i.state, revoked: i.revoked, search: i.search }, now);
      const rows = await paginateQuery(req, reply, q);
      return rows.map((r) => personalAccessToken(r, now));
    },
  },
  {
    method: 'GET', url: '/personal_access_tokens/self', summary: 'The token used for this request', tags: ['personal_access_tokens'], access: 'authenticated',
    response: PersonalAccessToken,
    handler: async (req) => {
      const t = req.actor.token;
      if (!t || (t.kind !== 'personal' && t.kind !== 'impersonation')) throw new NotFoundError('Personal Access Token');
      const row = await tokenById(req.server, t.id);
      return personalAccessToken(row, req.server.clock.now());
    },
  },
  {
    method: 'GET', url: '/personal_access_tokens/:id', summary: 'One personal access token', tags: ['personal_access_tokens'], access: 'authenticated',
    response: PersonalAccessToken,
    input: Input({ id: Int() }),
    handler: async (req) => personalAccessToken(await ownTokenOr404(req.server, callerOf(req), req.input.id), req.server.clock.now()),
  },
  {
    method: 'DELETE', url: '/personal_access_tokens/self', summary: 'Revoke the token used for this request', tags: ['personal_access_tokens'], access: 'authenticated',
    response: null,
    handler: async (req) => {
      const t = req.actor.token;
      if (!t || (t.kind !== 'personal' && t.kind !== 'impersonation')) throw new RuleError('bad_request', '400 Bad request - Only personal access tokens can be revoked this way');
      const row = await tokenById(req.server, t.id);
      await revokeToken(req.server, row);
      return undefined;
    },
  },
  {
    method: 'DELETE', url: '/personal_access_tokens/:id', summary: 'Revoke a personal access token', tags: ['personal_access_tokens'], access: 'authenticated',
    response: null,
    input: Input({ id: Int() }),
    handler: async (req) => {
      const row = await ownTokenOr404(req.server, callerOf(req), req.input.id);
      await revokeToken(req.server, row);
      return undefined;
    },
  },
  // Impersonation tokens: personal tokens an administrator creates to act as a user.
  {
    method: 'GET', url: '/users/:user_id/impersonation_tokens', summary: 'List impersonation tokens of a user', tags: ['impersonation_tokens'], access: 'admin',
    response: Type.Array(PersonalAccessToken),
    input: Input({ user_id: Int(), state: Opt(Enum(['all', 'active', 'inactive'] as const, { default: 'all' })), ...PaginationParams }),
    handler: async (req, reply) => {
      const user = await getUserOr404(req.server, req.input.user_id);
      const now = req.server.clock.now();
      const rows = await paginateQuery(req, reply, impersonationTokensQuery(req.server.db, user.id, req.input.state, now));
      return rows.map((r) => personalAccessToken(r, now));
    },
  },
  {
    method: 'POST', url: '/users/:user_id/impersonation_tokens', summary: 'Create an impersonation token', tags: ['impersonation_tokens'], access: 'admin',
    response: PersonalAccessToken,
    input: Input({ user_id: Int(), name: Str(), scopes: Scopes, expires_at: Opt(DateOnly()) }),
    handler: async (req) => {
      if (!req.server.config.impersonationEnabled) throw new RuleError('forbidden', '403 Forbidden - Impersonation has been disabled');
      const user = await getUserOr404(req.server, req.input.user_id);
      const { row, token } = await createPersonalAccessToken(req.server, user, { name: req.input.name, scopes: req.input.scopes, expiresAt: req.input.expires_at ?? null, impersonation: true });
      return personalAccessToken(row, req.server.clock.now(), token);
    },
  },
  {
    method: 'GET', url: '/users/:user_id/impersonation_tokens/:id', summary: 'One impersonation token', tags: ['impersonation_tokens'], access: 'admin',
    response: PersonalAccessToken,
    input: Input({ user_id: Int(), id: Int() }),
    handler: async (req) => personalAccessToken(await impersonationOr404(req), req.server.clock.now()),
  },
  {
    method: 'DELETE', url: '/users/:user_id/impersonation_tokens/:id', summary: 'Revoke an impersonation token', tags: ['impersonation_tokens'], access: 'admin',
    response: null,
    input: Input({ user_id: Int(), id: Int() }),
    handler: async (req) => {
      await revokeToken(req.server, await impersonationOr404(req));
      return undefined;
    },
  },
];

async function impersonationOr404(req: ApiRequest<any>): Promise<TokenRow> {
  const user = await getUserOr404(req.server, req.input.user_id);
  return impersonationTokenOr404(req.server, user.id, req.input.id);
}
