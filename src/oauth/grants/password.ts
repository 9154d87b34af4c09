import { ALL_SCOPES } from '../../http/auth.ts';
import { OAuthError } from '../../platform/errors.ts';
import { checkSignIn } from '../../platform/sign-in.ts';
import { authenticateClient } from '../client-auth.ts';
import { present } from '../params.ts';
import { issueToken, tokenResponse } from '../tokens.ts';
import { resolveScopes, splitScopes } from '../scopes.ts';
import type { Grant } from './types.ts';

/**
 * grant_type=password (resource owner password credentials). Client credentials are optional, but
 * when sent they must be right. Failures share the sign-in page's throttle. The response has no
 * refresh token (spec).
 */
export const passwordGrant: Grant = async (deps, { params, credentials, ip }) => {
  const client = credentials.present ? await authenticateClient(deps, credentials) : null;
  if (credentials.present && !client) throw new OAuthError('invalid_client');
  const username = present(params.username);
  const password = present(params.password);
  if (!username || !password) throw new OAuthError('invalid_grant');
  const result = await checkSignIn(deps, username, password, ip);
  if (!result.ok) throw new OAuthError('invalid_grant');

  const allowed = client ? splitScopes(client.scopes) : [...ALL_SCOPES];
  const scopes = resolveScopes(present(params.scope), allowed);
  if (!scopes) throw new OAuthError('invalid_scope');
  const issued = await issueToken(deps.db, deps.clock.now(), {
    applicationId: client?.id ?? null, userId: result.user.id, grantId: null, scopes, refresh: false,
  });
  return tokenResponse(issued);
};
