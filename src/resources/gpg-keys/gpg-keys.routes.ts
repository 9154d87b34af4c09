import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Input, Int, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { getUserOr404 } from '../users/users.service.ts';
import { addGpgKey, getGpgKeyOr404, gpgKeysQuery, removeGpgKey } from './gpg-keys.service.ts';
import { gpgKey } from './gpg-keys.presenter.ts';
import { GpgKey } from './gpg-keys.schemas.ts';

const tags = ['gpg_keys'];
const me = (req: ApiRequest<any>) => req.actor.user!;

export const gpgKeyRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/user/gpg_keys', summary: "The signed-in user's GPG keys", tags, access: 'authenticated', scopes: ['read_user'],
    response: Type.Array(GpgKey),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => (await paginateQuery(req, reply, gpgKeysQuery(req.server.db, me(req).id))).map(gpgKey),
  },
  {
    method: 'GET', url: '/user/gpg_keys/:key_id', summary: 'One GPG key of the signed-in user', tags, access: 'authenticated', scopes: ['read_user'],
    response: GpgKey,
    input: Input({ key_id: Int() }),
    handler: async (req) => gpgKey(await getGpgKeyOr404(req.server.db, me(req).id, req.input.key_id)),
  },
  {
    method: 'POST', url: '/user/gpg_keys', summary: 'Add a GPG key to the signed-in user', tags, access: 'authenticated',
    response: GpgKey,
    input: Input({ key: Str() }),
    handler: async (req) => gpgKey(await addGpgKey(req.server, me(req).id, req.input.key)),
  },
  {
    method: 'DELETE', url: '/user/gpg_keys/:key_id', summary: 'Remove a GPG key of the signed-in user', tags, access: 'authenticated',
    response: null,
    input: Input({ key_id: Int() }),
    handler: async (req) => {
      await removeGpgKey(req.server, await getGpgKeyOr404(req.server.db, me(req).id, req.input.key_id));
      return undefined;
    },
  },
  {
    method: 'POST', url: '/user/gpg_keys/:key_id/revoke', summary: 'Revoke a GPG key of the signed-in user', tags, access: 'authenticated',
    response: null, status: 202,
    input: Input({ key_id: Int() }),
    handler: async (req) => {
      await removeGpgKey(req.server, await getGpgKeyOr404(req.server.db, me(req).id, req.input.key_id));
      return undefined;
    },
  },
  {
    method: 'GET', url: '/users/:id/gpg_keys', summary: "A user's GPG keys", tags, access: 'public', scopes: ['read_user'],
    response: Type.Array(GpgKey),
    input: Input({ id: Int(), ...PaginationParams }),
    handler: async (req, reply) => {
      const u = await getUserOr404(req.server, req.input.id);
      return (await paginateQuery(req, reply, gpgKeysQuery(req.server.db, u.id))).map(gpgKey);
    },
  },
  {
    method: 'GET', url: '/users/:id/gpg_keys/:key_id', summary: 'One GPG key of a user', tags, access: 'public', scopes: ['read_user'],
    response: GpgKey,
    input: Input({ id: Int(), key_id: Int() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return gpgKey(await getGpgKeyOr404(req.server.db, u.id, req.input.key_id));
    },
  },
  {
    method: 'POST', url: '/users/:id/gpg_keys', summary: 'Add a GPG key to a user', tags, access: 'admin',
    response: GpgKey,
    input: Input({ id: Int(), key: Str() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      return gpgKey(await addGpgKey(req.server, u.id, req.input.key));
    },
  },
  {
    method: 'DELETE', url: '/users/:id/gpg_keys/:key_id', summary: "Remove a user's GPG key", tags, access: 'admin',
    response: null,
    input: Input({ id: Int(), key_id: Int() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      await removeGpgKey(req.server, await getGpgKeyOr404(req.server.db, u.id, req.input.key_id));
      return undefined;
    },
  },
  {
    method: 'POST', url: '/users/:id/gpg_keys/:key_id/revoke', summary: "Revoke a user's GPG key", tags, access: 'admin',
    response: null, status: 202,
    input: Input({ id: Int(), key_id: Int() }),
    handler: async (req) => {
      const u = await getUserOr404(req.server, req.input.id);
      await removeGpgKey(req.server, await getGpgKeyOr404(req.server.db, u.id, req.input.key_id));
      return undefined;
    },
  },
];
