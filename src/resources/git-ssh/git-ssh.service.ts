// Who an SSH public key stands for: a user's key acts as that user, a deploy key for the projects it is enabled on.
// Keys are found by their SHA-256 fingerprint through the unique indexes of both key tables; a key that signs
// commits only is no key for signing in. Whether the key may act now (its expiry, its user's state) is decided
// when a command arrives, so that the client's terminal says why.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { UserRow } from '../../platform/access/actor.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { fingerprintSha256 } from '../../platform/crypto/ssh-keys.ts';
import { findKeyByFingerprint } from '../ssh-keys/ssh-keys.service.ts';
import { GitRefusal, type GitIdentity } from '../git-http/git-service.ts';

/** A key found for a public-key sign-in: which table and row. */
export interface SshKeyRef {
  kind: 'user' | 'deploy_key';
  id: number;
}

export const SSH_MESSAGES = {
  blocked: 'Your account has been blocked.',
  deactivated: (url: string) => `Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account at ${url}`,
  expired: 'Your SSH key has expired.',
  unknownKey: 'The SSH key is not known.',
  tooManySessions: 'Too many concurrent sessions for this key. Try again later.',
} as const;

/** The key whose decoded blob is `blob` (what SSH authentication presents), or null. */
export async function findSshKey(deps: ServiceDeps, blob: Buffer): Promise<SshKeyRef | null> {
  try {
    const found = await findKeyByFingerprint(deps.db, `SHA256:${fingerprintSha256(blob)}`);
    // The fingerprint names the blob; comparing the blob itself costs nothing and leaves no doubt.
    if (found.key.key_blob !== blob.toString('base64')) return null;
    if (found.kind === 'ssh') return found.key.usage_type === 'signing' ? null : { kind: 'user', id: found.key.id };
    return { kind: 'deploy_key', id: found.key.id };
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

export interface SshActor {
  identity: GitIdentity;
  /** The welcome's name: `@username`, or `Anonymous` for a deploy key (as the reference greets it). */
  greeting: string;
}

// Written at most once a day, as the reference does: reads must not become writes.
const LAST_USED_EVERY_MS = 24 * 60 * 60 * 1000;

/**
 * What the key may act as now: the row is read again (it may have been deleted, its user blocked, since the
 * connection began). Throws GitRefusal with the reference's words when it may not act.
 */
export async function sshActor(deps: ServiceDeps, ref: SshKeyRef): Promise<SshActor> {
  const now = deps.clock.now();
  const table = ref.kind === 'user' ? 'ssh_keys' : 'deploy_keys';
  const key = await deps.db.selectFrom(table).select(['id', 'expires_at', 'last_used_at']).where('id', '=', ref.id).executeTakeFirst();
  if (!key) throw new GitRefusal('forbidden', SSH_MESSAGES.unknownKey);
  if (key.expires_at !== null && key.expires_at <= now) throw new GitRefusal('forbidden', SSH_MESSAGES.expired);
  let actor: SshActor;
  if (ref.kind === 'user') {
    const row = await deps.db.selectFrom('ssh_keys').select('user_id').where('id', '=', ref.id).executeTakeFirstOrThrow();
    const user = await deps.db.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirst() as UserRow | undefined;
    if (!user) throw new GitRefusal('forbidden', SSH_MESSAGES.unknownKey);
    // A banned user is a blocked user (the reference's `blocked?`).
    if (user.state === 'blocked' || user.state === 'banned') throw new GitRefusal('forbidden', SSH_MESSAGES.blocked);
    if (user.state === 'deactivated') throw new GitRefusal('forbidden', SSH_MESSAGES.deactivated(deps.config.externalUrl));
    // Over SSH there is no token and no admin-mode scope: an administrator acts as one, as the reference's git access does.
    actor = { identity: { kind: 'user', actor: { user, admin: !!user.admin, token: null, via: 'ssh', sudo: false } }, greeting: `@${user.username}` };
  } else {
    actor = { identity: { kind: 'deploy_key', keyId: ref.id }, greeting: 'Anonymous' };
  }
  if (key.last_used_at === null || now - key.last_used_at >= LAST_USED_EVERY_MS) {
    await deps.db.updateTable(table).set({ last_used_at: now }).where('id', '=', ref.id).execute();
  }
  return actor;
}
