import { sql, type Expression, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { readableIssuesExpr } from '../../platform/access/queries.ts';
import type { Actor } from '../../platform/access/actor.ts';
import {
  noteableFinder, nullableOrder, type ListContext, type NegatableFilter, type NoteableFilter, type Special,
} from '../noteables/noteables.finder.ts';

// The issue lists (`/issues`, `/groups/:id/issues`, `/projects/:id/issues`): the reference's IssuesFinder filters as
// SQL conditions over `issues` joined with `projects`, the access policy's condition for what the caller may read,
// and the orders. The filters issues share with merge requests are noteables.finder.ts; here are the issues' own.

const DAY = 86_400_000;

export { special } from '../noteables/noteables.finder.ts';

/** The issues' own filters, also under `not[...]`. */
interface IssueNegatable extends NegatableFilter {
  due_date?: string;
  iteration_id?: Special<number> | 'current';
  iteration_title?: string;
  weight?: Special<number>;
  issue_type?: string;
}

export interface IssueFilter extends NoteableFilter<IssueNegatable>, IssueNegatable {
  state?: 'opened' | 'closed' | 'all';
  scope?: 'created_by_me' | 'assigned_to_me' | 'all';
  confidential?: boolean;
  order_by?: 'created_at' | 'updated_at' | 'priority' | 'due_date' | 'relative_position' | 'label_priority' | 'milestone_due' | 'popularity' | 'title';
}

export type IssueListContext = ListContext;

const issues = noteableFinder({ table: 'issues', type: 'Issue', project: 'project_id', assignees: { table: 'issue_assignees', key: 'issue_id' } });

/** The conditions only issues have, positive and under `not[...]`. */
function issueConditions(eb: any, f: IssueNegatable, now: number): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  const today = Math.floor(now / DAY) * DAY;
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
  return issues.listQuery(deps, actor, ctx, f, {
    readable: (eb, a, now) => readableIssuesExpr(eb, actor, a, now, ctx.kind === 'project' ? ctx.level : undefined),
    where: (q) => (f.confidential !== undefined ? q.where('issues.confidential', '=', f.confidential ? 1 : 0) : q),
    conditions: (eb, g, now) => issueConditions(eb, g, now),
    orders: { due_date: nullableOrder('issues.due_date'), relative_position: nullableOrder('issues.relative_position') },
  });
}
