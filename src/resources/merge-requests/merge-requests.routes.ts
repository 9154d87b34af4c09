import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { cachedAnswer } from '../../http/answer-cache.ts';
import { paginateArray, paginateQuery, pageParams } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { NotFoundError, ParamError, UnauthorizedError } from '../../platform/errors.ts';
import { canMergeRequest } from '../../platform/access/policy.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { userBasic } from '../users/users.presenter.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { usersByIds } from '../users/users.service.ts';
import { presentCommit } from '../repository/repository.presenter.ts';
import { Commit } from '../repository/repository.schemas.ts';
import { noteRoutes, type NoteableKind } from '../notes/notes.routes.ts';
import { awardRoutes } from '../award-emoji/award-emoji.routes.ts';
import { findIssue, issueDenialFor, loadIssuePresentation } from '../issues/issues.service.ts';
import { resourceEventRoutes, timeTrackingRoutes, type NoteableRoutesKind } from '../noteables/noteables.routes.ts';
import { issueEntity } from '../issues/issues.presenter.ts';
import { Issue } from '../issues/issues.schemas.ts';
import { type ListContext } from '../noteables/noteables.finder.ts';
import {
  AssigneeParams, AuthorParams, commonNegatable, exclusive, idOrWord, IidsParam, LabelMilestoneParams, LabelsDetailsParam, NonArchivedParam,
  notParam, ReactionParam, scopeFilter, SearchParams, SortParam, TimeParams, timeFilter,
} from '../noteables/noteables.params.ts';
import {
  approvalsOf, approve, closingIssues, levelIn, createMergeRequest, deleteMergeRequest, findMergeRequest, loadMergeRequestPresentation,
  mergeRequestDenialFor, mergeRequestsOfIssueQuery, MERGE_REQUEST, participants, repoFor, setSubscription, unapprove, updateMergeRequest,
  versionCommits, type MergeRequestInput, type MergeRequestRow, type MergeRequestScope,
} from './merge-requests.service.ts';
import { mergeRequestsListQuery, type MergeRequestFilter } from './merge-requests.finder.ts';
import { approvalsEntity, mergeRequestBasicEntity, mergeRequestEntity, mergeRequestSimpleEntity } from './merge-requests.presenter.ts';
import { MergeRequest, MergeRequestApprovals, MergeRequestBasic, MergeRequestSimple } from './merge-requests.schemas.ts';

const tags = ['merge_requests'];

export const scopeOf = (req: ApiRequest<any>): MergeRequestScope => ({ actor: req.actor, project: req.project.project, level: req.project.level });

/** One merge request as its own routes answer it (subscribed, can_merge), seen from `from`. */
export async function presentOne(req: ApiRequest<any>, row: MergeRequestRow, from: { projectId?: number } = { projectId: row.target_project_id }) {
  const pres = await loadMergeRequestPresentation(req.server, req.actor, [row], {
    single: true, from, withLabelsDetails: !!req.input.with_labels_details, withDivergedCount: !!req.input.include_diverged_commits_count,
  });
  return mergeRequestEntity(row, pres, {
    includeDivergedCommitsCount: !!req.input.include_diverged_commits_count, includeRebaseInProgress: !!req.input.include_rebase_in_progress,
  });
}

/** The parameters create and update share, as the reference names them. */
export const WriteParams = {
  description: Opt(Str()),
  assignee_id: Opt(Int()),
  assignee_ids: Opt(CommaList(Int())),
  reviewer_ids: Opt(CommaList(Int())),
  labels: Opt(CommaList(Str())),
  milestone_id: Opt(Int()),
  remove_source_branch: Opt(Bool()),
  allow_collaboration: Opt(Bool()),
  allow_maintainer_to_push: Opt(Bool()),
  squash: Opt(Bool()),
};

export function mergeRequestInput(input: any): MergeRequestInput {
  exclusive(input, 'assignee_id', 'assignee_ids');
  exclusive(input, 'allow_collaboration', 'allow_maintainer_to_push');
  const out: MergeRequestInput = {
    title: input.title, description: input.description, source_branch: input.source_branch, target_branch: input.target_branch,
    target_project_id: input.target_project_id, reviewer_ids: input.reviewer_ids, labels: input.labels, add_labels: input.add_labels,
    remove_labels: input.remove_labels, milestone_id: input.milestone_id, remove_source_branch: input.remove_source_branch, squash: input.squash,
    allow_collaboration: input.allow_collaboration ?? input.allow_maintainer_to_push, discussion_locked: input.discussion_locked,
    state_event: input.state_event,
  };
  if (input.assignee_ids !== undefined) out.assignee_ids = input.assignee_ids;
  else if (input.assignee_id !== undefined) out.assignee_ids = input.assignee_id ? [input.assignee_id] : [];
  return out;
}

export const mergeRequestPath = '/projects/:id/merge_requests/:merge_request_iid';
export const MergeRequestKey = { id: IdOrPath(), merge_request_iid: Int() };

// ---------------------------------------------------------------------------------------------------------------
// Lists

const ORDERS = ['created_at', 'updated_at', 'merged_at', 'title', 'label_priority', 'milestone_due', 'popularity', 'priority'] as const;

const negatable = {
  ...LabelMilestoneParams,
  ...AuthorParams,
  ...AssigneeParams,
  reviewer_id: Opt(Str({ description: 'a user id, None or Any' })),
  reviewer_username: Opt(Str()),
  ...ReactionParam,
  source_branch: Opt(Str()),
  target_branch: Opt(Str()),
};

const ListParams = {
  state: Opt(Enum(['opened', 'closed', 'locked', 'merged', 'all'] as const, { default: 'all' })),
  order_by: Opt(Enum(ORDERS, { default: 'created_at' })),
  ...SortParam,
  ...negatable,
  view: Opt(Enum(['simple'] as const)),
  ...LabelsDetailsParam,
  with_merge_status_recheck: Opt(Bool({ default: false })),
  ...TimeParams,
  scope: Opt(Enum(['created_by_me', 'assigned_to_me', 'reviews_for_me', 'all', 'created-by-me', 'assigned-to-me'] as const)),
  source_project_id: Opt(Int()),
  merge_user_id: Opt(Int()),
  merge_user_username: Opt(Str()),
  ...SearchParams,
  wip: Opt(Enum(['yes', 'no'] as const)),
  draft: Opt(Bool()),
  ...notParam(negatable),
  deployed_before: Opt(DateTime()),
  deployed_after: Opt(DateTime()),
  environment: Opt(Str()),
  ...PaginationParams,
};

function negatableFilter(input: any, prefix: string): NonNullable<MergeRequestFilter['not']> {
  return {
    ...commonNegatable(input, prefix, [['reviewer_id', 'reviewer_username']]),
    reviewer_id: idOrWord(input.reviewer_id, `${prefix}reviewer_id`, ['none', 'any']), reviewer_username: input.reviewer_username,
    source_branch: input.source_branch, target_branch: input.target_branch,
  };
}

function filterOf(input: any, defaultScope: MergeRequestFilter['scope']): MergeRequestFilter {
  const scope = scopeFilter(input, defaultScope);
  exclusive(input, 'merge_user_id', 'merge_user_username');
  exclusive(input, 'wip', 'draft');
  return {
    ...negatableFilter(input, ''),
    state: input.state, scope, iids: input.iids, search: input.search, in: input.in,
    draft: input.wip !== undefined ? input.wip === 'yes' : input.draft,
    source_project_id: input.source_project_id, merge_user_id: input.merge_user_id, merge_user_username: input.merge_user_username,
    ...timeFilter(input), non_archived: input.non_archived,
    not: input.not ? negatableFilter(input.not, 'not[') : undefined,
    order_by: input.order_by, sort: input.sort,
  };
}

/** A list: MergeRequestBasic, or MergeRequestSimple with `view=simple`; read again within the window from the cache. */
async function listMergeRequests(req: ApiRequest<any>, reply: FastifyReply, ctx: ListContext, filter: MergeRequestFilter, from: { projectId?: number; groupId?: number }) {
  return cachedAnswer(req, reply, 'merge-request-lists', async () => {
    const rows = (await paginateQuery(req, reply, (await mergeRequestsListQuery(req.server, req.actor, ctx, filter)) as any)) as MergeRequestRow[];
    const pres = await loadMergeRequestPresentation(req.server, req.actor, rows, { from, withLabelsDetails: !!req.input.with_labels_details });
    return rows.map((r) => (req.input.view === 'simple' ? mergeRequestSimpleEntity(r, pres) : mergeRequestBasicEntity(r, pres)));
  });
}

const ListResponse = Type.Union([Type.Array(MergeRequestBasic), Type.Array(MergeRequestSimple)]);

/** The reference's at-least-one-of list for an update. */
const UPDATABLE = ['target_branch', 'title', 'assignee_id', 'assignee_ids', 'reviewer_ids', 'milestone_id', 'description', 'state_event', 'labels',
  'add_labels', 'remove_labels', 'remove_source_branch', 'allow_collaboration', 'allow_maintainer_to_push', 'squash', 'discussion_locked'];

const MergeRequestKeyOnly = { id: IdOrPath(), merge_request_iid: Int() };
const find = (req: ApiRequest<any>, ability: Parameters<typeof findMergeRequest>[3] = 'read_merge_request') =>
  findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid, ability);

/** Merge requests for the routes they share with issues (time tracking, resource events). */
const mergeRequestTimeAndEvents: NoteableRoutesKind = {
  base: mergeRequestPath, params: MergeRequestKeyOnly, what: 'a merge request', read: 'read_merge_request', admin: 'admin_merge_request', tags,
  find: async (req) => {
    const mr = await find(req);
    return { id: mr.id, project_id: mr.target_project_id, type: 'MergeRequest' };
  },
};

async function presentApprovals(req: ApiRequest<any>, mr: MergeRequestRow) {
  const fresh = (await findMergeRequest(req.server, scopeOf(req), mr.iid)) ?? mr;
  const [approvals, pres] = await Promise.all([approvalsOf(req.server.db, mr.id), loadMergeRequestPresentation(req.server, req.actor, [fresh])]);
  pres.users = await usersByIds(req.server, approvals.map((a) => a.user_id));
  const canApprove = !!req.actor.user && !(await mergeRequestDenialFor(req.server.db, scopeOf(req), fresh, 'approve_merge_request'));
  return approvalsEntity(fresh, pres, approvals, { id: req.actor.user?.id ?? null, canApprove });
}

export const mergeRequestRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/merge_requests', summary: 'Merge requests the caller may read, across projects (created by the caller unless scope says otherwise)',
    tags, access: 'public', response: ListResponse, input: Input({ ...ListParams }),
    handler: async (req, reply) => {
      if (!req.actor.user && req.input.scope !== 'all') throw new UnauthorizedError();
      return listMergeRequests(req, reply, { kind: 'global' }, filterOf(req.input, req.actor.user ? 'created_by_me' : 'all'), {});
    },
  },
  {
    method: 'GET', url: '/groups/:id/merge_requests', summary: "Merge requests of a group's projects and its subgroups' projects", tags, access: 'public',
    group: { param: 'id', ability: 'read_group' }, response: ListResponse,
    input: Input({ id: IdOrPath(), ...ListParams, ...NonArchivedParam }),
    handler: async (req, reply) => listMergeRequests(req, reply, { kind: 'group', group: req.group.group }, filterOf(req.input, 'all'), { groupId: req.group.group.id }),
  },
  {
    method: 'GET', url: '/projects/:id/merge_requests', summary: "A project's merge requests", tags, access: 'public', project: { ability: 'read_merge_request' },
    response: ListResponse, input: Input({ id: IdOrPath(), ...ListParams, ...IidsParam }),
    handler: async (req, reply) => {
      const p = req.project;
      return listMergeRequests(req, reply, { kind: 'project', projectId: p.project.id, level: p.level }, filterOf(req.input, 'all'), { projectId: p.project.id });
    },
  },
  {
    method: 'POST', url: '/projects/:id/merge_requests', summary: 'Create a merge request from this project (into target_project_id, a project of its fork network)',
    tags, access: 'authenticated', project: { ability: 'create_merge_request' }, response: MergeRequest,
    input: Input({
      id: IdOrPath(), source_branch: Str(), target_branch: Str(), title: Str(), target_project_id: Opt(Int()), ...WriteParams,
    }),
    handler: async (req) => {
      const config = req.server.config;
      const { mr, scope } = await createMergeRequest(req.server, scopeOf(req), mergeRequestInput(req.input), {
        source: repoFor(config, req.project.project), target: (p) => repoFor(config, p),
      });
      const pres = await loadMergeRequestPresentation(req.server, req.actor, [mr], { single: true, from: { projectId: scope.project.id }, checking: new Set([mr.id]) });
      return mergeRequestEntity(mr, pres);
    },
  },
  {
    method: 'GET', url: mergeRequestPath, summary: 'One merge request of a project', tags, access: 'public', project: { ability: 'read_merge_request' },
    response: MergeRequest,
    input: Input({
      ...MergeRequestKey, render_html: Opt(Bool()), include_diverged_commits_count: Opt(Bool()), include_rebase_in_progress: Opt(Bool()),
      with_labels_details: Opt(Bool({ default: false })),
    }),
    handler: async (req, reply) => cachedAnswer(req, reply, 'merge-requests', async () =>
      presentOne(req, await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid))),
  },
  {
    method: 'PUT', url: mergeRequestPath, summary: 'Change a merge request', tags, access: 'authenticated', project: { ability: 'read_merge_request' },
    response: MergeRequest,
    input: Input({
      ...MergeRequestKey, title: Opt(Str()), target_branch: Opt(Str()), ...WriteParams, milestone_id: Opt(Type.Union([Int(), Type.Null()])),
      add_labels: Opt(CommaList(Str())), remove_labels: Opt(CommaList(Str())), discussion_locked: Opt(Bool()),
      state_event: Opt(Enum(['close', 'reopen'] as const)),
    }),
    handler: async (req) => {
      if (!UPDATABLE.some((k) => req.input[k] !== undefined)) throw ParamError.group(UPDATABLE, 'at_least_one');
      const input = mergeRequestInput(req.input);
      const mr = await find(req, 'update_merge_request');
      return presentOne(req, await updateMergeRequest(req.server, scopeOf(req), mr, input));
    },
  },
  {
    method: 'DELETE', url: mergeRequestPath, summary: 'Delete a merge request (owners and administrators)', tags, access: 'authenticated',
    project: { ability: 'read_merge_request' }, response: null, input: Input(MergeRequestKeyOnly),
    handler: async (req) => {
      const mr = await find(req, 'destroy_merge_request');
      checkUnmodifiedSince(req, mr.updated_at);
      await deleteMergeRequest(req.server, req.project.project, mr);
      return undefined;
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/commits`, summary: "The commits of a merge request's latest version, newest first", tags, access: 'public',
    project: { ability: 'read_merge_request' }, response: Type.Array(Commit), input: Input({ ...MergeRequestKeyOnly, ...PaginationParams }),
    handler: async (req, reply) => {
      const mr = await find(req);
      const p = pageParams(req.input);
      const { total, commits } = await versionCommits(req.server, req.project.project, mr, { skip: (p.page - 1) * p.perPage, limit: p.perPage });
      // The page of git's answer, with the headers of the whole list.
      const padded = new Array<unknown>(total).fill(null);
      paginateArray(req, reply, padded, p);
      return commits.map((c) => presentCommit(req.server.config, req.project.project, c));
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/participants`, summary: 'Who takes part in a merge request', tags, access: 'public',
    project: { ability: 'read_merge_request' }, response: Type.Array(UserBasic), input: Input({ ...MergeRequestKeyOnly, ...PaginationParams }),
    handler: async (req, reply) => {
      const mr = await find(req);
      const users = paginateArray(req, reply, await participants(req.server, mr, req.project.project));
      return users.map((u) => userBasic(u, req.server.config.externalUrl));
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/closes_issues`, summary: 'The issues a merge request closes when merged', tags, access: 'public',
    project: { ability: 'read_merge_request' }, response: Type.Array(Issue), input: Input({ ...MergeRequestKeyOnly, ...PaginationParams }),
    handler: async (req, reply) => {
      const mr = await find(req);
      const issues = [];
      // Only the issues of this project the caller may read (confidential ones by the issue rules).
      for (const issue of await closingIssues(req.server.db, mr)) {
        if (issue.project_id !== req.project.project.id) continue;
        if (!(await issueDenialFor(req.server.db, scopeOf(req), issue, 'read_issue'))) issues.push(issue);
      }
      const page = paginateArray(req, reply, issues);
      const pres = await loadIssuePresentation(req.server, req.actor, page, { from: { projectId: req.project.project.id } });
      return page.map((i) => issueEntity(i, pres));
    },
  },
  ...(['subscribe', 'unsubscribe'] as const).map((action): RouteDef<any> => ({
    method: 'POST', url: `${mergeRequestPath}/${action}`, summary: `${action === 'subscribe' ? 'Subscribe to' : 'Unsubscribe from'} a merge request`, tags,
    access: 'authenticated', project: { ability: 'read_merge_request' }, response: MergeRequest, input: Input(MergeRequestKeyOnly),
    handler: async (req, reply) => {
      const mr = await find(req);
      const changed = await setSubscription(req.server, req.actor.user!.id, mr, action === 'subscribe');
      if (!changed) return reply.code(304).send();
      return presentOne(req, mr);
    },
  })),
  // Approvals
  {
    method: 'GET', url: `${mergeRequestPath}/approvals`, summary: 'Who approved a merge request', tags, access: 'public',
    project: { ability: 'read_merge_request' }, response: MergeRequestApprovals, input: Input(MergeRequestKeyOnly),
    handler: async (req) => presentApprovals(req, await find(req)),
  },
  {
    method: 'POST', url: `${mergeRequestPath}/approve`, summary: 'Approve a merge request (sha: only while it is the head)', tags, access: 'authenticated',
    project: { ability: 'read_merge_request' }, response: MergeRequestApprovals, input: Input({ ...MergeRequestKeyOnly, sha: Opt(Str()), approval_password: Opt(Str()) }),
    handler: async (req) => {
      const mr = await find(req, 'approve_merge_request');
      if (!(await approve(req.server, scopeOf(req), mr, req.input.sha))) throw new UnauthorizedError();
      return presentApprovals(req, mr);
    },
  },
  {
    method: 'POST', url: `${mergeRequestPath}/unapprove`, summary: "Withdraw the caller's approval", tags, access: 'authenticated',
    project: { ability: 'read_merge_request' }, response: MergeRequestApprovals, input: Input(MergeRequestKeyOnly),
    handler: async (req) => {
      const mr = await find(req, 'approve_merge_request');
      if (!(await unapprove(req.server, scopeOf(req), mr))) throw new NotFoundError();
      return presentApprovals(req, mr);
    },
  },
  // Time tracking
  ...timeTrackingRoutes(mergeRequestTimeAndEvents),
  ...awardRoutes({
    base: mergeRequestPath, params: MergeRequestKeyOnly, what: 'a merge request', ability: 'read_merge_request', tags,
    find: async (req) => ({ type: MERGE_REQUEST, id: (await find(req)).id }),
  }),
  ...resourceEventRoutes(mergeRequestTimeAndEvents),
  // The merge requests an issue is linked to (issues/:issue_iid/...), held to the issue's rules and each merge request's.
  ...([['related_merge_requests', false, 'Merge requests that mention or close an issue'], ['closed_by', true, 'Merge requests that close an issue when merged']] as const)
    .map(([segment, closesOnly, summary]): RouteDef<any> => ({
      method: 'GET', url: `/projects/:id/issues/:issue_iid/${segment}`, summary, tags, access: 'public', project: { ability: 'read_issue' },
      response: Type.Array(MergeRequestBasic), input: Input({ id: IdOrPath(), issue_iid: Int(), ...PaginationParams }),
      handler: async (req, reply) => {
        const issue = await findIssue(req.server, { actor: req.actor, project: req.project.project, level: req.project.level }, req.input.issue_iid);
        const rows = await mergeRequestsOfIssueQuery(req.server.db, issue.id, closesOnly).execute();
        const readable = await readableMergeRequests(req, rows);
        const page = paginateArray(req, reply, readable);
        const pres = await loadMergeRequestPresentation(req.server, req.actor, page, { from: { projectId: req.project.project.id } });
        return page.map((r) => mergeRequestBasicEntity(r, pres));
      },
    })),
];

/** The rows the caller may read, each by its own target project's rules. */
async function readableMergeRequests(req: ApiRequest<any>, rows: MergeRequestRow[]): Promise<MergeRequestRow[]> {
  const out: MergeRequestRow[] = [];
  for (const r of rows) {
    const project = r.target_project_id === req.project.project.id ? req.project.project : await liveProjectById(req.server, r.target_project_id);
    if (!project) continue;
    const level = r.target_project_id === req.project.project.id ? req.project.level : await levelIn(req.server.db, req.actor, project);
    if (canMergeRequest(req.actor, 'read_merge_request', project, level, { ...r, assigneeIds: [] })) out.push(r);
  }
  return out;
}
