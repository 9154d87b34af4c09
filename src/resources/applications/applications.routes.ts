import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { Bool, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { applicationsQuery, createApplication, deleteApplication, getApplicationOr404, renewSecret } from '../../oauth/applications.ts';
import { splitScopes } from '../../oauth/scopes.ts';
import { applicationEntity } from './applications.presenter.ts';
import { Application } from './applications.schemas.ts';

// Instance-wide OAuth applications, for administrators and automation that registers clients.
export const applicationRoutes: RouteDef<any>[] = [
  {
    method: 'POST', url: '/applications', summary: 'Create an OAuth application', tags: ['applications'], access: 'admin',
    response: Application,
    input: Input({ name: Str(), redirect_uri: Str(), scopes: Str({ description: 'space-separated scopes' }), confidential: Opt(Bool({ default: true })) }),
    handler: async (req) => {
      const i = req.input;
      const { app, secret } = await createApplication(req.server, {
        name: i.name, redirectUri: i.redirect_uri, scopes: splitScopes(i.scopes), confidential: i.confidential ?? true, ownerId: null,
      });
      return applicationEntity(app, secret);
    },
  },
  {
    method: 'GET', url: '/applications', summary: 'List OAuth applications', tags: ['applications'], access: 'admin',
    response: Type.Array(Application),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, applicationsQuery(req.server.db));
      return rows.map((a) => applicationEntity(a));
    },
  },
  {
    method: 'DELETE', url: '/applications/:id', summary: 'Delete an OAuth application', tags: ['applications'], access: 'admin',
    response: null,
    input: Input({ id: Int() }),
    handler: async (req) => {
      await deleteApplication(req.server, await getApplicationOr404(req.server, req.input.id));
      return undefined;
    },
  },
  {
    method: 'POST', url: '/applications/:id/renew-secret', summary: 'Renew the secret of an OAuth application', tags: ['applications'], access: 'admin',
    response: Application,
    input: Input({ id: Int() }),
    handler: async (req) => {
      const app = await getApplicationOr404(req.server, req.input.id);
      const secret = await renewSecret(req.server, app);
      return applicationEntity(app, secret);
    },
  },
];
