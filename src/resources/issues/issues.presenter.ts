import type { Selectable } from 'kysely';
import { iso, isoDate, webUrl } from '../../http/format.ts';
import type { MilestonesTable, ResourceLabelEventsTable, ResourceMilestoneEventsTable, ResourceStateEventsTable } from '../../platform/db/schema.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { User } from '../users/users.service.ts';
import type { LabelRow } from '../labels/labels.lookup.ts';
import { labelBasic } from '../labels/labels.presenter.ts';
import { milestone } from '../milestones/milestones.presenter.ts';
import { iteration as iterationOf } from '../iterations/iterations.presenter.ts';
import { dayOf } from '../../platform/clock.ts';
import { formatDuration } from './durations.ts';
import type { IssuePresentation, IssueRow } from './issues.service.ts';
import type { TimeStats } from '../noteables/noteables.service.ts';

// Issue entities in the reference's field order: IssueBasic (with the EE fields weight, blocking_issues_count,
// iteration), then Issue (_links, references, subscribed, ...). Embedded milestones, iterations and labels are
// presented by their own areas.

/** The embedded milestone, as the milestones area presents it. */
function milestoneOf(m: Selectable<MilestonesTable>, pres: Pick<IssuePresentation, 'base' | 'projects' | 'groupPaths' | 'now'>) {
  return milestone(m, { base: pres.base, now: pres.now, projectPath: (id) => pres.projects.get(id)?.full_path, groupPath: (id) => pres.groupPaths.get(id) });
}

export function timeStatsEntity(t: TimeStats) {
  return {
    time_estimate: t.time_estimate, total_time_spent: t.total_time_spent,
    human_time_estimate: formatDuration(t.time_estimate), human_total_time_spent: formatDuration(t.total_time_spent),
  };
}

/** Markdown task list items ("- [ ]", "* [x]", "1. [ ]") of a description; inapplicable ones ("[~]") do not count. */
export function taskCompletion(description: string | null): { count: number; completed_count: number } {
  let count = 0;
  let done = 0;
  for (const line of (description ?? '').split('\n')) {
    const m = /^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s/.exec(line);
    if (!m) continue;
    count++;
    if (m[1] !== ' ') done++;
  }
  return { count, completed_count: done };
}

function reference(issue: IssueRow, pres: IssuePresentation) {
  const project = pres.projects.get(issue.project_id)!;
  const short = `#${issue.iid}`;
  const full = `${project.full_path}#${issue.iid}`;
  let relative = short;
  if (pres.from.groupId !== undefined) relative = project.namespace_id === pres.from.groupId ? `${project.path}${short}` : full;
  else if (pres.from.projectId !== undefined && pres.from.projectId !== issue.project_id) relative = full;
  return { short, relative, full };
}

const user = (pres: IssuePresentation, id: number | null) => {
  const u = id === null ? undefined : pres.users.get(id);
  return u ? userBasic(u, pres.base) : null;
};

/** The reference's IssueBasic (with its EE fields): the milestone's issue lists. */
export function issueBasicEntity(issue: IssueRow, pres: IssuePresentation) {
  const project = pres.projects.get(issue.project_id)!;
  const labels = pres.labels.get(issue.id) ?? [];
  const assignees = (pres.assignees.get(issue.id) ?? []).map((id) => user(pres, id)).filter((u) => u !== null);
  const milestone = issue.milestone_id !== null ? pres.milestones.get(issue.milestone_id) : undefined;
  const iteration = issue.iteration_id !== null ? pres.iterations.get(issue.iteration_id) : undefined;
  const votes = pres.votes.get(issue.id) ?? { up: 0, down: 0 };
  const tasks = taskCompletion(issue.description);
  return {
    id: issue.id,
    iid: issue.iid,
    project_id: issue.project_id,
    title: issue.title,
    description: issue.description,
    state: issue.state,
    created_at: iso(issue.created_at),
    updated_at: iso(issue.updated_at),
    closed_at: iso(issue.closed_at),
    closed_by: user(pres, issue.closed_by_id),
    labels: pres.withLabelsDetails ? labels.map(labelBasic) : labels.map((l) => l.title),
    milestone: milestone ? milestoneOf(milestone, pres) : null,
    assignees,
    author: user(pres, issue.author_id),
    type: issue.issue_type.toUpperCase(),
    assignee: assignees[0] ?? null,
    user_notes_count: pres.notes.get(issue.id) ?? 0,
    merge_requests_count: pres.mergeRequests.get(issue.id) ?? 0,
    upvotes: votes.up,
    downvotes: votes.down,
    due_date: isoDate(issue.due_date),
    confidential: !!issue.confidential,
    discussion_locked: issue.discussion_locked === null ? null : !!issue.discussion_locked,
    issue_type: issue.issue_type,
    web_url: webUrl(pres.base, project.full_path, '-/issues', String(issue.iid)),
    time_stats: timeStatsEntity({ time_estimate: issue.time_estimate, total_time_spent: pres.spent.get(issue.id) ?? 0 }),
    task_completion_status: tasks,
    weight: issue.weight,
    blocking_issues_count: 0,
    iteration: iteration ? iterationOf(iteration, { base: pres.base, today: dayOf(pres.now), groups: pres.groupPaths }) : null,
  };
}

/** The reference's Issue: IssueBasic, then the task status, links, references and the rest. */
export function issueEntity(issue: IssueRow, pres: IssuePresentation) {
  const tasks = taskCompletion(issue.description);
  const api = `${pres.base}/api/v4/projects/${issue.project_id}`;
  return {
    ...issueBasicEntity(issue, pres),
    has_tasks: tasks.count > 0,
    ...(tasks.count > 0 ? { task_status: `${tasks.completed_count} of ${tasks.count} checklist items completed` } : {}),
    _links: {
      self: `${api}/issues/${issue.iid}`,
      notes: `${api}/issues/${issue.iid}/notes`,
      award_emoji: `${api}/issues/${issue.iid}/award_emoji`,
      project: api,
      closed_as_duplicate_of: null,
    },
    references: reference(issue, pres),
    severity: 'UNKNOWN',
    ...(pres.subscribed ? { subscribed: pres.subscribed.get(issue.id) ?? false } : {}),
    moved_to_id: issue.moved_to_id,
    service_desk_reply_to: null,
  };
}

interface EventContext {
  base: string;
  users: Map<number, User>;
  labels: Map<number, LabelRow>;
  milestones: Map<number, Selectable<MilestonesTable>>;
  pres: Pick<IssuePresentation, 'base' | 'projects' | 'groupPaths' | 'now'>;
}

const eventUser = (ctx: EventContext, id: number | null) => {
  const u = id === null ? undefined : ctx.users.get(id);
  return u ? userBasic(u, ctx.base) : null;
};

export function labelEventEntity(e: Selectable<ResourceLabelEventsTable>, ctx: EventContext) {
  const label = e.label_id !== null ? ctx.labels.get(e.label_id) : undefined;
  return {
    id: e.id, user: eventUser(ctx, e.user_id), created_at: iso(e.created_at), resource_type: e.target_type, resource_id: e.target_id,
    label: label ? labelBasic(label) : null, action: e.action,
  };
}

export function stateEventEntity(e: Selectable<ResourceStateEventsTable>, ctx: EventContext) {
  return {
    id: e.id, user: eventUser(ctx, e.user_id), created_at: iso(e.created_at), resource_type: e.target_type, resource_id: e.target_id,
    source_commit: null, source_merge_request_id: e.source_merge_request_id ?? null, state: e.state,
  };
}

export function milestoneEventEntity(e: Selectable<ResourceMilestoneEventsTable>, ctx: EventContext) {
  const m = e.milestone_id !== null ? ctx.milestones.get(e.milestone_id) : undefined;
  return {
    id: e.id, user: eventUser(ctx, e.user_id), created_at: iso(e.created_at), resource_type: e.target_type, resource_id: e.target_id,
    milestone: m ? milestoneOf(m, ctx.pres) : null, action: e.action, state: e.state,
  };
}

export type { EventContext };
