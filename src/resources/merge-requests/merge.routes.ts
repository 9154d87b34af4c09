import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { Bool, Input, Opt, Str } from '../../http/schemas.ts';
import { Entity } from '../../http/response-schemas.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { findMergeRequest } from './merge-requests.service.ts';
import { MergeRequestKey, mergeRequestPath, presentOne, scopeOf } from './merge-requests.routes.ts';
import { MergeRequest } from './merge-requests.schemas.ts';
import { REBASE_FAILED, REBASE_JOB, mergeMergeRequest, mergeRefHead, requestRebase, runRebase } from './merge.service.ts';

// Merging and rebasing a merge request (merge.service.ts); the merge request's other routes are in
// merge-requests.routes.ts.

const tags = ['merge_requests'];

export const RebaseAnswer = Entity({ rebase_in_progress: Type.Boolean() }, { description: 'RebaseInProgress' });

export const MergeRef = Entity({ commit_id: Type.String() }, { description: 'MergeRef' });

export const mergeRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: `${mergeRequestPath}/merge_ref`, summary: 'The merge commit the merge request would make now (refs/merge-requests/:iid/merge)',
    tags, access: 'public', project: { ability: 'read_merge_request' }, response: MergeRef,
    input: Input({ ...MergeRequestKey }),
    handler: async (req) => {
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid);
      return { commit_id: await mergeRefHead(req.server, mr) };
    },
  },
  {
    method: 'PUT', url: `${mergeRequestPath}/merge`, summary: 'Merge a merge request into its target branch (the project\'s merge method, squash, templates)',
    tags, access: 'authenticated', project: { ability: 'read_merge_request' }, response: MergeRequest,
    input: Input({
      ...MergeRequestKey,
      merge_commit_message: Opt(Str({ maxLength: 65_536 })),
      squash_commit_message: Opt(Str({ maxLength: 65_536 })),
      should_remove_source_branch: Opt(Bool()),
      merge_when_pipeline_succeeds: Opt(Bool()),
      sha: Opt(Str({ maxLength: 64 })),
      squash: Opt(Bool()),
    }),
    handler: async (req) => {
      const scope = scopeOf(req);
      const mr = await findMergeRequest(req.server, scope, req.input.merge_request_iid);
      const merged = await mergeMergeRequest(req.server, scope, mr, {
        merge_commit_message: req.input.merge_commit_message, squash_commit_message: req.input.squash_commit_message,
        squash: req.input.squash, should_remove_source_branch: req.input.should_remove_source_branch, sha: req.input.sha,
      });
      return presentOne(req, merged);
    },
  },
  {
    method: 'PUT', url: `${mergeRequestPath}/rebase`, summary: 'Rebase the source branch onto the target branch (queued; 202)',
    tags, access: 'authenticated', project: { ability: 'read_merge_request' }, response: RebaseAnswer, status: 202,
    input: Input({ ...MergeRequestKey, skip_ci: Opt(Bool()) }),
    handler: async (req) => {
      const scope = scopeOf(req);
      const mr = await findMergeRequest(req.server, scope, req.input.merge_request_iid);
      await requestRebase(req.server, scope, mr, !!req.input.skip_ci);
      return { rebase_in_progress: true };
    },
  },
];

export function mergeJobs(deps: ServiceDeps): Record<string, JobKind<{ merge_request_id: number; user_id: number }>> {
  return {
    [REBASE_JOB]: {
      concurrency: 1, maxAttempts: 3,
      async run(args) {
        try {
          await runRebase(deps, args);
        } catch (e) {
          // Not left "in progress" if no attempt succeeds; a retry runs whatever the flag says.
          await deps.db.updateTable('merge_requests').set({ rebase_in_progress: 0, rebase_jid: null, merge_error: REBASE_FAILED })
            .where('id', '=', args.merge_request_id).execute();
          throw e;
        }
      },
    },
  };
}
