import { digest } from '../../platform/crypto/tokens.ts';
import { verifierMatches } from '../../platform/crypto/pkce.ts';
import { OAuthError } from '../../platform/errors.ts';
import { authenticateClient } from '../client-auth.ts';
import { present } from '../params.ts';
import { issueToken, revokeGrantTokens, tokenResponse, userMayHoldTokens } from '../tokens.ts';
import { splitScopes } from '../scopes.ts';
import type { Grant } from './types.ts';

/**
 * grant_type=authorization_code, checks in the reference's order. The code is redeemed with a
 * conditional UPDATE inside the transaction that issues the token, so of two concurrent requests
 * only one can win; the loser (like any later reuse) revokes what the code produced (RFC 6749 §4.1.2).
 */
export const authorizationCodeGrant: Grant = async (deps, { params, credentials }) => {
  const code = present(params.code);
  if (!code) throw new OAuthError('invalid_request', { missing: 'code' });
  const grant = await deps.db.selectFrom('oauth_grants').selectAll().where('code_digest', '=', digest(code)).executeTakeFirst();
  const verifier = present(params.code_verifier);
  if (grant?.code_challenge && !verifier) throw new OAuthError('invalid_request', { missing: 'code_verifier' });
  const redirectUri = present(params.redirect_uri);
  if (!redirectUri) throw new OAuthError('invalid_request', { missing: 'redirect_uri' });
  const client = await authenticateClient(deps, credentials);
  if (!client) throw new OAuthError('invalid_client');

  const now = deps.clock.now();
  if (!grant || grant.application_id !== client.id) throw new OAuthError('invalid_grant');
  if (grant.revoked_at !== null) {
    await revokeGrantTokens(deps.db, now, grant.id);
    throw new OAuthError('invalid_grant');
  }
  if (grant.expires_at <= now) throw new OAuthError('invalid_grant');
  if (grant.redirect_uri !== redirectUri) throw new OAuthError('invalid_grant');
  if (!(await userMayHoldTokens(deps.db, grant.user_id))) throw new OAuthError('invalid_grant');
  if (verifier !== undefined) {
    // A verifier for a code issued without a challenge is a downgrade attempt (RFC 9700 §2.1.1).
    if (!grant.code_challenge || !verifierMatches(verifier, grant.code_challenge)) throw new OAuthError('invalid_grant');
  }

  const issued = await deps.db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('oauth_grants').set({ revoked_at: now })
      .where('id', '=', grant.id).where('revoked_at', 'is', null).executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    return issueToken(trx, now, { applicationId: client.id, userId: grant.user_id, grantId: grant.id, scopes: splitScopes(grant.scopes), refresh: true });
  });
  if (!issued) {
    await revokeGrantTokens(deps.db, now, grant.id);
    throw new OAuthError('invalid_grant');
  }
  return tokenResponse(issued);
};
