import type { Expression, SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { readableMergeRequestsExpr } from '../../platform/access/queries.ts';
import type { Actor } from '../../platform/access/actor.ts';
import {
  idOr, noteableFinder, nullableOrder, userLinks, usersNamed, type ListContext, type NegatableFilter, type NoteableFilter, type Special,
} from '../noteables/noteables.finder.ts';

// The merge request lists (`/merge_requests`, `/groups/:id/merge_requests`, `/projects/:id/merge_requests`): the
// reference's MergeRequestsFinder filters as SQL conditions over `merge_requests` joined with its target project,
// the access policy's condition for what the caller may read, and the orders. The filters merge requests share with
// issues are noteables.finder.ts; here are the merge requests' own.

/** The merge requests' own filters, also under `not[...]`. */
interface MergeRequestNegatable extends Omit<NegatableFilter, 'iids'> {
  reviewer_id?: Special<number>;
  reviewer_username?: string;
  source_branch?: string;
  target_branch?: string;
}

export interface MergeRequestFilter extends NoteableFilter<MergeRequestNegatable>, MergeRequestNegatable {
  state?: 'opened' | 'closed' | 'locked' | 'merged' | 'all';
  scope?: 'created_by_me' | 'assigned_to_me' | 'reviews_for_me' | 'all';
  iids?: number[];
  source_project_id?: number;
  merge_user_id?: number;
  merge_user_username?: string;
  draft?: boolean;
  order_by?: 'created_at' | 'updated_at' | 'merged_at' | 'title' | 'label_priority' | 'milestone_due' | 'popularity' | 'priority';
}

const mergeRequests = noteableFinder({
  table: 'merge_requests', type: 'MergeRequest', project: 'target_project_id', assignees: { table: 'merge_request_assignees', key: 'merge_request_id' },
});
const reviewers = userLinks('merge_requests', 'merge_request_reviewers', 'merge_request_id');

/** The conditions only merge requests have, positive and under `not[...]`. */
function mergeRequestConditions(eb: any, f: MergeRequestNegatable): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  if (f.reviewer_id !== undefined) {
    if (f.reviewer_id === 'none') out.push(eb.not(reviewers.any(eb)));
    else if (f.reviewer_id === 'any') out.push(reviewers.any(eb));
    else out.push(reviewers.to(eb, [idOr(f.reviewer_id)]));
  }
  if (f.reviewer_username !== undefined) out.push(reviewers.to(eb, usersNamed(eb, [f.reviewer_username])));
  if (f.source_branch !== undefined) out.push(eb('merge_requests.source_branch', '=', f.source_branch));
  if (f.target_branch !== undefined) out.push(eb('merge_requests.target_branch', '=', f.target_branch));
  return out;
}

/** The list query of merge requests the caller may read in the context, filtered and ordered (select `merge_requests.*`). */
export async function mergeRequestsListQuery(deps: ServiceDeps, actor: Actor, ctx: ListContext, f: MergeRequestFilter) {
  return mergeRequests.listQuery(deps, actor, ctx, f, {
    // The project route decided `read_merge_request` already; elsewhere the policy's condition applies per row.
    readable: (eb, a, now) => (ctx.kind === 'project' ? null : readableMergeRequestsExpr(eb, actor, a, now)),
    where: (q, uid) => {
      if (f.scope === 'reviews_for_me') q = q.where((eb: any) => reviewers.to(eb, [uid]));
      if (f.draft !== undefined) q = q.where('merge_requests.draft', '=', f.draft ? 1 : 0);
      if (f.source_project_id !== undefined) q = q.where('merge_requests.source_project_id', '=', idOr(f.source_project_id));
      if (f.merge_user_id !== undefined) q = q.where('merge_requests.merged_by_id', '=', idOr(f.merge_user_id));
      if (f.merge_user_username !== undefined) q = q.where((eb: any) => eb('merge_requests.merged_by_id', 'in', usersNamed(eb, [f.merge_user_username!])));
      return q;
    },
    conditions: (eb, g) => mergeRequestConditions(eb, g),
    orders: { merged_at: nullableOrder('merge_requests.merged_at') },
  });
}
