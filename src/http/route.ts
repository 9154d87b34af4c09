import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Static, TObject } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { compileInput } from './params.ts';
import { fitsIntColumn, MAX_INT_COLUMN } from '../platform/db/dialect.ts';
import { RecordNotFoundError } from '../platform/errors.ts';
import { requireAdmin, requireUser, type Actor } from './auth.ts';

export type AccessRule = 'public' | 'authenticated' | 'admin';

export interface RouteDef<I extends TObject = TObject> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path relative to /api/v4, e.g. "/projects/:id/repository/branches". */
  url: string;
  summary: string;
  tags?: string[];
  /** Who may call the route at all; finer rules (roles, visibility) are the handler's. */
  access: AccessRule;
  /** Token scopes accepted besides `api` (and `read_api` on GET). */
  scopes?: string[];
  input?: I;
  /** Feature-flag user lists report parameter errors under `message`. */
  errorStyle?: 'grape' | 'message';
  handler: (req: ApiRequest<Static<I>>, reply: FastifyReply) => Promise<unknown> | unknown;
}

export interface ApiRequest<I = Record<string, unknown>> extends FastifyRequest {
  input: I;
  actor: Actor;
}

export const API_PREFIX = '/api/v4';

/** All parameters of a request as the v4 API sees them: query, then body, then path (later wins). */
export function mergedParams(req: FastifyRequest): Record<string, unknown> {
  const body = req.body && typeof req.body === 'object' && !Buffer.isBuffer(req.body) && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  return { ...(req.query as Record<string, unknown>), ...body, ...(req.params as Record<string, unknown>) };
}

/**
 * Integers beyond the database's integer columns: a path id that large names nothing (404); a filter
 * value is clamped, which selects the same rows, instead of reaching PostgreSQL as an out-of-range value.
 */
function boundIntegers(input: Record<string, unknown>, pathParams: string[]): Record<string, unknown> {
  for (const [k, v] of Object.entries(input)) {
    if (typeof v !== 'number' || !Number.isInteger(v) || fitsIntColumn(v)) continue;
    if (pathParams.includes(k)) throw new RecordNotFoundError();
    input[k] = v > 0 ? MAX_INT_COLUMN : -MAX_INT_COLUMN - 1;
  }
  return input;
}

/** Registers API routes with their parameter schema, access rule and token scopes. */
export function registerRoutes(app: FastifyInstance, defs: RouteDef<any>[]): void {
  for (const def of defs) {
    const input = def.input ?? Type.Object({});
    const validate = compileInput(input);
    const accepted = ['api', ...(def.method === 'GET' ? ['read_api'] : []), ...(def.scopes ?? [])];
    const docSchema: Record<string, unknown> = { summary: def.summary, tags: def.tags ?? [] };
    const pathParams = [...def.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const props = (input.properties ?? {}) as Record<string, unknown>;
    if (pathParams.length) {
      docSchema.params = Type.Object(Object.fromEntries(pathParams.map((p) => [p, (props[p] as any) ?? Type.String()])));
    }
    const rest = Object.fromEntries(Object.entries(props).filter(([k]) => !pathParams.includes(k)));
    if (Object.keys(rest).length) {
      docSchema[def.method === 'GET' || def.method === 'DELETE' ? 'querystring' : 'body'] = Type.Object(rest as any);
    }
    app.route({
      method: def.method as HTTPMethods,
      url: API_PREFIX + def.url,
      schema: docSchema,
      config: { errorStyle: def.errorStyle ?? 'grape', access: def.access },
      // Documentation only: the merged parameters are validated below, whatever part they came in.
      validatorCompiler: () => () => true,
      handler: async (request, reply) => {
        const req = request as unknown as ApiRequest<any>;
        const params = mergedParams(req);
        const actor = await req.server.auth.authenticate(req, params);
        req.actor = actor;
        req.server.auth.checkScopes(actor, accepted);
        if (def.access === 'authenticated') requireUser(actor);
        if (def.access === 'admin') requireAdmin(actor);
        req.input = boundIntegers(validate(params), pathParams);
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
