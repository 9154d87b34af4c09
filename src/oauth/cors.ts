import type { FastifyInstance } from 'fastify';
import { routeNotFound, sendRendered } from '../http/errors.ts';

// Cross-origin use of the provider, as the spec states it: any origin, no credentials; preflight only
// for token, revoke and userinfo, and only for the simple headers plus Authorization. A refused
// preflight is still 200 but carries no Access-Control-* header, so the browser blocks the request.

interface Rule {
  methods: string[];
  preflight: boolean;
}

const RULES: Record<string, Rule> = {
  '/oauth/token': { methods: ['POST'], preflight: true },
  '/oauth/revoke': { methods: ['POST'], preflight: true },
  '/oauth/userinfo': { methods: ['GET', 'HEAD', 'POST'], preflight: true },
  '/oauth/token/info': { methods: ['GET', 'HEAD'], preflight: false },
  '/.well-known/oauth-authorization-server': { methods: ['GET', 'HEAD'], preflight: false },
  // A browser page, not for cross-origin use.
  '/oauth/authorize': { methods: [], preflight: false },
};

const SIMPLE_HEADERS = ['accept', 'accept-language', 'content-language', 'content-type'];
const ALLOWED_HEADERS = [...SIMPLE_HEADERS, 'authorization'];

function ruleFor(url: string): Rule | undefined {
  const path = url.split('?')[0].replace(/\/+$/, '');
  return Object.hasOwn(RULES, path) ? RULES[path] : undefined;
}

function corsHeaders(rule: Rule): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': rule.methods.join(', '),
    'access-control-expose-headers': '',
    'access-control-max-age': '7200',
  };
}

export function installOAuthCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'OPTIONS' || !req.headers.origin) return;
    const rule = ruleFor(req.url);
    if (!rule || rule.methods.length === 0) return;
    reply.headers(corsHeaders(rule)).header('vary', 'Origin');
  });

  app.options('/oauth/*', { schema: { hide: true } as object }, async (req, reply) => {
    const rule = ruleFor(req.url);
    if (!rule) return sendRendered(reply, routeNotFound);
    reply.header('vary', 'Origin');
    const origin = req.headers.origin;
    const method = req.headers['access-control-request-method'];
    if (origin && typeof method === 'string' && rule.preflight) {
      const requested = String(req.headers['access-control-request-headers'] ?? '')
        .split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
      if (rule.methods.includes(method.toUpperCase()) && requested.every((h) => ALLOWED_HEADERS.includes(h))) {
        reply.headers(corsHeaders(rule));
        if (requested.length) reply.header('access-control-allow-headers', requested.join(', '));
      }
    }
    return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send('');
  });
}
