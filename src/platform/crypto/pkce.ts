import { safeEqual, sha256 } from './tokens.ts';

// RFC 7636 with the S256 method only.

/** code_verifier = 43*128unreserved, unreserved = A-Z a-z 0-9 "-" "." "_" "~" (RFC 7636 §4.1). */
export const VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is the unpadded base64url form of a 32-byte digest. */
export const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;

export function s256(verifier: string): string {
  return sha256(verifier, 'base64url');
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER_RE.test(verifier)) return false;
  return safeEqual(s256(verifier), challenge);
}
