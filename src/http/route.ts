import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { compileInput, fileLimitOf, fileParamsOf } from './params.ts';
import { isMultipart, readMultipart } from './multipart.ts';
import { requireAdmin, requireUser, type Actor } from './auth.ts';
import { endpointThrottled, sendRendered, tooManyRequests } from './errors.ts';
import { hasCredential } from './rate-limit.ts';
import { ForbiddenError, InvalidTokenError, UnauthorizedError } from '../platform/errors.ts';
import { instanceDenial, type GroupAbility, type InstanceAbility, type ProjectAbility } from '../platform/access/policy.ts';
import { defineObjectMemo } from '../platform/read-cache.ts';
import { findGroup, findProject, type GroupContext, type ProjectContext } from './access.ts';
import type { SpamParams } from '../platform/spam/spam-check.ts';

export type AccessRule = 'public' | 'authenticated' | 'admin';

export interface RouteDef<I extends TObject = TObject> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path relative to /api/v4, e.g. "/projects/:id/repository/branches". */
  url: string;
  summary: string;
  tags?: string[];
  /** Who may call the route at all. */
  access: AccessRule;
  /**
   * The project of the path parameter `param` (default `id`) and the ability the caller needs on it: resolved and
   * checked before the handler (unreadable 404, readable but refused 403), then given as `req.project`.
   */
  project?: { param?: string; ability: ProjectAbility };
  /** Likewise for a group, given as `req.group`. */
  group?: { param?: string; ability: GroupAbility };
  /** An ability over the installation (no project or group) the signed-in caller needs; 403 without it. */
  instance?: { ability: InstanceAbility };
  /**
   * A named per-minute limit of the endpoint (the reference's `check_rate_limit!` in a `before` block): which limit,
   * whom it counts (a user, an address) and how many requests a minute it allows, or null when the caller is exempt.
   * Counted once the caller is authenticated and allowed, before the parameters are validated; over it, 429.
   */
  rateLimit?: (req: FastifyRequest, actor: Actor) => Promise<{ name: string; subject: string; limit: number } | null>;
  /** Parameter checks beyond the schema, run with it: before the route's project or group is looked up. */
  checks?: (input: Static<I>) => void;
  /** Token scopes accepted besides `api` (and `read_api` on GET). */
  scopes?: string[];
  input?: I;
  /**
   * The success body: an entity schema, `Type.Array(entity)` for lists, `null` when the route answers 204 without a
   * body. Documentation and test checking only: bodies are serialized as the handler returns them.
   */
  response?: TSchema | null;
  /** The success status when it is not the method's own (a revocation answers 202 without a body). */
  status?: 202;
  /** Feature-flag user lists report parameter errors under `message`. */
  errorStyle?: 'grape' | 'message';
  handler: (req: ApiRequest<Static<I>>, reply: FastifyReply) => Promise<unknown> | unknown;
}

export interface ApiRequest<I = Record<string, unknown>> extends FastifyRequest {
  input: I;
  actor: Actor;
  /** Set on routes that declare `project`. */
  project: ProjectContext;
  /** Set on routes that declare `group`. */
  group: GroupContext;
}

export const API_PREFIX = '/api/v4';

/**
 * How every router of the application reads a path (fastify's, and the mirror that answers 405): repeated and trailing
 * slashes ignored, and room for the longest project path in one parameter, URL-encoded as an API `:id` or folded
 * below `/-/project/` (http/project-paths.ts): 21 segments of up to 255 characters and their 20 `%2F`.
 */
export const ROUTER_OPTIONS = { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 8192 } as const;

export interface DeclaredRoute {
  method: RouteDef['method'];
  /** Full URL pattern, e.g. "/api/v4/projects/:id". */
  url: string;
  /** `undefined` when the route declares no response shape. */
  response: TSchema | null | undefined;
}

const declared = defineObjectMemo<FastifyInstance, DeclaredRoute[]>('declared-routes');

/** The API routes registered on an application with their declared success bodies (for the tests' shape check). */
export function declaredRoutes(app: FastifyInstance): readonly DeclaredRoute[] {
  return declared.get(app) ?? [];
}

/** The OpenAPI description of an API route: its summary and tags, parameters by part, and success body. */
function docSchemaOf(def: RouteDef<any>, input: TObject, pathParams: string[]): Record<string, unknown> {
  const docSchema: Record<string, unknown> = { summary: def.summary, tags: def.tags ?? [] };
  const response = responseDoc(def);
  if (response) docSchema.response = response;
  const props = (input.properties ?? {}) as Record<string, unknown>;
  if (pathParams.length) {
    docSchema.params = Type.Object(Object.fromEntries(pathParams.map((p) => [p, (props[p] as any) ?? Type.String()])));
  }
  const rest = Object.fromEntries(Object.entries(props).filter(([k]) => !pathParams.includes(k)));
  if (Object.keys(rest).length) {
    docSchema[def.method === 'GET' || def.method === 'DELETE' ? 'querystring' : 'body'] = Type.Object(rest as any);
  }
  return docSchema;
}

/** The OpenAPI `responses` entry of a declared success body. */
function responseDoc(def: RouteDef<any>): Record<string, unknown> | undefined {
  if (def.response === undefined) return undefined;
  if (def.response === null) return { [def.status ?? 204]: { type: 'null', description: def.status ? 'Accepted, no content' : 'No content' } };
  return { '2xx': { description: 'Success', ...def.response } };
}

/** All parameters of a request as the v4 API sees them: query, then body, then path (later wins). */
export function mergedParams(req: FastifyRequest): Record<string, unknown> {
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return { ...(req.query as Record<string, unknown>), ...body, ...(req.params as Record<string, unknown>) };
}

const header = (req: FastifyRequest, name: string): string | null => {
  const v = req.headers[name];
  return typeof v === 'string' && v ? v.slice(0, 4096) : null;
};

/** What the spam check reads of a request: its origin and the CAPTCHA retry headers (spec error rule 10). */
function spamParams(req: FastifyRequest): SpamParams {
  return {
    ip: req.ip ?? '', userAgent: header(req, 'user-agent') ?? '', referer: header(req, 'referer') ?? '',
    captchaResponse: header(req, 'x-service-captcha-response'), spamLogId: header(req, 'x-service-spam-log-id'), log: req.log,
  };
}

/** Registers API routes with their parameter schema, access rule and token scopes. */
export function registerRoutes(app: FastifyInstance, defs: RouteDef<any>[]): void {
  for (const def of defs) {
    const input = def.input ?? Type.Object({});
    const pathParams = [...def.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const validate = compileInput(input, pathParams);
    const fileParams = fileParamsOf(input);
    const fileLimit = fileLimitOf(input);
    const accepted = ['api', ...(def.method === 'GET' ? ['read_api'] : []), ...(def.scopes ?? [])];
    declared.of(app, () => []).push({ method: def.method, url: API_PREFIX + def.url, response: def.response });
    app.route({
      method: def.method as HTTPMethods,
      url: API_PREFIX + def.url,
      // The route's schema is documentation only (the merged parameters are validated below, whatever part they came
      // in; a compiled serializer would drop undeclared fields): it is made when the OpenAPI document is, not here,
      // where fastify would prepare its parts for validation and serialisation at every start.
      config: { errorStyle: def.errorStyle ?? 'grape', access: def.access, swaggerTransform: ({ url }: { url: string }) => ({ schema: docSchemaOf(def, input, pathParams), url }) },
      handler: async (request, reply) => {
        const req = request as unknown as ApiRequest<any>;
        const multipart = isMultipart(req);
        if (multipart) req.body = await readMultipart(req, reply, fileParams, fileLimit);
        const params = mergedParams(req);
        const limiter = req.server.rateLimiter;
        let actor: Actor;
        try {
          actor = await req.server.auth.authenticate(req, params);
        } catch (e) {
          // A credential that authenticates nobody counts against the address, like no credential.
          const limited = (e instanceof UnauthorizedError || e instanceof InvalidTokenError) && hasCredential(req) ? await limiter.hitAddress(req) : null;
          if (limited) return sendRendered(reply, tooManyRequests(limited));
          throw e;
        }
        req.actor = actor.user && def.method !== 'GET' ? { ...actor, spam: spamParams(req) } : actor;
        // Per user: the token's owner when acting through sudo.
        const limited = actor.user ? await limiter.hitUser(actor.token?.userId ?? actor.user.id) : hasCredential(req) ? await limiter.hitAddress(req) : null;
        if (limited) return sendRendered(reply, tooManyRequests(limited));
        req.server.auth.checkScopes(actor, accepted);
        if (def.access === 'authenticated') requireUser(actor);
        if (def.access === 'admin') requireAdmin(actor);
        if (def.instance) {
          requireUser(actor);
          if (instanceDenial(actor, def.instance.ability)) throw new ForbiddenError();
        }
        if (def.rateLimit) {
          const named = await def.rateLimit(req, actor);
          const over = named ? await limiter.hitNamed(named.name, named.subject, named.limit) : null;
          if (over) return sendRendered(reply, endpointThrottled(over));
        }
        // Path parameters win over body fields of the same name, so they are no multipart field.
        req.input = validate(params, multipart ? new Set(Object.keys(req.body as object).filter((k) => !pathParams.includes(k))) : undefined);
        def.checks?.(req.input);
        if (def.project) req.project = await findProject(req.server, actor, req.input[def.project.param ?? 'id'], def.project.ability, { once: req.method !== 'GET' && req.method !== 'HEAD' });
        if (def.group) req.group = await findGroup(req.server.db, actor, req.input[def.group.param ?? 'id'], def.group.ability);
        if (def.status) reply.code(def.status);
        const result = await def.handler(req, reply);
        if (reply.sent) return reply;
        if (result === undefined) {
          if (reply.statusCode === 200) reply.code(def.method === 'DELETE' ? 204 : def.method === 'POST' ? 201 : 200);
          return reply.send();
        }
        if (reply.statusCode === 200 && def.method === 'POST') reply.code(201);
        return reply.send(result);
      },
    });
  }
}
