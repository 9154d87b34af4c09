import type { FastifyInstance } from 'fastify';
import { installOAuthCors } from './cors.ts';
import { registerToken } from './token.ts';
import { registerTokenInfo } from './token-info.ts';
import { registerRevoke } from './revoke.ts';
import { registerUserinfo } from './userinfo.ts';
import { registerMetadata } from './metadata.ts';
import { oauthTokenResolver } from './tokens.ts';

/** The OAuth 2.0 provider under /oauth (its consent page is one of the web pages), its metadata, and OAuth access tokens as API credentials. */
export function registerOAuth(app: FastifyInstance): void {
  app.auth.addResolver(oauthTokenResolver(app.db), 'first');
  installOAuthCors(app);
  registerToken(app);
  registerTokenInfo(app);
  registerRevoke(app);
  registerUserinfo(app);
  registerMetadata(app);
}
