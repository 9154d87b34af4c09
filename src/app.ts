import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { Config } from './config/index.ts';
import type { Database } from './platform/db/index.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import { configurePasswordHashing } from './platform/crypto/passwords.ts';
import { createReadCaches, type ReadCaches } from './platform/read-cache.ts';
import { startDatabaseBus } from './platform/cache-bus.ts';
import { createRateCounter } from './platform/rate-counters.ts';
import { Storage } from './platform/git/storage.ts';
import { configureGit } from './platform/git/command.ts';
import { JobQueue } from './platform/jobs/queue.ts';
import { createMetrics, type Metrics } from './platform/metrics.ts';
import { createAuthenticator, type Authenticator } from './http/auth.ts';
import { clientErrorHandler, installErrorHandler, renderFrameworkError, sendRendered } from './http/errors.ts';
import { genReqId, installBodyParsers, installConventions, installHeadAnswers, parseQuery, routeHeadAsGet } from './http/plumbing.ts';
import { installMultipart } from './http/multipart.ts';
import { createRateLimiter, type RateLimiter } from './http/rate-limit.ts';
import { registerHealth, registerMetrics } from './http/health.ts';
import { PROJECT_PATH_SUFFIXES, registerJobs, registerResources } from './resources/index.ts';
import { projectPathFolder } from './http/project-paths.ts';
import { ROUTER_OPTIONS } from './http/route.ts';
import { activeBroadcastMessages } from './resources/broadcast-messages/broadcast-messages.service.ts';
import { broadcastBannersHtml } from './resources/broadcast-messages/broadcast-messages.presenter.ts';
import { registerOAuth } from './oauth/index.ts';
import { registerWeb } from './web/index.ts';

export interface AppDeps {
  config: Config;
  database: Database;
  clock?: Clock;
  logger?: boolean | object;
  /**
   * Whether to hear other machines' changes through the database (PostgreSQL only; default true). Tests of one
   * application that change rows behind its back, as another process would, to see its caches at work, turn it off.
   */
  databaseBus?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    db: Database['db'];
    clock: Clock;
    caches: ReadCaches;
    jobs: JobQueue;
    metrics: Metrics;
    auth: Authenticator;
    rateLimiter: RateLimiter;
  }
}

/** Builds the whole application in a fixed order; tests use it with inject, main with a listener. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  configurePasswordHashing(deps.config.passwordHashCost);
  // A server process grows to hundreds of megabytes: its git calls start through a small helper process, whose
  // forks are cheap, instead of holding its event loop for each fork (platform/git/spawner.ts).
  configureGit({ helper: true });
  const foldProjectPath = projectPathFolder(PROJECT_PATH_SUFFIXES);
  const app = Fastify({
    logger: deps.logger ?? false,
    // Requests are logged once, on response, by the conventions (without query strings).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId,
    // Paths below a project's full path reach one route per suffix (http/project-paths.ts); HEAD requests are
    // looked up as GET, whose routes answer them (http/plumbing.ts, installHeadAnswers).
    rewriteUrl: (req) => {
      routeHeadAsGet(req);
      return foldProjectPath(req);
    },
    trustProxy: false,
    // GET routes answer HEAD themselves (installHeadAnswers), without a copy.
    exposeHeadRoutes: false,
    // The conventions answer requests that arrive while stopping (see http/plumbing.ts).
    return503OnClosing: false,
    bodyLimit: 10 * 1024 * 1024,
    // Room for a request line above the configured query-string limit, so that the 414 is ours.
    http: { maxHeaderSize: Math.max(16 * 1024, deps.config.maxQueryStringBytes + 8 * 1024) },
    // A path with broken percent-encoding or an overlong segment never reaches a route; the answer is v4's.
    frameworkErrors: (err, req, reply) => sendRendered(reply, renderFrameworkError(err, req)),
    // Requests Node refuses before routing (malformed, headers too large) are answered in v4 shapes too.
    clientErrorHandler,
    routerOptions: { ...ROUTER_OPTIONS, querystringParser: parseQuery },
  });

  app.decorate('config', deps.config);
  app.decorate('database', deps.database);
  app.decorate('db', deps.database.db);
  app.decorate('clock', clock);
  app.decorate('caches', createReadCaches({ window: deps.config.authCacheMs }));
  app.addHook('onClose', async () => app.caches.close());
  if (deps.database.dialect === 'postgres' && deps.config.databaseUrl && deps.databaseBus !== false) {
    // The other machines' changes arrive through the database (platform/cache-bus.ts); caching waits for it.
    const bus = await startDatabaseBus({ databaseUrl: deps.config.databaseUrl, paths: new Storage(deps.config.storage), log: app.log });
    app.addHook('onClose', async () => bus.close());
  }
  // Started by `bellows serve` once it listens (tests run due jobs with `drain()`); stopped before the database closes.
  app.decorate('metrics', createMetrics(deps.database));
  app.decorate('jobs', new JobQueue({ db: deps.database.db, clock, log: app.log, observe: (kind, outcome, s) => app.metrics.jobRun(kind, outcome, s) }));
  app.addHook('onClose', async () => {
    await app.jobs.stop();
    app.metrics.close();
  });
  app.decorate('auth', createAuthenticator({ db: deps.database.db, config: deps.config, clock, caches: app.caches, jobs: app.jobs }));
  app.decorate('rateLimiter', createRateLimiter(deps.config, clock, createRateCounter(deps.database.db)));

  installHeadAnswers(app);
  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Bellows REST API', version: 'v4', description: 'The platform REST API v4 served by Bellows.' },
      servers: [{ url: deps.config.externalUrl }],
      components: {
        securitySchemes: {
          privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ privateToken: [] }, { bearer: [] }],
    },
  });

  installBodyParsers(app);
  installMultipart(app);
  installErrorHandler(app);
  installConventions(app);
  registerHealth(app);
  registerMetrics(app);
  await registerResources(app);
  registerJobs(app);
  registerOAuth(app);
  registerWeb(app, {
    banners: async (path) => broadcastBannersHtml(await activeBroadcastMessages(app, { path, userAccessLevel: null, broadcastType: 'banner' })),
  });

  app.get('/api/v4/openapi.json', { schema: { hide: true } as any }, async () => app.swagger());

  await app.ready();
  return app;
}
