import type { FastifyRequest } from 'fastify';
import { PreconditionFailedError } from '../platform/errors.ts';

/**
 * DELETE with If-Unmodified-Since: refuse when the resource changed after the given time.
 * An unparseable header is ignored, as the reference does.
 */
export function checkUnmodifiedSince(req: FastifyRequest, lastModifiedMs: number | null | undefined): void {
  const header = req.headers['if-unmodified-since'];
  if (typeof header !== 'string' || lastModifiedMs === null || lastModifiedMs === undefined) return;
  const since = Date.parse(header);
  if (Number.isNaN(since)) return;
  if (lastModifiedMs > since) throw new PreconditionFailedError();
}
