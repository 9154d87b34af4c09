import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerSignIn } from './sign-in.ts';
import { registerApplicationPages } from './applications.ts';
import { activeBroadcastMessages } from '../resources/broadcast-messages/broadcast-messages.service.ts';
import { broadcastBannersHtml } from '../resources/broadcast-messages/broadcast-messages.presenter.ts';

const PAGES = /^\/(?:users\/sign_in|oauth\/authorize|profile\/)/;

/** The few server-rendered pages: sign-in and sign-out, and /profile/applications. */
export function registerWeb(app: FastifyInstance): void {
  // Every page shows the broadcast banners that are active for its path (a step of the page routes only).
  const banners = async (req: FastifyRequest) => {
    if (req.method !== 'GET' && req.method !== 'POST') return;
    const path = req.url.split('?')[0];
    const rows = await activeBroadcastMessages(app, { path, userAccessLevel: null, broadcastType: 'banner' });
    (req as { broadcastBanners?: string }).broadcastBanners = broadcastBannersHtml(rows);
  };
  app.addHook('onRoute', (route) => {
    if (!PAGES.test(route.url)) return;
    route.preHandler = [...(Array.isArray(route.preHandler) ? route.preHandler : route.preHandler ? [route.preHandler] : []), banners];
  });
  registerSignIn(app);
  registerApplicationPages(app);
}
