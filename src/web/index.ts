import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerSignIn } from './sign-in.ts';
import { registerApplicationPages } from './applications.ts';
import { activeBroadcastMessages } from '../resources/broadcast-messages/broadcast-messages.service.ts';
import { broadcastBannersHtml } from '../resources/broadcast-messages/broadcast-messages.presenter.ts';

const PAGES = /^\/(?:users\/sign_in|oauth\/authorize|profile\/)/;

/** The few server-rendered pages: sign-in and sign-out, and /profile/applications. */
export function registerWeb(app: FastifyInstance): void {
  // Every page shows the broadcast banners that are active for its path.
  app.addHook('preHandler', async (req: FastifyRequest) => {
    if (req.method !== 'GET' && req.method !== 'POST') return;
    const path = req.url.split('?')[0];
    if (!PAGES.test(path)) return;
    const rows = await activeBroadcastMessages(app, { path, userAccessLevel: null, broadcastType: 'banner' });
    (req as { broadcastBanners?: string }).broadcastBanners = broadcastBannersHtml(rows);
  });
  registerSignIn(app);
  registerApplicationPages(app);
}
