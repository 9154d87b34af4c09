import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify';
import FindMyWay from 'find-my-way';
import { parseHeadOnSendHandlers } from 'fastify/lib/head-route.js';
import qs from 'qs';
import { methodNotAllowed, queryTooLong, routeNotFound, sendRendered, serviceUnavailable, tooManyRequests } from './errors.ts';
import { API_PREFIX, ROUTER_OPTIONS } from './route.ts';
import { announceCacheVoid, settled } from '../platform/cache-bus.ts';
import { runInReadScope } from '../platform/db/index.ts';
import { sha256 } from '../platform/crypto/tokens.ts';

// Request-level conventions of the v4 API: body parsing, request ids, security headers,
// conditional GET, query-string limit, rate limits, CORS, unknown routes and methods.

const QS_OPTIONS = { depth: 5, arrayLimit: 1000, parameterLimit: 2000, duplicates: 'last' } as const;

export function parseQuery(s: string): Record<string, unknown> {
  if (!s.includes('[]') && !/%5B%5D/i.test(s)) return qs.parse(s, QS_OPTIONS) as Record<string, unknown>;
  // Keys such as `actions[][action]` are numbered first, the way Rack groups them, then parsed as usual.
  const pairs: Array<[string, string]> = [];
  for (const part of s.split('&').slice(0, QS_OPTIONS.parameterLimit)) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = decodePart(eq < 0 ? part : part.slice(0, eq));
    pairs.push([key, eq < 0 ? '' : decodePart(part.slice(eq + 1))]);
  }
  return parseFormPairs(pairs);
}

/** Decoded name/value pairs, in the order sent (multipart fields, or a form body), parsed as a form body is. */
export function parseFormPairs(pairs: Array<[string, string]>): Record<string, unknown> {
  const text = numberArraysOfHashes(pairs.slice(0, QS_OPTIONS.parameterLimit)).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  return qs.parse(text, QS_OPTIONS) as Record<string, unknown>;
}

function decodePart(x: string): string {
  try {
    return decodeURIComponent(x.replace(/\+/g, ' '));
  } catch {
    return x;
  }
}

/**
 * Rack's rule for arrays of hashes: in `name[][key]`, a key the last hash of `name` already holds starts a new
 * hash; any other key joins the last one. The `[]` is replaced by that hash's index, so that
 * `a[][x]=1&a[][y]=2&a[][x]=3` reads as `a[0][x]=1&a[0][y]=2&a[1][x]=3`.
 */
export function numberArraysOfHashes(pairs: Array<[string, string]>): Array<[string, string]> {
  const arrays = new Map<string, { index: number; keys: Set<string> }>();
  return pairs.map(([key, value]) => {
    let k = key;
    for (let at = k.indexOf('[]['); at > 0; at = k.indexOf('[][', at + 1)) {
      const prefix = k.slice(0, at);
      const child = k.slice(at + 2);
      let state = arrays.get(prefix);
      if (!state) arrays.set(prefix, (state = { index: 0, keys: new Set() }));
      // A child key with an array inside (`a[][tags][]`) always joins the last hash, as in Rack.
      if (!child.includes('[]')) {
        if (state.keys.has(child)) {
          state.index += 1;
          state.keys = new Set();
        }
        state.keys.add(child);
      }
      k = `${prefix}[${state.index}]${child}`;
    }
    return [k, value];
  });
}

export function installBodyParsers(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  // Real clients send "Content-Type: application/json" with an empty body on DELETE and bodiless POSTs.
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string', bodyLimit: 10 * 1024 * 1024 }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const e: any = new Error('invalid JSON');
      e.code = 'BELLOWS_INVALID_JSON';
      e.statusCode = 400;
      done(e, undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 10 * 1024 * 1024 }, (_req, body, done) => {
    done(null, parseQuery(String(body)));
  });
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => done(null, String(body)));
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

// A request id is unique, not secret: a random prefix per process and a counter make 26 hex digits, as a random
// UUID's first 26 would, without drawing random bytes for every request.
const ID_PREFIX = randomUUID().replace(/-/g, '').slice(0, 14).toUpperCase();
let idCounter = 0;

export function genReqId(req: { headers: Record<string, unknown> }): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  idCounter = (idCounter + 1) % 0x1000000000000;
  return ID_PREFIX + idCounter.toString(16).toUpperCase().padStart(12, '0');
}

// 160 bits of SHA-256 make the tag.
function etagDigest(body: string | Buffer): string {
  return sha256(body, 'base64url').slice(0, 27);
}

const PART_DIGESTS = Symbol('partDigests');
const KNOWN_TAG = Symbol('knownTag');

/**
 * For a body assembled from parts whose SHA-256 digests are known (cached entities): the ETag is then made
 * from those digests instead of from every byte of the body; equal parts in equal order give equal tags.
 */
export function bodyFromParts(reply: FastifyReply, digests: Buffer[]): void {
  (reply as unknown as Record<symbol, Buffer[]>)[PART_DIGESTS] = digests;
}

/** The ETag of a JSON text body, as the response will carry it. */
export function etagOf(body: string): string {
  return `W/"${etagDigest(body)}"`;
}

/** For a body whose ETag (from `etagOf`) was kept with it: the response carries that tag without hashing again. */
export function bodyWithTag(reply: FastifyReply, tag: string): void {
  (reply as unknown as Record<symbol, string>)[KNOWN_TAG] = tag;
}

function tagOf(reply: FastifyReply, body: string | Buffer): string {
  const r = reply as unknown as Record<symbol, Buffer[] | string | undefined>;
  const known = r[KNOWN_TAG] as string | undefined;
  if (known) return known;
  const parts = r[PART_DIGESTS] as Buffer[] | undefined;
  return `W/"${etagDigest(parts ? Buffer.concat(parts) : body)}"`;
}

// fastify's step that makes a HEAD answer of a GET answer: the GET body's `content-length`, no body.
const headAnswer = parseHeadOnSendHandlers(null);
const headOnly: onSendHookHandler = function (req, reply, payload, done) {
  if (req.method === 'HEAD') return headAnswer.call(this, req, reply, payload, done);
  done(null, payload);
};

/**
 * Every GET route answers HEAD as well, from the same route and the same router entry, unless it says it does not
 * (`exposeHeadRoute: false`). The application is made with `exposeHeadRoutes: false`, so that fastify makes no second
 * route (a router entry, a context, a plugin of its own and a set-up step at `ready`) for each GET route; and a HEAD
 * request is looked up as a GET (`routeHeadAsGet`), so that the router keeps no HEAD tree either (its per-node
 * matchers are compiled at every worker's start: about 70 ms of CPU for the GET tree's copy). The answer is what
 * fastify's HEAD copy gave: the GET route's hooks, then its HEAD step (the body's length, no body). No route declares
 * HEAD itself: one that did could never be reached. Installed before any route, and before the 405 mirror's note of
 * the routes, which lists HEAD wherever a GET route answers it (`answersHead`).
 */
export function installHeadAnswers(app: FastifyInstance): void {
  app.addHook('onRoute', (opts) => {
    const methods = Array.isArray(opts.method) ? opts.method : [opts.method];
    if (methods.includes('HEAD')) throw new Error(`${opts.url}: HEAD is answered by the GET route of the path; declare GET only`);
    if (!methods.includes('GET')) return;
    const step = answersHead(opts) ? headOnly : notHead;
    const hooks = step === notHead ? 'onRequest' : 'onSend';
    const had = opts[hooks] as unknown;
    (opts as unknown as Record<string, unknown>)[hooks] = had === undefined ? [step] : [...(Array.isArray(had) ? had : [had]), step];
  });
}

/** Whether a route answers HEAD: a GET route that does not say otherwise. */
function answersHead(opts: { method: string | string[]; exposeHeadRoute?: boolean }): boolean {
  return (Array.isArray(opts.method) ? opts.method.includes('GET') : opts.method === 'GET') && opts.exposeHeadRoute !== false;
}

// A HEAD request that reached a GET route which does not answer HEAD (a link that changes something when followed)
// is answered as a path without HEAD: 405 with the methods it has, as a path without that route would be.
const notHead: onRequestHookHandler = function (req, reply, done) {
  if (req.method !== 'HEAD') return done();
  reply.callNotFound();
};

/**
 * fastify's `rewriteUrl` step that routes a HEAD request through the GET routes (`installHeadAnswers`): the router,
 * which reads the method once to look the path up, reads `GET`; every later reader (the hooks, the logs, the metrics)
 * reads `HEAD`, as the request said. Node's response, made before this, already knows it sends no body.
 */
export function routeHeadAsGet(req: { method?: string }): void {
  if (req.method !== 'HEAD') return;
  Object.defineProperty(req, 'method', {
    configurable: true,
    enumerable: true,
    get() {
      Object.defineProperty(req, 'method', { value: 'HEAD', configurable: true, enumerable: true, writable: true });
      return 'GET';
    },
  });
}

export function installConventions(app: FastifyInstance): void {
  const cfg = app.config;

  // While stopping, requests that still arrive on open connections are turned away in the reference's words;
  // the ones already running finish.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    if (closing) return sendRendered(reply.header('connection', 'close'), serviceUnavailable);
    if (!req.url.startsWith(API_PREFIX)) return;
    reply.header('x-frame-options', 'SAMEORIGIN');
    reply.header('x-content-type-options', 'nosniff');
    const q = req.url.indexOf('?');
    if (q >= 0 && req.url.length - q - 1 > cfg.maxQueryStringBytes) return sendRendered(reply, queryTooLong);
    const origin = req.headers.origin;
    if (origin) {
      // The API is readable cross-origin without cookies, as the reference's Rack::Cors setup.
      reply.header('access-control-allow-origin', '*');
      reply.header('access-control-expose-headers', 'Link, X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page, X-Prev-Page, X-Request-Id');
    }
    const limited = await app.rateLimiter.hit(req);
    if (limited) return sendRendered(reply, tooManyRequests(limited));
  });

  // An API read runs as a read scope of the database (platform/db): on PostgreSQL its statements stop after the
  // configured timeout (answered as any failure: 500), and the scope ends with the response, sent or abandoned.
  if (app.database.dialect === 'postgres' && cfg.dbStatementTimeoutMs > 0) {
    app.addHook('onRequest', (req, reply, done) => {
      if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.url.startsWith(API_PREFIX)) return done();
      const scope = { timeoutMs: cfg.dbStatementTimeoutMs, open: true };
      reply.raw.once('close', () => { scope.open = false; });
      runInReadScope(scope, done);
    });
  }

  // One structured line per request, the useful subset of the reference's API log. The path is
  // logged without its query string: tokens may travel there (private_token, access_token).
  // Without a logger that writes such lines, no hook runs at all.
  const log = app.log as { isLevelEnabled?: (level: string) => boolean };
  const logs = typeof log.isLevelEnabled === 'function' && log.isLevelEnabled('info');
  if (logs) app.addHook('onResponse', async (req, reply) => {
    const actor = (req as { actor?: { user: { id: number; username: string } | null; token: { kind: string; id: number } | null } }).actor;
    req.log.info({
      method: req.method,
      path: req.originalUrl.split('?')[0],
      route: req.routeOptions?.url ?? null,
      status: reply.statusCode,
      duration_s: Math.round(reply.elapsedTime) / 1000,
      remote_ip: req.ip,
      user_id: actor?.user?.id ?? null,
      username: actor?.user?.username ?? null,
      token_type: actor?.token?.kind ?? null,
      token_id: actor?.token?.id ?? null,
    }, 'request completed');
  });

  // One onSend hook for the response conventions (each hook is a step of its own for every response):
  // state-changing requests void the read caches of every worker before they are answered;
  // answers given while stopping close their connection, so that keep-alive clients do not hold the stop up;
  // API JSON answers say exactly `application/json`, as the reference's API does: python-gitlab parses a body
  // only then (the OAuth endpoints keep the charset, as the reference's token endpoint sends it); and JSON GET
  // responses carry a weak ETag, a matching If-None-Match answering 304 with no body.
  app.addHook('onSend', async (req, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS' && !(req.routeOptions.config as { readOnly?: boolean } | undefined)?.readOnly) {
      // Whatever this request changed, no worker of the server answers from a cache made before it.
      announceCacheVoid('all');
      await settled();
    }
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && type.startsWith('application/json;') && req.url.startsWith(API_PREFIX)) {
      reply.header('content-type', 'application/json');
    }
    if ((req.method !== 'GET' && req.method !== 'HEAD') || reply.statusCode !== 200) return payload;
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    if (typeof type !== 'string' || !type.startsWith('application/json')) return payload;
    // Responses that carry secrets (OAuth tokens) must not be cached or revalidated.
    if (String(reply.getHeader('cache-control') ?? '').includes('no-store')) return payload;
    // A text body is hashed as its UTF-8 and sent as text: the socket then gets the headers and the body in one write.
    const tag = tagOf(reply, payload);
    reply.header('etag', tag);
    reply.header('cache-control', 'max-age=0, private, must-revalidate');
    const inm = req.headers['if-none-match'];
    if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === tag || t.trim() === '*')) {
      reply.code(304);
      return '';
    }
    return payload;
  });

  // A mirror of the route table answers "which methods does this path have?" for 405 and OPTIONS. The routes are
  // noted as they are added and the mirror is built from them, in the same order, when the first unknown route or
  // method asks: compiling a second router at start would double the routing work of every start.
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
  const noted: Array<[string, string]> = [];
  let mirror: ReturnType<typeof FindMyWay> | null = null;
  const mirrorOf = (): ReturnType<typeof FindMyWay> => {
    if (mirror) return mirror;
    const built = FindMyWay({ ...ROUTER_OPTIONS });
    for (const [m, url] of noted) {
      try {
        built.on(m as any, url, () => {});
      } catch {
        /* already present */
      }
    }
    noted.length = 0;
    return (mirror = built);
  };
  app.addHook('onRoute', (opts) => {
    const methods = Array.isArray(opts.method) ? [...opts.method] : [opts.method];
    if (answersHead(opts)) methods.push('HEAD');
    for (const m of methods) {
      if (!(METHODS as readonly string[]).includes(m)) continue;
      if (!mirror) {
        noted.push([m, opts.url]);
        continue;
      }
      try {
        mirror.on(m as any, opts.url, () => {});
      } catch {
        /* already present */
      }
    }
  });

  app.setNotFoundHandler(async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0];
    const router = mirrorOf();
    const allowed = METHODS.filter((m) => router.find(m as any, path) !== null);
    if (req.method === 'OPTIONS') {
      if (req.headers.origin && req.headers['access-control-request-method']) {
        reply.header('access-control-allow-origin', '*');
        reply.header('access-control-allow-methods', 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
        reply.header('access-control-allow-headers', 'Authorization, Content-Type, PRIVATE-TOKEN, Sudo, X-Requested-With');
        reply.header('access-control-max-age', '7200');
      }
      if (allowed.length) return reply.code(204).header('allow', ['OPTIONS', ...allowed].join(', ')).send();
    }
    if (allowed.length) return sendRendered(reply, methodNotAllowed(['OPTIONS', ...allowed]));
    return sendRendered(reply, routeNotFound);
  });
}
