import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, DateOnly, Enum, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { RuleError, NotFoundError } from '../../platform/errors.ts';
import { ALL_SCOPES } from '../../http/auth.ts';
import { getUserOr404 } from '../users/users.service.ts';
import { createPersonalAccessToken, revokeToken, type TokenRow } from './access-tokens.service.ts';
import { personalAccessToken } from './access-tokens.presenter.ts';
import { containsText } from '../../platform/db/dialect.ts';
import { PersonalAccessToken } from './access-tokens.schemas.ts';

const Scopes = CommaList(Enum(ALL_SCOPES), { minItems: 1 });

async function ownTokenOr404(req: ApiRequest<any>, id: number): Promise<TokenRow> {
  const row = await req.server.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).where('impersonation', '=', 0).executeTakeFirst();
  if (!row || (!req.actor.admin && row.user_id !== req.actor.user!.id)) throw new NotFoundError('Personal Access Token');
  return row;
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
      let q = req.server.db.selectFrom('personal_access_tokens').selectAll().where('impersonation', '=', 0);
      if (!req.actor.admin) q = q.where('user_id', '=', req.actor.user!.id);
      else if (i.user_id !== undefined) q = q.where('user_id', '=', i.user_id);
      if (i.revoked !== undefined) q = q.where('revoked', '=', i.revoked ? 1 : 0);
      if (i.state === 'active') q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      if (i.state === 'inactive') q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', now)]));
      if (i.search) q = q.where(containsText('name', String(i.search)));
      const rows = await paginateQuery(req, reply, q.orderBy('id', 'asc'));
      return rows.map((r) => personalAccessToken(r, now));
    },
  },
  {
    method: 'GET', url: '/personal_access_tokens/self', summary: 'The token used for this request', tags: ['personal_access_tokens'], access: 'authenticated',
    response: PersonalAccessToken,
    handler: async (req) => {
      const t = req.actor.token;
      if (!t || (t.kind !== 'personal' && t.kind !== 'impersonation')) throw new NotFoundError('Personal Access Token');
      const row = await req.server.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
      return personalAccessToken(row, req.server.clock.now());
    },
  },
  {
    method: 'GET', url: '/personal_access_tokens/:id', summary: 'One personal access token', tags: ['personal_access_tokens'], access: 'authenticated',
    response: PersonalAccessToken,
    input: Input({ id: Int() }),
    handler: async (req) => personalAccessToken(await ownTokenOr404(req, req.input.id), req.server.clock.now()),
  },
  {
    method: 'DELETE', url: '/personal_access_tokens/self', summary: 'Revoke the token used for this request', tags: ['personal_access_tokens'], access: 'authenticated',
    response: null,
    handler: async (req) => {
      const t = req.actor.token;
      if (!t || (t.kind !== 'personal' && t.kind !== 'impersonation')) throw new RuleError('bad_request', '400 Bad request - Only personal access tokens can be revoked this way');
      const row = await req.server.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
      await revokeToken(req.server, row);
      return undefined;
    },
  },
  {
    method: 'DELETE', url: '/personal_access_tokens/:id', summary: 'Revoke a personal access token', tags: ['personal_access_tokens'], access: 'authenticated',
    response: null,
    input: Input({ id: Int() }),
    handler: async (req) => {
      const row = await ownTokenOr404(req, req.input.id);
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
      let q = req.server.db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', user.id).where('impersonation', '=', 1);
      if (req.input.state === 'active') q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      if (req.input.state === 'inactive') q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', now)]));
      const rows = await paginateQuery(req, reply, q.orderBy('id', 'desc'));
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
  const row = await req.server.db.selectFrom('personal_access_tokens').selectAll()
    .where('id', '=', req.input.id).where('user_id', '=', user.id).where('impersonation', '=', 1).executeTakeFirst();
  if (!row) throw new NotFoundError('Impersonation Token');
  return row;
}

