import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { DB, Db } from '../platform/db/index.ts';
import type { OAuthAccessTokensTable } from '../platform/db/schema.ts';
import { digest } from '../platform/crypto/tokens.ts';
import type { TokenResolver } from '../http/auth.ts';
import { splitScopes } from './scopes.ts';

export type AccessTokenRow = Selectable<OAuthAccessTokensTable>;

/** Access tokens live 7200 s; authorization codes 600 s (spec and reference). */
export const ACCESS_TOKEN_TTL_MS = 7200 * 1000;
export const CODE_TTL_MS = 600 * 1000;

/** 256 random bits as 64 hex digits, the reference's token and code shape. */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('hex');
}

export interface IssuedToken {
  row: AccessTokenRow;
  accessToken: string;
  refreshToken: string | null;
}

export async function issueToken(
  db: Kysely<DB>,
  now: number,
  o: { applicationId: number | null; userId: number; grantId: number | null; scopes: string[]; refresh: boolean },
): Promise<IssuedToken> {
  const accessToken = newOpaqueToken();
  const refreshToken = o.refresh ? newOpaqueToken() : null;
  const row = await db.insertInto('oauth_access_tokens').values({
    application_id: o.applicationId,
    user_id: o.userId,
    grant_id: o.grantId,
    token_digest: digest(accessToken),
    refresh_token_digest: refreshToken ? digest(refreshToken) : null,
    scopes: o.scopes.join(' '),
    expires_at: now + ACCESS_TOKEN_TTL_MS,
    created_at: now,
    revoked_at: null,
  }).returningAll().executeTakeFirstOrThrow();
  return { row, accessToken, refreshToken };
}

/** Revokes every live token descended from one authorization code (code or refresh-token replay). */
export async function revokeFamily(db: Db, now: number, row: { id: number; grant_id: number | null }): Promise<void> {
  let q = db.updateTable('oauth_access_tokens').set({ revoked_at: now }).where('revoked_at', 'is', null);
  q = row.grant_id !== null ? q.where('grant_id', '=', row.grant_id) : q.where('id', '=', row.id);
  await q.execute();
}

export async function revokeGrantTokens(db: Db, now: number, grantId: number): Promise<void> {
  await db.updateTable('oauth_access_tokens').set({ revoked_at: now }).where('grant_id', '=', grantId).where('revoked_at', 'is', null).execute();
}

export async function findByAccessToken(db: Db, token: string): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('oauth_access_tokens').selectAll().where('token_digest', '=', digest(token)).executeTakeFirst();
}

export async function findByRefreshToken(db: Db, token: string): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('oauth_access_tokens').selectAll().where('refresh_token_digest', '=', digest(token)).executeTakeFirst();
}

/** Tokens are only issued to users who may still use the service. */
export async function userMayHoldTokens(db: Db, userId: number): Promise<boolean> {
  const u = await db.selectFrom('users').select('state').where('id', '=', userId).executeTakeFirst();
  return !!u && u.state !== 'blocked' && u.state !== 'banned';
}

export function isAccessible(row: AccessTokenRow, now: number): boolean {
  return row.revoked_at === null && (row.expires_at === null || row.expires_at > now);
}

/** Lets OAuth access tokens authenticate the API and git over HTTP, with their scopes and lifetime. */
export function oauthTokenResolver(db: Db): TokenResolver {
  return async (secret) => {
    const row = await findByAccessToken(db, secret);
    if (!row) return null;
    return {
      kind: 'oauth',
      id: row.id,
      userId: row.user_id,
      scopes: splitScopes(row.scopes),
      expiresAt: row.expires_at,
      revoked: row.revoked_at !== null,
    };
  };
}

/**
 * The token response: `bearer`, 7200 s, the scope string (RFC 6749 §5.1); `refresh_token` and
 * `created_at` only for grants that issue a refresh token (the spec leaves both out for the password grant).
 */
export function tokenResponse(t: IssuedToken) {
  const out: Record<string, unknown> = {
    access_token: t.accessToken,
    token_type: 'bearer',
    expires_in: t.row.expires_at === null ? undefined : Math.round((t.row.expires_at - t.row.created_at) / 1000),
  };
  if (t.refreshToken) out.refresh_token = t.refreshToken;
  out.scope = t.row.scopes;
  if (t.refreshToken) out.created_at = Math.floor(t.row.created_at / 1000);
  return out;
}
