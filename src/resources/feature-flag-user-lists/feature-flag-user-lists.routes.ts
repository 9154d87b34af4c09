import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { IdOrPath, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { findProject, requireProjectLevel, type ProjectContext } from '../../http/access.ts';
import { AccessLevel } from '../../platform/membership.ts';
import { createUserList, deleteUserList, getByIid, listQuery, updateUserList } from './feature-flag-user-lists.service.ts';
import { userList } from './feature-flag-user-lists.presenter.ts';
import { FeatureFlagUserList } from './feature-flag-user-lists.schemas.ts';

const tags = ['feature_flags_user_lists'];
// This API reports parameter errors under `message`, as the reference does for it alone.
const errorStyle = 'message' as const;

async function developerProject(req: ApiRequest<any>): Promise<ProjectContext> {
  const ctx = await findProject(req.server.db, req.actor, req.input.id);
  requireProjectLevel(ctx, AccessLevel.DEVELOPER);
  return ctx;
}

export const featureFlagUserListRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/feature_flags_user_lists', summary: "List a project's feature-flag user lists", tags, access: 'authenticated', errorStyle,
    response: Type.Array(FeatureFlagUserList),
    input: Input({ id: IdOrPath(), search: Opt(Str({ description: 'words the name must contain' })), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = await developerProject(req);
      const rows = await paginateQuery(req, reply, listQuery(req.server.db, ctx.project.id, req.input.search));
      return rows.map(userList);
    },
  },
  {
    method: 'POST', url: '/projects/:id/feature_flags_user_lists', summary: 'Create a feature-flag user list', tags, access: 'authenticated', errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), name: Str(), user_xids: Str({ description: 'comma-separated external user ids' }) }),
    handler: async (req) => {
      const ctx = await developerProject(req);
      return userList(await createUserList(req.server, ctx.project.id, { name: req.input.name, userXids: req.input.user_xids }));
    },
  },
  {
    method: 'GET', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'One feature-flag user list', tags, access: 'authenticated', errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), iid: Str() }),
    handler: async (req) => {
      const ctx = await developerProject(req);
      return userList(await getByIid(req.server.db, ctx.project.id, req.input.iid));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'Update a feature-flag user list', tags, access: 'authenticated', errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), iid: Str(), name: Opt(Str()), user_xids: Opt(Str()) }),
    handler: async (req) => {
      const ctx = await developerProject(req);
      const list = await getByIid(req.server.db, ctx.project.id, req.input.iid);
      return userList(await updateUserList(req.server, list, { name: req.input.name, userXids: req.input.user_xids }));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'Delete a feature-flag user list', tags, access: 'authenticated', errorStyle,
    response: null,
    input: Input({ id: IdOrPath(), iid: Str() }),
    handler: async (req) => {
      const ctx = await developerProject(req);
      await deleteUserList(req.server, await getByIid(req.server.db, ctx.project.id, req.input.iid));
      return undefined;
    },
  },
];
