import type { Selectable } from 'kysely';
import { iso, isoDate, webUrl } from '../../http/format.ts';
import type { AwardEmojiTable, IterationsTable, MilestonesTable, ResourceLabelEventsTable, ResourceMilestoneEventsTable, ResourceStateEventsTable } from '../../platform/db/schema.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { User } from '../users/users.service.ts';
import { labelTextColor, type LabelRow } from '../labels/labels.lookup.ts';
import { formatDuration } from './durations.ts';
import type { IssuePresentation, IssueRow, TimeStats } from './issues.service.ts';

// Issue entities in the reference's field order: IssueBasic (with the EE fields weight, blocking_issues_count,
// iteration), then Issue (_links, references, subscribed, ...). Embedded milestones, iterations and labels are
// presented here as the reference embeds them.

const DAY = 86_400_000;

export function labelBasic(l: LabelRow) {
  return {
    id: l.id, name: l.title, color: l.color, description: l.description, description_html: l.description ?? '',
    text_color: labelTextColor(l.color), remove_on_close: false,
  };
}

export function milestoneEntity(m: Selectable<MilestonesTable>, pres: Pick<IssuePresentation, 'base' | 'projects' | 'groupPaths' | 'now'>) {
  const project = m.project_id !== null ? pres.projects.get(m.project_id) : undefined;
  const today = Math.floor(pres.now / DAY) * DAY;
  return {
    id: m.id, iid: m.iid,
    ...(m.project_id !== null ? { project_id: m.project_id } : {}),
    ...(m.group_id !== null ? { group_id: m.group_id } : {}),
    title: m.title, description: m.description, state: m.state, created_at: iso(m.created_at), updated_at: iso(m.updated_at),
    due_date: isoDate(m.due_date), start_date: isoDate(m.start_date), expired: m.due_date !== null && m.due_date < today,
    web_url: m.project_id !== null
      ? webUrl(pres.base, project?.full_path ?? '', '-/milestones', String(m.iid))
      : webUrl(pres.base, 'groups', pres.groupPaths.get(m.group_id!) ?? '', '-/milestones', String(m.iid)),
  };
}

/** 1 upcoming, 2 current, 3 closed: from the dates and today's date. */
export function iterationState(i: Pick<Selectable<IterationsTable>, 'start_date' | 'due_date'>, now: number): number {
  const today = Math.floor(now / DAY) * DAY;
  if (i.start_date > today) return 1;
  return i.due_date >= today ? 2 : 3;
}

export function iterationEntity(i: Selectable<IterationsTable>, pres: Pick<IssuePresentation, 'base' | 'groupPaths' | 'now'>) {
  return {
    id: i.id, iid: i.iid, sequence: i.sequence, group_id: i.group_id, title: i.title, description: i.description,
    state: iterationState(i, pres.now), created_at: iso(i.created_at), updated_at: iso(i.updated_at),
    start_date: isoDate(i.start_date), due_date: isoDate(i.due_date),
    web_url: webUrl(pres.base, 'groups', pres.groupPaths.get(i.group_id) ?? '', '-/iterations', String(i.id)),
  };
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

export function issueEntity(issue: IssueRow, pres: IssuePresentation) {
  const project = pres.projects.get(issue.project_id)!;
  const labels = pres.labels.get(issue.id) ?? [];
  const assignees = (pres.assignees.get(issue.id) ?? []).map((id) => user(pres, id)).filter((u) => u !== null);
  const milestone = issue.milestone_id !== null ? pres.milestones.get(issue.milestone_id) : undefined;
  const iteration = issue.iteration_id !== null ? pres.iterations.get(issue.iteration_id) : undefined;
  const votes = pres.votes.get(issue.id) ?? { up: 0, down: 0 };
  const tasks = taskCompletion(issue.description);
  const api = `${pres.base}/api/v4/projects/${issue.project_id}`;
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
    milestone: milestone ? milestoneEntity(milestone, pres) : null,
    assignees,
    author: user(pres, issue.author_id),
    type: issue.issue_type.toUpperCase(),
    assignee: assignees[0] ?? null,
    user_notes_count: pres.notes.get(issue.id) ?? 0,
    merge_requests_count: 0,
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
    iteration: iteration ? iterationEntity(iteration, pres) : null,
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

export function awardEmojiEntity(a: Selectable<AwardEmojiTable>, u: User | undefined, base: string) {
  return {
    id: a.id, name: a.name, user: u ? userBasic(u, base) : null, created_at: iso(a.created_at), updated_at: iso(a.updated_at),
    awardable_id: a.awardable_id, awardable_type: a.awardable_type, url: null,
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
    source_commit: null, source_merge_request_id: null, state: e.state,
  };
}

export function milestoneEventEntity(e: Selectable<ResourceMilestoneEventsTable>, ctx: EventContext) {
  const m = e.milestone_id !== null ? ctx.milestones.get(e.milestone_id) : undefined;
  return {
    id: e.id, user: eventUser(ctx, e.user_id), created_at: iso(e.created_at), resource_type: e.target_type, resource_id: e.target_id,
    milestone: m ? milestoneEntity(m, ctx.pres) : null, action: e.action, state: e.state,
  };
}

export type { EventContext };
