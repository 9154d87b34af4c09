import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/index.ts';
import type { Clock } from '../platform/clock.ts';

/**
 * Fixed-window request throttles kept in process memory: one for callers that present a
 * credential (keyed by it), one for anonymous callers (keyed by address). A limit of 0 is off.
 */
export interface RateLimiter {
  /** Counts the request; returns the 429 headers when it is over the limit. */
  hit(req: FastifyRequest): Record<string, string> | null;
}

export function createRateLimiter(config: Config, clock: Clock): RateLimiter {
  const period = config.rateLimit.periodSeconds;
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = 0;

  return {
    hit(req) {
      const credential = credentialOf(req);
      const limit = credential ? config.rateLimit.authenticatedPerPeriod : config.rateLimit.unauthenticatedPerPeriod;
      if (!limit) return null;
      const name = credential ? 'throttle_authenticated_api' : 'throttle_unauthenticated_api';
      const key = credential ? `a:${createHash('sha256').update(credential).digest('hex')}` : `u:${req.ip}`;
      const nowS = Math.floor(clock.now() / 1000);
      const start = nowS - (nowS % period);
      if (nowS - lastSweep > period) {
        for (const [k, w] of windows) if (w.start < start) windows.delete(k);
        lastSweep = nowS;
      }
      let w = windows.get(key);
      if (!w || w.start !== start) {
        w = { start, count: 0 };
        windows.set(key, w);
      }
      w.count++;
      if (w.count <= limit) return null;
      const reset = start + period;
      return {
        'ratelimit-name': name,
        'ratelimit-limit': String(Math.ceil((limit * 60) / period)),
        'ratelimit-observed': String(w.count),
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(reset),
        'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
        'retry-after': String(reset - nowS),
      };
    },
  };
}

function credentialOf(req: FastifyRequest): string | null {
  const h = req.headers;
  if (typeof h['private-token'] === 'string' && h['private-token']) return h['private-token'];
  if (typeof h.authorization === 'string' && h.authorization) return h.authorization;
  const q = req.url.indexOf('?');
  if (q >= 0) {
    const m = /(?:^|&)(?:private_token|access_token)=([^&]+)/.exec(req.url.slice(q + 1));
    if (m) return m[1];
  }
  return null;
}
