import { OAuthError } from '../../platform/errors.ts';
import { authenticateClient } from '../client-auth.ts';
import { present } from '../params.ts';
import { findByRefreshToken, issueToken, revokeFamily, tokenResponse, userMayHoldTokens } from '../tokens.ts';
import { resolveScopes, splitScopes } from '../scopes.ts';
import type { Grant } from './types.ts';

/**
 * grant_type=refresh_token. The old pair is revoked in the same transaction that issues the new one
 * (conditional UPDATE, so a concurrent second refresh fails); presenting a rotated-out refresh token
 * again revokes the whole family (RFC 9700 §4.14.2). `redirect_uri` and `code_verifier`, which clients
 * send along, are accepted and not needed: the refresh token is bound to its client.
 */
export const refreshTokenGrant: Grant = async (deps, { params, credentials }) => {
  const refreshToken = present(params.refresh_token);
  if (!refreshToken) throw new OAuthError('invalid_request', { missing: 'refresh_token' });
  const now = deps.clock.now();
  const row = await findByRefreshToken(deps.db, refreshToken);
  if (!row) throw new OAuthError('invalid_grant');
  if (row.revoked_at !== null) {
    await revokeFamily(deps.db, now, row);
    throw new OAuthError('invalid_grant');
  }
  const client = credentials.present ? await authenticateClient(deps, credentials) : null;
  if (credentials.present && !client) throw new OAuthError('invalid_client');
  if (row.application_id !== null && (!client || client.id !== row.application_id)) throw new OAuthError('invalid_grant');
  if (!(await userMayHoldTokens(deps.db, row.user_id))) throw new OAuthError('invalid_grant');

  const original = splitScopes(row.scopes);
  const requested = present(params.scope) ?? present(params.scopes);
  const scopes = requested === undefined ? original : resolveScopes(requested, original);
  if (!scopes) throw new OAuthError('invalid_scope');

  const issued = await deps.db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('oauth_access_tokens').set({ revoked_at: now })
      .where('id', '=', row.id).where('revoked_at', 'is', null).executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    return issueToken(trx, now, { applicationId: row.application_id, userId: row.user_id, grantId: row.grant_id, scopes, refresh: true });
  });
  if (!issued) {
    await revokeFamily(deps.db, now, row);
    throw new OAuthError('invalid_grant');
  }
  return tokenResponse(issued);
};
