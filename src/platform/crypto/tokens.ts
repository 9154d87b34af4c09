import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new random secret, URL-safe, with a readable prefix that tells what it is (e.g. "glpat-"). */
export function newSecret(prefix = '', bytes = 24): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** Only this digest is stored; the secret itself is shown once. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
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
