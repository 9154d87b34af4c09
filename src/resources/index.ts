import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../http/route.ts';
import { userRoutes } from './users/users.routes.ts';
import { accessTokenRoutes } from './access-tokens/access-tokens.routes.ts';
import { branchRoutes } from './repository/branches.routes.ts';
import { protectedBranchRoutes, protectedTagRoutes } from './repository/protected.routes.ts';
import { repositoryRoutes } from './repository/repository.routes.ts';
import { registerGitHttp } from './git-http/git-http.routes.ts';

/** Every resource area, registered in a fixed order. */
export async function registerResources(app: FastifyInstance): Promise<void> {
  registerRoutes(app, [
    ...userRoutes,
    ...accessTokenRoutes,
    ...branchRoutes,
    ...protectedBranchRoutes,
    ...protectedTagRoutes,
    ...repositoryRoutes,
  ]);
  registerGitHttp(app);
}
