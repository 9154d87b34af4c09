import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../platform/errors.ts';
import { authenticateClient, readClientCredentials } from './client-auth.ts';
import { oauthParams, present } from './params.ts';
import { findByAccessToken, findByRefreshToken } from './tokens.ts';
import { doc } from './doc.ts';

/**
 * RFC 7009 revocation as the reference answers it: 200 `{}` for revoked and for unknown tokens, 403
 * when the token belongs to another client. Access and refresh token share one row, so revoking
 * either ends both.
 */
export function registerRevoke(app: FastifyInstance): void {
  app.post('/oauth/revoke', { schema: doc('Revoke an access or refresh token (RFC 7009)') }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = oauthParams(req);
    const credentials = readClientCredentials(req, params);
    const token = present(params.token);
    if (!token) return {};
    const db = req.server.db;
    const row = params.token_type_hint === 'refresh_token'
      ? await findByRefreshToken(db, token)
      : (await findByAccessToken(db, token)) ?? (await findByRefreshToken(db, token));
    if (!row) return {};
    if (row.application_id !== null) {
      const client = await authenticateClient(req.server, credentials);
      if (!client || client.id !== row.application_id) throw new OAuthError('unauthorized_client', { reason: 'revoke', surface: 'revoke' });
    }
    if (row.revoked_at === null) {
      await db.updateTable('oauth_access_tokens').set({ revoked_at: req.server.clock.now() }).where('id', '=', row.id).where('revoked_at', 'is', null).execute();
    }
    return {};
  });
}
