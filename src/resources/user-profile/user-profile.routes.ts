import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Enum, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { getUserOr404 } from '../users/users.service.ts';
import {
  addEmail, AVAILABILITIES, CLEAR_AFTER, customAttributesQuery, deleteCustomAttribute, emailsQuery, getCustomAttributeOr404,
  getEmailOr404, getStatus, membershipsQuery, removeEmail, setCustomAttribute, setStatus,
} from './user-profile.service.ts';
import { customAttribute, email, membership, userStatus } from './user-profile.presenter.ts';
import { CustomAttribute, Email, Membership, UserStatus } from './user-profile.schemas.ts';

const me = (req: ApiRequest<any>) => req.actor.user!;

export const userProfileRoutes: RouteDef<any>[] = [
  // ---- e-mail addresses ----
  {
    method: 'GET', url: '/user/emails', summary: "The signed-in user's further e-mail addresses", tags: ['users'], access: 'authenticated', scopes: ['read_user'],
    response: Type.Array(Email),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => (await paginateQuery(req, reply, emailsQuery(req.server.db, me(req).id))).map(email),
  },
  {
    method: 'GET', url: '/user/emails/:email_id', summary: 'One e-mail address of the signed-in user', tags: ['users'], access: 'authenticated', scopes: ['read_user'],
    response: Email,
    input: Input({ email_id: Int() }),
    handler: async (req) => email(await getEmailOr404(req.server.db, me(req).id, req.input.email_id)),
  },
  {
    method: 'POST', url: '/user/emails', summary: 'Add an e-mail address to the signed-in user', tags: ['users'], access: 'authenticated',
    response: Email,
    input: Input({ email: Str() }),
    handler: async (req) => email(await addEmail(req.server, me(req).id, req.input.email, false)),
  },
  {
    method: 'DELETE', url: '/user/emails/:email_id', summary: 'Remove an e-mail address of the signed-in user', tags: ['users'], access: 'authenticated',
    response: null,
    input: Input({ email_id: Int() }),
    handler: async (req) => {
      await removeEmail(req.server, await getEmailOr404(req.server.db, me(req).id, req.input.email_id));
      return undefined;
    },
  },
  {
    method: 'GET', url: '/users/:id/emails', summary: "A user's further e-mail addresses", tags: ['users'], access: 'admin',
    response: Type.Array(Email),
    input: Input({ id: Int(), ...PaginationParams }),
    handler: async (req, reply) => {
      const u = await getUserOr404(req.server, req.input.id);
      return (await paginateQuery(req, reply, emailsQuery(req.server.db, u.id))).map(email);
    },
  },
  {
    method: 'POST', url: '/users/:id/emails', summary: 'Add an e-mail address to a user', tags: ['users'], access: 'admin',
    response: Email,
    input: Input({ id: Int(), email: Str(), skip_confirmation: Opt(Bool()) }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return email(await addEmail(req.server, u.id, req.input.email, req.input.skip_confirmation === true));
    },
  },
  {
    method: 'DELETE', url: '/users/:id/emails/:email_id', summary: "Remove a user's e-mail address", tags: ['users'], access: 'admin',
    response: null,
    input: Input({ id: Int(), email_id: Int() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      await removeEmail(req.server, await getEmailOr404(req.server.db, u.id, req.input.email_id));
      return undefined;
    },
  },
  // ---- status ----
  {
    method: 'GET', url: '/user/status', summary: "The signed-in user's status", tags: ['users'], access: 'authenticated', scopes: ['read_user'],
    response: UserStatus,
    handler: async (req) => userStatus(await getStatus(req.server, me(req).id)),
  },
  {
    method: 'PUT', url: '/user/status', summary: "Set the signed-in user's status", tags: ['users'], access: 'authenticated',
    response: UserStatus,
    input: Input({
      emoji: Opt(Str()), message: Opt(Str()), availability: Opt(Enum(AVAILABILITIES)),
      clear_status_after: Opt(Enum(Object.keys(CLEAR_AFTER))),
    }),
    handler: async (req) => {
      const i = req.input;
      const row = await setStatus(req.server, me(req).id, { emoji: i.emoji, message: i.message, availability: i.availability, clearStatusAfter: i.clear_status_after });
      return userStatus(row);
    },
  },
  {
    method: 'GET', url: '/users/:user_id/status', summary: "A user's status", tags: ['users'], access: 'public', scopes: ['read_user'],
    response: UserStatus,
    input: Input({ user_id: Str({ description: 'ID or username' }) }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.user_id);
      return userStatus(await getStatus(req.server, u.id));
    },
  },
  // ---- custom attributes (administrators) ----
  {
    method: 'GET', url: '/users/:id/custom_attributes', summary: "A user's custom attributes", tags: ['users'], access: 'admin',
    response: Type.Array(CustomAttribute),
    input: Input({ id: Int() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return (await customAttributesQuery(req.server.db, u.id).execute()).map(customAttribute);
    },
  },
  {
    method: 'GET', url: '/users/:id/custom_attributes/:key', summary: 'One custom attribute of a user', tags: ['users'], access: 'admin',
    response: CustomAttribute,
    input: Input({ id: Int(), key: Str() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return customAttribute(await getCustomAttributeOr404(req.server.db, u.id, req.input.key));
    },
  },
  {
    method: 'PUT', url: '/users/:id/custom_attributes/:key', summary: 'Set a custom attribute of a user', tags: ['users'], access: 'admin',
    response: CustomAttribute,
    input: Input({ id: Int(), key: Str(), value: Str() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return customAttribute(await setCustomAttribute(req.server, u.id, req.input.key, req.input.value));
    },
  },
  {
    method: 'DELETE', url: '/users/:id/custom_attributes/:key', summary: 'Remove a custom attribute of a user', tags: ['users'], access: 'admin',
    response: null,
    input: Input({ id: Int(), key: Str() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      await deleteCustomAttribute(req.server, await getCustomAttributeOr404(req.server.db, u.id, req.input.key));
      return undefined;
    },
  },
  // ---- memberships (administrators) ----
  {
    method: 'GET', url: '/users/:user_id/memberships', summary: "A user's direct memberships of projects and groups", tags: ['users'], access: 'admin',
    response: Type.Array(Membership),
    input: Input({ user_id: Int(), type: Opt(Enum(['Project', 'Namespace'] as const)), ...PaginationParams }),
    handler: async (req, reply) => {
      const u = await getUserOr404(req.server, req.input.user_id);
      return (await paginateQuery(req, reply, membershipsQuery(req.server.db, u.id, req.input.type))).map(membership);
    },
  },
];
