// Checks an OpenPGP signature against one public key with the gpg program, in a keyring made for the check and
// removed after it: nothing persists between checks, no agent is started, and a missing gpg reads as "not valid".
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GpgCheck {
  /** The signature is good and made by the key (or one of its subkeys). */
  valid: boolean;
  /** The key's user ids, in the key's order. */
  uids: Array<{ name: string; email: string }>;
}

const TIMEOUT_MS = 10_000;

function gpg(home: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile('gpg', ['--batch', '--no-tty', '--no-autostart', '--no-options', '--homedir', home, ...args], {
      timeout: TIMEOUT_MS, maxBuffer: 1024 * 1024, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', LC_ALL: 'C', GNUPGHOME: home },
    }, (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout: String(stdout ?? '') }));
  });
}

/** "Name (comment) <email>" as the reference splits a user id. */
function splitUid(uid: string): { name: string; email: string } {
  const m = /^(.*?)\s*(?:\(.*\))?\s*<([^>]*)>\s*$/.exec(uid);
  return m ? { name: m[1].trim(), email: m[2].trim() } : { name: uid.trim(), email: '' };
}

export async function checkGpgSignature(publicKey: string, signature: string, payload: string): Promise<GpgCheck> {
  const home = await mkdtemp(join(tmpdir(), 'bellows-gpg-'));
  try {
    await Promise.all([
      writeFile(join(home, 'key.asc'), publicKey),
      writeFile(join(home, 'sig.asc'), signature),
      writeFile(join(home, 'payload'), payload),
    ]);
    await gpg(home, ['--quiet', '--import', join(home, 'key.asc')]);
    const [listed, verified] = await Promise.all([
      gpg(home, ['--with-colons', '--list-keys']),
      gpg(home, ['--status-fd', '1', '--verify', join(home, 'sig.asc'), join(home, 'payload')]),
    ]);
    const uids = listed.stdout.split('\n').filter((l) => l.startsWith('uid:'))
      .map((l) => splitUid(l.split(':')[9].replace(/\\x3a/g, ':')));
    const status = verified.stdout.split('\n');
    const valid = verified.code === 0 && status.some((l) => l.startsWith('[GNUPG:] GOODSIG ')) && status.some((l) => l.startsWith('[GNUPG:] VALIDSIG '));
    return { valid, uids };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
