import { createHash, ECDH } from 'node:crypto';
import { createRequire } from 'node:module';
import type sshpkModule from 'sshpk';

// OpenSSH public keys ("<type> <base64 blob> [comment]"): parsing, sanitising and fingerprints.
// sshpk handles the classic types; it does not know the FIDO security-key types, so those are read
// here from the SSH wire format (RFC 4251 strings) and checked just as strictly.

/**
 * sshpk (with its cryptography packages, a third of a megabyte), read when a key is first parsed: the worker bundle
 * leaves it in node_modules (scripts/build.mjs), so that a start does not read it.
 */
const sshpk = (): typeof sshpkModule => createRequire(import.meta.url)('sshpk') as typeof sshpkModule;

export const SUPPORTED_KEY_TYPES = [
  'ssh-rsa', 'ssh-dss', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-ed25519',
  'sk-ecdsa-sha2-nistp256@openssh.com', 'sk-ssh-ed25519@openssh.com',
] as const;

/** Technology names, as an administrator would restrict them. */
export type KeyTechnology = 'rsa' | 'dsa' | 'ecdsa' | 'ed25519' | 'ecdsa_sk' | 'ed25519_sk';

export interface ParsedSshKey {
  /** The algorithm name of the blob, e.g. "ssh-ed25519". */
  type: string;
  technology: KeyTechnology;
  bits: number;
  /** The decoded key blob, what SSH authentication compares. */
  blob: Buffer;
  comment: string | null;
  /** OpenSSH MD5 fingerprint: lower-case hex pairs joined by colons. */
  fingerprintMd5: string;
  /** SHA-256 of the blob, base64 without padding (no "SHA256:" prefix). */
  fingerprintSha256: string;
}

/** Longer texts are not cleaned up (and are refused as too long anyway). */
export const SANITIZE_MAX = 16_384;

const ECDSA_SK = 'sk-ecdsa-sha2-nistp256@openssh.com';
const ED25519_SK = 'sk-ssh-ed25519@openssh.com';

/** Reads consecutive SSH wire-format strings (uint32 length + bytes). */
export class SshWireReader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  string(): Buffer {
    if (this.pos + 4 > this.buf.length) throw new Error('truncated length');
    const len = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    if (len > this.buf.length - this.pos) throw new Error('truncated string');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  done(): boolean {
    return this.pos === this.buf.length;
  }
}

export function fingerprintMd5(blob: Buffer): string {
  return createHash('md5').update(blob).digest('hex').match(/../g)!.join(':');
}

export function fingerprintSha256(blob: Buffer): string {
  return createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

const B64_RE = /^[A-Za-z0-9+/]+={0,2}$/;

/** Security-key blobs: type, then the key (and the curve for ECDSA), then the FIDO application string. */
function parseSecurityKey(type: string, blob: Buffer): { technology: KeyTechnology; bits: number } | null {
  try {
    const r = new SshWireReader(blob);
    if (r.string().toString('latin1') !== type) return null;
    if (type === ECDSA_SK) {
      if (r.string().toString('latin1') !== 'nistp256') return null;
      const point = r.string();
      // Throws unless the point is a valid, uncompressed or compressed point on P-256.
      ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'uncompressed');
      if (point.length !== 65 || point[0] !== 4) return null;
      r.string(); // application, e.g. "ssh:"
      return r.done() ? { technology: 'ecdsa_sk', bits: 256 } : null;
    }
    const pk = r.string();
    if (pk.length !== 32) return null;
    r.string();
    return r.done() ? { technology: 'ed25519_sk', bits: 256 } : null;
  } catch {
    return null;
  }
}

const TECHNOLOGY: Record<string, KeyTechnology> = { rsa: 'rsa', dsa: 'dsa', ecdsa: 'ecdsa', ed25519: 'ed25519' };

/** Parses "<type> <base64> [comment]"; null when it is not a valid public key of a supported type. */
export function parseSshPublicKey(text: string): ParsedSshKey | null {
  if (typeof text !== 'string') return null;
  const parts = text.trim().split(/\s+/);
  if (parts.length < 2) return null;
  const [type, b64, ...rest] = parts;
  if (!(SUPPORTED_KEY_TYPES as readonly string[]).includes(type) || !B64_RE.test(b64)) return null;
  const blob = Buffer.from(b64, 'base64');
  // Re-encoding must give the same text: no stray characters or bits were dropped by the decoder.
  if (blob.toString('base64').replace(/=+$/, '') !== b64.replace(/=+$/, '')) return null;
  let technology: KeyTechnology;
  let bits: number;
  if (type === ECDSA_SK || type === ED25519_SK) {
    const sk = parseSecurityKey(type, blob);
    if (!sk) return null;
    ({ technology, bits } = sk);
  } else {
    try {
      const r = new SshWireReader(blob);
      if (r.string().toString('latin1') !== type) return null;
      const key = sshpk().parseKey(`${type} ${b64}`, 'ssh');
      const t = TECHNOLOGY[key.type];
      if (!t) return null;
      technology = t;
      bits = key.size;
    } catch {
      return null;
    }
  }
  return {
    type, technology, bits, blob,
    comment: rest.length ? rest.join(' ') : null,
    fingerprintMd5: fingerprintMd5(blob),
    fingerprintSha256: fingerprintSha256(blob),
  };
}

/**
 * Cleans pasted key text: the base64 may be broken across lines or spaces. Words after the type are
 * joined one at a time until the result parses; at most one following word is kept as the comment.
 * When nothing parses the original text comes back unchanged (and fails validation later).
 */
export function sanitizeSshPublicKey(text: string): string {
  // Joining is quadratic in the number of words; no real key comes near this size.
  if (text.length > SANITIZE_MAX) return text;
  const parts = text.trim().split(/\s+/);
  const [type, ...rest] = parts;
  if (rest.length === 0) return text;
  let content = '';
  for (let i = 0; i < rest.length; i++) {
    content += rest[i];
    if (parseSshPublicKey(`${type} ${content}`)) return [type, content, rest[i + 1]].filter((x) => x !== undefined).join(' ');
  }
  return text;
}
