import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { parseDateTime } from '../../http/params.ts';
import { paginateArray, paginateQuery } from '../../http/pagination.ts';
import { dayOf } from '../../platform/clock.ts';
import { ParamError } from '../../platform/errors.ts';
import {
  createMilestone, deleteMilestone, getMilestone, milestoneListQuery, milestoneScope, ownerPaths, promoteMilestone, updateMilestone,
  type MilestoneInput, type MilestoneParent, type MilestoneRow,
} from './milestones.service.ts';
import { milestone } from './milestones.presenter.ts';
import { Milestone } from './milestones.schemas.ts';
import { canProject } from '../../platform/access/policy.ts';
import { issuesListQuery, type IssueListContext } from '../issues/issues.finder.ts';
import { loadIssuePresentation, type IssueRow } from '../issues/issues.service.ts';
import { issueBasicEntity } from '../issues/issues.presenter.ts';
import { IssueBasic } from '../issues/issues.schemas.ts';
import { mergeRequestsListQuery } from '../merge-requests/merge-requests.finder.ts';
import { loadMergeRequestPresentation, type MergeRequestRow } from '../merge-requests/merge-requests.service.ts';
import { mergeRequestBasicEntity } from '../merge-requests/merge-requests.presenter.ts';
import { MergeRequestBasic } from '../merge-requests/merge-requests.schemas.ts';

const tags = ['milestones'];

// The same routes on projects and groups; a milestone is named by its id within its owner.

type Kind = 'project' | 'group';

const parentOf = (req: ApiRequest<any>, kind: Kind): MilestoneParent =>
  (kind === 'project' ? { kind, project: req.project.project } : { kind, group: req.group.group });

async function present(req: ApiRequest<any>, rows: MilestoneRow[]) {
  const paths = await ownerPaths(req.server.db, rows);
  const ctx = { base: req.server.config.externalUrl, now: req.server.clock.now(), projectPath: (id: number) => paths.projects.get(id), groupPath: (id: number) => paths.groups.get(id) };
  return rows.map((m) => milestone(m, ctx));
}

/**
 * Where a milestone's issues or merge requests are listed from: the project (empty when the caller may not read that
 * feature of it) or the group itself, without subgroups, as the reference's milestone finders.
 */
function milestoneListScope(req: ApiRequest<any>, kind: Kind, ability: 'read_issue' | 'read_merge_request') {
  if (kind === 'group') {
    const group = req.group.group;
    return { ctx: { kind: 'group', group, subgroups: false } as IssueListContext, from: { groupId: group.id } };
  }
  const p = req.project;
  if (!canProject(req.actor, ability, p.project, p.level)) return null;
  return { ctx: { kind: 'project', projectId: p.project.id, level: p.level } as IssueListContext, from: { projectId: p.project.id } };
}

/** A date parameter: a date or datetime names its day; an empty value clears it. */
const DateParam = () => Type.Union([DateTime(), Type.Literal(''), Type.Null()], { description: 'YYYY-MM-DD' });
const day = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v === '' ? null : dayOf(parseDateTime(v)!));

function inputOf(i: Record<string, any>): MilestoneInput {
  return { title: i.title, description: i.description, startDate: day(i.start_date), dueDate: day(i.due_date), stateEvent: i.state_event };
}

function routesFor(kind: Kind): RouteDef<any>[] {
  const base = kind === 'project' ? '/projects/:id/milestones' : '/groups/:id/milestones';
  const owner = kind;
  const read = kind === 'project' ? { project: { ability: 'read_milestone' as const } } : { group: { ability: 'read_milestone' as const } };
  const admin = kind === 'project' ? { project: { ability: 'admin_milestone' as const } } : { group: { ability: 'admin_milestone' as const } };
  const dates = { description: Opt(Str()), due_date: Opt(DateParam()), start_date: Opt(DateParam()) };

  return [
    {
      method: 'GET', url: base, summary: `List the milestones of a ${owner}`, tags, access: 'authenticated', ...read,
      response: Type.Array(Milestone),
      input: Input({
        id: IdOrPath(), state: Opt(Enum(['active', 'closed', 'all'] as const, { default: 'all' })), iids: Opt(CommaList(Int())),
        title: Opt(Str()), search: Opt(Str()), include_parent_milestones: Opt(Bool({ default: false })), include_ancestors: Opt(Bool({ default: false })),
        ...(kind === 'group' ? { include_descendants: Opt(Bool({ default: false })) } : {}),
        updated_before: Opt(DateTime()), updated_after: Opt(DateTime()), ...PaginationParams,
      }),
      handler: async (req, reply) => {
        const i = req.input;
        const includeParents = !!(i.include_parent_milestones || i.include_ancestors);
        const scope = await milestoneScope(req.server, req.actor, parentOf(req, kind), { includeParents, includeDescendants: i.include_descendants });
        const q = milestoneListQuery(req.server.db, scope, {
          state: i.state, iids: includeParents ? undefined : i.iids, title: i.title, search: i.search,
          updatedBefore: i.updated_before ? parseDateTime(i.updated_before) : null, updatedAfter: i.updated_after ? parseDateTime(i.updated_after) : null,
        });
        return present(req, await paginateQuery(req, reply, q));
      },
    },
    {
      method: 'GET', url: `${base}/:milestone_id`, summary: `One milestone of a ${owner}`, tags, access: 'authenticated', ...read,
      response: Milestone,
      input: Input({ id: IdOrPath(), milestone_id: Int() }),
      handler: async (req) => (await present(req, [await getMilestone(req.server.db, parentOf(req, kind), req.input.milestone_id)]))[0],
    },
    {
      method: 'GET', url: `${base}/:milestone_id/issues`, summary: `The issues of a ${owner} milestone the caller may read`, tags, access: 'authenticated', ...read,
      response: Type.Array(IssueBasic),
      input: Input({ id: IdOrPath(), milestone_id: Int(), ...PaginationParams }),
      handler: async (req, reply) => {
        const m = await getMilestone(req.server.db, parentOf(req, kind), req.input.milestone_id);
        // The reference's issues finder: the milestone's title, label priority order, confidential issues as the caller may see them.
        const scope = milestoneListScope(req, kind, 'read_issue');
        if (!scope) return paginateArray(req, reply, []);
        const { ctx, from } = scope;
        const q = await issuesListQuery(req.server, req.actor, ctx, { milestone: m.title, state: 'all', scope: 'all', non_archived: false, order_by: 'label_priority', sort: 'asc' });
        const rows = await paginateQuery(req, reply, q as any) as IssueRow[];
        const pres = await loadIssuePresentation(req.server, req.actor, rows, { from });
        return rows.map((r) => issueBasicEntity(r, pres));
      },
    },
    {
      method: 'GET', url: `${base}/:milestone_id/merge_requests`, summary: `The merge requests of a ${owner} milestone the caller may read`, tags,
      access: 'authenticated', ...read,
      response: Type.Array(MergeRequestBasic),
      input: Input({ id: IdOrPath(), milestone_id: Int(), ...PaginationParams }),
      handler: async (req, reply) => {
        const m = await getMilestone(req.server.db, parentOf(req, kind), req.input.milestone_id);
        // The reference's merge requests finder: the milestone's title, every state, label priority order.
        const scope = milestoneListScope(req, kind, 'read_merge_request');
        if (!scope) return paginateArray(req, reply, []);
        const { ctx, from } = scope;
        const q = await mergeRequestsListQuery(req.server, req.actor, ctx, { milestone: m.title, state: 'all', scope: 'all', non_archived: false, order_by: 'label_priority', sort: 'asc' });
        const rows = await paginateQuery(req, reply, q as any) as MergeRequestRow[];
        const pres = await loadMergeRequestPresentation(req.server, req.actor, rows, { from });
        return rows.map((r) => mergeRequestBasicEntity(r, pres));
      },
    },
    ...(kind === 'project' ? [{
      method: 'POST', url: `${base}/:milestone_id/promote`, summary: "Promote a project milestone to the project's group", tags, access: 'authenticated', ...admin,
      response: Type.Integer({ description: 'the status, 200, as the reference answers' }),
      input: Input({ id: IdOrPath(), milestone_id: Int() }),
      handler: async (req, reply) => {
        await promoteMilestone(req.server, req.actor, req.project.project, req.input.milestone_id);
        return reply.code(200).send(200);
      },
    } satisfies RouteDef<any>] : []),
    {
      method: 'POST', url: base, summary: `Create a milestone of a ${owner}`, tags, access: 'authenticated', ...admin,
      response: Milestone,
      input: Input({ id: IdOrPath(), title: Str(), ...dates }),
      handler: async (req) => (await present(req, [await createMilestone(req.server, parentOf(req, kind), inputOf(req.input))]))[0],
    },
    {
      method: 'PUT', url: `${base}/:milestone_id`, summary: `Update a milestone of a ${owner}, or close or reopen it`, tags, access: 'authenticated', ...admin,
      response: Milestone,
      input: Input({ id: IdOrPath(), milestone_id: Int(), title: Opt(Str()), state_event: Opt(Enum(['close', 'activate'] as const)), ...dates }),
      handler: async (req) => {
        const fields = ['title', 'description', 'start_date', 'due_date', 'state_event'];
        if (!fields.some((k) => req.input[k] !== undefined)) throw ParamError.group(fields, 'at_least_one');
        const parent = parentOf(req, kind);
        const m = await getMilestone(req.server.db, parent, req.input.milestone_id);
        return (await present(req, [await updateMilestone(req.server, parent, m, inputOf(req.input))]))[0];
      },
    },
    {
      method: 'DELETE', url: `${base}/:milestone_id`, summary: `Delete a milestone of a ${owner}`, tags, access: 'authenticated', ...admin,
      response: null,
      input: Input({ id: IdOrPath(), milestone_id: Int() }),
      handler: async (req) => {
        const m = await getMilestone(req.server.db, parentOf(req, kind), req.input.milestone_id);
        await deleteMilestone(req.server, m);
        return undefined;
      },
    },
  ];
}

export const milestoneRoutes: RouteDef<any>[] = [...routesFor('project'), ...routesFor('group')];
