import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import FindMyWay from 'find-my-way';
import { Ajv, type ValidateFunction } from 'ajv';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { openDatabase } from '../../src/platform/db/index.ts';
import { buildApp } from '../../src/app.ts';
import { ManualClock, type Clock } from '../../src/platform/clock.ts';
import { declaredRoutes, ROUTER_OPTIONS, type DeclaredRoute } from '../../src/http/route.ts';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  clock: Clock;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * A whole application on a fresh database: in-memory SQLite by default, or, when DATABASE_URL is set,
 * a new PostgreSQL database cloned from the migrated template that scripts/test.mjs prepares.
 */
export async function buildTestApp(opts: { env?: Record<string, string>; clock?: Clock; config?: Partial<Config>; logger?: object; databaseBus?: boolean } = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bellows-test-'));
  const baseUrl = process.env.DATABASE_URL;
  let databaseUrl: string | null = null;
  let dropDb: (() => Promise<void>) | null = null;
  if (baseUrl) {
    const name = `bellows_t_${process.pid}_${randomBytes(4).toString('hex')}`;
    const template = process.env.BELLOWS_TEST_TEMPLATE!;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    await admin.end();
    const u = new URL(baseUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const config = loadConfig({ BELLOWS_DATA_DIR: dataDir, BELLOWS_PASSWORD_HASH_COST: process.env.BELLOWS_PASSWORD_HASH_COST ?? '10', ...(opts.env ?? {}) } as NodeJS.ProcessEnv, {
    externalUrl: 'http://bellows.test',
    ...opts.config,
    databaseUrl,
  } as Partial<Config>);
  const database = openDatabase({ databaseUrl, dataDir, sqliteFile: databaseUrl ? undefined : ':memory:' });
  await database.migrate();
  const clock = opts.clock ?? new ManualClock(Date.parse('2026-06-01T12:00:00Z'));
  // One application stands for one machine: rows changed behind its back (as by another process) reach it through the
  // database bus only when a test asks for it (platform/cache-bus.test.ts, test/integration/multi-machine.test.ts).
  const app = await buildApp({ config, database, clock, logger: opts.logger, databaseBus: opts.databaseBus ?? false });
  return {
    app, config, clock, dataDir,
    async close() {
      await app.close();
      await database.close();
      if (dropDb) await dropDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * For a test that changes rows behind the server's back, as another process would: the server's read caches
 * serve reads for their window (config authCacheMs) unless a write passes through it. Voiding them here stands
 * for the window passing.
 */
/** Makes `t` listen on a free port of 127.0.0.1 (once) and answers its base URL, `http://127.0.0.1:<port>`. */
export async function listening(t: TestApp): Promise<string> {
  if (!t.app.server.listening) await t.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

export function windowPassed(app: FastifyInstance): void {
  app.caches.voidAll();
}

export interface CallOptions {
  token?: string;
  headers?: Record<string, string>;
  body?: unknown;
  form?: Record<string, string>;
  query?: Record<string, string>;
  /** A multipart/form-data body: fields as text, files as `{ filename, content, type? }`. */
  multipart?: Record<string, string | { filename: string; content: Buffer | string; type?: string }>;
}

/** Encodes a multipart/form-data body as a client does. */
export function multipartBody(parts: NonNullable<CallOptions['multipart']>): { payload: Buffer; contentType: string } {
  const boundary = `----bellows${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, v] of Object.entries(parts)) {
    if (typeof v === 'string') {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${v.filename}"\r\nContent-Type: ${v.type ?? 'application/octet-stream'}\r\n\r\n`));
      chunks.push(Buffer.isBuffer(v.content) ? v.content : Buffer.from(v.content));
      chunks.push(Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** One API call through inject; `token` goes in PRIVATE-TOKEN. */
export async function call(app: FastifyInstance, method: string, url: string, o: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers['private-token'] = o.token;
  const req: InjectOptions = { method: method as any, url: url.startsWith('/api') || url.startsWith('/-') || url.startsWith('/oauth') ? url : `/api/v4${url}`, headers, query: o.query };
  if (o.body !== undefined) {
    req.payload = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  } else if (o.form) {
    req.payload = new URLSearchParams(o.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (o.multipart) {
    const m = multipartBody(o.multipart);
    req.payload = m.payload;
    headers['content-type'] = m.contentType;
  }
  const res = await app.inject(req);
  let body: any = res.body;
  try {
    body = res.body ? JSON.parse(res.body) : null;
  } catch {
    /* not JSON */
  }
  if (res.statusCode >= 200 && res.statusCode < 300) checkResponseShape(app, method, req.url as string, res.statusCode, res.headers['content-type'], body, res.body);
  return { status: res.statusCode, headers: res.headers as any, body, text: res.body };
}

// Every 2xx answer that call() receives is checked against the success body its route declares
// (`RouteDef.response`), so a presenter and its schema cannot drift apart unnoticed.

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/);
ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
const validators = new WeakMap<object, ValidateFunction>();
const routers = new WeakMap<FastifyInstance, ReturnType<typeof FindMyWay>>();

/** The declared route that answers `method url`, matched like the application's own router. */
export function declaredRoute(app: FastifyInstance, method: string, url: string): DeclaredRoute | undefined {
  let router = routers.get(app);
  if (!router) {
    router = FindMyWay({ ...ROUTER_OPTIONS });
    for (const r of declaredRoutes(app)) router.on(r.method, r.url, () => {}, r);
    routers.set(app, router);
  }
  const found = router.find(method.toUpperCase() as any, url.split('?')[0]);
  return found?.store as DeclaredRoute | undefined;
}

function checkResponseShape(app: FastifyInstance, method: string, url: string, status: number, contentType: unknown, body: unknown, text: string): void {
  const route = declaredRoute(app, method, url);
  if (!route || route.response === undefined) return;
  const where = `${method.toUpperCase()} ${url} (${route.url})`;
  if (route.response === null) {
    if (text !== '') throw new Error(`${where} answered ${status} with a body; its route declares none`);
    return;
  }
  let validate = validators.get(route.response);
  if (!validate) {
    validate = ajv.compile(route.response);
    validators.set(route.response, validate);
  }
  const value = /^application\/json/.test(String(contentType ?? '')) ? body : text;
  if (!validate(value)) {
    throw new Error(`${where} answered ${status} with a body that does not match its declared response schema: ${(validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`).join('; ')}`);
  }
}
