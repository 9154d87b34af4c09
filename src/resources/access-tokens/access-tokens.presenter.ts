import { iso, isoDate } from '../../http/format.ts';
import { isActive, type TokenRow } from './access-tokens.service.ts';

export function personalAccessToken(row: TokenRow, now: number, secret?: string) {
  const out: Record<string, unknown> = {
    id: row.id,
    name: row.name,
    revoked: !!row.revoked,
    created_at: iso(row.created_at),
    description: row.description,
    scopes: row.scopes.split(' ').filter(Boolean),
    user_id: row.user_id,
    last_used_at: iso(row.last_used_at),
    active: isActive(row, now),
    expires_at: isoDate(row.expires_at),
  };
  if (row.impersonation) out.impersonation = true;
  if (secret) out.token = secret;
  return out;
}
