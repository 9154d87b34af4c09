import { createHmac } from 'node:crypto';
import type { Db } from './db/index.ts';
import { newSecret, safeEqual } from './crypto/tokens.ts';

// Links the server signs so that following them needs no sign-in (the unsubscribe link of a notification e-mail):
// `<payload>.<signature>`, the payload base64url JSON, the signature HMAC-SHA256 under a secret the server makes once
// for the whole installation (`server_secrets`), checked in constant time.

/** The named server secret, made on first use (whichever process gets there first writes it). */
export async function serverSecret(db: Db, name: string, now: number): Promise<string> {
  const found = await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirst();
  if (found) return found.value;
  await db.insertInto('server_secrets').values({ name, value: newSecret('', 32), created_at: now })
    .onConflict((oc) => oc.column('name').doNothing()).execute();
  return (await db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()).value;
}

function signature(secret: string, purpose: string, payload: string): string {
  return createHmac('sha256', secret).update(`${purpose}\n${payload}`).digest('base64url');
}

/** A token carrying `value` for `purpose` (a purpose's tokens are refused for any other). */
export function signToken(secret: string, purpose: string, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${payload}.${signature(secret, purpose, payload)}`;
}

/** The value a token signed for `purpose` carries, or null when it is malformed or its signature does not hold. */
export function verifyToken(secret: string, purpose: string, token: string): unknown {
  if (token.length > 2000) return null;
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(token);
  if (!m || !safeEqual(m[2], signature(secret, purpose, m[1]))) return null;
  try {
    return JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}
