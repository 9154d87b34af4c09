import { sql, type Expression, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { fitsIntColumn, indexedContains } from '../../platform/db/dialect.ts';
import { userAuthorization, type NamespaceRow } from '../../platform/membership.ts';
import { readableIssuesExpr } from '../../platform/access/queries.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { ISSUE } from './issues.service.ts';
import { searchWords } from '../feature-flag-user-lists/feature-flag-user-lists.service.ts';

// The issue lists (`/issues`, `/groups/:id/issues`, `/projects/:id/issues`): the reference's IssuesFinder filters as
// SQL conditions over `issues` joined with `projects`, the access policy's condition for what the caller may read,
// and the orders. Label, assignee and reaction filters are EXISTS probes on their link tables.

const DAY = 86_400_000;

/** A filter value that names one thing or one of the special words (None, Any, ...); lower-cased words compare. */
type Special<T> = T | 'none' | 'any';

export interface IssueFilter {
  state?: 'opened' | 'closed' | 'all';
  labels?: string[];
  milestone?: string;
  iids?: number[];
  scope?: 'created_by_me' | 'assigned_to_me' | 'all';
  author_id?: number;
  author_username?: string;
  assignee_id?: Special<number>;
  assignee_username?: string[];
  my_reaction_emoji?: string;
  search?: string;
  in?: Array<'title' | 'description'>;
  created_after?: number;
  created_before?: number;
  updated_after?: number;
  updated_before?: number;
  due_date?: string;
  confidential?: boolean;
  iteration_id?: Special<number> | 'current';
  iteration_title?: string;
  weight?: Special<number>;
  issue_type?: string;
  non_archived?: boolean;
  not?: Omit<IssueFilter, 'not' | 'state' | 'scope' | 'search' | 'in' | 'created_after' | 'created_before' | 'updated_after' | 'updated_before' | 'confidential' | 'non_archived'>;
  order_by?: 'created_at' | 'updated_at' | 'priority' | 'due_date' | 'relative_position' | 'label_priority' | 'milestone_due' | 'popularity' | 'title';
  sort?: 'asc' | 'desc';
}

export type IssueListContext =
  | { kind: 'project'; projectId: number; level: number }
  /** A group's projects and its subgroups' (`subgroups: false`: its own projects only). */
  | { kind: 'group'; group: Pick<NamespaceRow, 'id' | 'traversal'>; subgroups?: boolean }
  | { kind: 'global' };

/** `None` / `Any` (any case) as words, anything else as given. */
export function special(v: string): 'none' | 'any' | string {
  const l = v.toLowerCase();
  return l === 'none' || l === 'any' ? l : v;
}

const hasLabelTitled = (eb: any, title: string) => eb.exists(eb.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
  .select(sql`1`.as('one')).where('label_links.target_type', '=', ISSUE).whereRef('label_links.target_id', '=', 'issues.id').where('labels.title', '=', title));
const hasAnyLabel = (eb: any) => eb.exists(eb.selectFrom('label_links').select(sql`1`.as('one'))
  .where('label_links.target_type', '=', ISSUE).whereRef('label_links.target_id', '=', 'issues.id'));
// The issues of given assignees come from the assignees' index (few rows), not from a probe per issue of the list.
const assignedTo = (eb: any, userIds: number[] | any) => eb('issues.id', 'in', eb.selectFrom('issue_assignees').select('issue_assignees.issue_id')
  .where('issue_assignees.user_id', 'in', userIds));
const anyAssignee = (eb: any) => eb.exists(eb.selectFrom('issue_assignees').select(sql`1`.as('one')).whereRef('issue_assignees.issue_id', '=', 'issues.id'));
const reacted = (eb: any, userId: number, name: string | null) => {
  let q = eb.selectFrom('award_emoji').select(sql`1`.as('one')).where('award_emoji.awardable_type', '=', ISSUE)
    .whereRef('award_emoji.awardable_id', '=', 'issues.id').where('award_emoji.user_id', '=', userId);
  if (name !== null) q = q.where('award_emoji.name', '=', name);
  return eb.exists(q);
};
// Nullable columns compare through coalesce, so that `not[...]` keeps the rows without a value.
const milestoneWhere = (eb: any, build: (q: any) => any) => eb(sql`coalesce(issues.milestone_id, 0)`, 'in', build(eb.selectFrom('milestones').select('milestones.id')));
const usersNamed = (eb: any, names: string[]) => eb.selectFrom('users').select('users.id').where('users.username', 'in', names);

/** Conditions shared by the positive filters and `not[...]`; each returns one condition per given filter. */
function conditions(eb: any, f: NonNullable<IssueFilter['not']>, actor: Actor, now: number, negated: boolean): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  const today = Math.floor(now / DAY) * DAY;
  if (f.labels?.length) {
    const words = f.labels.map((l) => l.trim()).filter(Boolean);
    const first = words.length === 1 ? special(words[0]) : null;
    if (first === 'none') out.push(eb.not(hasAnyLabel(eb)));
    else if (first === 'any') out.push(hasAnyLabel(eb));
    // not[labels]=a,b: none of them; labels=a,b: all of them.
    else if (negated) out.push(eb.or(words.map((w) => hasLabelTitled(eb, w))));
    else for (const w of words) out.push(hasLabelTitled(eb, w));
  }
  if (f.milestone !== undefined) {
    const m = f.milestone.toLowerCase();
    if (m === 'none' || m === 'no milestone') out.push(eb('issues.milestone_id', 'is', null));
    else if (m === 'any') out.push(eb('issues.milestone_id', 'is not', null));
    else if (m === 'upcoming') out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.due_date', '>', today)));
    else if (m === 'started') {
      out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.start_date', '<=', today)
        .where((e: any) => e.or([e('milestones.due_date', 'is', null), e('milestones.due_date', '>=', today)]))));
    } else out.push(milestoneWhere(eb, (q) => q.where('milestones.title', '=', f.milestone)));
  }
  if (f.iids?.length) {
    const iids = f.iids.filter(fitsIntColumn);
    out.push(iids.length ? eb('issues.iid', 'in', iids) : sql<SqlBool>`1 = 0`);
  }
  if (f.author_id !== undefined) out.push(eb(sql`coalesce(issues.author_id, 0)`, '=', fitsIntColumn(f.author_id) ? f.author_id : -1));
  if (f.author_username !== undefined) out.push(eb(sql`coalesce(issues.author_id, 0)`, 'in', usersNamed(eb, [f.author_username])));
  if (f.assignee_id !== undefined) {
    if (f.assignee_id === 'none') out.push(eb.not(anyAssignee(eb)));
    else if (f.assignee_id === 'any') out.push(anyAssignee(eb));
    else out.push(assignedTo(eb, [fitsIntColumn(f.assignee_id) ? f.assignee_id : -1]));
  }
  if (f.assignee_username?.length) {
    const first = f.assignee_username.length === 1 ? special(f.assignee_username[0]) : null;
    if (first === 'none') out.push(eb.not(anyAssignee(eb)));
    else if (first === 'any') out.push(anyAssignee(eb));
    else if (negated) out.push(assignedTo(eb, usersNamed(eb, f.assignee_username)));
    else for (const name of f.assignee_username) out.push(assignedTo(eb, usersNamed(eb, [name])));
  }
  if (f.my_reaction_emoji !== undefined) {
    const userId = actor.user?.id ?? -1;
    const r = special(f.my_reaction_emoji);
    if (r === 'none') out.push(eb.not(reacted(eb, userId, null)));
    else if (r === 'any') out.push(reacted(eb, userId, null));
    else out.push(reacted(eb, userId, f.my_reaction_emoji));
  }
  if (f.due_date !== undefined) {
    const d = f.due_date;
    const weekStart = today - ((new Date(today).getUTCDay() + 6) % 7) * DAY;
    const monthStart = Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), 1);
    const monthEnd = Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth() + 1, 1) - DAY;
    const between = (a: number, b: number) => eb.and([eb('issues.due_date', '>=', a), eb('issues.due_date', '<=', b)]);
    if (d === '0' || d === 'none') out.push(eb('issues.due_date', 'is', null));
    else if (d === 'any') out.push(eb('issues.due_date', 'is not', null));
    else if (d === 'today') out.push(eb('issues.due_date', '=', today));
    else if (d === 'tomorrow') out.push(eb('issues.due_date', '=', today + DAY));
    else if (d === 'overdue') out.push(eb('issues.due_date', '<', today));
    else if (d === 'week') out.push(between(weekStart, weekStart + 6 * DAY));
    else if (d === 'month') out.push(between(monthStart, monthEnd));
    else if (d === 'next_month_and_previous_two_weeks') {
      const nextMonthEnd = Date.UTC(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth() + 2, 1) - DAY;
      out.push(between(today - 14 * DAY, nextMonthEnd));
    }
  }
  if (f.iteration_id !== undefined) {
    if (f.iteration_id === 'none') out.push(eb('issues.iteration_id', 'is', null));
    else if (f.iteration_id === 'any') out.push(eb('issues.iteration_id', 'is not', null));
    else if (f.iteration_id === 'current') {
      out.push(eb(sql`coalesce(issues.iteration_id, 0)`, 'in', eb.selectFrom('iterations').select('iterations.id').where('iterations.start_date', '<=', today).where('iterations.due_date', '>=', today)));
    } else out.push(eb(sql`coalesce(issues.iteration_id, 0)`, '=', fitsIntColumn(f.iteration_id) ? f.iteration_id : -1));
  }
  if (f.iteration_title !== undefined) {
    out.push(eb(sql`coalesce(issues.iteration_id, 0)`, 'in', eb.selectFrom('iterations').select('iterations.id').where('iterations.title', '=', f.iteration_title)));
  }
  if (f.weight !== undefined) {
    if (f.weight === 'none') out.push(eb('issues.weight', 'is', null));
    else if (f.weight === 'any') out.push(eb('issues.weight', 'is not', null));
    else out.push(eb(sql`coalesce(issues.weight, -1)`, '=', f.weight));
  }
  if (f.issue_type !== undefined) out.push(eb('issues.issue_type', '=', f.issue_type));
  return out;
}


/** The list query of issues the caller may read in the context, filtered and ordered (select `issues.*`). */
export async function issuesListQuery(deps: ServiceDeps, actor: Actor, ctx: IssueListContext, f: IssueFilter) {
  const now = deps.clock.now();
  const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
  let q = deps.db.selectFrom('issues').innerJoin('projects', 'projects.id', 'issues.project_id').selectAll('issues');
  if (ctx.kind === 'project') q = q.where('issues.project_id', '=', ctx.projectId);
  else {
    q = q.where('projects.pending_delete', '=', 0);
    if (ctx.kind === 'group') {
      const t = ctx.group.traversal;
      if (ctx.subgroups === false) q = q.where('projects.namespace_id', '=', ctx.group.id);
      else {
        q = q.where('projects.namespace_id', 'in', deps.db.selectFrom('namespaces').select('namespaces.id')
          .where('namespaces.traversal', '>=', t).where('namespaces.traversal', '<', `${t.slice(0, -1)}0`));
      }
      if (f.non_archived !== false) q = q.where('projects.archived', '=', 0);
    } else if (f.non_archived) q = q.where('projects.archived', '=', 0);
  }
  q = q.where((eb) => readableIssuesExpr(eb, actor, a, now, ctx.kind === 'project' ? ctx.level : undefined) ?? sql<SqlBool>`1 = 1`);
  if (f.state && f.state !== 'all') q = q.where('issues.state', '=', f.state);
  const uid = actor.user?.id ?? -1;
  if (f.scope === 'created_by_me') q = q.where('issues.author_id', '=', uid);
  else if (f.scope === 'assigned_to_me') q = q.where((eb) => assignedTo(eb, [uid]));
  if (f.confidential !== undefined) q = q.where('issues.confidential', '=', f.confidential ? 1 : 0);
  if (f.created_after !== undefined) q = q.where('issues.created_at', '>=', f.created_after);
  if (f.created_before !== undefined) q = q.where('issues.created_at', '<=', f.created_before);
  if (f.updated_after !== undefined) q = q.where('issues.updated_at', '>=', f.updated_after);
  if (f.updated_before !== undefined) q = q.where('issues.updated_at', '<=', f.updated_before);
  if (f.search) {
    const index = { table: 'issues', columns: f.in?.length ? f.in : ['title', 'description'] };
    // Each word ("quoted phrases" whole, at most 10) must occur in one of the searched columns.
    for (const word of searchWords(f.search).slice(0, 10)) q = q.where(indexedContains(deps.db, index, word));
  }
  const positive = conditions;
  q = q.where((eb) => {
    const all = positive(eb, f, actor, now, false);
    if (f.not) for (const c of conditions(eb, f.not, actor, now, true)) all.push(eb.not(c));
    return all.length ? eb.and(all) : sql<SqlBool>`1 = 1`;
  });
  return orderIssues(q, f);
}

function orderIssues<Q extends { orderBy: (...args: any[]) => any }>(q: any, f: IssueFilter): Q {
  const dir = f.sort ?? 'desc';
  const nullsLast = (expr: any) => sql`case when ${expr} is null then 1 else 0 end`;
  const milestoneDue = sql`(select milestones.due_date from milestones where milestones.id = issues.milestone_id)`;
  const labelPriority = sql`(select min(label_priorities.priority) from label_links
    join label_priorities on label_priorities.label_id = label_links.label_id and label_priorities.project_id = issues.project_id
    where label_links.target_type = 'Issue' and label_links.target_id = issues.id)`;
  switch (f.order_by ?? 'created_at') {
    case 'updated_at': return q.orderBy('issues.updated_at', dir).orderBy('issues.id', dir);
    case 'title': return q.orderBy('issues.title', dir).orderBy('issues.id', dir);
    case 'due_date': return q.orderBy(nullsLast(sql.ref('issues.due_date'))).orderBy('issues.due_date', dir).orderBy('issues.id', dir);
    case 'relative_position':
      return q.orderBy(nullsLast(sql.ref('issues.relative_position'))).orderBy('issues.relative_position', dir).orderBy('issues.id', dir);
    case 'milestone_due': return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy('issues.id', dir);
    case 'label_priority': return q.orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy('issues.id', dir);
    case 'priority':
      return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy('issues.id', dir);
    case 'popularity': {
      const ups = sql`(select count(*) from award_emoji where award_emoji.awardable_type = 'Issue' and award_emoji.awardable_id = issues.id and award_emoji.name = 'thumbsup')`;
      return q.orderBy(ups, dir).orderBy('issues.id', dir);
    }
    default: return q.orderBy('issues.created_at', dir).orderBy('issues.id', dir);
  }
}
