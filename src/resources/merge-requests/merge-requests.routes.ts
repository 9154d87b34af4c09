import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, IdOrPath, Input, Int, Opt, Str } from '../../http/schemas.ts';
import { cachedAnswer } from '../../http/answer-cache.ts';
import { ParamError } from '../../platform/errors.ts';
import {
  createMergeRequest, findMergeRequest, loadMergeRequestPresentation, repoFor,
  type MergeRequestInput, type MergeRequestRow, type MergeRequestScope,
} from './merge-requests.service.ts';
import { mergeRequestEntity } from './merge-requests.presenter.ts';
import { MergeRequest } from './merge-requests.schemas.ts';

const tags = ['merge_requests'];

export const scopeOf = (req: ApiRequest<any>): MergeRequestScope => ({ actor: req.actor, project: req.project.project, level: req.project.level });

/** One merge request as its own routes answer it (subscribed, can_merge), seen from `from`. */
export async function presentOne(req: ApiRequest<any>, row: MergeRequestRow, from: { projectId?: number } = { projectId: row.target_project_id }) {
  const pres = await loadMergeRequestPresentation(req.server, req.actor, [row], { single: true, from, withLabelsDetails: !!req.input.with_labels_details });
  return mergeRequestEntity(row, pres, {
    includeDivergedCommitsCount: !!req.input.include_diverged_commits_count, includeRebaseInProgress: !!req.input.include_rebase_in_progress,
  });
}

function exclusive(input: Record<string, unknown>, a: string, b: string) {
  if (input[a] !== undefined && input[b] !== undefined) throw ParamError.group([a, b], 'mutually_exclusive');
}

/** The parameters create and update share, as the reference names them. */
export const WriteParams = {
  description: Opt(Str()),
  assignee_id: Opt(Int()),
  assignee_ids: Opt(CommaList(Int())),
  reviewer_ids: Opt(CommaList(Int())),
  labels: Opt(CommaList(Str())),
  milestone_id: Opt(Int()),
  remove_source_branch: Opt(Bool()),
  allow_collaboration: Opt(Bool()),
  allow_maintainer_to_push: Opt(Bool()),
  squash: Opt(Bool()),
};

export function mergeRequestInput(input: any): MergeRequestInput {
  exclusive(input, 'assignee_id', 'assignee_ids');
  exclusive(input, 'allow_collaboration', 'allow_maintainer_to_push');
  const out: MergeRequestInput = {
    title: input.title, description: input.description, source_branch: input.source_branch, target_branch: input.target_branch,
    target_project_id: input.target_project_id, reviewer_ids: input.reviewer_ids, labels: input.labels, add_labels: input.add_labels,
    remove_labels: input.remove_labels, milestone_id: input.milestone_id, remove_source_branch: input.remove_source_branch, squash: input.squash,
    allow_collaboration: input.allow_collaboration ?? input.allow_maintainer_to_push, discussion_locked: input.discussion_locked,
    state_event: input.state_event,
  };
  if (input.assignee_ids !== undefined) out.assignee_ids = input.assignee_ids;
  else if (input.assignee_id !== undefined) out.assignee_ids = input.assignee_id ? [input.assignee_id] : [];
  return out;
}

export const mergeRequestPath = '/projects/:id/merge_requests/:merge_request_iid';
export const MergeRequestKey = { id: IdOrPath(), merge_request_iid: Int() };

export const mergeRequestRoutes: RouteDef<any>[] = [
  {
    method: 'POST', url: '/projects/:id/merge_requests', summary: 'Create a merge request from this project (into target_project_id, a project of its fork network)',
    tags, access: 'authenticated', project: { ability: 'create_merge_request' }, response: MergeRequest,
    input: Input({
      id: IdOrPath(), source_branch: Str(), target_branch: Str(), title: Str(), target_project_id: Opt(Int()), ...WriteParams,
    }),
    handler: async (req) => {
      const config = req.server.config;
      const { mr, scope } = await createMergeRequest(req.server, scopeOf(req), mergeRequestInput(req.input), {
        source: repoFor(config, req.project.project), target: (p) => repoFor(config, p),
      });
      const pres = await loadMergeRequestPresentation(req.server, req.actor, [mr], { single: true, from: { projectId: scope.project.id } });
      return mergeRequestEntity(mr, pres);
    },
  },
  {
    method: 'GET', url: mergeRequestPath, summary: 'One merge request of a project', tags, access: 'public', project: { ability: 'read_merge_request' },
    response: MergeRequest,
    input: Input({
      ...MergeRequestKey, render_html: Opt(Bool()), include_diverged_commits_count: Opt(Bool()), include_rebase_in_progress: Opt(Bool()),
      with_labels_details: Opt(Bool({ default: false })),
    }),
    handler: async (req, reply) => cachedAnswer(req, reply, 'merge-requests', async () =>
      presentOne(req, await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid))),
  },
];
