import * as nodeCrypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new random secret, URL-safe, with a readable prefix that tells what it is (e.g. "glpat-"). */
export function newSecret(prefix = '', bytes = 24): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** Only this digest is stored; the secret itself is shown once. */
export function digest(secret: string): string {
  return sha256(secret, 'hex');
}

// One-shot hashing (Node 20.12+) makes no Hash object per call; the older API is the fallback.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: string | Buffer, enc: 'hex' | 'base64url') => string }).hash;

/** The SHA-256 digest of text (as UTF-8) or bytes. SHA-256 runs in hardware on current CPUs. */
export function sha256(data: string | Buffer, encoding: 'hex' | 'base64url'): string {
  return oneShot ? oneShot('sha256', data, encoding) : createHash('sha256').update(data).digest(encoding);
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}
