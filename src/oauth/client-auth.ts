import type { FastifyRequest } from 'fastify';
import type { ServiceDeps } from '../platform/deps.ts';
import { digest, safeEqual } from '../platform/crypto/tokens.ts';
import { OAuthError } from '../platform/errors.ts';
import { findByUid, type Application } from './applications.ts';
import { present, type OAuthParams } from './params.ts';

/** Client credentials as sent: HTTP Basic first, then `client_id` / `client_secret` in the body. */
export interface ClientCredentials {
  present: boolean;
  clientId?: string;
  secret?: string;
}

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** Throws `invalid_request` when the request authenticates the client in more than one way (RFC 6749 §2.3). */
export function readClientCredentials(req: FastifyRequest, params: OAuthParams): ClientCredentials {
  const bodyId = present(params.client_id);
  const bodySecret = present(params.client_secret);
  const authz = req.headers.authorization;
  if (typeof authz === 'string' && /^basic\s+/i.test(authz)) {
    const decoded = Buffer.from(authz.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
    const id = formDecode(i >= 0 ? decoded.slice(0, i) : decoded);
    const secret = i >= 0 ? formDecode(decoded.slice(i + 1)) : '';
    if (bodySecret !== undefined || (bodyId !== undefined && bodyId !== id)) throw new OAuthError('invalid_request', { reason: 'multiple_auth' });
    if (id) return { present: true, clientId: id, secret: secret || undefined };
  }
  if (bodyId !== undefined) return { present: true, clientId: bodyId, secret: bodySecret };
  return { present: bodySecret !== undefined };
}

/**
 * The application these credentials authenticate, or null. A confidential application needs its
 * secret; a public one is known by its id alone, but a secret it does send must be right.
 */
export async function authenticateClient(deps: ServiceDeps, creds: ClientCredentials): Promise<Application | null> {
  if (!creds.clientId) return null;
  const app = await findByUid(deps, creds.clientId);
  if (!app) return null;
  if (creds.secret !== undefined) return safeEqual(digest(creds.secret), app.secret_digest) ? app : null;
  return app.confidential ? null : app;
}
