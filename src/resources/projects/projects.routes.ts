import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateOnly, DateTime, Enum, File, Input, Int, IntEnum, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { COUNT_LIMIT, pageParams, paginateQuery, setKeysetLink, setOffsetHeaders } from '../../http/pagination.ts';
import { type ProjectContext } from '../../http/access.ts';
import { accepted, keysetUnavailable, offsetLimitExceeded, sendRendered } from '../../http/errors.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import type { Actor } from '../../http/auth.ts';
import { NotFoundError, ParamError } from '../../platform/errors.ts';
import { ROLE_LEVELS, ALL_ACCESS_LEVELS } from '../../platform/membership.ts';
import { getUserOr404 } from '../users/users.service.ts';
import { subtreeIds } from '../groups/groups.service.ts';
import {
  COLUMN_FEATURES, SETTING_FEATURES, SETTING_PARAMS, createProject, customAttributeOr404, customAttributes, deleteCustomAttribute, deleteProject,
  forkProject, personalNamespace, reload, setArchived, setCustomAttribute, setStar, shareProject, starrersQuery, topicsQuery, transferProject,
  unlinkFork, unshareProject, updateProject, type Project, namespaceById, projectGroupsQuery, projectUsersQuery, projectLanguages,
  topicOr404, createTopic, updateTopic, deleteTopic,
} from './projects.service.ts';
import { ORDER_BY, USER_ORDER_BY, accessFromAuthorization, buildListQuery, cachedPage, cappedCount, type BuiltList, type ListInput, type ListScope } from './projects.list.ts';
import { projectRows, type RowKey } from '../../platform/project-rows.ts';
import { jsonArray, renderProjects } from './projects.render.ts';
import { bodyFromParts } from '../../http/plumbing.ts';
import { loadPresentation, presentOne, projectShare, publicGroupDetails, starrer, topicEntity, type PresentOptions } from './projects.presenter.ts';
import { AnyProject, CustomAttribute, ProjectShare, PublicGroupDetails, Starrer, Topic } from './projects.schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { userBasic } from '../users/users.presenter.ts';
import { Accepted } from '../../http/response-schemas.ts';

const OFFSET_LIMIT = 50_000;
const Visibility = Enum(['private', 'internal', 'public'] as const);
const FeatureLevel = Enum(['disabled', 'private', 'enabled', 'public'] as const);
const Topics = Type.Array(Str());
/** A row id: beyond the integer columns' range it is refused as a value rather than sent to the database. */
const Id = () => Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 });

const SETTING_TYPES: Record<string, any> = {
  ci_default_git_depth: Int(), build_timeout: Int(), runner_token_expiration_interval: Int(),
  auto_cancel_pending_pipelines: Enum(['enabled', 'disabled'] as const),
  merge_method: Enum(['merge', 'rebase_merge', 'ff'] as const),
  squash_option: Enum(['never', 'always', 'default_on', 'default_off'] as const),
  auto_devops_deploy_strategy: Enum(['continuous', 'manual', 'timed_incremental'] as const),
  ci_config_path: Str(), suggestion_commit_message: Str(), merge_commit_template: Str(), squash_commit_template: Str(),
  issue_branch_template: Str(), external_authorization_classification_label: Str(),
};

/** Attributes accepted by create and edit, in the reference's order. */
const ProjectAttributes = {
  name: Opt(Str()),
  path: Opt(Str()),
  description: Opt(Str()),
  visibility: Opt(Visibility),
  topics: Opt(Topics),
  tag_list: Opt(Topics),
  issues_enabled: Opt(Bool()),
  merge_requests_enabled: Opt(Bool()),
  wiki_enabled: Opt(Bool()),
  jobs_enabled: Opt(Bool()),
  snippets_enabled: Opt(Bool()),
  container_registry_enabled: Opt(Bool()),
  emails_enabled: Opt(Bool()),
  public_builds: Opt(Bool()),
  ...Object.fromEntries([...COLUMN_FEATURES, ...SETTING_FEATURES].map((f) => [`${f}_access_level`, Opt(FeatureLevel)])),
  ...Object.fromEntries(SETTING_PARAMS.map((k) => [k, Opt(SETTING_TYPES[k] ?? Bool())])),
  avatar: Opt(File({ description: 'avatar image (multipart); empty to remove it' })),
};
const UPDATE_KEYS = ['name', 'path', 'description', 'default_branch', 'visibility', 'topics', 'tag_list', ...Object.keys(ProjectAttributes).filter((k) => !['name', 'path', 'description', 'visibility', 'topics', 'tag_list'].includes(k))];

const CreateInput = {
  ...ProjectAttributes,
  namespace_id: Opt(Str()),
  default_branch: Opt(Str()),
  initialize_with_readme: Opt(Bool()),
  import_url: Opt(Str()),
};

const ListParams = {
  archived: Opt(Bool()),
  id_after: Opt(Id()),
  id_before: Opt(Id()),
  imported: Opt(Bool({ default: false })),
  include_pending_delete: Opt(Bool()),
  last_activity_after: Opt(DateTime()),
  last_activity_before: Opt(DateTime()),
  membership: Opt(Bool({ default: false })),
  min_access_level: Opt(IntEnum(ALL_ACCESS_LEVELS)),
  order_by: Opt(Enum(ORDER_BY, { default: 'created_at' })),
  owned: Opt(Bool({ default: false })),
  repository_checksum_failed: Opt(Bool({ default: false })),
  repository_storage: Opt(Str()),
  search_namespaces: Opt(Bool()),
  search: Opt(Str()),
  simple: Opt(Bool({ default: false })),
  sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
  starred: Opt(Bool({ default: false })),
  statistics: Opt(Bool({ default: false })),
  topic: Opt(Topics),
  topic_id: Opt(Id()),
  updated_before: Opt(DateTime()),
  updated_after: Opt(DateTime()),
  visibility: Opt(Visibility),
  wiki_checksum_failed: Opt(Bool({ default: false })),
  with_custom_attributes: Opt(Bool({ default: false })),
  with_issues_enabled: Opt(Bool({ default: false })),
  with_merge_requests_enabled: Opt(Bool({ default: false })),
  with_programming_language: Opt(Str()),
  custom_attributes: Opt(Type.Record(Type.String(), Type.String())),
  pagination: Opt(Str()),
  ...PaginationParams,
};

const UserListParams = {
  user_id: Str(),
  archived: Opt(Bool()),
  id_after: Opt(Id()),
  id_before: Opt(Id()),
  membership: Opt(Bool({ default: false })),
  min_access_level: Opt(IntEnum(ALL_ACCESS_LEVELS)),
  order_by: Opt(Enum(USER_ORDER_BY, { default: 'created_at' })),
  owned: Opt(Bool({ default: false })),
  search: Opt(Str()),
  simple: Opt(Bool({ default: false })),
  sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
  starred: Opt(Bool({ default: false })),
  statistics: Opt(Bool({ default: false })),
  visibility: Opt(Visibility),
  with_custom_attributes: Opt(Bool({ default: false })),
  with_issues_enabled: Opt(Bool({ default: false })),
  with_merge_requests_enabled: Opt(Bool({ default: false })),
  with_programming_language: Opt(Str()),
  updated_before: Opt(DateTime()),
  updated_after: Opt(DateTime()),
  pagination: Opt(Str()),
  ...PaginationParams,
};

/** The filters the group and starred project listings share with the reference's other project finders. */
const ListFilterParams = {
  archived: Opt(Bool()),
  visibility: Opt(Visibility),
  order_by: Opt(Enum(USER_ORDER_BY, { default: 'created_at' })),
  sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
  search: Opt(Str()),
  simple: Opt(Bool({ default: false })),
  owned: Opt(Bool({ default: false })),
  starred: Opt(Bool({ default: false })),
  with_issues_enabled: Opt(Bool({ default: false })),
  with_merge_requests_enabled: Opt(Bool({ default: false })),
  min_access_level: Opt(IntEnum(ALL_ACCESS_LEVELS)),
  with_custom_attributes: Opt(Bool({ default: false })),
  statistics: Opt(Bool({ default: false })),
  ...PaginationParams,
};

/** GET /groups/:id/projects: the reference's filters of a group's project listing. */
const GroupListParams = {
  id: Str(),
  ...ListFilterParams,
  with_shared: Opt(Bool({ default: true })),
  include_subgroups: Opt(Bool({ default: false })),
};

/** GET /users/:user_id/starred_projects */
const StarredListFilters = { ...ListFilterParams, membership: Opt(Bool({ default: false })) };
const StarredListParams = { user_id: Str(), ...StarredListFilters };

function wantsFull(actor: Actor, simple: boolean | undefined): boolean {
  return !!actor.user && !simple;
}

type PresentRequest = { simple?: boolean; statistics?: boolean; customAttributes?: boolean; access?: PresentOptions['access'] };

function presentOptions(actor: Actor, o: PresentRequest): PresentOptions {
  return {
    full: wantsFull(actor, o.simple), statistics: !!o.statistics && !!actor.user && !o.simple, customAttributes: !!o.customAttributes && actor.admin,
    access: o.access,
  };
}

async function presentProjects(req: ApiRequest<any>, rows: Project[], o: PresentRequest) {
  const pres = await loadPresentation(req.server, req.actor, rows, presentOptions(req.actor, o));
  return rows.map((r) => presentOne(r, pres));
}

const NOT_FILTERS = new Set(['page', 'per_page', 'pagination', 'simple', 'statistics', 'with_custom_attributes', 'private_token', 'access_token', 'id']);

/** One page of a project listing: keyset by id when asked, otherwise offset with the 50,000 cap. */
async function listProjects(req: ApiRequest<any>, reply: FastifyReply, scope: ListScope = {}, only?: Record<string, unknown>) {
  // Only the route's declared parameters filter (GET /users/:id/projects has fewer than GET /projects).
  const i = (only ? Object.fromEntries(Object.entries(req.input).filter(([k]) => k in only)) : req.input) as ListInput & { page?: number; per_page?: number };
  const keyset = i.pagination === 'keyset';
  if (keyset && i.order_by !== 'id') return sendRendered(reply, keysetUnavailable);
  const p = pageParams(i);
  if (!keyset && p.page * p.perPage > OFFSET_LIMIT) return sendRendered(reply, offsetLimitExceeded('Project', OFFSET_LIMIT));
  const built = await buildListQuery(req.server, req.actor, i, scope);
  const actor = req.actor;
  const filters = Object.entries(i).filter(([k, v]) => !NOT_FILTERS.has(k) && v !== undefined).sort(([a], [b]) => a.localeCompare(b));
  const key = JSON.stringify([actor.user?.id ?? 0, actor.admin, scope, filters]);
  let rows: Project[] = [];
  if (keyset) {
    if (!built.empty) {
      const page = await cachedPage(req.server, `${key}:keyset:${p.perPage}`, async () => ({ keys: await keysOf(built.query).limit(p.perPage).execute(), total: null }));
      rows = await projectRows(req.server, page.keys);
    }
    const last = rows.at(-1);
    if (last) {
      const bound = built.sort === 'asc' ? { id_after: last.id, id_before: undefined } : { id_before: last.id, id_after: undefined };
      setKeysetLink(req, reply, rows.length, bound);
    }
  } else if (built.empty) {
    setOffsetHeaders(req, reply, p, 0, false);
  } else {
    const page = await cachedPage(req.server, `${key}:${p.page}:${p.perPage}`, async () => {
      const [total, keys] = await Promise.all([
        cappedCount(req.server, key, built.query, COUNT_LIMIT),
        keysOf(built.query).limit(p.perPage + 1).offset((p.page - 1) * p.perPage).execute() as Promise<RowKey[]>,
      ]);
      return { keys, total };
    });
    const total = page.total;
    rows = await projectRows(req.server, page.keys);
    const hasNext = rows.length > p.perPage;
    if (hasNext) rows.pop();
    setOffsetHeaders(req, reply, p, total, hasNext);
  }
  const access = built.auth && !i.simple ? accessFromAuthorization(req.server, built.auth, rows) : undefined;
  const parts = await renderProjects(req.server, req.actor, rows, presentOptions(req.actor, { simple: i.simple, statistics: i.statistics, customAttributes: i.with_custom_attributes, access }));
  // The array's bracket is part of what the tag covers, so a one-entity page differs from the entity.
  bodyFromParts(reply, [Buffer.from('['), ...parts.map((x) => x.digest)]);
  return reply.type('application/json').send(jsonArray(parts));
}

/** The page query narrowed to what the row cache needs (see platform/project-rows.ts). */
function keysOf(query: BuiltList['query']): any {
  return query.clearSelect().select(['projects.id', 'projects.row_version']);
}

async function presentSingle(req: ApiRequest<any>, p: Project, o: { statistics?: boolean; customAttributes?: boolean; ctx?: ProjectContext } = {}) {
  const access = o.ctx && req.actor.user ? new Map([[p.id, o.ctx.access]]) : undefined;
  return (await presentProjects(req, [p], { statistics: o.statistics, customAttributes: o.customAttributes, access }))[0];
}

function atLeastOne(input: Record<string, unknown>, keys: string[]): void {
  if (!keys.some((k) => input[k] !== undefined)) throw ParamError.of(keys.join(', '), 'at_least_one');
}

const idParam = { id: Str() };

export const projectRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects', summary: 'List projects', tags: ['projects'], access: 'public',
    response: Type.Array(AnyProject),
    input: Input(ListParams),
    handler: (req, reply) => listProjects(req, reply),
  },
  {
    method: 'POST', url: '/projects', summary: 'Create a project', tags: ['projects'], access: 'authenticated',
    response: AnyProject,
    input: Input(CreateInput),
    handler: async (req) => {
      atLeastOne(req.input, ['name', 'path']);
      const p = await createProject(req.server, req.actor, req.input);
      return presentSingle(req, p);
    },
  },
  {
    method: 'POST', url: '/projects/user/:user_id', summary: 'Create a project for a user', tags: ['projects'], access: 'admin',
    response: AnyProject,
    input: Input({ user_id: Id(), ...CreateInput }),
    handler: async (req) => {
      atLeastOne(req.input, ['name', 'path']);
      const target = await getUserOr404(req.server, req.input.user_id);
      const actor: Actor = { user: target, admin: !!target.admin, token: req.actor.token, via: req.actor.via, sudo: req.actor.sudo };
      const p = await createProject(req.server, actor, req.input);
      return presentSingle(req, p);
    },
  },
  {
    method: 'GET', url: '/projects/:id', summary: 'One project', tags: ['projects'], access: 'public', project: { ability: 'read_project' },
    response: AnyProject,
    input: Input({ ...idParam, statistics: Opt(Bool({ default: false })), license: Opt(Bool({ default: false })), with_custom_attributes: Opt(Bool({ default: false })) }),
    handler: async (req, reply) => {
      const ctx = req.project;
      const access = req.actor.user ? new Map([[ctx.project.id, ctx.access]]) : undefined;
      const [entity] = await renderProjects(req.server, req.actor, [ctx.project], presentOptions(req.actor, { statistics: req.input.statistics, customAttributes: req.input.with_custom_attributes, access }));
      bodyFromParts(reply, [entity!.digest]);
      return reply.type('application/json').send(entity!.bytes);
    },
  },
  {
    method: 'PUT', url: '/projects/:id', summary: 'Edit a project', tags: ['projects'], access: 'authenticated', project: { ability: 'admin_project' },
    response: AnyProject,
    input: Input({ ...idParam, ...ProjectAttributes, default_branch: Opt(Str()) }),
    handler: async (req) => {
      const ctx = req.project;
      atLeastOne(req.input, UPDATE_KEYS);
      const { id: _id, ...rest } = req.input;
      return presentSingle(req, await updateProject(req.server, ctx, rest, req.actor.user?.id ?? null));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id', summary: 'Delete a project', tags: ['projects'], access: 'authenticated', project: { ability: 'remove_project' },
    response: Accepted,
    input: Input(idParam),
    handler: async (req, reply) => {
      const ctx = req.project;
      checkUnmodifiedSince(req, ctx.project.updated_at);
      await deleteProject(req.server, ctx.project);
      return sendRendered(reply, accepted);
    },
  },
  ...(['archive', 'unarchive'] as const).map((action): RouteDef<any> => ({
    method: 'POST', url: `/projects/:id/${action}`, summary: `${action === 'archive' ? 'Archive' : 'Unarchive'} a project`, tags: ['projects'], access: 'authenticated', project: { ability: 'archive_project' },
    response: AnyProject,
    input: Input(idParam),
    handler: async (req) => {
      const ctx = req.project;
      return presentSingle(req, await setArchived(req.server, ctx.project, action === 'archive'));
    },
  })),
  ...(['star', 'unstar'] as const).map((action): RouteDef<any> => ({
    method: 'POST', url: `/projects/:id/${action}`, summary: `${action === 'star' ? 'Star' : 'Unstar'} a project`, tags: ['projects'], access: 'authenticated', project: { ability: 'read_project' },
    response: AnyProject,
    input: Input(idParam),
    handler: async (req, reply) => {
      const ctx = req.project;
      const changed = await setStar(req.server, ctx.project, req.actor.user!.id, action === 'star');
      if (!changed) return reply.code(304).send();
      return presentSingle(req, await reload(req.server, ctx.project.id));
    },
  })),
  {
    method: 'GET', url: '/projects/:id/starrers', summary: 'Users who starred a project', tags: ['projects'], access: 'public', project: { ability: 'read_project' },
    response: Type.Array(Starrer),
    input: Input({ ...idParam, search: Opt(Str()), ...PaginationParams }),
    handler: async (req, reply) => {
      const ctx = req.project;
      const rows = await paginateQuery(req, reply, starrersQuery(req.server, req.actor, ctx.project.id, req.input.search));
      const base = req.server.config.externalUrl;
      return rows.map((r) => starrer(r, base));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/transfer', summary: 'Transfer a project to another namespace', tags: ['projects'], access: 'authenticated', project: { ability: 'change_namespace' },
    response: AnyProject,
    input: Input({ ...idParam, namespace: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      return presentSingle(req, await transferProject(req.server, req.actor, ctx.project, req.input.namespace));
    },
  },
  {
    method: 'POST', url: '/projects/:id/fork', summary: 'Fork a project', tags: ['projects'], access: 'authenticated', project: { ability: 'fork_project' },
    response: AnyProject,
    input: Input({
      ...idParam, namespace_id: Opt(Str()), namespace_path: Opt(Str()), namespace: Opt(Str()), path: Opt(Str()), name: Opt(Str()),
      description: Opt(Str()), visibility: Opt(Visibility), mr_default_target_self: Opt(Bool()), branches: Opt(Str()),
    }),
    handler: async (req) => {
      const ctx = req.project;
      return presentSingle(req, await forkProject(req.server, req.actor, ctx, req.input));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/fork', summary: 'Remove the fork relation', tags: ['projects'], access: 'authenticated', project: { ability: 'remove_fork_project' },
    response: null,
    input: Input(idParam),
    handler: async (req, reply) => {
      const ctx = req.project;
      if (!(await unlinkFork(req.server, ctx.project))) return reply.code(304).send();
      return undefined;
    },
  },
  {
    method: 'GET', url: '/projects/:id/forks', summary: 'Forks of a project', tags: ['projects'], access: 'public', project: { ability: 'read_project' },
    response: Type.Array(AnyProject),
    input: Input({ ...idParam, ...ListParams }),
    handler: async (req, reply) => {
      const ctx = req.project;
      return listProjects(req, reply, { forkedFrom: ctx.project.id });
    },
  },
  {
    method: 'POST', url: '/projects/:id/share', summary: 'Share a project with a group', tags: ['projects'], access: 'authenticated', project: { ability: 'admin_project' },
    response: ProjectShare,
    input: Input({ ...idParam, group_id: Id(), group_access: IntEnum(ROLE_LEVELS), expires_at: Opt(DateOnly()) }),
    handler: async (req) => {
      const ctx = req.project;
      return projectShare(await shareProject(req.server, req.actor, ctx.project, req.input));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/share/:group_id', summary: 'Stop sharing a project with a group', tags: ['projects'], access: 'authenticated', project: { ability: 'admin_project' },
    response: null,
    input: Input({ ...idParam, group_id: Id() }),
    handler: async (req) => {
      const ctx = req.project;
      await unshareProject(req.server, ctx.project, req.input.group_id);
      return undefined;
    },
  },
  {
    method: 'GET', url: '/projects/:id/custom_attributes', summary: 'Custom attributes of a project', tags: ['projects'], access: 'admin', project: { ability: 'read_project' },
    response: Type.Array(CustomAttribute),
    input: Input(idParam),
    handler: async (req) => {
      const ctx = req.project;
      return customAttributes(req.server, { kind: 'project', id: ctx.project.id });
    },
  },
  {
    method: 'GET', url: '/projects/:id/custom_attributes/:key', summary: 'One custom attribute of a project', tags: ['projects'], access: 'admin', project: { ability: 'read_project' },
    response: CustomAttribute,
    input: Input({ ...idParam, key: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      return customAttributeOr404(req.server, { kind: 'project', id: ctx.project.id }, req.input.key);
    },
  },
  {
    method: 'PUT', url: '/projects/:id/custom_attributes/:key', summary: 'Set a custom attribute of a project', tags: ['projects'], access: 'admin', project: { ability: 'read_project' },
    response: CustomAttribute,
    input: Input({ ...idParam, key: Str(), value: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      return setCustomAttribute(req.server, { kind: 'project', id: ctx.project.id }, req.input.key, req.input.value);
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/custom_attributes/:key', summary: 'Delete a custom attribute of a project', tags: ['projects'], access: 'admin', project: { ability: 'read_project' },
    response: null,
    input: Input({ ...idParam, key: Str() }),
    handler: async (req) => {
      const ctx = req.project;
      await deleteCustomAttribute(req.server, { kind: 'project', id: ctx.project.id }, req.input.key);
      return undefined;
    },
  },
  {
    method: 'GET', url: '/topics', summary: 'List topics', tags: ['topics'], access: 'public',
    response: Type.Array(Topic),
    input: Input({ search: Opt(Str()), without_projects: Opt(Bool()), ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, topicsQuery(req.server, { search: req.input.search, withoutProjects: req.input.without_projects }));
      return rows.map((r) => topicEntity(r, req.server.config.externalUrl));
    },
  },
  {
    method: 'GET', url: '/users/:user_id/projects', summary: "Projects in a user's namespace", tags: ['projects'], access: 'public',
    response: Type.Array(AnyProject),
    input: Input(UserListParams),
    handler: async (req, reply) => {
      const raw = String(req.input.user_id);
      if (/^\d+$/.test(raw) && Number(raw) > 2_147_483_647) throw new NotFoundError('User');
      const user = await getUserOr404(req.server, raw);
      const self = req.actor.user?.id === user.id;
      const ns = await personalNamespace(req.server, user.id);
      if (!ns || (user.private_profile && !self && !req.actor.admin)) {
        setOffsetHeaders(req, reply, pageParams(req.input), 0, false);
        return [];
      }
      return listProjects(req, reply, { namespaceId: ns.id }, UserListParams);
    },
  },
  {
    method: 'GET', url: '/groups/:id/projects', summary: "A group's projects", tags: ['groups', 'projects'], access: 'public', group: { ability: 'read_group' },
    response: Type.Array(AnyProject),
    input: Input(GroupListParams),
    handler: async (req, reply) => {
      const { group } = req.group;
      const namespaceIds = req.input.include_subgroups ? await subtreeIds(req.server.db, group) : [group.id];
      return listProjects(req, reply, { group: { namespaceIds, sharedWith: req.input.with_shared ? group.id : undefined } }, ListFilterParams);
    },
  },
  {
    method: 'GET', url: '/users/:user_id/starred_projects', summary: 'Projects a user starred', tags: ['projects'], access: 'public',
    response: Type.Array(AnyProject),
    input: Input(StarredListParams),
    handler: async (req, reply) => {
      const raw = String(req.input.user_id);
      if (/^\d+$/.test(raw) && Number(raw) > 2_147_483_647) throw new NotFoundError('User');
      const user = await getUserOr404(req.server, raw);
      // A private profile hides what its owner starred from everyone but them and administrators.
      if (user.private_profile && req.actor.user?.id !== user.id && !req.actor.admin) {
        setOffsetHeaders(req, reply, pageParams(req.input), 0, false);
        return [];
      }
      return listProjects(req, reply, { starredBy: user.id }, StarredListFilters);
    },
  },
  {
    method: 'GET', url: '/projects/:id/groups', summary: "A project's groups: its ancestors and the groups it is shared with", tags: ['projects'], access: 'public', project: { ability: 'read_project' },
    response: Type.Array(PublicGroupDetails),
    input: Input({ ...idParam, search: Opt(Str()), skip_groups: Opt(Type.Array(Id())), with_shared: Opt(Bool({ default: false })), shared_min_access_level: Opt(IntEnum(ROLE_LEVELS)), ...PaginationParams }),
    handler: async (req, reply) => {
      const { project } = req.project;
      const ns = (await namespaceById(req.server, project.namespace_id))!;
      const rows = await paginateQuery(req, reply, projectGroupsQuery(req.server, req.actor, ns, project, req.input));
      const base = req.server.config.externalUrl;
      return rows.map((g) => publicGroupDetails(g, base));
    },
  },
  {
    method: 'GET', url: '/projects/:id/users', summary: "Users with access to a project through a membership", tags: ['projects'], access: 'public', project: { ability: 'read_project' },
    response: Type.Array(UserBasic),
    input: Input({ ...idParam, search: Opt(Str()), skip_users: Opt(Type.Array(Id())), ...PaginationParams }),
    handler: async (req, reply) => {
      const { project } = req.project;
      const ns = (await namespaceById(req.server, project.namespace_id))!;
      const rows = await paginateQuery(req, reply, projectUsersQuery(req.server, ns, project, req.input));
      return rows.map((u) => userBasic(u, req.server.config.externalUrl));
    },
  },
  {
    method: 'GET', url: '/projects/:id/languages', summary: "The languages of a project's default branch, in percent", tags: ['projects'], access: 'public', project: { ability: 'download_code' },
    response: Type.Record(Type.String(), Type.Number()),
    input: Input(idParam),
    handler: async (req) => projectLanguages(req.server, req.project.project.id),
  },
  {
    method: 'GET', url: '/topics/:id', summary: 'One topic', tags: ['topics'], access: 'public',
    response: Topic,
    input: Input({ id: Id() }),
    handler: async (req) => topicEntity(await topicOr404(req.server, req.input.id), req.server.config.externalUrl),
  },
  {
    method: 'POST', url: '/topics', summary: 'Create a topic', tags: ['topics'], access: 'admin',
    response: Topic,
    input: Input({ name: Str(), title: Str(), description: Opt(Str()), avatar: Opt(File({ description: 'avatar image (multipart)' })) }),
    handler: async (req) => topicEntity(await createTopic(req.server, req.input), req.server.config.externalUrl),
  },
  {
    method: 'PUT', url: '/topics/:id', summary: 'Edit a topic', tags: ['topics'], access: 'admin',
    response: Topic,
    input: Input({ id: Id(), name: Opt(Str()), title: Opt(Str()), description: Opt(Str()), avatar: Opt(File({ description: 'avatar image (multipart); empty to remove it' })) }),
    handler: async (req) => {
      const t = await topicOr404(req.server, req.input.id);
      const { id: _id, ...rest } = req.input;
      atLeastOne(rest, ['name', 'title', 'description', 'avatar']);
      return topicEntity(await updateTopic(req.server, t, rest), req.server.config.externalUrl);
    },
  },
  {
    method: 'DELETE', url: '/topics/:id', summary: 'Delete a topic', tags: ['topics'], access: 'admin',
    response: null,
    input: Input({ id: Id() }),
    handler: async (req) => {
      await deleteTopic(req.server, await topicOr404(req.server, req.input.id));
      return undefined;
    },
  },
];
