import type { FastifyInstance } from 'fastify';
import { ALL_SCOPES } from '../http/auth.ts';
import { doc } from './doc.ts';

/** RFC 8414 authorization server metadata. */
export function registerMetadata(app: FastifyInstance): void {
  app.get('/.well-known/oauth-authorization-server', { schema: doc('Authorization server metadata (RFC 8414)') }, async () => {
    const base = app.config.externalUrl;
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      scopes_supported: [...ALL_SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'password', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
    };
  });
}
