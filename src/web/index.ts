import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerSignIn } from './sign-in.ts';
import { registerApplicationPages } from './applications.ts';
import { registerAuthorize } from './authorize.ts';

const PAGES = /^\/(?:users\/sign_in|oauth\/authorize|profile\/)/;

export interface WebOptions {
  /** The escaped banner markup active for a page path; the application supplies it (pages never reach into resources). */
  banners(path: string): Promise<string>;
}

/** The few server-rendered pages: sign-in and sign-out, the OAuth consent page, and /profile/applications. */
export function registerWeb(app: FastifyInstance, opts: WebOptions): void {
  // Every page shows the broadcast banners that are active for its path (a step of the page routes only).
  const banners = async (req: FastifyRequest) => {
    if (req.method !== 'GET' && req.method !== 'POST') return;
    (req as { broadcastBanners?: string }).broadcastBanners = await opts.banners(req.url.split('?')[0]);
  };
  app.addHook('onRoute', (route) => {
    if (!PAGES.test(route.url)) return;
    route.preHandler = [...(Array.isArray(route.preHandler) ? route.preHandler : route.preHandler ? [route.preHandler] : []), banners];
  });
  registerSignIn(app);
  registerAuthorize(app);
  registerApplicationPages(app);
}
