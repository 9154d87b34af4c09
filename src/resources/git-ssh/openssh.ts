// For installations that keep the system's OpenSSH on port 22: `bellows ssh authorized-keys <type> <key>` answers
// sshd's AuthorizedKeysCommand with one authorized_keys line whose forced command is `bellows ssh shell <key-id>`,
// which then serves SSH_ORIGINAL_COMMAND exactly as the embedded server serves an exec request.
import type { ServiceDeps } from '../../platform/deps.ts';
import { findSshKey, type SshKeyRef } from './git-ssh.service.ts';

const KEY_ID = /^(key|deploy-key)-([1-9][0-9]{0,9})$/;

/** `key-<id>` for a user's key, `deploy-key-<id>` for a deploy key (their ids are counted apart). */
export function keyIdOf(ref: SshKeyRef): string {
  return `${ref.kind === 'user' ? 'key' : 'deploy-key'}-${ref.id}`;
}

export function parseKeyId(text: string): SshKeyRef | null {
  const m = KEY_ID.exec(text);
  if (!m || Number(m[2]) > 2_147_483_647) return null;
  return { kind: m[1] === 'key' ? 'user' : 'deploy_key', id: Number(m[2]) };
}

/** A word for the shell sshd runs the forced command with. */
function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The authorized_keys line for a key sshd offers (`%t %k`), or null when Bellows does not know it. `shell` is the
 * command line that runs `bellows ssh shell` (the key id is appended). Forwarding, X11, agent and terminals are
 * refused by the line's options; the forced command serves git only.
 */
export async function authorizedKeysLine(deps: ServiceDeps, type: string, base64: string, shell: string[]): Promise<string | null> {
  if (!/^[A-Za-z0-9@._-]{1,64}$/.test(type) || !/^[A-Za-z0-9+/]{1,16384}={0,2}$/.test(base64)) return null;
  const blob = Buffer.from(base64, 'base64');
  // The blob names its own type first; it must be the one sshd says it offers.
  if (blob.length < 4 || blob.readUInt32BE(0) > blob.length - 4 || blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1') !== type) return null;
  const ref = await findSshKey(deps, blob);
  if (!ref) return null;
  const command = [...shell, 'ssh', 'shell', keyIdOf(ref)].map(shellQuote).join(' ');
  if (command.includes('"')) return null;
  return `command="${command}",no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty ${type} ${base64}`;
}
