import { sql, type Expression, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { fitsIntColumn, indexedContains } from '../../platform/db/dialect.ts';
import { userAuthorization } from '../../platform/membership.ts';
import { readableMergeRequestsExpr } from '../../platform/access/queries.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { special, type IssueListContext } from '../issues/issues.finder.ts';
import { searchWords } from '../feature-flag-user-lists/feature-flag-user-lists.service.ts';
import { MERGE_REQUEST } from './merge-requests.service.ts';

// The merge request lists (`/merge_requests`, `/groups/:id/merge_requests`, `/projects/:id/merge_requests`): the
// reference's MergeRequestsFinder filters as SQL conditions over `merge_requests` joined with its target project,
// the access policy's condition for what the caller may read, and the orders. Shaped as issues.finder.ts.

const DAY = 86_400_000;
type Special<T> = T | 'none' | 'any';

export interface MergeRequestFilter {
  state?: 'opened' | 'closed' | 'locked' | 'merged' | 'all';
  labels?: string[];
  milestone?: string;
  iids?: number[];
  scope?: 'created_by_me' | 'assigned_to_me' | 'reviews_for_me' | 'all';
  author_id?: number;
  author_username?: string;
  assignee_id?: Special<number>;
  assignee_username?: string[];
  reviewer_id?: Special<number>;
  reviewer_username?: string;
  my_reaction_emoji?: string;
  source_branch?: string;
  target_branch?: string;
  source_project_id?: number;
  merge_user_id?: number;
  merge_user_username?: string;
  search?: string;
  in?: Array<'title' | 'description'>;
  draft?: boolean;
  created_after?: number;
  created_before?: number;
  updated_after?: number;
  updated_before?: number;
  non_archived?: boolean;
  not?: Pick<MergeRequestFilter, 'labels' | 'milestone' | 'author_id' | 'author_username' | 'assignee_id' | 'assignee_username'
    | 'reviewer_id' | 'reviewer_username' | 'my_reaction_emoji' | 'source_branch' | 'target_branch'>;
  order_by?: 'created_at' | 'updated_at' | 'merged_at' | 'title' | 'label_priority' | 'milestone_due' | 'popularity' | 'priority';
  sort?: 'asc' | 'desc';
}

const hasLabelTitled = (eb: any, title: string) => eb.exists(eb.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
  .select(sql`1`.as('one')).where('label_links.target_type', '=', MERGE_REQUEST).whereRef('label_links.target_id', '=', 'merge_requests.id').where('labels.title', '=', title));
const hasAnyLabel = (eb: any) => eb.exists(eb.selectFrom('label_links').select(sql`1`.as('one'))
  .where('label_links.target_type', '=', MERGE_REQUEST).whereRef('label_links.target_id', '=', 'merge_requests.id'));
const linked = (table: 'merge_request_assignees' | 'merge_request_reviewers') => ({
  to: (eb: any, userIds: number[] | any) => eb('merge_requests.id', 'in', eb.selectFrom(table).select(`${table}.merge_request_id`).where(`${table}.user_id`, 'in', userIds)),
  any: (eb: any) => eb.exists(eb.selectFrom(table).select(sql`1`.as('one')).whereRef(`${table}.merge_request_id`, '=', 'merge_requests.id')),
});
const assignees = linked('merge_request_assignees');
const reviewers = linked('merge_request_reviewers');
const reacted = (eb: any, userId: number, name: string | null) => {
  let q = eb.selectFrom('award_emoji').select(sql`1`.as('one')).where('award_emoji.awardable_type', '=', MERGE_REQUEST)
    .whereRef('award_emoji.awardable_id', '=', 'merge_requests.id').where('award_emoji.user_id', '=', userId);
  if (name !== null) q = q.where('award_emoji.name', '=', name);
  return eb.exists(q);
};
const milestoneWhere = (eb: any, build: (q: any) => any) => eb(sql`coalesce(merge_requests.milestone_id, 0)`, 'in', build(eb.selectFrom('milestones').select('milestones.id')));
const usersNamed = (eb: any, names: string[]) => eb.selectFrom('users').select('users.id').where('users.username', 'in', names);
const idOr = (n: number) => (fitsIntColumn(n) ? n : -1);

/** Conditions shared by the positive filters and `not[...]`; each returns one condition per given filter. */
function conditions(eb: any, f: NonNullable<MergeRequestFilter['not']> & Pick<MergeRequestFilter, 'iids'>, actor: Actor, now: number, negated: boolean): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  const today = Math.floor(now / DAY) * DAY;
  if (f.labels?.length) {
    const words = f.labels.map((l) => l.trim()).filter(Boolean);
    const first = words.length === 1 ? special(words[0]) : null;
    if (first === 'none') out.push(eb.not(hasAnyLabel(eb)));
    else if (first === 'any') out.push(hasAnyLabel(eb));
    else if (negated) out.push(eb.or(words.map((w) => hasLabelTitled(eb, w))));
    else for (const w of words) out.push(hasLabelTitled(eb, w));
  }
  if (f.milestone !== undefined) {
    const m = f.milestone.toLowerCase();
    if (m === 'none' || m === 'no milestone') out.push(eb('merge_requests.milestone_id', 'is', null));
    else if (m === 'any') out.push(eb('merge_requests.milestone_id', 'is not', null));
    else if (m === 'upcoming') out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.due_date', '>', today)));
    else if (m === 'started') {
      out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.start_date', '<=', today)
        .where((e: any) => e.or([e('milestones.due_date', 'is', null), e('milestones.due_date', '>=', today)]))));
    } else out.push(milestoneWhere(eb, (q) => q.where('milestones.title', '=', f.milestone)));
  }
  if (f.iids?.length) {
    const iids = f.iids.filter(fitsIntColumn);
    out.push(iids.length ? eb('merge_requests.iid', 'in', iids) : sql<SqlBool>`1 = 0`);
  }
  if (f.author_id !== undefined) out.push(eb(sql`coalesce(merge_requests.author_id, 0)`, '=', idOr(f.author_id)));
  if (f.author_username !== undefined) out.push(eb(sql`coalesce(merge_requests.author_id, 0)`, 'in', usersNamed(eb, [f.author_username])));
  for (const [value, links] of [[f.assignee_id, assignees], [f.reviewer_id, reviewers]] as const) {
    if (value === undefined) continue;
    if (value === 'none') out.push(eb.not(links.any(eb)));
    else if (value === 'any') out.push(links.any(eb));
    else out.push(links.to(eb, [idOr(value)]));
  }
  if (f.assignee_username?.length) {
    const first = f.assignee_username.length === 1 ? special(f.assignee_username[0]) : null;
    if (first === 'none') out.push(eb.not(assignees.any(eb)));
    else if (first === 'any') out.push(assignees.any(eb));
    else if (negated) out.push(assignees.to(eb, usersNamed(eb, f.assignee_username)));
    else for (const name of f.assignee_username) out.push(assignees.to(eb, usersNamed(eb, [name])));
  }
  if (f.reviewer_username !== undefined) out.push(reviewers.to(eb, usersNamed(eb, [f.reviewer_username])));
  if (f.my_reaction_emoji !== undefined) {
    const userId = actor.user?.id ?? -1;
    const r = special(f.my_reaction_emoji);
    if (r === 'none') out.push(eb.not(reacted(eb, userId, null)));
    else if (r === 'any') out.push(reacted(eb, userId, null));
    else out.push(reacted(eb, userId, f.my_reaction_emoji));
  }
  if (f.source_branch !== undefined) out.push(eb('merge_requests.source_branch', '=', f.source_branch));
  if (f.target_branch !== undefined) out.push(eb('merge_requests.target_branch', '=', f.target_branch));
  return out;
}

/** The list query of merge requests the caller may read in the context, filtered and ordered (select `merge_requests.*`). */
export async function mergeRequestsListQuery(deps: ServiceDeps, actor: Actor, ctx: IssueListContext, f: MergeRequestFilter) {
  const now = deps.clock.now();
  const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
  let q = deps.db.selectFrom('merge_requests').innerJoin('projects', 'projects.id', 'merge_requests.target_project_id').selectAll('merge_requests');
  if (ctx.kind === 'project') q = q.where('merge_requests.target_project_id', '=', ctx.projectId);
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
    // The project route decided `read_merge_request` already; elsewhere the policy's condition applies per row.
    q = q.where((eb) => readableMergeRequestsExpr(eb, actor, a, now) ?? sql<SqlBool>`1 = 1`);
  }
  if (f.state && f.state !== 'all') q = q.where('merge_requests.state', '=', f.state);
  const uid = actor.user?.id ?? -1;
  if (f.scope === 'created_by_me') q = q.where('merge_requests.author_id', '=', uid);
  else if (f.scope === 'assigned_to_me') q = q.where((eb) => assignees.to(eb, [uid]));
  else if (f.scope === 'reviews_for_me') q = q.where((eb) => reviewers.to(eb, [uid]));
  if (f.draft !== undefined) q = q.where('merge_requests.draft', '=', f.draft ? 1 : 0);
  if (f.source_project_id !== undefined) q = q.where('merge_requests.source_project_id', '=', idOr(f.source_project_id));
  if (f.merge_user_id !== undefined) q = q.where('merge_requests.merged_by_id', '=', idOr(f.merge_user_id));
  if (f.merge_user_username !== undefined) q = q.where((eb) => eb('merge_requests.merged_by_id', 'in', usersNamed(eb, [f.merge_user_username!])));
  if (f.created_after !== undefined) q = q.where('merge_requests.created_at', '>=', f.created_after);
  if (f.created_before !== undefined) q = q.where('merge_requests.created_at', '<=', f.created_before);
  if (f.updated_after !== undefined) q = q.where('merge_requests.updated_at', '>=', f.updated_after);
  if (f.updated_before !== undefined) q = q.where('merge_requests.updated_at', '<=', f.updated_before);
  if (f.search) {
    const index = { table: 'merge_requests', columns: f.in?.length ? f.in : ['title', 'description'] };
    for (const word of searchWords(f.search).slice(0, 10)) q = q.where(indexedContains(deps.db, index, word));
  }
  q = q.where((eb) => {
    const all = conditions(eb, f, actor, now, false);
    if (f.not) for (const c of conditions(eb, f.not, actor, now, true)) all.push(eb.not(c));
    return all.length ? eb.and(all) : sql<SqlBool>`1 = 1`;
  });
  return orderMergeRequests(q, f);
}

function orderMergeRequests(q: any, f: MergeRequestFilter) {
  const dir = f.sort ?? 'desc';
  const nullsLast = (expr: any) => sql`case when ${expr} is null then 1 else 0 end`;
  const milestoneDue = sql`(select milestones.due_date from milestones where milestones.id = merge_requests.milestone_id)`;
  const labelPriority = sql`(select min(label_priorities.priority) from label_links
    join label_priorities on label_priorities.label_id = label_links.label_id and label_priorities.project_id = merge_requests.target_project_id
    where label_links.target_type = 'MergeRequest' and label_links.target_id = merge_requests.id)`;
  switch (f.order_by ?? 'created_at') {
    case 'updated_at': return q.orderBy('merge_requests.updated_at', dir).orderBy('merge_requests.id', dir);
    case 'merged_at': return q.orderBy(nullsLast(sql.ref('merge_requests.merged_at'))).orderBy('merge_requests.merged_at', dir).orderBy('merge_requests.id', dir);
    case 'title': return q.orderBy('merge_requests.title', dir).orderBy('merge_requests.id', dir);
    case 'milestone_due': return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy('merge_requests.id', dir);
    case 'label_priority': return q.orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy('merge_requests.id', dir);
    case 'priority':
      return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy('merge_requests.id', dir);
    case 'popularity': {
      const ups = sql`(select count(*) from award_emoji where award_emoji.awardable_type = 'MergeRequest' and award_emoji.awardable_id = merge_requests.id and award_emoji.name = 'thumbsup')`;
      return q.orderBy(ups, dir).orderBy('merge_requests.id', dir);
    }
    default: return q.orderBy('merge_requests.created_at', dir).orderBy('merge_requests.id', dir);
  }
}
