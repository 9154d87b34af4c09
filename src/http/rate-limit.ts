import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/index.ts';
import type { Clock } from '../platform/clock.ts';
import type { RateCounter } from '../platform/rate-counters.ts';

/**
 * Fixed-window request throttles, as the reference's network throttles, counted by `platform/rate-counters.ts` (in
 * PostgreSQL for the whole installation, in the process on SQLite):
 * `throttle_unauthenticated_api` counts requests without credentials per client address, before
 * routing; `throttle_authenticated_api` counts per user, once the credential has been resolved, so
 * that several tokens of one user share one limit. A limit of 0 is off. Named endpoint limits (`hitNamed`, declared by
 * a route's `rateLimit`) count the same way, per minute, under their own keys.
 */
export interface RateLimiter {
  /** Counts a request that carries no credential; returns the 429 headers when it is over the limit. */
  hit(req: FastifyRequest): Promise<Record<string, string> | null>;
  /** Counts a request of an authenticated user; returns the 429 headers when it is over the limit. */
  hitUser(userId: number): Promise<Record<string, string> | null>;
  /** Counts a request whose credential turned out to be worthless against its client address. */
  hitAddress(req: FastifyRequest): Promise<Record<string, string> | null>;
  /**
   * Counts a request against a named endpoint limit (the reference's application rate limiter, e.g.
   * `search_rate_limit`): `limit` requests per minute and per `subject` (a user id, an address); 0 is off.
   */
  hitNamed(name: string, subject: string, limit: number): Promise<Record<string, string> | null>;
}

/** The named endpoint limits count in one-minute windows, as the reference's `interval: 1.minute`. */
const NAMED_PERIOD_S = 60;

export function createRateLimiter(config: Config, clock: Clock, counter: RateCounter): RateLimiter {
  async function count(key: string, limit: number, name: string, period = config.rateLimit.periodSeconds): Promise<Record<string, string> | null> {
    if (!limit) return null;
    const nowS = Math.floor(clock.now() / 1000);
    const start = nowS - (nowS % period);
    const observed = await counter.hit(key, start);
    if (observed <= limit) return null;
    const reset = start + period;
    return {
      'ratelimit-name': name,
      'ratelimit-limit': String(Math.ceil((limit * 60) / period)),
      'ratelimit-observed': String(observed),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(reset),
      'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
      'retry-after': String(reset - nowS),
    };
  }

  return {
    async hit(req) {
      if (hasCredential(req)) return null;
      return count(`u:${req.ip}`, config.rateLimit.unauthenticatedPerPeriod, 'throttle_unauthenticated_api');
    },
    hitAddress(req) {
      return count(`u:${req.ip}`, config.rateLimit.unauthenticatedPerPeriod, 'throttle_unauthenticated_api');
    },
    hitUser(userId) {
      return count(`a:${userId}`, config.rateLimit.authenticatedPerPeriod, 'throttle_authenticated_api');
    },
    hitNamed(name, subject, limit) {
      return count(`n:${name}:${subject}`, limit, name, NAMED_PERIOD_S);
    },
  };
}

/** A token in a header or in the query string, or a session cookie: counted per user later. */
export function hasCredential(req: FastifyRequest): boolean {
  const h = req.headers;
  if (typeof h['private-token'] === 'string' && h['private-token']) return true;
  if (typeof h.authorization === 'string' && h.authorization) return true;
  if (typeof h.cookie === 'string' && h.cookie.includes('_service_session=')) return true;
  const q = req.url.indexOf('?');
  return q >= 0 && /(?:^|&)(?:private_token|access_token)=[^&]/.test(req.url.slice(q + 1));
}
