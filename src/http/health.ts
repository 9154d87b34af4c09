import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ipAllowed } from '../platform/addresses.ts';

// Probes in the reference's shapes, answered only to addresses on the monitoring allowlist.

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
