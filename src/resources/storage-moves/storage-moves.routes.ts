import { Type, type TSchema } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { accepted, sendRendered } from '../../http/errors.ts';
import { Accepted } from '../../http/response-schemas.ts';
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

// Project and snippet repository storage moves: administrators only (anonymous 401, anyone else 403). Both kinds serve
// the same routes (every move, one move, a shard's move; a container's moves, one of them, a new one), declared once.

/** What differs between the kinds of container whose repositories move. */
interface MoveKind {
  container: Container;
  /** The container's path segment, `/projects/:id/...` or `/snippets/:id/...`. */
  plural: string;
  schema: TSchema;
  tags: string[];
  /** The `:id` parameter's schema. */
  id: TSchema;
  /** The route's access declaration of `/<plural>/:id/...`. */
  scope: Pick<RouteDef<any>, 'project'>;
  /** The container of `/<plural>/:id/...`: its id (or a 404). */
  containerId(req: any): Promise<number>;
  present(deps: ServiceDeps, rows: MoveRow[]): Promise<unknown[]>;
}

const projectKind: MoveKind = {
  container: 'project', plural: 'projects', schema: ProjectRepositoryStorageMove, tags: ['project_repository_storage_moves'],
  id: IdOrPath(), scope: { project: { ability: 'read_project' } },
  containerId: async (req) => req.project.project.id,
  present: async (deps, rows) => {
    const projects = await projectSummariesByIds(deps.db, rows.map((r) => r.container_id));
    return rows.map((r) => presentMove(r, projects.get(r.container_id)!));
  },
};

const snippetKind: MoveKind = {
  container: 'snippet', plural: 'snippets', schema: SnippetRepositoryStorageMove, tags: ['snippet_repository_storage_moves'],
  id: Int(), scope: {},
  /** Any snippet by id, personal or not (administrators only); 404 Snippet otherwise. */
  containerId: async (req) => {
    const row = await snippetRow(req.server, req.input.id);
    if (!row) throw new NotFoundError('Snippet');
    return row.id;
  },
  present: async (deps, rows) => {
    const snippets = await snippetsWithContext(deps, rows.map((r) => r.container_id));
    return rows.map((r) => {
      const s = snippets.get(r.container_id)!;
      return presentSnippetMove(r, basicSnippetEntity(s.row, { base: deps.config.externalUrl, author: s.author, projectPath: s.projectPath }));
    });
  },
};

function moveRoutes(k: MoveKind): RouteDef<any>[] {
  const { container: kind, plural, schema, tags } = k;
  const all = `/${kind}_repository_storage_moves`;
  const own = `/${plural}/:id/repository_storage_moves`;
  const one = async (deps: ServiceDeps, row: MoveRow) => (await k.present(deps, [row]))[0];
  return [
    {
      method: 'GET', url: all, summary: `Every ${kind} repository storage move, newest first`, tags, access: 'admin',
      response: Type.Array(schema),
      input: Input({ ...PaginationParams }),
      handler: async (req, reply) => k.present(req.server, await paginateQuery(req, reply, movesQuery(req.server.db, kind))),
    },
    {
      method: 'GET', url: `${all}/:repository_storage_id`, summary: `One ${kind} repository storage move`, tags, access: 'admin',
      response: schema,
      input: Input({ repository_storage_id: Int() }),
      handler: async (req) => one(req.server, await getMove(req.server.db, kind, req.input.repository_storage_id)),
    },
    {
      method: 'POST', url: all, summary: `Schedule the move of every ${kind} repository on a storage shard`, tags, access: 'admin',
      response: Accepted,
      input: Input({ source_storage_name: Str(), destination_storage_name: Opt(Str()) }),
      handler: async (req, reply) => {
        assertShardParam(req.server, 'source_storage_name', req.input.source_storage_name);
        assertShardParam(req.server, 'destination_storage_name', req.input.destination_storage_name);
        await scheduleShardMove(req.server, kind, req.input.source_storage_name, req.input.destination_storage_name);
        return sendRendered(reply, accepted);
      },
    },
    {
      method: 'GET', url: own, summary: `A ${kind}'s repository storage moves, newest first`, tags, access: 'admin', ...k.scope,
      response: Type.Array(schema),
      input: Input({ id: k.id, ...PaginationParams }),
      handler: async (req, reply) => k.present(req.server, await paginateQuery(req, reply, movesQuery(req.server.db, kind, await k.containerId(req)))),
    },
    {
      method: 'GET', url: `${own}/:repository_storage_id`, summary: `One of a ${kind}'s repository storage moves`, tags, access: 'admin', ...k.scope,
      response: schema,
      input: Input({ id: k.id, repository_storage_id: Int() }),
      handler: async (req) => one(req.server, await getMove(req.server.db, kind, req.input.repository_storage_id, await k.containerId(req))),
    },
    {
      method: 'POST', url: own, summary: `Schedule the move of a ${kind}'s repository to another storage shard`, tags, access: 'admin', ...k.scope,
      response: schema,
      input: Input({ id: k.id, destination_storage_name: Opt(Str({ description: 'chosen by storage weight when omitted' })) }),
      handler: async (req) => one(req.server, (await scheduleMove(req.server, kind, await k.containerId(req), req.input.destination_storage_name))!),
    },
  ];
}

export const storageMoveRoutes: RouteDef<any>[] = [...moveRoutes(projectKind), ...moveRoutes(snippetKind)];

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
