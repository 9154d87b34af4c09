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
import { presentMove } from './storage-moves.presenter.ts';
import { ProjectRepositoryStorageMove } from './storage-moves.schemas.ts';
import {
  MOVE_JOB, SHARD_MOVE_JOB, assertShardParam, getMove, movesQuery, runMove, runShardMove, scheduleMove, scheduleShardMove,
  type MoveRow,
} from './storage-moves.service.ts';

// Project repository storage moves: administrators only (anonymous 401, anyone else 403).

const tags = ['project_repository_storage_moves'];

async function present(db: Db, rows: MoveRow[]) {
  const projects = await projectSummariesByIds(db, rows.map((r) => r.project_id));
  return rows.map((r) => presentMove(r, projects.get(r.project_id)!));
}

export const storageMoveRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/project_repository_storage_moves', summary: 'Every project repository storage move, newest first', tags, access: 'admin',
    response: Type.Array(ProjectRepositoryStorageMove),
    input: Input({ ...PaginationParams }),
    handler: async (req, reply) => present(req.server.db, await paginateQuery(req, reply, movesQuery(req.server.db))),
  },
  {
    method: 'GET', url: '/project_repository_storage_moves/:repository_storage_id', summary: 'One project repository storage move', tags, access: 'admin',
    response: ProjectRepositoryStorageMove,
    input: Input({ repository_storage_id: Int() }),
    handler: async (req) => (await present(req.server.db, [await getMove(req.server.db, req.input.repository_storage_id)]))[0],
  },
  {
    method: 'POST', url: '/project_repository_storage_moves', summary: 'Schedule the move of every project repository on a storage shard', tags, access: 'admin',
    response: Accepted,
    input: Input({ source_storage_name: Str(), destination_storage_name: Opt(Str()) }),
    handler: async (req, reply) => {
      assertShardParam(req.server, 'source_storage_name', req.input.source_storage_name);
      assertShardParam(req.server, 'destination_storage_name', req.input.destination_storage_name);
      await scheduleShardMove(req.server, req.input.source_storage_name, req.input.destination_storage_name);
      return sendRendered(reply, accepted);
    },
  },
  {
    method: 'GET', url: '/projects/:id/repository_storage_moves', summary: "A project's repository storage moves, newest first", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: Type.Array(ProjectRepositoryStorageMove),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => present(req.server.db, await paginateQuery(req, reply, movesQuery(req.server.db, req.project.project.id))),
  },
  {
    method: 'GET', url: '/projects/:id/repository_storage_moves/:repository_storage_id', summary: "One of a project's repository storage moves", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: ProjectRepositoryStorageMove,
    input: Input({ id: IdOrPath(), repository_storage_id: Int() }),
    handler: async (req) => (await present(req.server.db, [await getMove(req.server.db, req.input.repository_storage_id, req.project.project.id)]))[0],
  },
  {
    method: 'POST', url: '/projects/:id/repository_storage_moves', summary: "Schedule the move of a project's repository to another storage shard", tags, access: 'admin',
    project: { ability: 'read_project' },
    response: ProjectRepositoryStorageMove,
    input: Input({ id: IdOrPath(), destination_storage_name: Opt(Str({ description: 'chosen by storage weight when omitted' })) }),
    handler: async (req) => {
      const move = (await scheduleMove(req.server, req.project.project.id, req.input.destination_storage_name))!;
      return (await present(req.server.db, [move]))[0];
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
      run: (args: { move_id: number }, ctx) => runMove(deps, args.move_id, { signal: ctx.signal }),
    },
    [SHARD_MOVE_JOB]: {
      concurrency: 1,
      run: (args: { source_storage_name: string; destination_storage_name: string | null }) =>
        runShardMove(deps, args.source_storage_name, args.destination_storage_name, deps.log),
    },
  };
}
