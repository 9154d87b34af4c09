import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateArray, paginateQuery } from '../../http/pagination.ts';
import { parseDateTime } from '../../http/params.ts';
import { findProject } from '../../http/access.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { ParamError, UnauthorizedError } from '../../platform/errors.ts';
import { userBasic } from '../users/users.presenter.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { usersByIds } from '../users/users.service.ts';
import {
  createIssue, deleteIssue, issueById, findIssue, ISSUE, ISSUE_TYPES, loadIssuePresentation,
  moveIssue, participants, setSubscription, updateIssue,
  type IssueInput, type IssueRow, type IssueScope,
} from './issues.service.ts';
import {
  AssigneeParams, AuthorParams, commonNegatable, exclusive, idOrWord, IidsParam, LabelMilestoneParams, LabelsDetailsParam, NonArchivedParam,
  notParam, ReactionParam, scopeFilter, SearchParams, SortParam, TimeParams, timeFilter,
} from '../noteables/noteables.params.ts';
import { resourceEventRoutes, timeTrackingRoutes, type NoteableRoutesKind } from '../noteables/noteables.routes.ts';
import { issuesListQuery, type IssueFilter, type IssueListContext } from './issues.finder.ts';
import { awardRoutes } from '../award-emoji/award-emoji.routes.ts';
import { issueEntity } from './issues.presenter.ts';
import type { LabelRow } from '../labels/labels.lookup.ts';
import { Issue } from './issues.schemas.ts';
import { noteRoutes, type NoteableKind } from '../notes/notes.routes.ts';
import { cachedAnswer } from '../../http/answer-cache.ts';

const tags = ['issues'];

const scopeOf = (req: ApiRequest<any>): IssueScope => ({ actor: req.actor, project: req.project.project, level: req.project.level });

async function present(req: ApiRequest<any>, rows: IssueRow[], opts: { subscribed?: boolean; from?: { projectId?: number; groupId?: number }; created?: { project: IssueScope['project']; assigneeIds: number[]; labels: LabelRow[] | null } } = {}) {
  // A project's routes have its row already: the issues' project is not read again.
  const project = (req as { project?: { project: IssueScope['project'] } }).project?.project;
  const pres = await loadIssuePresentation(req.server, req.actor, rows, { ...opts, project, withLabelsDetails: !!req.input.with_labels_details });
  return rows.map((r) => issueEntity(r, pres));
}

const presentOne = async (req: ApiRequest<any>, row: IssueRow) => (await present(req, [row], { subscribed: true }))[0];

// ---------------------------------------------------------------------------------------------------------------
// Parameters

const ORDERS = ['created_at', 'updated_at', 'priority', 'due_date', 'relative_position', 'label_priority', 'milestone_due', 'popularity', 'title'] as const;
const DUE = ['0', 'any', 'today', 'tomorrow', 'overdue', 'week', 'month', 'next_month_and_previous_two_weeks'] as const;

const negatable = {
  ...LabelMilestoneParams,
  ...IidsParam,
  ...AuthorParams,
  ...AssigneeParams,
  ...ReactionParam,
  iteration_id: Opt(Str({ description: 'an iteration id, None, Any or Current' })),
  iteration_title: Opt(Str()),
  weight: Opt(Str({ description: 'a weight, None or Any' })),
  issue_type: Opt(Enum(ISSUE_TYPES)),
};

const ListParams = {
  milestone_id: Opt(Enum(['None', 'Any', 'Upcoming', 'Started'] as const, { description: 'issues by milestone timebox' })),
  state: Opt(Enum(['opened', 'closed', 'all'] as const, { default: 'all' })),
  ...negatable,
  scope: Opt(Enum(['created_by_me', 'assigned_to_me', 'all', 'created-by-me', 'assigned-to-me'] as const)),
  ...SearchParams,
  ...TimeParams,
  due_date: Opt(Enum(DUE)),
  confidential: Opt(Bool()),
  ...notParam(negatable),
  order_by: Opt(Enum(ORDERS, { default: 'created_at' })),
  ...SortParam,
  ...LabelsDetailsParam,
  ...PaginationParams,
};

function negatableFilter(input: any, prefix: string): NonNullable<IssueFilter['not']> {
  return {
    ...commonNegatable(input, prefix), iids: input.iids,
    iteration_id: idOrWord(input.iteration_id, `${prefix}iteration_id`, ['none', 'any', 'current']),
    iteration_title: input.iteration_title,
    weight: idOrWord(input.weight, `${prefix}weight`, ['none', 'any']),
    issue_type: input.issue_type,
  };
}

function filterOf(input: any, defaultScope: IssueFilter['scope']): IssueFilter {
  const scope = scopeFilter(input, defaultScope);
  exclusive(input, 'milestone', 'milestone_id');
  return {
    ...negatableFilter(input, ''),
    ...(input.milestone_id !== undefined ? { milestone: input.milestone_id } : {}),
    state: input.state, scope, search: input.search, in: input.in, ...timeFilter(input),
    due_date: input.due_date, confidential: input.confidential, non_archived: input.non_archived,
    not: input.not ? negatableFilter(input.not, 'not[') : undefined,
    order_by: input.order_by, sort: input.sort,
  };
}

/** A list read again by the same caller within the read-cache window is answered from it (http/answer-cache.ts). */
async function listIssues(req: ApiRequest<any>, reply: FastifyReply, ctx: IssueListContext, filter: IssueFilter, from: { projectId?: number; groupId?: number }) {
  return cachedAnswer(req, reply, 'issue-lists', async () => {
    const rows = await paginateQuery(req, reply, (await issuesListQuery(req.server, req.actor, ctx, filter)) as any);
    return present(req, rows as IssueRow[], { from });
  });
}

function dateOnly(v: string | null | undefined, param: string): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === null || v === '') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const ms = m ? Date.UTC(+m[1], +m[2] - 1, +m[3]) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v) throw ParamError.of(param, 'invalid');
  return ms;
}

const WriteParams = {
  description: Opt(Str()),
  confidential: Opt(Bool()),
  assignee_ids: Opt(CommaList(Int())),
  assignee_id: Opt(Int()),
  milestone_id: Opt(Int()),
  iteration_id: Opt(Int()),
  labels: Opt(CommaList(Str())),
  due_date: Opt(Type.Union([Str(), Type.Null()])),
  weight: Opt(Int()),
  issue_type: Opt(Enum(ISSUE_TYPES)),
};

function issueInput(input: any): IssueInput {
  exclusive(input, 'assignee_id', 'assignee_ids');
  const out: IssueInput = {
    iid: input.iid, title: input.title, description: input.description, confidential: input.confidential, discussion_locked: input.discussion_locked,
    labels: input.labels, add_labels: input.add_labels, remove_labels: input.remove_labels,
    milestone_id: input.milestone_id, iteration_id: input.iteration_id, due_date: dateOnly(input.due_date, 'due_date'),
    weight: input.weight, state_event: input.state_event, issue_type: input.issue_type,
    created_at: input.created_at === undefined ? undefined : parseDateTime(input.created_at) ?? undefined,
    updated_at: input.updated_at === undefined ? undefined : parseDateTime(input.updated_at) ?? undefined,
  };
  if (input.assignee_ids !== undefined) out.assignee_ids = input.assignee_ids;
  else if (input.assignee_id !== undefined) out.assignee_ids = input.assignee_id ? [input.assignee_id] : [];
  return out;
}

/** The reference's at-least-one-of list for an update (its order), with the EE weight and iteration. */
const UPDATABLE = ['assignee_id', 'assignee_ids', 'confidential', 'created_at', 'description', 'discussion_locked', 'due_date', 'labels', 'add_labels',
  'remove_labels', 'milestone_id', 'state_event', 'title', 'issue_type', 'weight', 'iteration_id'];

const issuePath = '/projects/:id/issues/:issue_iid';
const IssueKey = { id: IdOrPath(), issue_iid: Int() };

/** Issues for the routes they share with merge requests (time tracking, resource events). */
const issueTimeAndEvents: NoteableRoutesKind = {
  base: issuePath, params: IssueKey, what: 'an issue', read: 'read_issue', admin: 'admin_issue', tags,
  find: async (req) => ({ ...(await findIssue(req.server, scopeOf(req), req.input.issue_iid)), type: ISSUE }),
};

/** Issues as noteables: their notes and discussions routes (notes/notes.routes.ts), hidden exactly as the issue is. */
const issueNoteables: NoteableKind = {
  segment: 'issues', param: 'issue_iid', type: 'Issue', ability: 'read_issue',
  async find(req, iid) {
    const issue = await findIssue(req.server, scopeOf(req), iid, 'read_issue', 'Issue');
    return { type: 'Issue', id: issue.id, iid: issue.iid, projectId: issue.project_id, locked: !!issue.discussion_locked };
  },
};

export const issueRoutes: RouteDef<any>[] = [
  ...noteRoutes(issueNoteables),
  {
    method: 'GET', url: '/issues', summary: 'Issues the caller may read, across projects (created by the caller unless scope says otherwise)', tags,
    access: 'public', response: Type.Array(Issue), input: Input({ ...ListParams }),
    handler: async (req, reply) => {
      if (!req.actor.user && req.input.scope !== 'all') throw new UnauthorizedError();
      return listIssues(req, reply, { kind: 'global' }, filterOf(req.input, req.actor.user ? 'created_by_me' : 'all'), {});
    },
  },
  {
    method: 'GET', url: '/issues/:issue_id', summary: 'One issue by its global id (administrators only)', tags, access: 'admin',
    response: Issue, input: Input({ issue_id: Int(), with_labels_details: Opt(Bool({ default: false })) }),
    handler: async (req) => presentOne(req, await issueById(req.server, req.input.issue_id)),
  },
  {
    method: 'GET', url: '/groups/:id/issues', summary: "Issues of a group's projects and its subgroups' projects", tags, access: 'public',
    group: { param: 'id', ability: 'read_group' }, response: Type.Array(Issue),
    input: Input({ id: IdOrPath(), ...ListParams, ...NonArchivedParam }),
    handler: async (req, reply) => listIssues(req, reply, { kind: 'group', group: req.group.group }, filterOf(req.input, 'all'), { groupId: req.group.group.id }),
  },
  {
    method: 'GET', url: '/projects/:id/issues', summary: "A project's issues", tags, access: 'public', project: { ability: 'read_issue' },
    response: Type.Array(Issue), input: Input({ id: IdOrPath(), ...ListParams }),
    handler: async (req, reply) => {
      const p = req.project;
      return listIssues(req, reply, { kind: 'project', projectId: p.project.id, level: p.level }, filterOf(req.input, 'all'), { projectId: p.project.id });
    },
  },
  {
    method: 'GET', url: issuePath, summary: 'One issue of a project', tags, access: 'public', project: { ability: 'read_issue' },
    response: Issue, input: Input({ ...IssueKey, with_labels_details: Opt(Bool({ default: false })) }),
    handler: async (req, reply) => cachedAnswer(req, reply, 'issues', async () => presentOne(req, await findIssue(req.server, scopeOf(req), req.input.issue_iid))),
  },
  {
    method: 'POST', url: '/projects/:id/issues', summary: 'Create an issue', tags, access: 'authenticated', project: { ability: 'create_issue' },
    response: Issue,
    input: Input({
      id: IdOrPath(), title: Str(), ...WriteParams, discussion_locked: Opt(Bool()), created_at: Opt(DateTime()),
      iid: Opt(Int({ description: 'from administrators and project owners only' })),
    }),
    handler: async (req) => {
      const { issue, assigneeIds, labels } = await createIssue(req.server, scopeOf(req), issueInput(req.input));
      return (await present(req, [issue], { subscribed: true, created: { project: req.project.project, assigneeIds, labels } }))[0];
    },
  },
  {
    method: 'PUT', url: issuePath, summary: 'Change an issue', tags, access: 'authenticated', project: { ability: 'read_issue' },
    response: Issue,
    input: Input({
      ...IssueKey, title: Opt(Str()), ...WriteParams, add_labels: Opt(CommaList(Str())), remove_labels: Opt(CommaList(Str())),
      discussion_locked: Opt(Bool()), state_event: Opt(Enum(['close', 'reopen'] as const)), created_at: Opt(DateTime()), updated_at: Opt(DateTime()),
    }),
    handler: async (req) => {
      if (!UPDATABLE.some((k) => req.input[k] !== undefined)) throw ParamError.group(UPDATABLE, 'at_least_one');
      const input = issueInput(req.input);
      const issue = await findIssue(req.server, scopeOf(req), req.input.issue_iid, 'update_issue');
      return presentOne(req, await updateIssue(req.server, scopeOf(req), issue, input));
    },
  },
  {
    method: 'DELETE', url: issuePath, summary: 'Delete an issue', tags, access: 'authenticated', project: { ability: 'read_issue' },
    response: null, input: Input(IssueKey),
    handler: async (req) => {
      const issue = await findIssue(req.server, scopeOf(req), req.input.issue_iid, 'destroy_issue', 'Issue');
      checkUnmodifiedSince(req, issue.updated_at);
      await deleteIssue(req.server, issue);
      return undefined;
    },
  },
  {
    method: 'POST', url: `${issuePath}/move`, summary: 'Move an issue to another project', tags, access: 'authenticated', project: { ability: 'read_issue' },
    response: Issue, input: Input({ ...IssueKey, to_project_id: Int() }),
    handler: async (req) => {
      const issue = await findIssue(req.server, scopeOf(req), req.input.issue_iid, 'read_issue', 'Issue');
      const target = await findProject(req.server, req.actor, req.input.to_project_id);
      const moved = await moveIssue(req.server, scopeOf(req), issue, target.project);
      return (await present(req, [moved], { subscribed: true, from: { projectId: target.project.id } }))[0];
    },
  },
  ...(['subscribe', 'unsubscribe'] as const).map((action): RouteDef<any> => ({
    method: 'POST', url: `${issuePath}/${action}`, summary: `${action === 'subscribe' ? 'Subscribe to' : 'Unsubscribe from'} an issue`, tags,
    access: 'authenticated', project: { ability: 'read_issue' }, response: Issue, input: Input(IssueKey),
    handler: async (req, reply) => {
      const issue = await findIssue(req.server, scopeOf(req), req.input.issue_iid);
      const changed = await setSubscription(req.server, req.actor.user!.id, issue, action === 'subscribe');
      if (!changed) return reply.code(304).send();
      return presentOne(req, issue);
    },
  })),
  {
    method: 'GET', url: `${issuePath}/participants`, summary: 'Who takes part in an issue', tags, access: 'public', project: { ability: 'read_issue' },
    response: Type.Array(UserBasic), input: Input({ ...IssueKey, ...PaginationParams }),
    handler: async (req, reply) => {
      const issue = await findIssue(req.server, scopeOf(req), req.input.issue_iid);
      const users = paginateArray(req, reply, await participants(req.server, issue, req.project.project));
      return users.map((u) => userBasic(u, req.server.config.externalUrl));
    },
  },
  // Time tracking
  ...timeTrackingRoutes(issueTimeAndEvents),
  ...awardRoutes({
    base: issuePath, params: IssueKey, what: 'an issue', ability: 'read_issue', tags,
    find: async (req) => ({ type: ISSUE, id: (await findIssue(req.server, scopeOf(req), req.input.issue_iid)).id }),
  }),
  ...resourceEventRoutes(issueTimeAndEvents),
];
