import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { parseDateTime } from '../../http/params.ts';

import { AccessLevel } from '../../platform/membership.ts';
import { authorizedProjectIds } from '../../platform/access/queries.ts';
import { ForbiddenError, NotFoundError } from '../../platform/errors.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { getUserOr404 } from '../users/users.service.ts';
import {
  addProjectKey, createPublicKey, enableKey, getProjectKeyOr404, instanceKeysQuery, keysByIds, keysOfProjectsQuery, linkedKey, projectKeysQuery,
  projectsOfKeys, removeProjectKey, updateProjectKey, type Caller,
} from './deploy-keys.service.ts';
import { deployKey, instanceDeployKey, projectDeployKey } from './deploy-keys.presenter.ts';
import { DeployKey, InstanceDeployKey, ProjectDeployKey } from './deploy-keys.schemas.ts';

const tags = ['deploy_keys'];

function callerOf(req: ApiRequest<any>): Caller {
  return { userId: req.actor.user?.id ?? null, admin: req.actor.admin };
}

const expiry = (v: string | undefined) => (v === undefined ? null : parseDateTime(v));

export const deployKeyRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/deploy_keys', summary: 'List every deploy key of the instance', tags, access: 'admin',
    response: Type.Array(InstanceDeployKey),
    input: Input({ public: Opt(Bool({ default: false, description: 'only public keys' })), ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, instanceKeysQuery(req.server.db, !!req.input.public));
      const projects = await projectsOfKeys(req.server.db, rows.map((r) => r.id));
      return rows.map((r) => instanceDeployKey(r, projects.get(r.id)!));
    },
  },
  {
    method: 'POST', url: '/deploy_keys', summary: 'Create a public deploy key any project may enable', tags, access: 'admin',
    response: DeployKey,
    input: Input({ key: Str(), title: Str(), expires_at: Opt(DateTime()) }),
    handler: async (req) => {
      const key = await createPublicKey(req.server, callerOf(req), { key: req.input.key, title: req.input.title, expiresAt: expiry(req.input.expires_at) });
      return deployKey(key);
    },
  },
  {
    method: 'GET', url: '/projects/:id/deploy_keys', summary: "List a project's deploy keys", tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: Type.Array(ProjectDeployKey),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = req.project;
      const links = await paginateQuery(req, reply, projectKeysQuery(req.server.db, ctx.project.id));
      const keys = await keysByIds(req.server.db, links.map((l) => l.deploy_key_id));
      return links.map((l) => projectDeployKey(keys.get(l.deploy_key_id)!, l));
    },
  },
  {
    method: 'GET', url: '/projects/:id/deploy_keys/:key_id', summary: 'One deploy key of a project', tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: ProjectDeployKey,
    input: Input({ id: IdOrPath(), key_id: Int() }),
    handler: async (req) => {
      const ctx = req.project;
      const { key, link } = await getProjectKeyOr404(req.server.db, ctx.project.id, req.input.key_id);
      return projectDeployKey(key, link);
    },
  },
  {
    method: 'POST', url: '/projects/:id/deploy_keys', summary: 'Add a deploy key to a project', tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: ProjectDeployKey,
    input: Input({ id: IdOrPath(), key: Str(), title: Str(), can_push: Opt(Bool()), expires_at: Opt(DateTime()) }),
    handler: async (req) => {
      const ctx = req.project;
      const { key, link } = await addProjectKey(req.server, callerOf(req), ctx.project.id, {
        key: req.input.key, title: req.input.title, canPush: req.input.can_push ?? false, expiresAt: expiry(req.input.expires_at),
      });
      return projectDeployKey(key, link);
    },
  },
  {
    method: 'PUT', url: '/projects/:id/deploy_keys/:key_id', summary: "Update a deploy key's title or write access", tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: ProjectDeployKey,
    input: Input({ id: IdOrPath(), key_id: Int(), title: Opt(Str()), can_push: Opt(Bool()) }),
    handler: async (req) => {
      const ctx = req.project;
      const found = await getProjectKeyOr404(req.server.db, ctx.project.id, req.input.key_id);
      const { key, link } = await updateProjectKey(req.server, callerOf(req), found, { title: req.input.title, canPush: req.input.can_push });
      return projectDeployKey(key, link);
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/deploy_keys/:key_id', summary: 'Remove a deploy key from a project', tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: null,
    input: Input({ id: IdOrPath(), key_id: Int() }),
    handler: async (req) => {
      const ctx = req.project;
      const found = await linkedKey(req.server.db, ctx.project.id, req.input.key_id);
      if (!found) throw new NotFoundError('Deploy key');
      checkUnmodifiedSince(req, found.link.updated_at);
      await removeProjectKey(req.server, found);
      return undefined;
    },
  },
  {
    method: 'POST', url: '/projects/:id/deploy_keys/:key_id/enable', summary: 'Enable an existing deploy key on a project', tags, access: 'authenticated', project: { ability: 'admin_project' },
    response: DeployKey,
    input: Input({ id: IdOrPath(), key_id: Int() }),
    handler: async (req) => {
      const ctx = req.project;
      return deployKey(await enableKey(req.server, callerOf(req), ctx.project.id, req.input.key_id));
    },
  },
  {
    method: 'GET', url: '/users/:id_or_username/project_deploy_keys', summary: 'Deploy keys of projects the caller and a user both maintain', tags, access: 'authenticated',
    response: Type.Array(DeployKey),
    input: Input({ id_or_username: Str(), ...PaginationParams }),
    handler: async (req, reply) => {
      const db = req.server.db;
      const idOrUsername: string = req.input.id_or_username;
      if (/^\d+$/.test(idOrUsername) && !fitsIntColumn(Number(idOrUsername))) throw new NotFoundError('User');
      const target = await getUserOr404(req.server, idOrUsername);
      const now = req.server.clock.now();
      const me = req.actor.user!;
      // Administrators count as Maintainer everywhere, so for them the target's projects decide alone.
      let ids = await authorizedProjectIds(req.server, target.id, AccessLevel.MAINTAINER, now);
      if (target.id !== me.id && !req.actor.admin) {
        const mine = await authorizedProjectIds(req.server, me.id, AccessLevel.MAINTAINER, now);
        ids = new Set([...ids].filter((id) => mine.has(id)));
      }
      if (ids.size === 0) throw new ForbiddenError('No common authorized project found');
      const rows = await paginateQuery(req, reply, keysOfProjectsQuery(db, [...ids]));
      return rows.map(deployKey);
    },
  },
];
