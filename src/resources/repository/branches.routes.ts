import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { Enum, IdOrPath, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';

import { paginateArray, pageParams, setKeysetLink } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { accepted, sendRendered } from '../../http/errors.ts';
import { REPOSITORY_FACTS_JOB, callerOf, refreshRepositoryFactsJob, repoFor } from './repository.common.ts';
import { requireUser } from '../../http/auth.ts';
import {
  createBranch, deleteBranch, deleteMergedBranches, describeBranches, filterBranches, findBranch,
} from './branches.service.ts';
import { presentBranch } from './repository.presenter.ts';
import { Branch } from './repository.schemas.ts';
import { Accepted } from '../../http/response-schemas.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { liveProjectById } from '../../platform/project-rows.ts';

const tags = ['branches'];

export const branchRoutes: RouteDef<any>[] = [
  {
    method: 'GET',
    url: '/projects/:id/repository/branches',
    summary: 'List repository branches, ordered by name',
    tags,
    response: Type.Array(Branch),
    access: 'public', project: { ability: 'download_code' },
    scopes: ['read_repository'],
    input: Input({
      id: IdOrPath(),
      search: Opt(Str({ description: '"^term" for a prefix, "term$" for a suffix, otherwise a substring' })),
      regex: Opt(Str({ description: 'RE2 regular expression matched against the name' })),
      sort: Opt(Enum(['name_asc', 'updated_asc', 'updated_desc'] as const)),
      page_token: Opt(Str({ description: 'start after this branch name' })),
      ...PaginationParams,
    }),
    async handler(req, reply) {
      const ctx = req.project;
      const repo = repoFor(req.server.config, ctx.project);
      const snap = await repo.branches();
      const list = filterBranches(snap.list, req.input, snap);
      let page;
      if (req.input.page_token !== undefined) {
        const p = pageParams(req.input);
        page = list.slice(0, p.perPage);
        if (list.length > p.perPage) setKeysetLink(req, reply, page.length, { page_token: page[page.length - 1].name }, ['page']);
      } else {
        page = paginateArray(req, reply, list);
      }
      const views = await describeBranches(req.server, ctx.project, repo, page, callerOf(ctx, req.actor));
      return views.map((v) => presentBranch(req.server.config, ctx.project, v));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/branches/:branch',
    summary: 'Get a single repository branch',
    tags,
    response: Branch,
    access: 'public', project: { ability: 'download_code' },
    scopes: ['read_repository'],
    input: Input({ id: IdOrPath(), branch: Str({ description: 'URL-encoded branch name' }) }),
    async handler(req, reply) {
      const ctx = req.project;
      const repo = repoFor(req.server.config, ctx.project);
      const entry = await findBranch(repo, req.input.branch);
      // HEAD answers whether the branch exists: 204, or 404, without a body.
      if (req.method === 'HEAD') {
        reply.code(204);
        return undefined;
      }
      const [view] = await describeBranches(req.server, ctx.project, repo, [entry], callerOf(ctx, req.actor));
      return presentBranch(req.server.config, ctx.project, view);
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/repository/branches',
    summary: 'Create a branch from a branch name or commit SHA',
    tags,
    response: Branch,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath(), branch: Str(), ref: Str() }),
    async handler(req) {
      const ctx = req.project;
      const repo = repoFor(req.server.config, ctx.project);
      const caller = callerOf(ctx, req.actor);
      const entry = await createBranch(req.server, ctx.project, repo, caller, requireUser(req.actor), req.input.branch, req.input.ref);
      const [view] = await describeBranches(req.server, ctx.project, repo, [entry], caller);
      return presentBranch(req.server.config, ctx.project, view, true);
    },
  },
  {
    method: 'DELETE',
    url: '/projects/:id/repository/branches/:branch',
    summary: 'Delete a branch',
    tags,
    response: null,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath(), branch: Str() }),
    async handler(req) {
      const ctx = req.project;
      const repo = repoFor(req.server.config, ctx.project);
      const entry = await findBranch(repo, req.input.branch);
      checkUnmodifiedSince(req, Date.parse(entry.commit.authored_date));
      await deleteBranch(req.server, ctx.project, repo, callerOf(ctx, req.actor), entry);
      return undefined;
    },
  },
  {
    method: 'DELETE',
    url: '/projects/:id/repository/merged_branches',
    summary: 'Delete every branch merged into the default branch, except protected ones (runs after the answer)',
    tags,
    response: Accepted,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath() }),
    async handler(req, reply) {
      const id = req.project.project.id;
      await req.server.jobs.enqueue(req.server.db, DELETE_MERGED, { project_id: id }, { uniqueKey: `${DELETE_MERGED}:${id}` });
      return sendRendered(reply, accepted);
    },
  },
];

const DELETE_MERGED = 'delete_merged_branches';

/**
 * The area's background jobs. Deleting merged branches runs after the answer, on the project as it is then (gone:
 * nothing to do); every deletion is a compare-and-swap, so it is safe against pushes that happen meanwhile.
 */
export function branchJobs(deps: ServiceDeps): Record<string, JobKind<{ project_id: number }>> {
  return {
    [DELETE_MERGED]: {
      concurrency: 1,
      async run(args) {
        const project = await liveProjectById(deps, args.project_id);
        if (project) await deleteMergedBranches(deps, project, repoFor(deps.config, project));
      },
    },
    [REPOSITORY_FACTS_JOB]: {
      concurrency: 1,
      async run(args, ctx) {
        await refreshRepositoryFactsJob(deps, args.project_id, ctx.runAgainAt);
      },
    },
  };
}
