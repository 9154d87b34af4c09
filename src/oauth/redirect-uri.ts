// Redirect URIs: validated at registration, matched by exact string at authorize and token time.

const FORBIDDEN_SCHEMES = new Set(['data:', 'vbscript:', 'javascript:']);

export function splitRedirectUris(value: string): string[] {
  return value.split(/\s+/).filter(Boolean);
}

/** Why one registered URI is not acceptable, or null. */
export function redirectUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'must be an absolute URI.';
  }
  if (FORBIDDEN_SCHEMES.has(u.protocol)) return 'is forbidden by the server.';
  if (uri.includes('#')) return 'cannot contain a fragment.';
  if ((u.protocol === 'http:' || u.protocol === 'https:') && !u.hostname) return 'must be an absolute URI.';
  return null;
}

export function matchesRegistered(registered: string, requested: string): boolean {
  return splitRedirectUris(registered).includes(requested);
}

/** Adds parameters to a redirect URI, keeping its own query; blank values are left out. */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.append(k, v);
  const extra = q.toString();
  if (!extra) return uri;
  return uri + (uri.includes('?') ? (uri.endsWith('?') || uri.endsWith('&') ? '' : '&') : '?') + extra;
}
