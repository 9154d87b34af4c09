import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../platform/errors.ts';
import { readClientCredentials } from './client-auth.ts';
import { oauthParams, present } from './params.ts';
import { authorizationCodeGrant } from './grants/authorization-code.ts';
import { refreshTokenGrant } from './grants/refresh-token.ts';
import { passwordGrant } from './grants/password.ts';
import type { Grant } from './grants/types.ts';
import { doc } from './doc.ts';

/** Grant types the token endpoint accepts; anything else is `unsupported_grant_type`. */
const GRANTS: Record<string, Grant> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  password: passwordGrant,
};

export function registerToken(app: FastifyInstance): void {
  app.post('/oauth/token', { schema: doc('Token endpoint: authorization_code, refresh_token and password grants') }, async (req, reply) => {
    // Token responses are never cached (RFC 6749 §5.1).
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = oauthParams(req);
    const grantType = present(params.grant_type);
    if (!grantType) throw new OAuthError('invalid_request', { missing: 'grant_type' });
    const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
    if (!grant) throw new OAuthError('unsupported_grant_type');
    const credentials = readClientCredentials(req, params);
    return grant(req.server, { params, credentials, ip: req.ip });
  });
}
