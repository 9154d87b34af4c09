import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { accepted, sendRendered } from '../../http/errors.ts';
import { Accepted } from '../../http/response-schemas.ts';
import type { Db } from '../../platform/db/index.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { projectSummariesByIds } from '../deploy-keys/deploy-keys.service.ts';
import { presentMove, presentSnippetMove } from './storage-moves.presenter.ts';
import { ProjectRepositoryStorageMove, SnippetRepositoryStorageMove } from './storage-moves.schemas.ts';
import {
  MOVE_JOB, SHARD_MOVE_JOB, assertShardParam, getMove, movesQuery, runMove, runShardMove, scheduleMove, scheduleShardMove,
  type Container, type MoveJobArgs, type MoveRow,
} from './storage-moves.service.ts';
import { snippetRow, snippetsWithContext } from '../snippets/snippets.service.ts';
import { basicSnippetEntity } from '../snippets/snippets.presenter.ts';
import { NotFoundError } from '../../platform/errors.ts';

// Project and snippet repository storage moves: administrators only (anonymous 401, anyone else 403).

const tags = ['project_repository_storage_moves'];

async function present(db: Db, rows: MoveRow[]) {
  const projects = await projectSummariesByIds(db, rows.map((r) => r.container_id));
  return rows.map((r) => presentMove(r, projects.get(r.container_id)!));
}

async function presentSnippetMoves(deps: ServiceDeps, rows: MoveRow[]) {
  const snippets = await snippetsWithContext(deps, rows.map((r) => r.container_id));
  return rows.map((r) => {
    const s = snippets.get(r.container_id)!;
    return presentSnippetMove(r, basicSnippetEntity(s.row, { base: deps.config.externalUrl, author: s.author, projectPath: s.projectPath }));
  });
}

/** `/snippets/:id/...`: any snippet by id, personal or not (administrators only); 404 Snippet otherwise. */
async function snippetOr404(deps: ServiceDeps, id: number) {
  const row = await snippetRow(deps, id);
  if (!row) throw new NotFoundError('Snippet');
  return row;
}

const snippetTags = ['snippet_repository_storage_moves'];

export const storageMoveRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/project_repository_storage_moves', summary: 'Every project repository storage move, newest first', tags, access: 'admin',
    response: Type.Array(ProjectRepositoryStorageMove),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => present(req.server.db, await paginateQuery(req, reply, movesQuery(req.server.db, 'project'))),
  },
  {
    method: 'GET', url: '/project_repository_storage_moves/:repository_storage_id', summary: 'One project repository storage move', tags, access: 'admin',
    response: ProjectRepositoryStorageMove,
    input: Input({ repository_storage_id: Int() }),
    handler: async (req) => (await present(req.server.db, [await getMove(req.server.db, 'project', req.input.repository_storage_id)]))[0],
  },
  {
    method: 'POST', url: '/project_repository_storage_moves', summary: 'Schedule the move of every project repository on a storage shard', tags, access: 'admin',
    response: Accepted,
    input: Input({ source_storage_name: Str(), destination_storage_name: Opt(Str()) }),
    handler: async (req, reply) => {
      assertShardParam(req.server, 'source_storage_name', req.input.source_storage_name);
      assertShardParam(req.server, 'destination_storage_name', req.input.destination_storage_name);
      await scheduleShardMove(req.server, 'project', req.input.source_storage_name, req.input.destination_storage_name);
      return sendRendered(reply, accepted);
    },
  },
  {
    method: 'GET', url: '/projects/:id/repository_storage_moves', summary: "A project's repository storage moves, newest first", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: Type.Array(ProjectRepositoryStorageMove),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => present(req.server.db, await paginateQuery(req, reply, movesQuery(req.server.db, 'project', req.project.project.id))),
  },
  {
    method: 'GET', url: '/projects/:id/repository_storage_moves/:repository_storage_id', summary: "One of a project's repository storage moves", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: ProjectRepositoryStorageMove,
    input: Input({ id: IdOrPath(), repository_storage_id: Int() }),
    handler: async (req) => (await present(req.server.db, [await getMove(req.server.db, 'project', req.input.repository_storage_id, req.project.project.id)]))[0],
  },
  {
    method: 'POST', url: '/projects/:id/repository_storage_moves', summary: "Schedule the move of a project's repository to another storage shard", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: ProjectRepositoryStorageMove,
    input: Input({ id: IdOrPath(), destination_storage_name: Opt(Str({ description: 'chosen by storage weight when omitted' })) }),
    handler: async (req) => {
      const move = (await scheduleMove(req.server, 'project', req.project.project.id, req.input.destination_storage_name))!;
      return (await present(req.server.db, [move]))[0];
    },
  },

  // ---- snippets ---------------------------------------------------------------------------------------------------
  {
    method: 'GET', url: '/snippet_repository_storage_moves', summary: 'Every snippet repository storage move, newest first', tags: snippetTags, access: 'admin',
    response: Type.Array(SnippetRepositoryStorageMove),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => presentSnippetMoves(req.server, await paginateQuery(req, reply, movesQuery(req.server.db, 'snippet'))),
  },
  {
    method: 'GET', url: '/snippet_repository_storage_moves/:repository_storage_id', summary: 'One snippet repository storage move', tags: snippetTags, access: 'admin',
    response: SnippetRepositoryStorageMove,
    input: Input({ repository_storage_id: Int() }),
    handler: async (req) => (await presentSnippetMoves(req.server, [await getMove(req.server.db, 'snippet', req.input.repository_storage_id)]))[0],
  },
  {
    method: 'POST', url: '/snippet_repository_storage_moves', summary: 'Schedule the move of every snippet repository on a storage shard', tags: snippetTags, access: 'admin',
    response: Accepted,
    input: Input({ source_storage_name: Str(), destination_storage_name: Opt(Str()) }),
    handler: async (req, reply) => {
      assertShardParam(req.server, 'source_storage_name', req.input.source_storage_name);
      assertShardParam(req.server, 'destination_storage_name', req.input.destination_storage_name);
      await scheduleShardMove(req.server, 'snippet', req.input.source_storage_name, req.input.destination_storage_name);
      return sendRendered(reply, accepted);
    },
  },
  {
    method: 'GET', url: '/snippets/:id/repository_storage_moves', summary: "A snippet's repository storage moves, newest first", tags: snippetTags, access: 'admin',
    response: Type.Array(SnippetRepositoryStorageMove),
    input: Input({ id: Int(), ...PaginationParams }),
    handler: async (req, reply) => {
      const snippet = await snippetOr404(req.server, req.input.id);
      return presentSnippetMoves(req.server, await paginateQuery(req, reply, movesQuery(req.server.db, 'snippet', snippet.id)));
    },
  },
  {
    method: 'GET', url: '/snippets/:id/repository_storage_moves/:repository_storage_id', summary: "One of a snippet's repository storage moves", tags: snippetTags, access: 'admin',
    response: SnippetRepositoryStorageMove,
    input: Input({ id: Int(), repository_storage_id: Int() }),
    handler: async (req) => {
      const snippet = await snippetOr404(req.server, req.input.id);
      return (await presentSnippetMoves(req.server, [await getMove(req.server.db, 'snippet', req.input.repository_storage_id, snippet.id)]))[0];
    },
  },
  {
    method: 'POST', url: '/snippets/:id/repository_storage_moves', summary: "Schedule the move of a snippet's repository to another storage shard", tags: snippetTags, access: 'admin',
    response: SnippetRepositoryStorageMove,
    input: Input({ id: Int(), destination_storage_name: Opt(Str({ description: 'chosen by storage weight when omitted' })) }),
    handler: async (req) => {
      const snippet = await snippetOr404(req.server, req.input.id);
      const move = (await scheduleMove(req.server, 'snippet', snippet.id, req.input.destination_storage_name))!;
      return (await presentSnippetMoves(req.server, [move]))[0];
    },
  },
];

/** The area's background jobs: one move, and the scheduling of a whole shard's moves. */
export function storageMoveJobs(deps: ServiceDeps & { log?: { warn(obj: object, msg: string): void } }): Record<string, JobKind<any>> {
  return {
    [MOVE_JOB]: {
      concurrency: 2,
      // A move whose process died is run again and resumes; the attempts only bound a move that keeps failing to.
      maxAttempts: 10,
      run: (args: MoveJobArgs, ctx) => runMove(deps, args.container ?? 'project', args.move_id, { signal: ctx.signal }),
    },
    [SHARD_MOVE_JOB]: {
      concurrency: 1,
      run: (args: { source_storage_name: string; destination_storage_name: string | null; container?: Container }) =>
        runShardMove(deps, args.container ?? 'project', args.source_storage_name, args.destination_storage_name, deps.log),
    },
  };
}
