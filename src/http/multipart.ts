import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { discardUploads, saveTemporary, type UploadedFile } from '../platform/storage/uploads.ts';
import { parseFormPairs } from './plumbing.ts';
import { BadRequestError } from '../platform/errors.ts';

// multipart/form-data bodies, as python-gitlab sends whenever a file is attached: the fields are parameters like
// those of a form body, and the file parts a route declares (`File()` in its input) are streamed to disk.

/** The reference's largest upload (the default maximum attachment size); avatars have their own, smaller rule. */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

export function installMultipart(app: FastifyInstance): void {
  app.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 10, fields: 2000, fieldSize: 1024 * 1024, parts: 2010, headerPairs: 100 },
  });
}

export function isMultipart(req: FastifyRequest): boolean {
  return typeof (req as { isMultipart?: () => boolean }).isMultipart === 'function' && (req as any).isMultipart();
}

/**
 * Reads the whole multipart body: fields into parameters, declared file parts onto disk (other file parts are
 * read past and ignored). Whatever file the handler did not move into place is removed when the exchange ends,
 * answered or broken off.
 */
export async function readMultipart(req: FastifyRequest, reply: FastifyReply, fileParams: readonly string[], maxFileBytes?: number): Promise<Record<string, unknown>> {
  const pairs: Array<[string, string]> = [];
  const files: UploadedFile[] = [];
  reply.raw.once('close', () => { void discardUploads(files); });
  const dataDir = req.server.config.dataDir;
  const named = new Map<string, UploadedFile>();
  try {
    for await (const part of (req as any).parts(maxFileBytes !== undefined ? { limits: { fileSize: maxFileBytes } } : undefined) as AsyncIterable<any>) {
      if (part.type === 'file') {
        if (!fileParams.includes(part.fieldname)) {
          part.file.resume();
          await new Promise<void>((resolve, reject) => { part.file.once('end', resolve); part.file.once('error', reject); });
          continue;
        }
        const f = await saveTemporary(dataDir, part.file, String(part.filename ?? ''), String(part.mimetype ?? 'application/octet-stream'));
        files.push(f);
        if (part.file.truncated) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE', statusCode: 413 });
        named.set(part.fieldname, f);
      } else {
        pairs.push([part.fieldname, typeof part.value === 'string' ? part.value : String(part.value ?? '')]);
      }
    }
  } catch (e: any) {
    await discardUploads(files);
    // Past a route's own limit: the reference's answer for a file over its model's size limit.
    if (e?.statusCode === 413 && maxFileBytes !== undefined) throw new BadRequestError('File is too large');
    if (e?.statusCode === 413) throw e;
    throw Object.assign(new Error('invalid multipart body'), { code: 'BELLOWS_INVALID_MULTIPART', statusCode: 400 });
  }
  const body = parseFormPairs(pairs);
  for (const [name, f] of named) body[name] = f;
  return body;
}
