import { sql, type Expression, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import { containsText, fitsIntColumn, indexedContains, indexedTermIsCommon, plannedForValues } from '../../platform/db/dialect.ts';
import { userAuthorization, type NamespaceRow, type Authorization } from '../../platform/membership.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { searchWords } from '../feature-flag-user-lists/feature-flag-user-lists.service.ts';

// The list filters issues and merge requests share (the reference's IssuableFinder): labels (None/Any), milestone,
// iids, author, assignee (None/Any), my_reaction_emoji, search/in, created/updated ranges, not[...], the list's
// context (project, group, everywhere) and the orders. Each noteable table describes itself as a `NoteableTable`;
// its finder adds the filters only it has (issues: due date, iteration, weight; merge requests: reviewers, branches).

const DAY = 86_400_000;
/** Rows of the search index above which a word is matched on a project's rows rather than taken from the index. */
const COMMON_TERM_ROWS = 5_000;

/** A filter value that names one thing or one of the special words (None, Any, ...); lower-cased words compare. */
export type Special<T> = T | 'none' | 'any';

/** `None` / `Any` (any case) as words, anything else as given. */
export function special(v: string): 'none' | 'any' | string {
  const l = v.toLowerCase();
  return l === 'none' || l === 'any' ? l : v;
}

export type ListContext =
  | { kind: 'project'; projectId: number; level: number }
  /** A group's projects and its subgroups' (`subgroups: false`: its own projects only). */
  | { kind: 'group'; group: Pick<NamespaceRow, 'id' | 'traversal'>; subgroups?: boolean }
  | { kind: 'global' };

/** The filters that may also stand under `not[...]`. */
export interface NegatableFilter {
  labels?: string[];
  milestone?: string;
  iids?: number[];
  author_id?: number;
  author_username?: string;
  assignee_id?: Special<number>;
  assignee_username?: string[];
  my_reaction_emoji?: string;
}

export interface NoteableFilter<Not = NegatableFilter> extends NegatableFilter {
  state?: string;
  scope?: string;
  search?: string;
  in?: Array<'title' | 'description'>;
  created_after?: number;
  created_before?: number;
  updated_after?: number;
  updated_before?: number;
  non_archived?: boolean;
  not?: Not;
  order_by?: string;
  sort?: 'asc' | 'desc';
}

/** How a noteable's rows and link tables are named. */
export interface NoteableTable {
  table: 'issues' | 'merge_requests';
  /** `label_links.target_type`, `award_emoji.awardable_type`. */
  type: 'Issue' | 'MergeRequest';
  /** The column of the project the noteable belongs to. */
  project: 'project_id' | 'target_project_id';
  assignees: { table: 'issue_assignees' | 'merge_request_assignees'; key: 'issue_id' | 'merge_request_id' };
}

/** Rows linked to users through `table` (assignees, reviewers): the rows of given users, or whether a row has any. */
export function userLinks(rows: NoteableTable['table'], table: string, key: string) {
  return {
    // The rows of given users come from the link table's index (few rows), not from a probe per row of the list.
    to: (eb: any, userIds: number[] | any) => eb(`${rows}.id`, 'in', eb.selectFrom(table).select(`${table}.${key}`).where(`${table}.user_id`, 'in', userIds)),
    any: (eb: any) => eb.exists(eb.selectFrom(table).select(sql`1`.as('one')).whereRef(`${table}.${key}`, '=', `${rows}.id`)),
  };
}

export const usersNamed = (eb: any, names: string[]) => eb.selectFrom('users').select('users.id').where('users.username', 'in', names);
export const idOr = (n: number) => (fitsIntColumn(n) ? n : -1);

/** The filters, conditions and orders of one noteable table. */
export function noteableFinder(n: NoteableTable) {
  const col = (c: string) => `${n.table}.${c}`;
  // A row has one of the labels titled so. In a project's or a group's list, as the reference's label filter, the labels
  // are those of the context's root namespace (its groups' and its projects' labels), so that the few matching labels'
  // links lead to the rows instead of every row being checked against its own links; everywhere, any label so titled.
  const hasLabelTitled = (eb: any, titles: string[], root: string | null) => {
    const links = eb.selectFrom('label_links').select(sql`1`.as('one')).where('label_links.target_type', '=', n.type).whereRef('label_links.target_id', '=', col('id'));
    if (root === null) return eb.exists(links.innerJoin('labels', 'labels.id', 'label_links.label_id').where('labels.title', 'in', titles));
    const namespaces = eb.selectFrom('namespaces').select('namespaces.id').where('namespaces.traversal', '>=', root).where('namespaces.traversal', '<', `${root.slice(0, -1)}0`);
    const labels = eb.selectFrom('labels').select('labels.id').where('labels.title', 'in', titles).where('labels.group_id', 'in', namespaces)
      .unionAll(eb.selectFrom('labels').select('labels.id').where('labels.title', 'in', titles)
        .where('labels.project_id', 'in', eb.selectFrom('projects').select('projects.id').where('projects.namespace_id', 'in', namespaces)));
    return eb.exists(links.where('label_links.label_id', 'in', labels));
  };
  const hasAnyLabel = (eb: any) => eb.exists(eb.selectFrom('label_links').select(sql`1`.as('one'))
    .where('label_links.target_type', '=', n.type).whereRef('label_links.target_id', '=', col('id')));
  const assignees = userLinks(n.table, n.assignees.table, n.assignees.key);
  const reacted = (eb: any, userId: number, name: string | null) => {
    let q = eb.selectFrom('award_emoji').select(sql`1`.as('one')).where('award_emoji.awardable_type', '=', n.type)
      .whereRef('award_emoji.awardable_id', '=', col('id')).where('award_emoji.user_id', '=', userId);
    if (name !== null) q = q.where('award_emoji.name', '=', name);
    return eb.exists(q);
  };
  // Nullable columns compare through coalesce, so that `not[...]` keeps the rows without a value.
  const milestoneWhere = (eb: any, build: (q: any) => any) => eb(sql`coalesce(${sql.ref(col('milestone_id'))}, 0)`, 'in', build(eb.selectFrom('milestones').select('milestones.id')));
  const authorId = sql`coalesce(${sql.ref(col('author_id'))}, 0)`;

  /** Conditions shared by the positive filters and `not[...]`; one condition per given filter. */
  function conditions(eb: any, f: NegatableFilter, actor: Actor, now: number, negated: boolean, labelRoot: string | null = null): Expression<SqlBool>[] {
    const out: Expression<SqlBool>[] = [];
    const today = Math.floor(now / DAY) * DAY;
    if (f.labels?.length) {
      const words = f.labels.map((l) => l.trim()).filter(Boolean);
      const first = words.length === 1 ? special(words[0]) : null;
      if (first === 'none') out.push(eb.not(hasAnyLabel(eb)));
      else if (first === 'any') out.push(hasAnyLabel(eb));
      // not[labels]=a,b: none of them; labels=a,b: all of them.
      else if (negated) out.push(hasLabelTitled(eb, words, labelRoot));
      else for (const w of words) out.push(hasLabelTitled(eb, [w], labelRoot));
    }
    if (f.milestone !== undefined) {
      const m = f.milestone.toLowerCase();
      if (m === 'none' || m === 'no milestone') out.push(eb(col('milestone_id'), 'is', null));
      else if (m === 'any') out.push(eb(col('milestone_id'), 'is not', null));
      else if (m === 'upcoming') out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.due_date', '>', today)));
      else if (m === 'started') {
        out.push(milestoneWhere(eb, (q) => q.where('milestones.state', '=', 'active').where('milestones.start_date', '<=', today)
          .where((e: any) => e.or([e('milestones.due_date', 'is', null), e('milestones.due_date', '>=', today)]))));
      } else out.push(milestoneWhere(eb, (q) => q.where('milestones.title', '=', f.milestone)));
    }
    if (f.iids?.length) {
      const iids = f.iids.filter(fitsIntColumn);
      out.push(iids.length ? eb(col('iid'), 'in', iids) : sql<SqlBool>`1 = 0`);
    }
    if (f.author_id !== undefined) out.push(eb(authorId, '=', idOr(f.author_id)));
    if (f.author_username !== undefined) out.push(eb(authorId, 'in', usersNamed(eb, [f.author_username])));
    if (f.assignee_id !== undefined) {
      if (f.assignee_id === 'none') out.push(eb.not(assignees.any(eb)));
      else if (f.assignee_id === 'any') out.push(assignees.any(eb));
      else out.push(assignees.to(eb, [idOr(f.assignee_id)]));
    }
    if (f.assignee_username?.length) {
      const first = f.assignee_username.length === 1 ? special(f.assignee_username[0]) : null;
      if (first === 'none') out.push(eb.not(assignees.any(eb)));
      else if (first === 'any') out.push(assignees.any(eb));
      else if (negated) out.push(assignees.to(eb, usersNamed(eb, f.assignee_username)));
      else for (const name of f.assignee_username) out.push(assignees.to(eb, usersNamed(eb, [name])));
    }
    if (f.my_reaction_emoji !== undefined) {
      const userId = actor.user?.id ?? -1;
      const r = special(f.my_reaction_emoji);
      if (r === 'none') out.push(eb.not(reacted(eb, userId, null)));
      else if (r === 'any') out.push(reacted(eb, userId, null));
      else out.push(reacted(eb, userId, f.my_reaction_emoji));
    }
    return out;
  }

  /**
   * The list query of the rows the caller may read in the context, filtered (the shared filters, then the table's
   * own: `where` on the query, `own` conditions that `not[...]` negates too) and ordered (select `<table>.*`).
   */
  async function listQuery<F extends NoteableFilter<any>>(deps: ServiceDeps, actor: Actor, ctx: ListContext, f: F, own: {
    /** The policy's condition for what the caller may read (null: everything). */
    readable: (eb: any, a: Authorization | null, now: number) => Expression<SqlBool> | null;
    where?: (q: any, uid: number) => any;
    conditions?: (eb: any, f: NonNullable<F['not']> | F, now: number, negated: boolean) => Expression<SqlBool>[];
    orders?: Record<string, (q: any, dir: 'asc' | 'desc') => any>;
  }) {
    const now = deps.clock.now();
    const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
    let q: any = deps.db.selectFrom(n.table).innerJoin('projects', 'projects.id', col(n.project) as any).selectAll(n.table);
    if (ctx.kind === 'project') q = q.where(col(n.project), '=', ctx.projectId);
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
    q = q.where((eb: any) => own.readable(eb, a, now) ?? sql<SqlBool>`1 = 1`);
    if (f.state && f.state !== 'all') q = q.where(col('state'), '=', f.state);
    const uid = actor.user?.id ?? -1;
    if (f.scope === 'created_by_me') q = q.where(col('author_id'), '=', uid);
    else if (f.scope === 'assigned_to_me') q = q.where((eb: any) => assignees.to(eb, [uid]));
    if (own.where) q = own.where(q, uid);
    if (f.created_after !== undefined) q = q.where(col('created_at'), '>=', f.created_after);
    if (f.created_before !== undefined) q = q.where(col('created_at'), '<=', f.created_before);
    if (f.updated_after !== undefined) q = q.where(col('updated_at'), '>=', f.updated_after);
    if (f.updated_before !== undefined) q = q.where(col('updated_at'), '<=', f.updated_before);
    if (f.search) {
      const index = { table: n.table, columns: f.in?.length ? f.in : ['title', 'description'] };
      // Each word ("quoted phrases" whole, at most 10) must occur in one of the searched columns (the search index).
      // In one project, a word the index holds for many rows is matched on the project's rows instead: taking all
      // its rows from the index costs more than reading the project's, which the other filters narrow first.
      for (const word of searchWords(f.search).slice(0, 10)) {
        const perRow = ctx.kind === 'project' && await indexedTermIsCommon(deps.db, index, word, COMMON_TERM_ROWS);
        q = q.where(indexedContains(deps.db, index, word, { perRow }));
      }
      // How many rows hold a term decides which filter should lead (the search index, the labels, the project's
      // rows): a plan made without the terms can be many times slower than one made for them.
      q = plannedForValues(deps.db, q);
    }
    const labelRoot = await labelRootOf(deps, ctx, f);
    const all = (eb: any, g: any, negated: boolean) => [...conditions(eb, g, actor, now, negated, labelRoot), ...(own.conditions?.(eb, g, now, negated) ?? [])];
    q = q.where((eb: any) => {
      const out = all(eb, f, false);
      if (f.not) for (const c of all(eb, f.not, true)) out.push(eb.not(c));
      return out.length ? eb.and(out) : sql<SqlBool>`1 = 1`;
    });
    return order(q, f, own.orders ?? {});
  }

  /** The traversal path of the context's root namespace when the filter names labels in a project or a group (else null). */
  async function labelRootOf(deps: ServiceDeps, ctx: ListContext, f: NoteableFilter<any>): Promise<string | null> {
    const named = (labels?: string[]) => {
      const words = (labels ?? []).map((l) => l.trim()).filter(Boolean);
      return words.length > 1 || (words.length === 1 && special(words[0]) !== 'none' && special(words[0]) !== 'any');
    };
    if (ctx.kind === 'global' || !(named(f.labels) || named(f.not?.labels))) return null;
    const traversal = ctx.kind === 'group' ? ctx.group.traversal
      : (await deps.db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
        .select('namespaces.traversal').where('projects.id', '=', ctx.projectId).executeTakeFirst())?.traversal;
    const root = traversal?.split('/').filter(Boolean)[0];
    return root === undefined ? null : `/${root}/`;
  }

  function order(q: any, f: NoteableFilter<any>, orders: Record<string, (q: any, dir: 'asc' | 'desc') => any>) {
    const dir = f.sort ?? 'desc';
    const by = f.order_by ?? 'created_at';
    const milestoneDue = sql`(select milestones.due_date from milestones where milestones.id = ${sql.ref(col('milestone_id'))})`;
    const labelPriority = sql`(select min(label_priorities.priority) from label_links
      join label_priorities on label_priorities.label_id = label_links.label_id and label_priorities.project_id = ${sql.ref(col(n.project))}
      where label_links.target_type = ${sql.lit(n.type)} and label_links.target_id = ${sql.ref(col('id'))})`;
    if (orders[by]) return orders[by](q, dir).orderBy(col('id'), dir);
    switch (by) {
      case 'updated_at': return q.orderBy(col('updated_at'), dir).orderBy(col('id'), dir);
      case 'title': return q.orderBy(col('title'), dir).orderBy(col('id'), dir);
      case 'milestone_due': return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy(col('id'), dir);
      case 'label_priority': return q.orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy(col('id'), dir);
      case 'priority':
        return q.orderBy(nullsLast(milestoneDue)).orderBy(milestoneDue, dir).orderBy(nullsLast(labelPriority)).orderBy(labelPriority, dir).orderBy(col('id'), dir);
      case 'popularity': {
        const ups = sql`(select count(*) from award_emoji where award_emoji.awardable_type = ${sql.lit(n.type)} and award_emoji.awardable_id = ${sql.ref(col('id'))} and award_emoji.name = 'thumbsup')`;
        return q.orderBy(ups, dir).orderBy(col('id'), dir);
      }
      default: return q.orderBy(col('created_at'), dir).orderBy(col('id'), dir);
    }
  }

  return { listQuery, conditions, assignees, col };
}

/** Rows without a value last, whatever the direction (`order by <this>, <expr> <dir>`). */
export const nullsLast = (expr: any) => sql`case when ${expr} is null then 1 else 0 end`;
/** An order on a nullable column, its rows without a value last. */
export const nullableOrder = (column: string) => (q: any, dir: 'asc' | 'desc') => q.orderBy(nullsLast(sql.ref(column))).orderBy(column, dir);
