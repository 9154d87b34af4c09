import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { parseDateTime } from '../../http/params.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { contentDisposition } from '../../http/content-disposition.ts';
import { ForbiddenError } from '../../platform/errors.ts';
import { usersByIds } from '../users/users.service.ts';
import { noteRoutes, type NoteableKind } from '../notes/notes.routes.ts';
import { awardRoutes } from '../award-emoji/award-emoji.routes.ts';
import {
  allSnippetsQuery, createSnippet, deleteSnippet, findPersonalSnippet, findProjectSnippet, ownSnippetsQuery, projectSnippetsQuery,
  publicSnippetsQuery, snippetFileContent, snippetFiles, updateSnippet, type SnippetRow, type SnippetScope,
} from './snippets.service.ts';
import { snippetEntity } from './snippets.presenter.ts';
import { Snippet, UserAgentDetail } from './snippets.schemas.ts';

const tags = ['snippets'];

const Visibility = Enum(['private', 'internal', 'public'] as const);
const FileParam = Type.Object({
  file_path: Opt(Str()), content: Opt(Str()), action: Opt(Enum(['create', 'update', 'delete', 'move'] as const)), previous_path: Opt(Str()),
});
const Writable = {
  description: Opt(Str()), visibility: Opt(Visibility), file_name: Opt(Str()), content: Opt(Str()), files: Opt(Type.Array(FileParam)),
};

async function present(req: ApiRequest<any>, rows: SnippetRow[], projectPath: (row: SnippetRow) => Promise<string | null>) {
  const users = await usersByIds(req.server, [...new Set(rows.map((r) => r.author_id))]);
  return Promise.all(rows.map(async (row) => snippetEntity(row, {
    base: req.server.config.externalUrl, author: users.get(row.author_id)!, projectPath: await projectPath(row), files: await snippetFiles(req.server, row),
  })));
}

/** Personal snippets and, through `/snippets/all`, project snippets too: their project's path is looked up. */
async function presentAny(req: ApiRequest<any>, rows: SnippetRow[]) {
  const ids = [...new Set(rows.map((r) => r.project_id).filter((x): x is number => x !== null))];
  const projects = ids.length ? await req.server.db.selectFrom('projects').select(['id', 'full_path']).where('id', 'in', ids).execute() : [];
  const paths = new Map(projects.map((p) => [p.id, p.full_path]));
  return present(req, rows, async (r) => (r.project_id === null ? null : paths.get(r.project_id) ?? null));
}

const presentInProject = async (req: ApiRequest<any>, rows: SnippetRow[]) => present(req, rows, async () => req.project.project.full_path);

function sendRaw(reply: FastifyReply, file: { path: string; content: Buffer }) {
  const binary = file.content.subarray(0, 8000).includes(0);
  reply.type(binary ? 'application/octet-stream' : 'text/plain; charset=utf-8');
  reply.header('content-disposition', contentDisposition(file.path.split('/').pop()!, 'inline'));
  reply.header('x-content-type-options', 'nosniff');
  return reply.send(file.content);
}

const requestFacts = (req: ApiRequest<any>) => ({ userAgent: (req.headers['user-agent'] as string | undefined) ?? null, ip: req.ip ?? null });

const userAgentDetail = (row: SnippetRow) => ({ user_agent: row.user_agent, ip_address: row.ip_address, akismet_submitted: false });

const projectSnippet = (req: ApiRequest<any>, ability: 'read_snippet' | 'update_snippet' | 'admin_snippet'): Promise<SnippetScope> =>
  findProjectSnippet(req.server, req.actor, req.project.project, req.project.level, req.input.snippet_id, ability);

/** Project snippets as noteables: notes and discussions routes, hidden exactly as the snippet is. */
const snippetNoteables: NoteableKind = {
  segment: 'snippets', param: 'snippet_id', type: 'Snippet', ability: 'read_snippet',
  async find(req, id) {
    const s = await findProjectSnippet(req.server, req.actor, req.project.project, req.project.level, id, 'read_snippet');
    return { type: 'Snippet', id: s.row.id, iid: s.row.id, projectId: req.project.project.id, locked: false };
  },
};

const ProjectKey = { id: IdOrPath(), snippet_id: Int() };

const Created = { created_after: Opt(DateTime()), created_before: Opt(DateTime()) };
const time = (v: string | undefined) => (v === undefined ? undefined : parseDateTime(v) ?? undefined);
const filters = (input: { created_after?: string; created_before?: string; repository_storage?: string }) => ({
  created_after: time(input.created_after), created_before: time(input.created_before), repository_storage: input.repository_storage,
});

export const snippetRoutes: RouteDef<any>[] = [
  // ---- personal snippets ----------------------------------------------------------------------------------------
  {
    method: 'GET', url: '/snippets', summary: "The caller's personal snippets", tags, access: 'authenticated',
    response: Type.Array(Snippet), input: Input({ ...Created, ...PaginationParams }),
    handler: async (req, reply) => presentAny(req, await paginateQuery(req, reply, ownSnippetsQuery(req.server, req.actor, filters(req.input)))),
  },
  {
    method: 'GET', url: '/snippets/public', summary: 'Every public personal snippet', tags, access: 'authenticated',
    response: Type.Array(Snippet), input: Input({ ...Created, ...PaginationParams }),
    handler: async (req, reply) => presentAny(req, await paginateQuery(req, reply, publicSnippetsQuery(req.server, req.actor, filters(req.input)))),
  },
  {
    method: 'GET', url: '/snippets/all', summary: 'Every snippet the caller may read (administrators: all)', tags, access: 'authenticated',
    response: Type.Array(Snippet), input: Input({ ...Created, repository_storage: Opt(Str({ maxLength: 255, description: 'administrators only' })), ...PaginationParams }),
    handler: async (req, reply) => presentAny(req, await paginateQuery(req, reply, await allSnippetsQuery(req.server, req.actor, filters(req.input)))),
  },
  {
    method: 'GET', url: '/snippets/:id', summary: 'One personal snippet', tags, access: 'public',
    response: Snippet, input: Input({ id: Int() }),
    handler: async (req) => (await presentAny(req, [(await findPersonalSnippet(req.server, req.actor, req.input.id, 'read_snippet')).row]))[0],
  },
  {
    method: 'POST', url: '/snippets', summary: 'Create a personal snippet', tags, access: 'authenticated',
    response: Snippet, input: Input({ title: Str(), ...Writable }),
    handler: async (req) => presentAny(req, [await createSnippet(req.server, req.actor, null, req.input, requestFacts(req))]).then((r) => r[0]),
  },
  {
    method: 'PUT', url: '/snippets/:id', summary: 'Edit a personal snippet', tags, access: 'authenticated',
    response: Snippet, input: Input({ id: Int(), title: Opt(Str()), ...Writable }),
    handler: async (req) => {
      const s = await findPersonalSnippet(req.server, req.actor, req.input.id, 'update_snippet');
      return (await presentAny(req, [await updateSnippet(req.server, req.actor, s, req.input)]))[0];
    },
  },
  {
    method: 'DELETE', url: '/snippets/:id', summary: 'Delete a personal snippet', tags, access: 'authenticated',
    response: null, input: Input({ id: Int() }),
    handler: async (req) => {
      await deleteSnippet(req.server, (await findPersonalSnippet(req.server, req.actor, req.input.id, 'admin_snippet')).row);
      return undefined;
    },
  },
  {
    method: 'GET', url: '/snippets/:id/raw', summary: "A personal snippet's first file, raw", tags, access: 'public',
    response: Type.String({ description: 'The file as stored' }), input: Input({ id: Int() }),
    handler: async (req, reply) => {
      const s = await findPersonalSnippet(req.server, req.actor, req.input.id, 'read_snippet');
      return sendRaw(reply, await snippetFileContent(req.server, s.row, null));
    },
  },
  {
    method: 'GET', url: '/snippets/:id/files/:ref/:file_path/raw', summary: "One file of a personal snippet at a ref, raw", tags, access: 'public',
    response: Type.String({ description: 'The file as stored' }), input: Input({ id: Int(), ref: Str({ maxLength: 1024 }), file_path: Str({ maxLength: 4096 }) }),
    handler: async (req, reply) => {
      const s = await findPersonalSnippet(req.server, req.actor, req.input.id, 'read_snippet');
      return sendRaw(reply, await snippetFileContent(req.server, s.row, req.input.file_path, req.input.ref));
    },
  },
  {
    method: 'GET', url: '/snippets/:id/user_agent_detail', summary: 'Where a personal snippet was created from', tags, access: 'admin',
    response: UserAgentDetail, input: Input({ id: Int() }),
    handler: async (req) => userAgentDetail((await findPersonalSnippet(req.server, req.actor, req.input.id, 'read_snippet')).row),
  },

  // ---- project snippets -----------------------------------------------------------------------------------------
  {
    method: 'GET', url: '/projects/:id/snippets', summary: "A project's snippets", tags, access: 'public', project: { ability: 'read_snippet' },
    response: Type.Array(Snippet), input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => presentInProject(req, await paginateQuery(req, reply, projectSnippetsQuery(req.server, req.actor, req.project.project, req.project.level))),
  },
  {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id', summary: 'One project snippet', tags, access: 'public', project: { ability: 'read_snippet' },
    response: Snippet, input: Input(ProjectKey),
    handler: async (req) => (await presentInProject(req, [(await projectSnippet(req, 'read_snippet')).row]))[0],
  },
  {
    method: 'POST', url: '/projects/:id/snippets', summary: 'Create a project snippet', tags, access: 'authenticated', project: { ability: 'create_snippet' },
    response: Snippet, input: Input({ id: IdOrPath(), title: Str(), ...Writable }),
    handler: async (req) => (await presentInProject(req, [await createSnippet(req.server, req.actor, req.project.project, req.input, requestFacts(req))]))[0],
  },
  {
    method: 'PUT', url: '/projects/:id/snippets/:snippet_id', summary: 'Edit a project snippet', tags, access: 'authenticated', project: { ability: 'read_snippet' },
    response: Snippet, input: Input({ ...ProjectKey, title: Opt(Str()), ...Writable }),
    handler: async (req) => {
      const s = await projectSnippet(req, 'update_snippet');
      return (await presentInProject(req, [await updateSnippet(req.server, req.actor, s, req.input)]))[0];
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/snippets/:snippet_id', summary: 'Delete a project snippet', tags, access: 'authenticated', project: { ability: 'read_snippet' },
    response: null, input: Input(ProjectKey),
    handler: async (req) => {
      await deleteSnippet(req.server, (await projectSnippet(req, 'admin_snippet')).row);
      return undefined;
    },
  },
  {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/raw', summary: "A project snippet's first file, raw", tags, access: 'public', project: { ability: 'read_snippet' },
    response: Type.String({ description: 'The file as stored' }), input: Input(ProjectKey),
    handler: async (req, reply) => sendRaw(reply, await snippetFileContent(req.server, (await projectSnippet(req, 'read_snippet')).row, null)),
  },
  {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw', summary: 'One file of a project snippet at a ref, raw', tags, access: 'public', project: { ability: 'read_snippet' },
    response: Type.String({ description: 'The file as stored' }), input: Input({ ...ProjectKey, ref: Str({ maxLength: 1024 }), file_path: Str({ maxLength: 4096 }) }),
    handler: async (req, reply) => sendRaw(reply, await snippetFileContent(req.server, (await projectSnippet(req, 'read_snippet')).row, req.input.file_path, req.input.ref)),
  },
  {
    method: 'GET', url: '/projects/:id/snippets/:snippet_id/user_agent_detail', summary: 'Where a project snippet was created from', tags, access: 'admin', project: { ability: 'read_snippet' },
    response: UserAgentDetail, input: Input(ProjectKey),
    handler: async (req) => {
      if (!req.actor.admin) throw new ForbiddenError();
      return userAgentDetail((await projectSnippet(req, 'read_snippet')).row);
    },
  },
  ...noteRoutes(snippetNoteables),
  ...awardRoutes({
    base: '/projects/:id/snippets/:snippet_id', params: ProjectKey, what: 'a project snippet', ability: 'read_snippet', tags,
    find: async (req) => ({ type: 'Snippet', id: (await projectSnippet(req, 'read_snippet')).row.id }),
  }),
];
