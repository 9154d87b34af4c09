import { ALL_SCOPES } from '../http/auth.ts';

/** The scope a request gets when it names none (spec: `api` for the password grant, the reference's default). */
export const DEFAULT_SCOPES = ['api'];

export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  api: 'Complete read and write access to the API, including all groups and projects.',
  read_api: 'Read access to the API, including all groups and projects.',
  read_user: 'Read-only access to your profile through /user and the /users endpoints.',
  read_repository: 'Read-only access to repositories through Git over HTTP.',
  write_repository: 'Read and write access to repositories through Git over HTTP.',
  sudo: 'Perform API actions as any user (administrators only).',
  admin_mode: 'Perform administrative API actions while Admin Mode is on.',
  openid: 'Authenticate with OpenID Connect: your profile and group memberships, read-only.',
  profile: 'Read-only access to your profile through OpenID Connect.',
  email: 'Read-only access to your primary email address through OpenID Connect.',
};

export function splitScopes(s: string | null | undefined): string[] {
  return (s ?? '').split(/\s+/).filter(Boolean);
}

export function isKnownScope(s: string): boolean {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

/**
 * The scopes a request receives: the requested ones when all are allowed (else null, `invalid_scope`),
 * or the default intersected with what the application may ask for. A scope string may only be
 * separated by spaces (RFC 6749 §3.3).
 */
export function resolveScopes(requested: string | undefined, allowed: string[]): string[] | null {
  if (requested === undefined || requested.trim() === '') return DEFAULT_SCOPES.filter((s) => allowed.includes(s));
  if (/[\t\r\n]/.test(requested)) return null;
  const wanted = [...new Set(requested.split(' ').filter(Boolean))];
  if (!wanted.every((s) => allowed.includes(s))) return null;
  return wanted;
}
