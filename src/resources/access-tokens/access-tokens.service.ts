import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { PersonalAccessTokensTable, UsersTable } from '../../platform/db/schema.ts';
import { digest, newSecret } from '../../platform/crypto/tokens.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import type { Db } from '../../platform/db/index.ts';
import { containsText } from '../../platform/db/dialect.ts';

export type TokenRow = Selectable<PersonalAccessTokensTable>;

export const DAY_MS = 86_400_000;
/** Tokens created without an expiry date get the longest lifetime allowed, as the reference does. */
export const MAX_LIFETIME_DAYS = 365;

export interface NewTokenInput {
  name: string;
  scopes: string[];
  /** "YYYY-MM-DD" or null for the default lifetime. */
  expiresAt: string | null;
  description?: string | null;
  impersonation?: boolean;
}

function startOfDay(ms: number): number {
  return ms - (ms % DAY_MS);
}

export async function createPersonalAccessToken(deps: ServiceDeps, user: Pick<Selectable<UsersTable>, 'id'>, input: NewTokenInput): Promise<{ row: TokenRow; token: string }> {
  const today = startOfDay(deps.clock.now());
  const errors: Record<string, string[]> = {};
  if (!input.name) errors.name = ["can't be blank"];
  if (input.scopes.length === 0) errors.scopes = ["can't be blank"];
  let expiresAt = today + MAX_LIFETIME_DAYS * DAY_MS;
  if (input.expiresAt) {
    expiresAt = Date.parse(`${input.expiresAt}T00:00:00Z`);
    if (Number.isNaN(expiresAt)) errors.expires_at = ['is invalid'];
    else if (expiresAt <= today) errors.expires_at = ['must be in the future'];
    else if (expiresAt > today + MAX_LIFETIME_DAYS * DAY_MS) errors.expires_at = [`must be before ${new Date(today + MAX_LIFETIME_DAYS * DAY_MS + DAY_MS).toISOString().slice(0, 10)}`];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const token = newSecret('glpat-', 24);
  const now = deps.clock.now();
  const row = await deps.db.insertInto('personal_access_tokens').values({
    user_id: user.id, name: input.name, description: input.description ?? null, token_digest: digest(token),
    scopes: [...new Set(input.scopes)].join(' '), impersonation: input.impersonation ? 1 : 0, revoked: 0,
    expires_at: expiresAt, last_used_at: null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return { row, token };
}

export async function revokeToken(deps: ServiceDeps, row: TokenRow): Promise<void> {
  await deps.db.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: deps.clock.now() }).where('id', '=', row.id).execute();
}

export function isActive(row: TokenRow, now: number): boolean {
  return !row.revoked && (row.expires_at === null || row.expires_at > now);
}

/** Who asks: administrators see every user's tokens, others only their own. */
export interface TokenCaller {
  userId: number;
  admin: boolean;
}

export interface TokenListFilter {
  userId?: number;
  state?: 'active' | 'inactive';
  revoked?: boolean;
  search?: string;
}

/** A personal (not impersonation) token the caller may see; anyone else's is a 404, as if it did not exist. */
export async function ownTokenOr404(deps: ServiceDeps, caller: TokenCaller, id: number): Promise<TokenRow> {
  const row = await deps.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).where('impersonation', '=', 0).executeTakeFirst();
  if (!row || (!caller.admin && row.user_id !== caller.userId)) throw new NotFoundError('Personal Access Token');
  return row;
}

/** The token row behind an authenticated request; it exists, the credential was just checked against it. */
export async function tokenById(deps: ServiceDeps, id: number): Promise<TokenRow> {
  return deps.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Personal tokens visible to the caller, oldest first. */
export function personalTokensQuery(db: Db, caller: TokenCaller, f: TokenListFilter, now: number) {
  let q = db.selectFrom('personal_access_tokens').selectAll().where('impersonation', '=', 0);
  if (!caller.admin) q = q.where('user_id', '=', caller.userId);
  else if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.revoked !== undefined) q = q.where('revoked', '=', f.revoked ? 1 : 0);
  if (f.state === 'active') q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (f.state === 'inactive') q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', now)]));
  if (f.search) q = q.where(containsText('name', String(f.search)));
  return q.orderBy('id', 'asc');
}

/** A user's impersonation tokens, newest first. */
export function impersonationTokensQuery(db: Db, userId: number, state: 'all' | 'active' | 'inactive' | undefined, now: number) {
  let q = db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', userId).where('impersonation', '=', 1);
  if (state === 'active') q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  if (state === 'inactive') q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', now)]));
  return q.orderBy('id', 'desc');
}

export async function impersonationTokenOr404(deps: ServiceDeps, userId: number, id: number): Promise<TokenRow> {
  const row = await deps.db.selectFrom('personal_access_tokens').selectAll()
    .where('id', '=', id).where('user_id', '=', userId).where('impersonation', '=', 1).executeTakeFirst();
  if (!row) throw new NotFoundError('Impersonation Token');
  return row;
}
