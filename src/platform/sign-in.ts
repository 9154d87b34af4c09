import type { Selectable } from 'kysely';
import type { ServiceDeps } from './deps.ts';
import type { UsersTable } from './db/schema.ts';
import { verifyPassword } from './crypto/passwords.ts';

type UserRow = Selectable<UsersTable>;

// Password checks for the sign-in page and the OAuth password grant, with brute-force protection
// keyed by login and client address: after a few failures each further attempt must wait twice as long
// as the one before; after many, the pair is locked for a while. A success clears the counter.

export const FREE_ATTEMPTS = 3;
export const LOCK_AFTER = 10;
export const LOCK_MS = 10 * 60 * 1000;
/** Failures older than this are forgotten. */
export const FORGET_MS = 60 * 60 * 1000;

export type SignInResult =
  | { ok: true; user: UserRow }
  | { ok: false; reason: 'invalid' | 'blocked' }
  | { ok: false; reason: 'throttled' | 'locked'; retryAfterSeconds: number };

function throttleKey(login: string, ip: string): string {
  return `${login.toLowerCase().slice(0, 255)}|${ip}`;
}

/** How long the next attempt must wait after `failures` failures, in ms (0 = may try now). */
export function waitAfter(failures: number): number {
  if (failures >= LOCK_AFTER) return LOCK_MS;
  if (failures >= FREE_ATTEMPTS) return 1000 * 2 ** (failures - FREE_ATTEMPTS);
  return 0;
}

async function findByLogin(deps: ServiceDeps, login: string): Promise<UserRow | undefined> {
  const l = login.toLowerCase();
  return deps.db.selectFrom('users').selectAll()
    .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
    .executeTakeFirst();
}

export async function checkSignIn(deps: ServiceDeps, login: string, password: string, ip: string): Promise<SignInResult> {
  const now = deps.clock.now();
  const key = throttleKey(login, ip);
  const t = await deps.db.selectFrom('sign_in_throttles').selectAll().where('key', '=', key).executeTakeFirst();
  const failures = t && now - t.last_failure_at < FORGET_MS ? t.failures : 0;
  if (t && failures > 0) {
    const until = t.last_failure_at + waitAfter(failures);
    if (until > now) {
      return { ok: false, reason: failures >= LOCK_AFTER ? 'locked' : 'throttled', retryAfterSeconds: Math.ceil((until - now) / 1000) };
    }
  }
  const user = login ? await findByLogin(deps, login) : undefined;
  // The password is hashed even for unknown logins so that timing does not reveal which exist.
  const good = await verifyPassword(password, user?.password_digest ?? '$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  if (!user || !good) {
    const next = failures + 1;
    await deps.db.insertInto('sign_in_throttles').values({ key, failures: next, last_failure_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ failures: next, last_failure_at: now })).execute();
    return { ok: false, reason: 'invalid' };
  }
  if (t) await deps.db.deleteFrom('sign_in_throttles').where('key', '=', key).execute();
  if (user.state === 'blocked' || user.state === 'banned') return { ok: false, reason: 'blocked' };
  return { ok: true, user };
}
