import type { FastifyRequest } from 'fastify';

export type OAuthParams = Record<string, string | undefined>;

/**
 * The parameters of an OAuth request, from the query and the form (or JSON) body, the body winning.
 * Only plain string values count: `a[b]=c` or repeated structures are treated as absent.
 */
export function oauthParams(req: FastifyRequest): OAuthParams {
  const out: OAuthParams = {};
  const take = (src: unknown) => {
    if (!src || typeof src !== 'object' || Array.isArray(src) || Buffer.isBuffer(src)) return;
    for (const [k, v] of Object.entries(src as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  };
  take(req.query);
  take(req.body);
  return out;
}

/** The value of a parameter, with the empty string treated as absent (the reference's "blank"). */
export function present(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** The token a protected OAuth resource was called with: `access_token`, then Bearer, then `bearer_token`. */
export function accessTokenFrom(req: FastifyRequest, params: OAuthParams): string | undefined {
  const fromParam = present(params.access_token);
  if (fromParam) return fromParam;
  const authz = req.headers.authorization;
  if (typeof authz === 'string' && /^bearer\s+/i.test(authz)) {
    const v = authz.replace(/^bearer\s+/i, '').trim();
    if (v) return v;
  }
  return present(params.bearer_token);
}
