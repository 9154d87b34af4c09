import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../platform/errors.ts';
import { accessTokenFrom, oauthParams } from './params.ts';
import { findByAccessToken, isAccessible } from './tokens.ts';
import { splitScopes } from './scopes.ts';
import { doc } from './doc.ts';

/** GET /oauth/token/info: the token describes itself; `scopes` and `expires_in_seconds` are deprecated aliases. */
export function registerTokenInfo(app: FastifyInstance): void {
  app.get('/oauth/token/info', { schema: doc('Describe the access token used for the request') }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const token = accessTokenFrom(req, oauthParams(req));
    const now = req.server.clock.now();
    const row = token ? await findByAccessToken(req.server.db, token) : undefined;
    if (!row || !isAccessible(row, now)) throw new OAuthError('invalid_token', { surface: 'info' });
    const uid = row.application_id === null ? null
      : (await req.server.db.selectFrom('oauth_applications').select('uid').where('id', '=', row.application_id).executeTakeFirst())?.uid ?? null;
    const scopes = splitScopes(row.scopes);
    const expiresIn = row.expires_at === null ? null : Math.max(0, Math.floor((row.expires_at - now) / 1000));
    return {
      resource_owner_id: row.user_id,
      scope: scopes,
      expires_in: expiresIn,
      application: { uid },
      created_at: Math.floor(row.created_at / 1000),
      scopes,
      expires_in_seconds: expiresIn,
    };
  });
}
