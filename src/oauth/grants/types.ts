import type { ServiceDeps } from '../../platform/deps.ts';
import type { ClientCredentials } from '../client-auth.ts';
import type { OAuthParams } from '../params.ts';

export interface GrantRequest {
  params: OAuthParams;
  credentials: ClientCredentials;
  /** The caller's address, for sign-in throttling. */
  ip: string;
}

/** One grant type of the token endpoint: returns the token response body or throws an OAuthError. */
export type Grant = (deps: ServiceDeps, req: GrantRequest) => Promise<Record<string, unknown>>;
