import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { DateTime, Enum, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { parseDateTime } from '../../http/params.ts';
import { getUserOr404, type User } from '../users/users.service.ts';
import { userPublic } from '../users/users.presenter.ts';
import { deployKey } from '../deploy-keys/deploy-keys.presenter.ts';
import {
  createUserKey, deleteUserKey, findKeyByFingerprint, getKeyOr404, getUserKeyOr404, userKeysQuery, USAGE_TYPES, type SshKeyRow,
} from './ssh-keys.service.ts';
import { sshKey } from './ssh-keys.presenter.ts';
import { DeployKeyWithUser, SshKey, SshKeyWithUser } from './ssh-keys.schemas.ts';

const tags = ['keys'];
const NewKey = {
  key: Str({ description: 'the public key' }),
  title: Str(),
  expires_at: Opt(DateTime()),
  usage_type: Opt(Enum(USAGE_TYPES, { default: 'auth_and_signing' })),
};

const present = (req: ApiRequest<any>, owner: User) => (k: SshKeyRow) => sshKey(k, owner.name, req.server.config.externalUrl);

async function keyWithUser(req: ApiRequest<any>, k: SshKeyRow) {
  const owner = await getUserOr404(req.server, k.user_id);
  return { ...present(req, owner)(k), user: userPublic(owner, req.server.config.externalUrl, null) };
}

async function addKey(req: ApiRequest<any>, owner: User) {
  const i = req.input;
  const key = await createUserKey(req.server, owner.id, {
    key: i.key, title: i.title, expiresAt: i.expires_at === undefined ? null : parseDateTime(i.expires_at), usageType: i.usage_type ?? 'auth_and_signing',
  });
  return present(req, owner)(key);
}

export const sshKeyRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/user/keys', summary: "The signed-in user's SSH keys", tags, access: 'authenticated', scopes: ['read_user'],
    response: Type.Array(SshKey),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => (await paginateQuery(req, reply, userKeysQuery(req.server.db, req.actor.user!.id))).map(present(req, req.actor.user!)),
  },
  {
    method: 'GET', url: '/user/keys/:key_id', summary: 'One SSH key of the signed-in user', tags, access: 'authenticated', scopes: ['read_user'],
    response: SshKey,
    input: Input({ key_id: Int() }),
    handler: async (req) => present(req, req.actor.user!)(await getUserKeyOr404(req.server.db, req.actor.user!.id, req.input.key_id)),
  },
  {
    method: 'POST', url: '/user/keys', summary: 'Add an SSH key to the signed-in user', tags, access: 'authenticated',
    response: SshKey,
    input: Input(NewKey),
    handler: async (req) => addKey(req, req.actor.user!),
  },
  {
    method: 'DELETE', url: '/user/keys/:key_id', summary: 'Remove an SSH key of the signed-in user', tags, access: 'authenticated',
    response: null,
    input: Input({ key_id: Int() }),
    handler: async (req) => {
      await deleteUserKey(req.server, await getUserKeyOr404(req.server.db, req.actor.user!.id, req.input.key_id));
      return undefined;
    },
  },
  {
    method: 'GET', url: '/users/:user_id/keys', summary: "A user's SSH keys", tags, access: 'public', scopes: ['read_user'],
    response: Type.Array(SshKey),
    input: Input({ user_id: Str({ description: 'ID or username' }), ...PaginationParams }),
    handler: async (req, reply) => {
      const owner = await getUserOr404(req.server, req.input.user_id);
      return (await paginateQuery(req, reply, userKeysQuery(req.server.db, owner.id))).map(present(req, owner));
    },
  },
  {
    method: 'GET', url: '/users/:id/keys/:key_id', summary: 'One SSH key of a user', tags, access: 'public', scopes: ['read_user'],
    response: SshKey,
    input: Input({ id: Str({ description: 'ID or username' }), key_id: Int() }),
    handler: async (req) => {
      const owner = await getUserOr404(req.server, req.input.id);
      return present(req, owner)(await getUserKeyOr404(req.server.db, owner.id, req.input.key_id));
    },
  },
  {
    method: 'POST', url: '/users/:user_id/keys', summary: 'Add an SSH key to a user', tags, access: 'admin',
    response: SshKey,
    input: Input({ user_id: Int(), ...NewKey }),
    handler: async (req) => addKey(req, await getUserOr404(req.server, req.input.user_id)),
  },
  {
    method: 'DELETE', url: '/users/:id/keys/:key_id', summary: "Remove a user's SSH key", tags, access: 'admin',
    response: null,
    input: Input({ id: Int(), key_id: Int() }),
    handler: async (req) => {
      const owner = await getUserOr404(req.server, req.input.id);
      await deleteUserKey(req.server, await getUserKeyOr404(req.server.db, owner.id, req.input.key_id));
      return undefined;
    },
  },
  {
    method: 'GET', url: '/keys/:id', summary: 'An SSH key with its owner', tags, access: 'admin',
    response: SshKeyWithUser,
    input: Input({ id: Int() }),
    handler: async (req) => keyWithUser(req, await getKeyOr404(req.server.db, req.input.id)),
  },
  {
    method: 'GET', url: '/keys', summary: 'The SSH key (user or deploy key) with a fingerprint', tags, access: 'admin',
    response: Type.Union([SshKeyWithUser, DeployKeyWithUser]),
    input: Input({ fingerprint: Str({ description: 'SHA256:... or the MD5 colon form' }) }),
    handler: async (req) => {
      const found = await findKeyByFingerprint(req.server.db, req.input.fingerprint);
      if (found.kind === 'ssh') return keyWithUser(req, found.key);
      const owner = found.key.user_id === null ? null : await getUserOr404(req.server, found.key.user_id).catch(() => null);
      return { ...deployKey(found.key), user: owner ? userPublic(owner, req.server.config.externalUrl, null) : null };
    },
  },
];
