import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError } from '../../platform/errors.ts';
import { liveProjectByPath } from '../../platform/project-rows.ts';
import { projectPathOf, projectPathRoute } from '../../http/project-paths.ts';
import {
  authenticateNotification, integrationByEndpoint, parseBody, parseGeneric, parsePrometheus, prometheusIntegrations, receiveAlerts,
} from './alerts.service.ts';

// The endpoints monitoring tools call, outside the API and its credentials: authenticated by an integration's
// token (`Authorization: Bearer <token>`), at the project's full path as the reference lays them out.
//   POST /<project path>/alerts/notify/<name>/<endpoint identifier>.json   the generic payload (an http integration)
//                                                                          or a Prometheus one (a prometheus integration)
//   POST /<project path>/prometheus/alerts/notify.json                     the Prometheus Alertmanager webhook
// Bodies over 1 MB answer 413; bodies that are not JSON 400; payloads missing what an alert needs 422; a wrong
// token 401 (on the Prometheus path, an unknown project too); a disabled integration 403. Nothing is stored unless every alert of the payload is.

/** The reference's limit for alert payloads. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

function bearer(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m ? m[1] : null;
}

async function projectOf(app: FastifyInstance, req: FastifyRequest) {
  const path = projectPathOf(req);
  const project = path.includes('\u0000') ? undefined : await liveProjectByPath(app, path.toLowerCase());
  if (!project) throw new NotFoundError('Project');
  return project;
}

async function notifyGeneric(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const params = req.params as Record<string, string>;
  const project = await projectOf(app, req);
  const endpoint = params.endpoint.endsWith('.json') ? params.endpoint.slice(0, -5) : '';
  const integration = await integrationByEndpoint(app.db, project.id, endpoint);
  if (!integration) throw new NotFoundError('Integration');
  authenticateNotification([integration], bearer(req));
  const body = parseBody(req.body);
  const alerts = integration.type === 'prometheus' ? parsePrometheus(body) : [parseGeneric(body, app.clock.now())];
  await receiveAlerts(app, project.id, integration, alerts);
  return reply.code(200).send();
}

async function notifyPrometheus(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  // An unknown project answers like a wrong token, so that this path tells nobody which private projects exist.
  const project = await projectOf(app, req).catch((e) => {
    if (e instanceof NotFoundError) throw new UnauthorizedError();
    throw e;
  });
  const integration = authenticateNotification(await prometheusIntegrations(app.db, project.id), bearer(req));
  const alerts = parsePrometheus(parseBody(req.body));
  await receiveAlerts(app, project.id, integration, alerts);
  return reply.code(200).send();
}

/** The notification routes' suffixes below a project path (see http/project-paths.ts). */
export const ALERT_NOTIFY_SUFFIXES = { generic: '/alerts/notify/:name/:endpoint', prometheus: '/prometheus/alerts/notify.json' } as const;

export function registerAlertNotifications(app: FastifyInstance): void {
  app.register(async (scope) => {
    // Whatever the sender calls its body, it is read as text (at most 1 MB) and must be JSON.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MAX_PAYLOAD_BYTES }, (_req, body, done) => done(null, body));
    const opts = { schema: { hide: true } as object, bodyLimit: MAX_PAYLOAD_BYTES };
    scope.post(projectPathRoute(ALERT_NOTIFY_SUFFIXES.generic), opts, (req, reply) => notifyGeneric(app, req, reply));
    scope.post(projectPathRoute(ALERT_NOTIFY_SUFFIXES.prometheus), opts, (req, reply) => notifyPrometheus(app, req, reply));
  });
}
