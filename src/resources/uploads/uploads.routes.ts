import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDef } from '../../http/route.ts';
import { File, Input, Str } from '../../http/schemas.ts';
import { Entity } from '../../http/response-schemas.ts';
import { findProject } from '../../http/access.ts';
import { routeNotFound, sendRendered } from '../../http/errors.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { projectUploadFile, saveProjectUpload } from './uploads.service.ts';
import { sendStoredFile } from './uploads.files.ts';

const IMAGE = /\.(png|jpe?g|gif|bmp|tiff?|ico|webp|svg)$/i;
const VIDEO = /\.(mp4|m4v|mov|webm|ogv)$/i;

export const ProjectUploadEntity = Entity({
  id: Type.Integer(), alt: Type.String(), url: Type.String(), full_path: Type.String(), markdown: Type.String(),
}, { description: 'ProjectUpload' });

export const uploadRoutes: RouteDef<any>[] = [
  {
    method: 'POST', url: '/projects/:id/uploads', summary: "Upload a file for a project's Markdown", tags: ['projects'], access: 'authenticated', project: { ability: 'upload_file' },
    response: ProjectUploadEntity,
    input: Input({ id: Str(), file: File({ description: 'the file (multipart)' }) }),
    handler: async (req) => {
      const { project } = req.project;
      const up = await saveProjectUpload(req.server, project.id, req.actor.user!.id, req.input.file);
      const url = `/uploads/${up.secret}/${encodeURIComponent(up.filename)}`;
      const alt = up.filename.replace(/\.[^.]*$/, '') || up.filename;
      const markdown = IMAGE.test(up.filename) || VIDEO.test(up.filename) ? `![${alt}](${url})` : `[${up.filename}](${url})`;
      return { id: up.id, alt, url, full_path: `/${project.full_path}${url}`, markdown };
    },
  },
];

/** Namespaces nest up to 20 levels; the project's own segment makes 21. */
const MAX_DEPTH = 21;

async function serveUpload(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const params = req.params as Record<string, string>;
  const segments: string[] = [];
  for (let i = 0; params[`s${i}`] !== undefined; i++) segments.push(params[`s${i}`]);
  const actor = await app.auth.authenticate(req, {});
  try {
    const { project } = await findProject(app, actor, segments.join('/'), 'read_project');
    const path = await projectUploadFile(app, project.id, params.secret, params.filename);
    if (!path) return sendRendered(reply, routeNotFound);
    return sendStoredFile(reply, path, params.filename);
  } catch (e) {
    if (e instanceof NotFoundError) return sendRendered(reply, routeNotFound);
    throw e;
  }
}

/** `/<namespace>/<project>/uploads/<secret>/<filename>` for projects at any depth. */
export function registerProjectUploadFiles(scope: FastifyInstance, app: FastifyInstance): void {
  const hide = { schema: { hide: true } as object };
  for (let depth = 2; depth <= MAX_DEPTH; depth++) {
    const prefix = '/' + Array.from({ length: depth }, (_, i) => `:s${i}`).join('/');
    scope.get(`${prefix}/uploads/:secret/:filename`, hide, (req, reply) => serveUpload(app, req, reply));
  }
}
