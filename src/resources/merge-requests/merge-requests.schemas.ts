import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { LabelBasic } from '../labels/labels.schemas.ts';
import { Milestone } from '../milestones/milestones.schemas.ts';
import { TimeStats } from '../issues/issues.schemas.ts';

// Response shapes of merge-requests.presenter.ts, same field order.

const I = () => Type.Integer();
const S = () => Type.String();
const B = () => Type.Boolean();

export const MergeRequestSimple = Entity({
  id: I(), iid: I(), project_id: I(), title: S(), description: Nullable(S()), state: S(), created_at: Iso(), updated_at: Iso(), web_url: S(),
}, { description: 'MergeRequestSimple' });

const basicFields = {
  id: I(), iid: I(), project_id: I(), title: S(), description: Nullable(S()), state: S(), created_at: Iso(), updated_at: Iso(),
  merged_by: Nullable(UserBasic), merge_user: Nullable(UserBasic), merged_at: Nullable(Iso()), closed_by: Nullable(UserBasic), closed_at: Nullable(Iso()),
  target_branch: S(), source_branch: S(), user_notes_count: I(), upvotes: I(), downvotes: I(),
  author: Nullable(UserBasic), assignees: Type.Array(UserBasic), assignee: Nullable(UserBasic), reviewers: Type.Array(UserBasic),
  source_project_id: Nullable(I()), target_project_id: I(), labels: Type.Union([Type.Array(S()), Type.Array(LabelBasic)]),
  draft: B(), work_in_progress: B(), milestone: Nullable(Milestone), merge_when_pipeline_succeeds: B(),
  merge_status: S(), detailed_merge_status: S(), sha: Nullable(S()), merge_commit_sha: Nullable(S()), squash_commit_sha: Nullable(S()),
  discussion_locked: Nullable(B()), should_remove_source_branch: Nullable(B()), force_remove_source_branch: B(),
  allow_collaboration: Type.Optional(B()), allow_maintainer_to_push: Type.Optional(B()),
  reference: S(), references: Entity({ short: S(), relative: S(), full: S() }), web_url: S(), time_stats: TimeStats, squash: B(),
  task_completion_status: Entity({ count: I(), completed_count: I() }), has_conflicts: B(), blocking_discussions_resolved: B(),
};

export const MergeRequestBasic = Entity(basicFields, { description: 'MergeRequestBasic' });

export const DiffRefs = Entity({ base_sha: Nullable(S()), head_sha: Nullable(S()), start_sha: Nullable(S()) }, { description: 'DiffRefs' });

export const MergeRequest = Entity({
  ...basicFields,
  subscribed: Type.Optional(B()), changes_count: Nullable(S()),
  latest_build_started_at: Nullable(Iso()), latest_build_finished_at: Nullable(Iso()), first_deployed_to_production_at: Nullable(Iso()),
  pipeline: Type.Null(), head_pipeline: Type.Null(), diff_refs: Nullable(DiffRefs), merge_error: Nullable(S()),
  rebase_in_progress: Type.Optional(B()), diverged_commits_count: Type.Optional(I()), first_contribution: B(),
  user: Entity({ can_merge: B() }),
}, { description: 'MergeRequest' });

export const MergeRequestApprovals = Entity({
  id: I(), iid: I(), project_id: I(), title: S(), description: Nullable(S()), state: S(), created_at: Iso(), updated_at: Iso(),
  merge_status: S(), approved: B(), approvals_required: I(), approvals_left: I(), require_password_to_approve: B(),
  approved_by: Type.Array(Entity({ user: UserBasic })), suggested_approvers: Type.Array(UserBasic), approvers: Type.Array(Type.Never()),
  approver_groups: Type.Array(Type.Never()), user_has_approved: B(), user_can_approve: B(), approval_rules_left: Type.Array(Type.Never()),
  has_approval_rules: B(), merge_request_approvers_available: B(), multiple_approval_rules_available: B(), invalid_approvers_rules: Type.Array(Type.Never()),
}, { description: 'ApprovalState' });

const contextCommitFields = {
  id: S(), parent_ids: Type.Array(S()), message: S(), author_name: S(), author_email: S(), authored_date: S(),
  committer_name: S(), committer_email: S(), committed_date: S(),
};
export const ContextCommit = Entity({
  id: S(), short_id: S(), created_at: S(), parent_ids: Type.Array(S()), title: S(), message: S(), author_name: S(), author_email: S(),
  authored_date: S(), committer_name: S(), committer_email: S(), committed_date: S(),
}, { description: 'ContextCommit' });
export const CreatedContextCommit = Entity(contextCommitFields, { description: 'CreatedContextCommit' });

