import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { LabelBasic } from '../labels/labels.schemas.ts';
import { Milestone } from '../milestones/milestones.schemas.ts';
import { Iteration } from '../iterations/iterations.schemas.ts';

// Response shapes of issues.presenter.ts, same field order; embedded labels, milestones and iterations are their areas'.

const I = () => Type.Integer();
const S = () => Type.String();

export const TimeStats = Entity({
  time_estimate: I(), total_time_spent: I(), human_time_estimate: Nullable(S()), human_total_time_spent: Nullable(S()),
}, { description: 'IssuableTimeStats' });

const basicFields = {
  id: I(), iid: I(), project_id: I(), title: S(), description: Nullable(S()), state: S(), created_at: Iso(), updated_at: Iso(),
  closed_at: Nullable(Iso()), closed_by: Nullable(UserBasic),
  labels: Type.Union([Type.Array(S()), Type.Array(LabelBasic)]),
  milestone: Nullable(Milestone), assignees: Type.Array(UserBasic), author: Nullable(UserBasic), type: S(), assignee: Nullable(UserBasic),
  user_notes_count: I(), merge_requests_count: I(), upvotes: I(), downvotes: I(), due_date: Nullable(IsoDay()),
  confidential: Type.Boolean(), discussion_locked: Nullable(Type.Boolean()), issue_type: S(), web_url: S(), time_stats: TimeStats,
  task_completion_status: Entity({ count: I(), completed_count: I() }),
  weight: Nullable(I()), blocking_issues_count: I(), iteration: Nullable(Iteration),
};

export const IssueBasic = Entity(basicFields, { description: 'IssueBasic' });

export const Issue = Entity({
  ...basicFields,
  has_tasks: Type.Boolean(), task_status: Type.Optional(S()),
  _links: Entity({ self: S(), notes: S(), award_emoji: S(), project: S(), closed_as_duplicate_of: Nullable(S()) }),
  references: Entity({ short: S(), relative: S(), full: S() }),
  severity: S(), subscribed: Type.Optional(Type.Boolean()), moved_to_id: Nullable(I()), service_desk_reply_to: Nullable(S()),
}, { description: 'Issue' });

const eventFields = { id: I(), user: Nullable(UserBasic), created_at: Iso(), resource_type: S(), resource_id: I() };
export const ResourceLabelEvent = Entity({ ...eventFields, label: Nullable(LabelBasic), action: S() }, { description: 'ResourceLabelEvent' });
export const ResourceStateEvent = Entity({
  ...eventFields, source_commit: Nullable(S()), source_merge_request_id: Nullable(I()), state: S(),
}, { description: 'ResourceStateEvent' });
export const ResourceMilestoneEvent = Entity({
  ...eventFields, milestone: Nullable(Milestone), action: S(), state: Nullable(S()),
}, { description: 'ResourceMilestoneEvent' });
