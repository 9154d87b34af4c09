import type { RouteDef } from '../../http/route.ts';
import { Type } from '@sinclair/typebox';
import { IdOrPath, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';

import { createUserList, deleteUserList, getByIid, listQuery, updateUserList } from './feature-flag-user-lists.service.ts';
import { userList } from './feature-flag-user-lists.presenter.ts';
import { FeatureFlagUserList } from './feature-flag-user-lists.schemas.ts';

const tags = ['feature_flags_user_lists'];
// This API reports parameter errors under `message`, as the reference does for it alone.
const errorStyle = 'message' as const;

export const featureFlagUserListRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/feature_flags_user_lists', summary: "List a project's feature-flag user lists", tags, access: 'authenticated', project: { ability: 'admin_feature_flags_user_lists' }, errorStyle,
    response: Type.Array(FeatureFlagUserList),
    input: Input({ id: IdOrPath(), search: Opt(Str({ description: 'words the name must contain' })), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = req.project;
      const rows = await paginateQuery(req, reply, listQuery(req.server.db, ctx.project.id, req.input.search));
      return rows.map(userList);
    },
  },
  {
    method: 'POST', url: '/projects/:id/feature_flags_user_lists', summary: 'Create a feature-flag user list', tags, access: 'authenticated', project: { ability: 'admin_feature_flags_user_lists' }, errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), name: Str(), user_xids: Str({ description: 'comma-separated external user ids' }) }),
    handler: async (req) => {
      const ctx = req.project;
      return userList(await createUserList(req.server, ctx.project.id, { name: req.input.name, userXids: req.input.user_xids }));
    },
  },
  {
    method: 'GET', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'One feature-flag user list', tags, access: 'authenticated', project: { ability: 'admin_feature_flags_user_lists' }, errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), iid: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      return userList(await getByIid(req.server.db, ctx.project.id, req.input.iid));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'Update a feature-flag user list', tags, access: 'authenticated', project: { ability: 'admin_feature_flags_user_lists' }, errorStyle,
    response: FeatureFlagUserList,
    input: Input({ id: IdOrPath(), iid: Str(), name: Opt(Str()), user_xids: Opt(Str()) }),
    handler: async (req) => {
      const ctx = req.project;
      const list = await getByIid(req.server.db, ctx.project.id, req.input.iid);
      return userList(await updateUserList(req.server, list, { name: req.input.name, userXids: req.input.user_xids }));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/feature_flags_user_lists/:iid', summary: 'Delete a feature-flag user list', tags, access: 'authenticated', project: { ability: 'admin_feature_flags_user_lists' }, errorStyle,
    response: null,
    input: Input({ id: IdOrPath(), iid: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      await deleteUserList(req.server, await getByIid(req.server.db, ctx.project.id, req.input.iid));
      return undefined;
    },
  },
];
