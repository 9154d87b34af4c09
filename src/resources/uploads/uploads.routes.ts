import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteDef } from '../../http/route.ts';
import { File, Input, Str } from '../../http/schemas.ts';
import { Entity } from '../../http/response-schemas.ts';
import { findProject } from '../../http/access.ts';
import { routeNotFound, sendRendered } from '../../http/errors.ts';
import { NotFoundError } from '../../platform/errors.ts';
import { projectPathOf, projectPathRoute } from '../../http/project-paths.ts';
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

async function serveUpload(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const params = req.params as Record<string, string>;
  const actor = await app.auth.authenticate(req, {});
  try {
    const { project } = await findProject(app, actor, projectPathOf(req), 'read_project');
    const path = await projectUploadFile(app, project.id, params.secret, params.filename);
    if (!path) return sendRendered(reply, routeNotFound);
    return sendStoredFile(reply, path, params.filename);
  } catch (e) {
    if (e instanceof NotFoundError) return sendRendered(reply, routeNotFound);
    throw e;
  }
}

/** The upload files' suffix below a project path (see http/project-paths.ts). */
export const UPLOAD_FILE_SUFFIX = '/uploads/:secret/:filename';

/** `/<namespace>/<project>/uploads/<secret>/<filename>` for projects at any depth. */
export function registerProjectUploadFiles(scope: FastifyInstance, app: FastifyInstance): void {
  scope.get(projectPathRoute(UPLOAD_FILE_SUFFIX), { schema: { hide: true } as object }, (req, reply) => serveUpload(app, req, reply));
}
