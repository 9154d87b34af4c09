import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../http/route.ts';
import { userRoutes } from './users/users.routes.ts';
import { accessTokenRoutes } from './access-tokens/access-tokens.routes.ts';
import { deployKeyRoutes } from './deploy-keys/deploy-keys.routes.ts';
import { errorTrackingRoutes } from './error-tracking/error-tracking.routes.ts';
import { featureFlagUserListRoutes } from './feature-flag-user-lists/feature-flag-user-lists.routes.ts';

/** Every resource area, registered in a fixed order. */
export async function registerResources(app: FastifyInstance): Promise<void> {
  registerRoutes(app, [
    ...userRoutes,
    ...accessTokenRoutes,
    ...deployKeyRoutes,
    ...errorTrackingRoutes,
    ...featureFlagUserListRoutes,
  ]);
}
