import type { FastifyInstance, FastifyRequest } from 'fastify';
import { OAuthError } from '../platform/errors.ts';
import { webUrl } from '../http/format.ts';
import { accessTokenFrom, oauthParams } from './params.ts';
import { findByAccessToken } from './tokens.ts';
import { splitScopes } from './scopes.ts';
import { doc } from './doc.ts';

/** Any of these scopes lets a token read the user's claims. */
export const USERINFO_SCOPES = ['openid', 'profile', 'read_user'];

async function userinfo(req: FastifyRequest) {
  const token = accessTokenFrom(req, oauthParams(req));
  const row = token ? await findByAccessToken(req.server.db, token) : undefined;
  if (!row) throw new OAuthError('invalid_token', { surface: 'userinfo' });
  if (row.revoked_at !== null) throw new OAuthError('invalid_token', { surface: 'userinfo', reason: 'revoked' });
  if (row.expires_at !== null && row.expires_at <= req.server.clock.now()) throw new OAuthError('invalid_token', { surface: 'userinfo', reason: 'expired' });
  const scopes = splitScopes(row.scopes);
  if (!scopes.some((s) => USERINFO_SCOPES.includes(s))) throw new OAuthError('insufficient_scope', { surface: 'userinfo' });
  const user = await req.server.db.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirst();
  if (!user || user.state === 'blocked') throw new OAuthError('invalid_token', { surface: 'userinfo' });

  const groups = await req.server.db.selectFrom('members as m')
    .innerJoin('namespaces as n', 'n.id', 'm.source_id')
    .select('n.full_path')
    .where('m.source_type', '=', 'Namespace').where('m.user_id', '=', user.id).where('n.kind', '=', 'group')
    .orderBy('n.full_path').execute();
  // The primary address needs the `email` scope; otherwise only the public one is shown.
  const email = scopes.includes('email') ? user.email : user.public_email || null;
  const claims: Record<string, unknown> = {
    sub: String(user.id),
    name: user.name,
    nickname: user.username,
    preferred_username: user.username,
    email: email ?? undefined,
    email_verified: email ? email === user.email && user.confirmed_at !== null : undefined,
    website: user.website_url || undefined,
    profile: webUrl(req.server.config.externalUrl, user.username),
    groups: groups.map((g) => g.full_path),
  };
  for (const k of Object.keys(claims)) if (claims[k] === undefined) delete claims[k];
  return claims;
}

export function registerUserinfo(app: FastifyInstance): void {
  app.get('/oauth/userinfo', { schema: doc('OpenID-style claims of the token owner') }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return userinfo(req);
  });
  app.post('/oauth/userinfo', { schema: doc('OpenID-style claims of the token owner') }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return userinfo(req);
  });
}
