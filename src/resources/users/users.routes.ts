import { Nullable } from '../../http/response-schemas.ts';
import { Type } from '@sinclair/typebox';
import type { RouteDef, ApiRequest } from '../../http/route.ts';
import { Bool, DateTime, Enum, File, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { ForbiddenError, ParamError } from '../../platform/errors.ts';
import {
  changeUserState, checkAvatar, createUser, deleteUser, getUserOr404, identitiesOf, personalNamespaceIds, refuseTaken, updateUser, usersListQuery, type User,
} from './users.service.ts';
import { personalNamespace } from '../projects/projects.service.ts';
import { userBasic, userEntity, userPublic, userWithAdmin } from './users.presenter.ts';
import { AnyUser, UserBasic, UserWithAdmin } from './users.schemas.ts';

const UserFields = {
  name: Opt(Str()),
  username: Opt(Str()),
  email: Opt(Str()),
  password: Opt(Str()),
  admin: Opt(Bool()),
  bio: Opt(Str()),
  location: Opt(Str()),
  website_url: Opt(Str()),
  organization: Opt(Str()),
  job_title: Opt(Str()),
  public_email: Opt(Str()),
  private_profile: Opt(Bool()),
  can_create_group: Opt(Bool()),
  projects_limit: Opt(Int()),
  external: Opt(Bool()),
  note: Opt(Str()),
  avatar: Opt(File({ description: 'avatar image (multipart)' })),
};

const { name: _name, username: _username, email: _email, password: _password, ...OptionalAttributes } = UserFields;

async function present(req: ApiRequest<any>, u: User, view: 'self' | 'other') {
  const base = req.server.config.externalUrl;
  const identities = async () => (await identitiesOf(req.server, [u.id])).get(u.id)!;
  if (req.actor.admin) return userWithAdmin(u, base, (await personalNamespace(req.server, u.id))?.id ?? null, await identities());
  if (view === 'self') return userPublic(u, base, (await personalNamespace(req.server, u.id))?.id ?? null, await identities());
  return userEntity(u, base);
}

export const userRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/user', summary: 'The signed-in user', tags: ['users'], access: 'authenticated', scopes: ['read_user'],
    response: AnyUser,
    handler: async (req) => present(req, req.actor.user!, 'self'),
  },
  {
    method: 'GET', url: '/users', summary: 'List users', tags: ['users'], access: 'public', scopes: ['read_user'],
    response: Type.Array(Type.Union([UserWithAdmin, UserBasic])),
    input: Input({
      username: Opt(Str()), search: Opt(Str()), active: Opt(Bool()), blocked: Opt(Bool()), external: Opt(Bool()),
      humans: Opt(Bool()), exclude_internal: Opt(Bool()), admins: Opt(Bool()),
      created_after: Opt(DateTime()), created_before: Opt(DateTime()),
      order_by: Opt(Enum(['id', 'name', 'username', 'created_at', 'updated_at'] as const, { default: 'id' })),
      sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
      ...PaginationParams,
    }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, usersListQuery(req.server, req.actor, req.input));
      const base = req.server.config.externalUrl;
      if (req.actor.admin) {
        const byOwner = await personalNamespaceIds(req.server, rows.map((r) => r.id));
        const identities = await identitiesOf(req.server, rows.map((r) => r.id));
        return rows.map((u) => userWithAdmin(u, base, byOwner.get(u.id) ?? null, identities.get(u.id)));
      }
      return rows.map((u) => userBasic(u, base));
    },
  },
  {
    method: 'GET', url: '/users/:id', summary: 'One user', tags: ['users'], access: 'public', scopes: ['read_user'],
    response: AnyUser,
    input: Input({ id: Int() }),
    handler: async (req) => {
      if (!req.actor.user) throw new ForbiddenError('Not authorized!');
      const u = await getUserOr404(req.server, req.input.id);
      return present(req, u, req.actor.user?.id === u.id ? 'self' : 'other');
    },
  },
  {
    method: 'POST', url: '/users', summary: 'Create a user', tags: ['users'], access: 'admin',
    response: AnyUser,
    // Declaration order decides which missing parameter is named first: email, name, username.
    input: Input({
      email: Str(), password: Opt(Str()), reset_password: Opt(Bool()), skip_confirmation: Opt(Bool()),
      name: Str(), username: Str(), force_random_password: Opt(Bool()),
      ...OptionalAttributes,
    }),
    handler: async (req) => {
      const i = req.input;
      if (i.password === undefined && i.reset_password === undefined && i.force_random_password === undefined) {
        throw ParamError.group(['password', 'reset_password', 'force_random_password'], 'at_least_one');
      }
      await refuseTaken(req.server, i);
      checkAvatar(i.avatar);
      const password = i.password ?? (i.force_random_password || i.reset_password ? null : undefined);
      const u = await createUser(req.server, { ...i, password, skipConfirmation: i.skip_confirmation });
      return present(req, u, 'other');
    },
  },
  {
    method: 'PUT', url: '/users/:id', summary: 'Edit a user', tags: ['users'], access: 'admin',
    response: AnyUser,
    input: Input({ id: Int(), ...UserFields, provider: Opt(Str()), extern_uid: Opt(Str()) }),
    handler: async (req) => {
      if ((req.input.provider === undefined) !== (req.input.extern_uid === undefined)) throw ParamError.group(['provider', 'extern_uid'], 'all_or_none');
      const u = await getUserOr404(req.server, req.input.id);
      const { id: _id, ...rest } = req.input;
      await refuseTaken(req.server, rest, u.id);
      checkAvatar(rest.avatar);
      return present(req, await updateUser(req.server, u, rest), 'other');
    },
  },
  {
    method: 'DELETE', url: '/users/:id', summary: 'Delete a user', tags: ['users'], access: 'admin',
    response: null,
    input: Input({ id: Int(), hard_delete: Opt(Bool()) }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      if (u.id === req.actor.user!.id && !req.actor.sudo) throw new ForbiddenError('You cannot delete your own account');
      checkUnmodifiedSince(req, u.updated_at);
      await deleteUser(req.server, u);
      return undefined;
    },
  },
  ...(['block', 'unblock', 'ban', 'unban', 'deactivate', 'activate'] as const).map((action): RouteDef<any> => ({
    method: 'POST', url: `/users/:id/${action}`, summary: `${action[0].toUpperCase()}${action.slice(1)} a user`, tags: ['users'], access: 'admin',
    response: Nullable(Type.Boolean()),
    input: Input({ id: Int() }),
    handler: async (req, reply) => {
      const u = await getUserOr404(req.server, req.input.id);
      const answer = await changeUserState(req.server, req.actor.user!.id, u, action);
      reply.code(201);
      // `null` is sent as the JSON text `null`, as the reference does.
      return reply.type('application/json').send(JSON.stringify(answer));
    },
  })),
];

