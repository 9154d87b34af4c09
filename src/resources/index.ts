import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../http/route.ts';
import { userRoutes } from './users/users.routes.ts';
import { accessTokenRoutes } from './access-tokens/access-tokens.routes.ts';
import { groupRoutes } from './groups/groups.routes.ts';
import { namespaceRoutes } from './namespaces/namespaces.routes.ts';
import { memberRoutes } from './members/members.routes.ts';
import { resourceAccessTokenRoutes } from './members/resource-access-tokens.routes.ts';

/** Every resource area, registered in a fixed order. */
export async function registerResources(app: FastifyInstance): Promise<void> {
  registerRoutes(app, [
    ...userRoutes,
    ...accessTokenRoutes,
    ...groupRoutes,
    ...namespaceRoutes,
    ...memberRoutes,
    ...resourceAccessTokenRoutes,
  ]);
}
