import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../http/route.ts';
import { userRoutes } from './users/users.routes.ts';
import { accessTokenRoutes } from './access-tokens/access-tokens.routes.ts';
import { projectRoutes } from './projects/projects.routes.ts';

/** Every resource area, registered in a fixed order. */
export async function registerResources(app: FastifyInstance): Promise<void> {
  registerRoutes(app, [
    ...userRoutes,
    ...accessTokenRoutes,
    ...projectRoutes,
  ]);
}
