import type { CommitInfo } from '../../platform/git/commit.ts';
import type { Selectable } from 'kysely';
import { iso, webUrl } from '../../http/format.ts';
import type { MilestonesTable } from '../../platform/db/schema.ts';
import { userBasic } from '../users/users.presenter.ts';
import { labelBasic } from '../labels/labels.presenter.ts';
import { milestone } from '../milestones/milestones.presenter.ts';
import { taskCompletion, timeStatsEntity } from '../issues/issues.presenter.ts';
import type { MergeRequestPresentation, MergeRequestRow } from './merge-requests.service.ts';

// Merge request entities in the reference's field order: MergeRequestSimple (`view=simple`), MergeRequestBasic (the
// lists), MergeRequest (one merge request: subscribed, changes_count, diff_refs, ...). What the mergeability fields
// say is decided in mergeability.ts; embedded milestones, labels and users are presented by their own areas.

function milestoneOf(m: Selectable<MilestonesTable>, pres: MergeRequestPresentation) {
  return milestone(m, { base: pres.base, now: pres.now, projectPath: (id) => pres.projects.get(id)?.full_path, groupPath: (id) => pres.groupPaths.get(id) });
}

const user = (pres: MergeRequestPresentation, id: number | null) => {
  const u = id === null ? undefined : pres.users.get(id);
  return u ? userBasic(u, pres.base) : null;
};

/** `!iid` within its project; the project's path within the same namespace, else its full path, from elsewhere. */
function references(mr: MergeRequestRow, pres: MergeRequestPresentation) {
  const project = pres.projects.get(mr.target_project_id)!;
  const short = `!${mr.iid}`;
  const full = `${project.full_path}!${mr.iid}`;
  let relative = short;
  if (pres.from.groupId !== undefined) relative = project.namespace_id === pres.from.groupId ? `${project.path}${short}` : full;
  else if (pres.from.projectId !== undefined && pres.from.projectId !== mr.target_project_id) relative = full;
  return { short, relative, full };
}

/** MergeRequestSimple (`view=simple`); without `web_url` it is the reference's IssuableEntity. */
export function mergeRequestSimpleEntity(mr: MergeRequestRow, pres: MergeRequestPresentation, withUrl = true) {
  const project = pres.projects.get(mr.target_project_id)!;
  return {
    id: mr.id, iid: mr.iid, project_id: mr.target_project_id, title: mr.title, description: mr.description, state: mr.state,
    created_at: iso(mr.created_at), updated_at: iso(mr.updated_at),
    ...(withUrl ? { web_url: webUrl(pres.base, project.full_path, '-/merge_requests', String(mr.iid)) } : {}),
  };
}

/** The reference's `should_remove_source_branch`: the merge's own choice (null until a merge asks). */
function shouldRemoveSourceBranch(mr: MergeRequestRow): boolean | null {
  if (!mr.merge_params) return null;
  try {
    const v = (JSON.parse(mr.merge_params) as Record<string, unknown>).should_remove_source_branch;
    return typeof v === 'boolean' ? v : null;
  } catch {
    return null;
  }
}

/** The reference's MergeRequestBasic: the lists. */
export function mergeRequestBasicEntity(mr: MergeRequestRow, pres: MergeRequestPresentation) {
  const project = pres.projects.get(mr.target_project_id)!;
  const labels = pres.labels.get(mr.id) ?? [];
  const people = (ids: number[] | undefined) => (ids ?? []).map((id) => user(pres, id)).filter((u) => u !== null);
  const assignees = people(pres.assignees.get(mr.id));
  const m = mr.milestone_id !== null ? pres.milestones.get(mr.milestone_id) : undefined;
  const votes = pres.votes.get(mr.id) ?? { up: 0, down: 0 };
  const merge = pres.mergeability.get(mr.id)!;
  const forked = mr.source_project_id !== mr.target_project_id;
  const mergedBy = user(pres, mr.merged_by_id);
  return {
    id: mr.id,
    iid: mr.iid,
    project_id: mr.target_project_id,
    title: mr.title,
    description: mr.description,
    state: mr.state,
    created_at: iso(mr.created_at),
    updated_at: iso(mr.updated_at),
    merged_by: mergedBy,
    merge_user: mergedBy ?? user(pres, mr.merge_user_id),
    merged_at: iso(mr.merged_at),
    closed_by: user(pres, mr.closed_by_id),
    closed_at: iso(mr.closed_at),
    target_branch: mr.target_branch,
    source_branch: mr.source_branch,
    user_notes_count: pres.notes.get(mr.id) ?? 0,
    upvotes: votes.up,
    downvotes: votes.down,
    author: user(pres, mr.author_id),
    assignees,
    assignee: assignees[0] ?? null,
    reviewers: people(pres.reviewers.get(mr.id)),
    source_project_id: mr.source_project_id,
    target_project_id: mr.target_project_id,
    labels: pres.withLabelsDetails ? labels.map(labelBasic) : labels.map((l) => l.title),
    draft: !!mr.draft,
    work_in_progress: !!mr.draft,
    milestone: m ? milestoneOf(m, pres) : null,
    merge_when_pipeline_succeeds: !!mr.merge_when_pipeline_succeeds,
    merge_status: merge.merge_status,
    detailed_merge_status: merge.detailed_merge_status,
    sha: mr.sha,
    merge_commit_sha: mr.merge_commit_sha,
    squash_commit_sha: mr.squash_commit_sha,
    discussion_locked: mr.discussion_locked === null ? null : !!mr.discussion_locked,
    should_remove_source_branch: shouldRemoveSourceBranch(mr),
    force_remove_source_branch: !!mr.force_remove_source_branch,
    ...(forked ? { allow_collaboration: pres.collaboration.get(mr.id) ?? false, allow_maintainer_to_push: pres.collaboration.get(mr.id) ?? false } : {}),
    reference: references(mr, pres).short,
    references: references(mr, pres),
    web_url: webUrl(pres.base, project.full_path, '-/merge_requests', String(mr.iid)),
    time_stats: timeStatsEntity({ time_estimate: mr.time_estimate, total_time_spent: pres.spent.get(mr.id) ?? 0 }),
    squash: !!mr.squash,
    task_completion_status: taskCompletion(mr.description),
    has_conflicts: merge.has_conflicts,
    blocking_discussions_resolved: merge.blocking_discussions_resolved,
  };
}

/** The reference's MergeRequest: MergeRequestBasic and what one merge request adds. */
export function mergeRequestEntity(mr: MergeRequestRow, pres: MergeRequestPresentation, opts: { includeDivergedCommitsCount?: boolean; includeRebaseInProgress?: boolean } = {}) {
  const diff = mr.latest_diff_id !== null ? pres.diffs.get(mr.latest_diff_id) : undefined;
  const merge = pres.mergeability.get(mr.id)!;
  return {
    ...mergeRequestBasicEntity(mr, pres),
    ...(pres.subscribed ? { subscribed: pres.subscribed.get(mr.id) ?? false } : {}),
    changes_count: diff?.real_size ?? null,
    latest_build_started_at: null,
    latest_build_finished_at: null,
    first_deployed_to_production_at: null,
    pipeline: null,
    head_pipeline: null,
    diff_refs: diff ? { base_sha: diff.base_commit_sha, head_sha: diff.head_commit_sha, start_sha: diff.start_commit_sha } : null,
    merge_error: mr.merge_error,
    ...(opts.includeRebaseInProgress ? { rebase_in_progress: !!mr.rebase_in_progress } : {}),
    ...(opts.includeDivergedCommitsCount ? { diverged_commits_count: merge.diverged_commits_count ?? 0 } : {}),
    first_contribution: false,
    user: { can_merge: pres.canMerge?.get(mr.id) ?? false },
  };
}


/**
 * The approval state as the reference's free tier answers it (EE's ApprovalState without rules): nothing is required,
 * so `approved` is true and `approvals_left` 0 whoever approved; `approved_by` lists the approvals, oldest first.
 */
export function approvalsEntity(mr: MergeRequestRow, pres: MergeRequestPresentation, approvals: Array<{ user_id: number }>, caller: { id: number | null; canApprove: boolean }) {
  const mine = caller.id !== null && approvals.some((a) => a.user_id === caller.id);
  return {
    ...mergeRequestSimpleEntity(mr, pres, false),
    merge_status: pres.mergeability.get(mr.id)!.merge_status,
    approved: true,
    approvals_required: 0,
    approvals_left: 0,
    require_password_to_approve: false,
    approved_by: approvals.map((a) => user(pres, a.user_id)).filter((u) => u !== null).map((u) => ({ user: u })),
    suggested_approvers: [],
    approvers: [],
    approver_groups: [],
    user_has_approved: mine,
    user_can_approve: caller.canApprove && !mine,
    approval_rules_left: [],
    has_approval_rules: false,
    merge_request_approvers_available: false,
    multiple_approval_rules_available: false,
    invalid_approvers_rules: [],
  };
}

/** The spec's context commit, field order as the reference's Commit entity. */
export function contextCommitEntity(c: CommitInfo) {
  return {
    id: c.id, short_id: c.short_id, created_at: c.created_at, parent_ids: c.parent_ids, title: c.title, message: c.message,
    author_name: c.author_name, author_email: c.author_email, authored_date: c.authored_date,
    committer_name: c.committer_name, committer_email: c.committer_email, committed_date: c.committed_date,
  };
}

/** The create answer leaves out `short_id`, `created_at` and `title`, as the spec says. */
export function createdContextCommitEntity(c: CommitInfo) {
  const { short_id: _s, created_at: _c, title: _t, ...rest } = contextCommitEntity(c);
  return rest;
}
