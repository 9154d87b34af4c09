import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ipAllowed } from '../platform/addresses.ts';
import { METRICS_CONTENT_TYPE, scrape } from '../platform/metrics.ts';

// Probes in the reference's shapes and the Prometheus metrics, answered only to addresses on the monitoring allowlist.

export function registerHealth(app: FastifyInstance): void {
  const allowed = (req: FastifyRequest) => ipAllowed(req.ip, app.config.monitoringAllowlist);

  app.get('/-/health', { schema: { hide: true } as any }, async (req, reply) => {
    if (!allowed(req)) return reply.code(404).type('text/plain').send('');
    return reply.type('text/plain; charset=utf-8').send('Bellows OK');
  });

  app.get('/-/liveness', { schema: { hide: true } as any }, async (req, reply) => {
    if (!allowed(req)) return reply.code(404).type('text/plain').send('');
    return { status: 'ok' };
  });

  app.get('/-/readiness', { schema: { hide: true } as any }, async (req, reply) => {
    if (!allowed(req)) return reply.code(404).type('text/plain').send('');
    let db: { status: string; message?: string };
    try {
      await app.database.ping();
      db = { status: 'ok' };
    } catch (e) {
      db = { status: 'failed', message: (e as Error).message };
    }
    const ok = db.status === 'ok';
    const body: Record<string, unknown> = { status: ok ? 'ok' : 'failed', master_check: [ok ? { status: 'ok' } : { status: 'failed', message: db.message }] };
    if ((req.query as Record<string, unknown>).all !== undefined) body.db_check = [db];
    return reply.code(ok ? 200 : 503).send(body);
  });
}

/** Counts every answer (by its route pattern: unmatched URLs count as one route) and serves `GET /-/metrics`. */
export function registerMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    app.metrics.httpRequest(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/-/metrics', { schema: { hide: true } as any }, async (req, reply) => {
    if (!ipAllowed(req.ip, app.config.monitoringAllowlist)) return reply.code(404).type('text/plain').send('');
    return reply.type(METRICS_CONTENT_TYPE).send(await scrape(app.metrics));
  });
}

