import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { CommaList, Input, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { ParamError, RuleError } from '../../platform/errors.ts';
import { contextCommitEntity, createdContextCommitEntity } from './merge-requests.presenter.ts';
import { ContextCommit, CreatedContextCommit } from './merge-requests.schemas.ts';
import { findMergeRequest, repoFor } from './merge-requests.service.ts';
import { MergeRequestKey, mergeRequestPath, scopeOf } from './merge-requests.routes.ts';
import { addContextCommits, CONTEXT_COMMITS_LIMIT, contextCommitsOf, contextCommitsQuery, removeContextCommits } from './context-commits.service.ts';

// `GET/POST/DELETE /projects/:id/merge_requests/:merge_request_iid/context_commits`: reading needs the merge request,
// adding the right to update it, removing the right to delete it (the reference's abilities).

const tags = ['merge_requests'];
const project = { ability: 'read_merge_request' as const };
/** `commits`: at least one, at most the reference's limit (checked before the merge request is looked up). */
function commitsParam(commits: string[]): string[] {
  const list = commits.map((s) => s.trim()).filter((s) => s !== '');
  if (!list.length) throw ParamError.of('commits', 'empty');
  return list;
}

export const contextCommitRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: `${mergeRequestPath}/context_commits`, summary: 'The context commits of a merge request, in the order they were added', tags,
    access: 'public', project, response: Type.Array(ContextCommit), input: Input({ ...MergeRequestKey, ...PaginationParams }),
    handler: async (req, reply) => {
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid);
      const rows = await paginateQuery(req, reply, contextCommitsQuery(req.server.db, mr));
      return (await contextCommitsOf(repoFor(req.server.config, req.project.project), rows.map((r) => r.sha))).map(contextCommitEntity);
    },
  },
  {
    method: 'POST', url: `${mergeRequestPath}/context_commits`, summary: 'Add context commits (SHAs or unique prefixes of the target repository)', tags,
    access: 'authenticated', project, response: Type.Array(CreatedContextCommit), input: Input({ ...MergeRequestKey, commits: CommaList(Str()) }),
    handler: async (req) => {
      const shas = commitsParam(req.input.commits);
      if (shas.length > CONTEXT_COMMITS_LIMIT) throw new RuleError('bad_request', `Context commits array size should not be more than ${CONTEXT_COMMITS_LIMIT}`);
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid, 'update_merge_request');
      const added = await addContextCommits(req.server, repoFor(req.server.config, req.project.project), mr, shas);
      return added.map(createdContextCommitEntity);
    },
  },
  {
    method: 'DELETE', url: `${mergeRequestPath}/context_commits`, summary: 'Remove context commits (SHAs that are not context commits are ignored)', tags,
    access: 'authenticated', project, response: null, input: Input({ ...MergeRequestKey, commits: CommaList(Str()) }),
    handler: async (req) => {
      const shas = commitsParam(req.input.commits);
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid, 'destroy_merge_request');
      await removeContextCommits(req.server, repoFor(req.server.config, req.project.project), mr, shas);
      return undefined;
    },
  },
];
