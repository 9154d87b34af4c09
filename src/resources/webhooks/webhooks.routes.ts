import { Type, type TBoolean, type TOptional } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { RuleError } from '../../platform/errors.ts';
import {
  BRANCH_FILTER_STRATEGIES, createHook, deleteHook, getHookOr404, GROUP_HOOK_FLAGS, HOOK_FLAGS, hooksQuery, updateHook,
  type HookInput, type HookOwner, type WebHookRow,
} from './webhooks.service.ts';
import { TEST_TRIGGERS, testHook } from './webhooks.delivery.ts';
import { groupHook, projectHook } from './webhooks.presenter.ts';
import { Created, GroupHook, ProjectHook } from './webhooks.schemas.ts';

export { webhookJobs } from './webhooks.delivery.ts';

const flagProperties = (flags: readonly string[]) => Object.fromEntries(flags.map((f) => [f, Opt(Bool())])) as Record<string, TOptional<TBoolean>>;

const hookProperties = {
  token: Opt(Str({ description: 'secret sent in X-Gitlab-Token; never returned' })),
  name: Opt(Str()),
  description: Opt(Str()),
  push_events_branch_filter: Opt(Str({ description: 'branches whose pushes are sent' })),
  branch_filter_strategy: Opt(Enum(BRANCH_FILTER_STRATEGIES)),
  custom_headers: Opt(Type.Array(Type.Object({ key: Str(), value: Opt(Str()) }), { description: 'headers sent with every request' })),
};

function inputOf(req: ApiRequest<any>): HookInput {
  const i = req.input;
  const flags: HookInput['flags'] = {};
  for (const f of [...HOOK_FLAGS, ...GROUP_HOOK_FLAGS]) if (i[f] !== undefined) flags[f] = i[f];
  return {
    url: i.url, token: i.token, name: i.name, description: i.description, push_events_branch_filter: i.push_events_branch_filter,
    branch_filter_strategy: i.branch_filter_strategy, custom_headers: i.custom_headers, flags,
  };
}

/**
 * The five routes of one kind of hook, the same for a project's and a group's: listed, shown, created, changed,
 * removed and tested by whoever holds `admin_web_hook` on the owner (a project's Maintainer, a group's Owner).
 */
function hookRoutes(kind: 'project' | 'group'): RouteDef<any>[] {
  const isProject = kind === 'project';
  const base = isProject ? '/projects/:id/hooks' : '/groups/:id/hooks';
  const tags = [`${kind}_hooks`];
  const scope = isProject ? { project: { ability: 'admin_web_hook' } as const } : { group: { ability: 'admin_web_hook' } as const };
  const owner = (req: ApiRequest<any>): HookOwner => (isProject ? { projectId: req.project.project.id } : { groupId: req.group.group.id });
  const present = (h: WebHookRow, now: number) => (isProject ? projectHook(h, now) : groupHook(h, now));
  const Shape = isProject ? ProjectHook : GroupHook;
  const properties = { ...flagProperties(isProject ? HOOK_FLAGS : [...HOOK_FLAGS, ...GROUP_HOOK_FLAGS]), ...hookProperties };
  const of = isProject ? 'a project' : 'a group';
  return [
    {
      method: 'GET', url: base, summary: `List the webhooks of ${of}`, tags, access: 'authenticated', ...scope,
      response: Type.Array(Shape),
      input: Input({ id: IdOrPath(), ...PaginationParams }),
      handler: async (req, reply) => {
        const rows = await paginateQuery(req, reply, hooksQuery(req.server.db, owner(req)));
        const now = req.server.clock.now();
        return rows.map((h) => present(h, now));
      },
    },
    {
      method: 'GET', url: `${base}/:hook_id`, summary: `One webhook of ${of}`, tags, access: 'authenticated', ...scope,
      response: Shape,
      input: Input({ id: IdOrPath(), hook_id: Int() }),
      handler: async (req) => present(await getHookOr404(req.server.db, owner(req), req.input.hook_id), req.server.clock.now()),
    },
    {
      method: 'POST', url: base, summary: `Add a webhook to ${of}`, tags, access: 'authenticated', ...scope,
      response: Shape,
      input: Input({ id: IdOrPath(), url: Str(), ...properties }),
      handler: async (req) => present(await createHook(req.server, owner(req), { ...inputOf(req), url: req.input.url }), req.server.clock.now()),
    },
    {
      method: 'PUT', url: `${base}/:hook_id`, summary: `Change a webhook of ${of}`, tags, access: 'authenticated', ...scope,
      response: Shape,
      input: Input({ id: IdOrPath(), hook_id: Int(), url: Opt(Str()), ...properties }),
      handler: async (req) => {
        const hook = await getHookOr404(req.server.db, owner(req), req.input.hook_id);
        return present(await updateHook(req.server, hook, inputOf(req)), req.server.clock.now());
      },
    },
    {
      method: 'DELETE', url: `${base}/:hook_id`, summary: `Remove a webhook from ${of}`, tags, access: 'authenticated', ...scope,
      response: null,
      input: Input({ id: IdOrPath(), hook_id: Int() }),
      handler: async (req) => {
        const hook = await getHookOr404(req.server.db, owner(req), req.input.hook_id);
        checkUnmodifiedSince(req, hook.updated_at);
        await deleteHook(req.server, hook);
        return undefined;
      },
    },
    {
      method: 'POST', url: `${base}/:hook_id/test/:trigger`, summary: 'Send a test event to a webhook now', tags, access: 'authenticated', ...scope,
      response: Created,
      input: Input({ id: IdOrPath(), hook_id: Int(), trigger: Enum(TEST_TRIGGERS) }),
      handler: async (req) => {
        const hook = await getHookOr404(req.server.db, owner(req), req.input.hook_id);
        const problem = await testHook(req.server, hook, req.actor.user!.id, req.input.trigger);
        if (problem !== null) throw new RuleError('unprocessable', problem);
        return { message: '201 Created' };
      },
    },
  ];
}

export const webhookRoutes: RouteDef<any>[] = [...hookRoutes('project'), ...hookRoutes('group')];
