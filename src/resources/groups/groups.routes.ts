import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateOnly, Enum, File, Input, Int, IntEnum, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { pageParams, paginateQuery, setKeysetLink } from '../../http/pagination.ts';
import { findGroup } from '../../http/access.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { accepted, keysetUnavailable, offsetLimitExceeded, sendRendered } from '../../http/errors.ts';
import { ForbiddenError } from '../../platform/errors.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { ALL_ACCESS_LEVELS, ROLE_LEVELS } from '../../platform/membership.ts';
import {
  PROJECT_CREATION_LEVELS, SUBGROUP_CREATION_LEVELS, assertCanCreateTopLevel, createGroup, DESTROY_GROUP_JOB, destroyGroup, scheduleGroupDeletion, encodeGroupCursor, groupKeysetPage,
  groupListQuery, orderedGroups, shareGroup, sharedWithGroups, transferFailure, transferGroup, unshareGroup, updateGroup, visibleGroupProjects, type Group, type GroupListInput,
} from './groups.service.ts';
import { groupDetail, groupEntity, projectSummary } from './groups.presenter.ts';
import { canGroup } from '../../platform/access/policy.ts';
import { Group as GroupShape, GroupDetail } from './groups.schemas.ts';
import { CustomAttribute } from '../projects/projects.schemas.ts';
import { customAttributeOr404, customAttributes, deleteCustomAttribute, setCustomAttribute } from '../projects/projects.service.ts';
import { Accepted } from '../../http/response-schemas.ts';

const OFFSET_LIMIT = 50_000;

const SettingsParams = {
  description: Opt(Str()),
  visibility: Opt(Enum(['private', 'internal', 'public'] as const)),
  share_with_group_lock: Opt(Bool()),
  require_two_factor_authentication: Opt(Bool()),
  two_factor_grace_period: Opt(Int()),
  project_creation_level: Opt(Enum(PROJECT_CREATION_LEVELS)),
  auto_devops_enabled: Opt(Bool()),
  subgroup_creation_level: Opt(Enum(SUBGROUP_CREATION_LEVELS)),
  emails_disabled: Opt(Bool()),
  emails_enabled: Opt(Bool()),
  mentions_disabled: Opt(Bool()),
  lfs_enabled: Opt(Bool()),
  request_access_enabled: Opt(Bool()),
  default_branch_protection: Opt(IntEnum([0, 1, 2, 3, 4])),
  default_branch: Opt(Str()),
  avatar: Opt(File({ description: 'avatar image (multipart); empty to remove it' })),
};

const ListParams = {
  skip_groups: Opt(Type.Array(Type.String())),
  all_available: Opt(Bool()),
  search: Opt(Str()),
  owned: Opt(Bool({ default: false })),
  order_by: Opt(Enum(['name', 'path', 'id', 'similarity'] as const, { default: 'name' })),
  sort: Opt(Enum(['asc', 'desc'] as const, { default: 'asc' })),
  statistics: Opt(Bool({ default: false })),
  min_access_level: Opt(IntEnum(ALL_ACCESS_LEVELS)),
  top_level_only: Opt(Bool()),
  with_custom_attributes: Opt(Bool({ default: false })),
  pagination: Opt(Str()),
  cursor: Opt(Str()),
  ...PaginationParams,
};

async function presentList(req: ApiRequest<any>, rows: Group[]) {
  const base = req.server.config.externalUrl;
  return rows.map((g) => groupEntity(g, base));
}

async function listGroups(req: ApiRequest<any>, reply: FastifyReply, parent: Group | null, descendants = false) {
  const i = req.input as GroupListInput;
  const q = groupListQuery(req.server, req.actor, i, parent, descendants);
  // Anonymous group lists use the pagination strategies of the reference: keyset by name, and the offset cap.
  if (!req.actor.user && !parent) {
    const p = pageParams(i);
    if (i.pagination === 'keyset') {
      if ((i.order_by ?? 'name') !== 'name' || (i.sort ?? 'asc') !== 'asc') return sendRendered(reply, keysetUnavailable);
      const rows = await groupKeysetPage(q, i.cursor, p.perPage);
      const hasNext = rows.length > p.perPage;
      if (hasNext) rows.pop();
      // The next link appears only while more rows follow: the last page carries none.
      if (hasNext) setKeysetLink(req, reply, rows.length, { cursor: encodeGroupCursor(rows[rows.length - 1]), per_page: p.perPage }, ['page']);
      return presentList(req, rows);
    }
    if (p.page * p.perPage > OFFSET_LIMIT) return sendRendered(reply, offsetLimitExceeded('Group', OFFSET_LIMIT));
  }
  const rows = await paginateQuery(req, reply, orderedGroups(q, i));
  return presentList(req, rows);
}

/** The group's detail: its shares, and its projects when asked. */
async function detail(req: ApiRequest<any>, g: Group, withProjects = false) {
  const shares = (await sharedWithGroups(req.server, [g.id])).get(g.id) ?? [];
  const projects = withProjects ? await groupProjects(req, g) : undefined;
  return groupDetail(g, req.server.config.externalUrl, { projects, shares });
}

async function groupProjects(req: ApiRequest<any>, g: Group) {
  const rows = await visibleGroupProjects(req.server, req.actor, g);
  const base = req.server.config.externalUrl;
  return rows.map((p) => projectSummary(p, g, base));
}

export const groupRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/groups', summary: 'List groups', tags: ['groups'], access: 'public',
    response: Type.Array(GroupShape),
    input: Input(ListParams),
    handler: async (req, reply) => listGroups(req, reply, null),
  },
  {
    method: 'POST', url: '/groups', summary: 'Create a group', tags: ['groups'], access: 'authenticated',
    response: GroupDetail,
    input: Input({ name: Str(), path: Str(), parent_id: Opt(Int()), ...SettingsParams }),
    handler: async (req) => {
      const i = req.input;
      let parent: Group | null = null;
      if (i.parent_id !== undefined) {
        const ctx = await findGroup(req.server.db, req.actor, i.parent_id);
        if (!canGroup(req.actor, 'create_subgroup', ctx.group, ctx.level)) throw new ForbiddenError();
        parent = ctx.group;
      } else {
        assertCanCreateTopLevel(req.actor);
      }
      const { parent_id: _p, ...settings } = i;
      const g = await createGroup(req.server, req.actor.user!.id, parent, settings);
      return detail(req, g);
    },
  },
  {
    method: 'GET', url: '/groups/:id', summary: 'One group', tags: ['groups'], access: 'public', group: { ability: 'read_group' },
    response: Type.Union([GroupDetail, GroupShape]),
    input: Input({ id: Str(), with_projects: Opt(Bool({ default: true })), with_custom_attributes: Opt(Bool({ default: false })) }),
    handler: async (req) => {
      const { group } = req.group;
      const base = req.server.config.externalUrl;
      if (!req.input.with_projects) return groupEntity(group, base);
      return detail(req, group, true);
    },
  },
  {
    method: 'PUT', url: '/groups/:id', summary: 'Edit a group', tags: ['groups'], access: 'authenticated', group: { ability: 'admin_group' },
    response: GroupDetail,
    input: Input({ id: Str(), name: Opt(Str()), path: Opt(Str()), ...SettingsParams }),
    handler: async (req) => {
      const ctx = req.group;
      const { id: _id, ...settings } = req.input;
      const g = await updateGroup(req.server, ctx.group, settings);
      return detail(req, g, true);
    },
  },
  {
    method: 'DELETE', url: '/groups/:id', summary: 'Delete a group', tags: ['groups'], access: 'authenticated', group: { ability: 'admin_group' },
    response: Accepted,
    input: Input({ id: Str() }),
    handler: async (req, reply) => {
      const ctx = req.group;
      checkUnmodifiedSince(req, ctx.group.updated_at);
      await scheduleGroupDeletion(req.server, ctx.group);
      return sendRendered(reply, accepted);
    },
  },
  {
    method: 'GET', url: '/groups/:id/subgroups', summary: 'List the direct subgroups of a group', tags: ['groups'], access: 'public', group: { ability: 'read_group' },
    response: Type.Array(GroupShape),
    input: Input({ id: Str(), ...ListParams }),
    handler: async (req, reply) => {
      const { group } = req.group;
      return listGroups(req, reply, group);
    },
  },
  {
    method: 'GET', url: '/groups/:id/descendant_groups', summary: 'List every group below a group', tags: ['groups'], access: 'public', group: { ability: 'read_group' },
    response: Type.Array(GroupShape),
    input: Input({ id: Str(), ...ListParams }),
    handler: async (req, reply) => {
      const { group } = req.group;
      return listGroups(req, reply, group, true);
    },
  },
  {
    method: 'POST', url: '/groups/:id/transfer', summary: 'Move a group under another group or to the top level', tags: ['groups'], access: 'authenticated', group: { ability: 'admin_group' },
    response: GroupDetail,
    input: Input({ id: Str(), group_id: Opt(Int()) }),
    handler: async (req) => {
      const ctx = req.group;
      let target: Group | null = null;
      if (req.input.group_id !== undefined) {
        const t = await findGroup(req.server.db, req.actor, req.input.group_id);
        if (!canGroup(req.actor, 'create_subgroup', t.group, t.level)) throw transferFailure("You don't have enough permissions.");
        target = t.group;
      } else if (!req.actor.admin && !req.actor.user?.can_create_group) {
        throw transferFailure("You don't have enough permissions.");
      }
      const g = await transferGroup(req.server, ctx.group, target);
      return detail(req, g);
    },
  },
  {
    method: 'POST', url: '/groups/:id/share', summary: 'Share a group with another group', tags: ['groups'], access: 'authenticated', group: { ability: 'admin_group' },
    response: GroupDetail,
    input: Input({ id: Str(), group_id: Int(), group_access: IntEnum(ROLE_LEVELS), expires_at: Opt(DateOnly()) }),
    handler: async (req) => {
      const { group } = req.group;
      const target = await findGroup(req.server.db, req.actor, req.input.group_id);
      await shareGroup(req.server, group, target.group, req.input);
      return detail(req, group);
    },
  },
  {
    method: 'DELETE', url: '/groups/:id/share/:group_id', summary: 'Stop sharing a group with another group', tags: ['groups'], access: 'authenticated', group: { ability: 'admin_group' },
    response: null,
    input: Input({ id: Str(), group_id: Int() }),
    handler: async (req) => {
      await unshareGroup(req.server, req.group.group, req.input.group_id);
      return undefined;
    },
  },
  {
    method: 'GET', url: '/groups/:id/custom_attributes', summary: 'Custom attributes of a group', tags: ['groups'], access: 'admin', group: { ability: 'read_group' },
    response: Type.Array(CustomAttribute),
    input: Input({ id: Str() }),
    handler: async (req) => customAttributes(req.server, { kind: 'group', id: req.group.group.id }),
  },
  {
    method: 'GET', url: '/groups/:id/custom_attributes/:key', summary: 'One custom attribute of a group', tags: ['groups'], access: 'admin', group: { ability: 'read_group' },
    response: CustomAttribute,
    input: Input({ id: Str(), key: Str() }),
    handler: async (req) => customAttributeOr404(req.server, { kind: 'group', id: req.group.group.id }, req.input.key),
  },
  {
    method: 'PUT', url: '/groups/:id/custom_attributes/:key', summary: 'Set a custom attribute of a group', tags: ['groups'], access: 'admin', group: { ability: 'read_group' },
    response: CustomAttribute,
    input: Input({ id: Str(), key: Str(), value: Str() }),
    handler: async (req) => setCustomAttribute(req.server, { kind: 'group', id: req.group.group.id }, req.input.key, req.input.value),
  },
  {
    method: 'DELETE', url: '/groups/:id/custom_attributes/:key', summary: 'Delete a custom attribute of a group', tags: ['groups'], access: 'admin', group: { ability: 'read_group' },
    response: null,
    input: Input({ id: Str(), key: Str() }),
    handler: async (req) => {
      await deleteCustomAttribute(req.server, { kind: 'group', id: req.group.group.id }, req.input.key);
      return undefined;
    },
  },
];

/** The area's background jobs: removing a group marked pending deletion (see `scheduleGroupDeletion`). */
export function groupJobs(deps: ServiceDeps): Record<string, JobKind<{ group_id: number }>> {
  return {
    [DESTROY_GROUP_JOB]: { concurrency: 1, run: (args) => destroyGroup(deps, args.group_id) },
  };
}
