import { sql, type Selectable } from 'kysely';
import type { ServiceDeps } from './deps.ts';
import type { UsersTable } from './db/schema.ts';
import { verifyPassword } from './crypto/passwords.ts';

type UserRow = Selectable<UsersTable>;

// Password checks for the sign-in page and the OAuth password grant, with brute-force protection
// keyed by login and client address: after a few failures each further attempt must wait twice as long
// as the one before; after many, the pair is locked for a while. A success clears the counter.
// Each attempt is counted as a failure before its password is checked, by one statement that also decides whether it
// may be made, so concurrent attempts (on any worker or machine of the installation) get no further than the rule lets
// sequential ones.

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

/** The wait after `failures` failures, in SQL (`waitAfter`; the shift keeps both databases in integers). */
const waitSql = (failures: ReturnType<typeof sql.ref>) =>
  sql<number>`case when ${failures} >= ${LOCK_AFTER} then ${LOCK_MS} when ${failures} >= ${FREE_ATTEMPTS} then (1000 << (${failures} - ${FREE_ATTEMPTS})) else 0 end`;

/** Counts an attempt of `key` as a failure when the rule lets it be made now; false when it must wait. */
async function takeAttempt(deps: ServiceDeps, key: string, now: number): Promise<boolean> {
  const failures = sql.ref('sign_in_throttles.failures');
  const last = sql.ref('sign_in_throttles.last_failure_at');
  const forgotten = sql<boolean>`${last} <= ${now - FORGET_MS}`;
  const row = await deps.db.insertInto('sign_in_throttles').values({ key, failures: 1, last_failure_at: now })
    .onConflict((oc) => oc.column('key')
      .doUpdateSet({ failures: sql<number>`case when ${forgotten} then 1 else ${failures} + 1 end`, last_failure_at: now })
      .where(sql<boolean>`${forgotten} or ${last} + ${waitSql(failures)} <= ${now}`))
    .returning('failures').executeTakeFirst();
  return row !== undefined;
}

export async function checkSignIn(deps: ServiceDeps, login: string, password: string, ip: string): Promise<SignInResult> {
  const now = deps.clock.now();
  const key = throttleKey(login, ip);
  if (!(await takeAttempt(deps, key, now))) {
    // (Cleared by a success meanwhile: this attempt still waits its second.)
    const t = await deps.db.selectFrom('sign_in_throttles').selectAll().where('key', '=', key).executeTakeFirst();
    const until = t ? t.last_failure_at + waitAfter(t.failures) : now;
    return { ok: false, reason: t && t.failures >= LOCK_AFTER ? 'locked' : 'throttled', retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
  }
  const user = login ? await findByLogin(deps, login) : undefined;
  // The password is hashed even for unknown logins so that timing does not reveal which exist.
  const good = await verifyPassword(password, user?.password_digest ?? '$scrypt$ln=15,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
  // A failure stays counted (it was counted before the check).
  if (!user || !good) return { ok: false, reason: 'invalid' };
  await deps.db.deleteFrom('sign_in_throttles').where('key', '=', key).execute();
  if (user.state === 'blocked' || user.state === 'banned') return { ok: false, reason: 'blocked' };
  return { ok: true, user };
}
