import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findProject } from '../../http/access.ts';
import { routeNotFound, sendRendered } from '../../http/errors.ts';
import { parsePathId } from '../../http/params.ts';
import { ForbiddenError, NotFoundError } from '../../platform/errors.ts';
import { sendFileStream } from '../uploads/uploads.files.ts';
import { metricImageById, metricImageKey, metricImageStore } from './metric-images.service.ts';

// `file_path` of a metric image: `/uploads/-/system/alert_metric_image/file/<id>/<name>`, served to whoever reads
// the alert (anyone else, and any name but the stored one, reads as missing), with the type detected at upload.

async function serveMetricImage(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const { id: rawId, filename } = req.params as { id: string; filename: string };
  const id = parsePathId(rawId);
  const image = id === null ? undefined : await metricImageById(app.db, id);
  if (!image || image.filename !== filename) return sendRendered(reply, routeNotFound);
  const actor = await app.auth.authenticate(req, {});
  try {
    await findProject(app, actor, image.project_id, 'read_alert_management_alert');
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof ForbiddenError) return sendRendered(reply, routeNotFound);
    throw e;
  }
  const file = await metricImageStore(app).open(metricImageKey(image));
  if (!file) return sendRendered(reply, routeNotFound);
  return sendFileStream(reply, file, image.filename, image.content_type);
}

export function registerMetricImageFiles(scope: FastifyInstance, app: FastifyInstance): void {
  scope.get('/uploads/-/system/alert_metric_image/file/:id/:filename', { schema: { hide: true } as object }, (req, reply) => serveMetricImage(app, req, reply));
}
