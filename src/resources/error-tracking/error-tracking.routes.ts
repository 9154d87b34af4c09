import type { RouteDef } from '../../http/route.ts';
import { Type } from '@sinclair/typebox';
import { Bool, IdOrPath, Input, Int, Opt, PaginationParams } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';

import {
  clientKeysQuery, createClientKey, deleteClientKey, getSettingOr404, patchSetting, putSetting,
} from './error-tracking.service.ts';
import { errorTrackingClientKey, errorTrackingSetting } from './error-tracking.presenter.ts';
import { ErrorTrackingClientKey, ErrorTrackingSetting } from './error-tracking.schemas.ts';

const tags = ['error_tracking'];

export const errorTrackingRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/error_tracking/settings', summary: "The project's error-tracking setting", tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath() }),
    handler: async (req) => {
      const ctx = req.project;
      return errorTrackingSetting(await getSettingOr404(req.server.db, ctx.project.id));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/error_tracking/settings', summary: 'Create or replace the error-tracking setting (integrated backend)', tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath(), active: Bool(), integrated: Bool() }),
    handler: async (req) => {
      const ctx = req.project;
      return errorTrackingSetting(await putSetting(req.server, ctx.project.id, { active: req.input.active, integrated: req.input.integrated }));
    },
  },
  {
    method: 'PATCH', url: '/projects/:id/error_tracking/settings', summary: 'Enable or disable error tracking', tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath(), active: Bool(), integrated: Opt(Bool()) }),
    handler: async (req) => {
      const ctx = req.project;
      return errorTrackingSetting(await patchSetting(req.server, ctx.project.id, { active: req.input.active, integrated: req.input.integrated }));
    },
  },
  {
    method: 'GET', url: '/projects/:id/error_tracking/client_keys', summary: "List the project's error-tracking client keys", tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: Type.Array(ErrorTrackingClientKey),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = req.project;
      const rows = await paginateQuery(req, reply, clientKeysQuery(req.server.db, ctx.project.id));
      return rows.map((k) => errorTrackingClientKey(k, req.server.config.externalUrl));
    },
  },
  {
    method: 'POST', url: '/projects/:id/error_tracking/client_keys', summary: 'Create an error-tracking client key', tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: ErrorTrackingClientKey,
    input: Input({ id: IdOrPath() }),
    handler: async (req) => {
      const ctx = req.project;
      return errorTrackingClientKey(await createClientKey(req.server, ctx.project.id), req.server.config.externalUrl);
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/error_tracking/client_keys/:key_id', summary: 'Delete an error-tracking client key', tags, access: 'authenticated', project: { ability: 'admin_operations' },
    response: ErrorTrackingClientKey,
    input: Input({ id: IdOrPath(), key_id: Int() }),
    // The reference answers 200 with the deleted key.
    handler: async (req) => {
      const ctx = req.project;
      return errorTrackingClientKey(await deleteClientKey(req.server, ctx.project.id, req.input.key_id), req.server.config.externalUrl);
    },
  },
];
