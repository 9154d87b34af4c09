import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findGroup, findProject } from '../../http/access.ts';
import { routeNotFound, sendRendered } from '../../http/errors.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { parsePathId } from '../../http/params.ts';
import { avatarFile, type AvatarModel } from '../../platform/storage/avatars.ts';

// Stored files served back below the external URL, as the reference lays them out, with its access checks: a user's
// or a topic's avatar is public, a group's or a project's needs read access to it (unreadable reads as missing).

const TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon', webp: 'image/webp', pdf: 'application/pdf', txt: 'text/plain; charset=utf-8',
  mp4: 'video/mp4', webm: 'video/webm', mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg',
};

/** Sends a stored file: images, audio, video and PDF inline with their type (as the reference), anything else as a download. */
export async function sendStoredFile(reply: FastifyReply, path: string, name: string): Promise<FastifyReply> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return sendRendered(reply, routeNotFound);
  return sendFileStream(reply, { stream: createReadStream(path), size: st.size }, name);
}

/**
 * Sends an opened stored file (from a `FileStore`) under `name`; `type` is the type detected from its content when
 * the area knows it, else the name's extension decides.
 */
export function sendFileStream(reply: FastifyReply, file: { stream: Readable; size: number }, name: string, type?: string): FastifyReply {
  const ext = extname(name).slice(1).toLowerCase();
  type ??= TYPES[ext];
  const inline = !!type && (/^(image|video|audio)\//.test(type) || type === 'application/pdf');
  reply.header('content-type', type ?? 'application/octet-stream');
  reply.header('content-length', String(file.size));
  reply.header('content-disposition', `${inline ? 'inline' : 'attachment'}; filename="${name.replace(/["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('cache-control', 'max-age=0, private, must-revalidate');
  return reply.send(file.stream);
}

const AVATAR_ROUTES: Array<[AvatarModel, string]> = [
  ['user', '/uploads/-/system/user/avatar/:id/:filename'],
  ['project', '/uploads/-/system/project/avatar/:id/:filename'],
  ['group', '/uploads/-/system/group/avatar/:id/:filename'],
  ['topic', '/uploads/-/system/projects/topic/avatar/:id/:filename'],
];

async function serveAvatar(app: FastifyInstance, model: AvatarModel, req: FastifyRequest, reply: FastifyReply) {
  const { id: rawId, filename } = req.params as { id: string; filename: string };
  const id = parsePathId(rawId);
  if (id === null) return sendRendered(reply, routeNotFound);
  const actor = await app.auth.authenticate(req, {});
  let stored: string | null | undefined;
  try {
    if (model === 'user') stored = (await app.db.selectFrom('users').select('avatar').where('id', '=', id).executeTakeFirst())?.avatar;
    else if (model === 'topic') stored = (await app.db.selectFrom('topics').select('avatar').where('id', '=', id).executeTakeFirst())?.avatar;
    else if (model === 'group') stored = (await findGroup(app.db, actor, id, 'read_group')).group.avatar;
    else stored = (await findProject(app, actor, id, 'read_project')).project.avatar;
  } catch (e) {
    if (e instanceof NotFoundError) return sendRendered(reply, routeNotFound);
    throw e;
  }
  // Only the file the row names is served, never a leftover of an earlier record.
  if (!stored || stored !== filename) return sendRendered(reply, routeNotFound);
  return sendStoredFile(reply, avatarFile(app.config.dataDir, model, id, stored), stored);
}

/** Registers the routes that serve stored files (avatars; project uploads). */
export function registerStoredFiles(app: FastifyInstance, extra: (scope: FastifyInstance) => void = () => {}): void {
  app.register(async (scope) => {
    const hide = { schema: { hide: true } as object };
    for (const [model, url] of AVATAR_ROUTES) scope.get(url, hide, (req, reply) => serveAvatar(app, model, req, reply));
    extra(scope);
  });
}
