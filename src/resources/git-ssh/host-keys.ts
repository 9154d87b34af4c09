// The SSH server's host keys (Ed25519 and RSA), made at first start under the data directory and kept: clients
// remember them in known_hosts, so they must survive restarts. Each is written to a private temporary file and
// linked into place, which fails if another process got there first; the file present then wins.
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type ssh2 from 'ssh2';

export const HOST_KEY_TYPES = ['ed25519', 'rsa'] as const;

export function hostKeysDir(dataDir: string): string {
  return join(dataDir, 'ssh');
}

export function hostKeyFile(dataDir: string, type: (typeof HOST_KEY_TYPES)[number]): string {
  return join(hostKeysDir(dataDir), `ssh_host_${type}_key`);
}

/**
 * A new key pair that the SSH server will accept. ssh2's generator now and then writes a private key its own parser
 * then refuses ("Malformed OpenSSH private key"), which would stop every worker at start: a key is kept only once it
 * parses, and a few tries are made before giving up.
 */
function generateKeyPair(type: (typeof HOST_KEY_TYPES)[number]): { private: string; public: string } {
  // Loaded only here: a start that finds its keys made does not load the SSH library.
  const { utils } = createRequire(import.meta.url)('ssh2') as typeof ssh2;
  for (let tries = 0; ; tries++) {
    const pair = type === 'rsa' ? utils.generateKeyPairSync('rsa', { bits: 3072 }) : utils.generateKeyPairSync('ed25519');
    const parsed = utils.parseKey(pair.private);
    if (!(parsed instanceof Error)) return pair;
    if (tries >= 4) throw parsed;
  }
}

/** Makes the missing host keys (and their `.pub` files for administrators to publish) and returns the private keys. */
export function ensureHostKeys(dataDir: string): Buffer[] {
  mkdirSync(hostKeysDir(dataDir), { recursive: true, mode: 0o700 });
  return HOST_KEY_TYPES.map((type) => {
    const file = hostKeyFile(dataDir, type);
    if (!existsSync(file)) {
      const pair = generateKeyPair(type);
      const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      writeFileSync(tmp, pair.private, { mode: 0o600 });
      try {
        linkSync(tmp, file);
        writeFileSync(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      } finally {
        unlinkSync(tmp);
      }
    }
    return readFileSync(file);
  });
}
