import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, IdOrPath, Input, Int, Opt, PaginationParams } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { findProject, requireProjectLevel, type ProjectContext } from '../../http/access.ts';
import { AccessLevel } from '../../platform/membership.ts';
import {
  clientKeysQuery, createClientKey, deleteClientKey, getSettingOr404, patchSetting, putSetting,
} from './error-tracking.service.ts';
import { errorTrackingClientKey, errorTrackingSetting } from './error-tracking.presenter.ts';
import { ErrorTrackingClientKey, ErrorTrackingSetting } from './error-tracking.schemas.ts';

const tags = ['error_tracking'];

/** Error tracking is a Maintainer's business; a project the caller cannot read is 404. */
async function maintainedProject(req: ApiRequest<any>): Promise<ProjectContext> {
  const ctx = await findProject(req.server.db, req.actor, req.input.id);
  requireProjectLevel(ctx, AccessLevel.MAINTAINER);
  return ctx;
}

export const errorTrackingRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/error_tracking/settings', summary: "The project's error-tracking setting", tags, access: 'authenticated',
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath() }),
    handler: async (req) => {
      const ctx = await maintainedProject(req);
      return errorTrackingSetting(await getSettingOr404(req.server.db, ctx.project.id));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/error_tracking/settings', summary: 'Create or replace the error-tracking setting (integrated backend)', tags, access: 'authenticated',
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath(), active: Bool(), integrated: Bool() }),
    handler: async (req) => {
      const ctx = await maintainedProject(req);
      return errorTrackingSetting(await putSetting(req.server, ctx.project.id, { active: req.input.active, integrated: req.input.integrated }));
    },
  },
  {
    method: 'PATCH', url: '/projects/:id/error_tracking/settings', summary: 'Enable or disable error tracking', tags, access: 'authenticated',
    response: ErrorTrackingSetting,
    input: Input({ id: IdOrPath(), active: Bool(), integrated: Opt(Bool()) }),
    handler: async (req) => {
      const ctx = await maintainedProject(req);
      return errorTrackingSetting(await patchSetting(req.server, ctx.project.id, { active: req.input.active, integrated: req.input.integrated }));
    },
  },
  {
    method: 'GET', url: '/projects/:id/error_tracking/client_keys', summary: "List the project's error-tracking client keys", tags, access: 'authenticated',
    response: Type.Array(ErrorTrackingClientKey),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = await maintainedProject(req);
      const rows = await paginateQuery(req, reply, clientKeysQuery(req.server.db, ctx.project.id));
      return rows.map((k) => errorTrackingClientKey(k, req.server.config.externalUrl));
    },
  },
  {
    method: 'POST', url: '/projects/:id/error_tracking/client_keys', summary: 'Create an error-tracking client key', tags, access: 'authenticated',
    response: ErrorTrackingClientKey,
    input: Input({ id: IdOrPath() }),
    handler: async (req) => {
      const ctx = await maintainedProject(req);
      return errorTrackingClientKey(await createClientKey(req.server, ctx.project.id), req.server.config.externalUrl);
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/error_tracking/client_keys/:key_id', summary: 'Delete an error-tracking client key', tags, access: 'authenticated',
    response: ErrorTrackingClientKey,
    input: Input({ id: IdOrPath(), key_id: Int() }),
    // The reference answers 200 with the deleted key.
    handler: async (req) => {
      const ctx = await maintainedProject(req);
      return errorTrackingClientKey(await deleteClientKey(req.server, ctx.project.id, req.input.key_id), req.server.config.externalUrl);
    },
  },
];
