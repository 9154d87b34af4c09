import { Type, type TBoolean, type TOptional } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { checkUnmodifiedSince } from '../../http/conditional.ts';
import { RuleError } from '../../platform/errors.ts';
import {
  BRANCH_FILTER_STRATEGIES, createHook, deleteHook, getHookOr404, HOOK_FLAGS, projectHooksQuery, updateHook, type HookInput,
} from './webhooks.service.ts';
import { TEST_TRIGGERS, testHook } from './webhooks.delivery.ts';
import { projectHook } from './webhooks.presenter.ts';
import { Created, ProjectHook } from './webhooks.schemas.ts';

export { webhookJobs } from './webhooks.delivery.ts';

const tags = ['project_hooks'];
const project = { ability: 'admin_web_hook' } as const;

const hookProperties = {
  ...Object.fromEntries(HOOK_FLAGS.map((f) => [f, Opt(Bool())])) as Record<(typeof HOOK_FLAGS)[number], TOptional<TBoolean>>,
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
  for (const f of HOOK_FLAGS) if (i[f] !== undefined) flags[f] = i[f];
  return {
    url: i.url, token: i.token, name: i.name, description: i.description, push_events_branch_filter: i.push_events_branch_filter,
    branch_filter_strategy: i.branch_filter_strategy, custom_headers: i.custom_headers, flags,
  };
}

export const webhookRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/hooks', summary: "List a project's webhooks", tags, access: 'authenticated', project,
    response: Type.Array(ProjectHook),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, projectHooksQuery(req.server.db, req.project.project.id));
      const now = req.server.clock.now();
      return rows.map((h) => projectHook(h, now));
    },
  },
  {
    method: 'GET', url: '/projects/:id/hooks/:hook_id', summary: 'One webhook of a project', tags, access: 'authenticated', project,
    response: ProjectHook,
    input: Input({ id: IdOrPath(), hook_id: Int() }),
    handler: async (req) => projectHook(await getHookOr404(req.server.db, req.project.project.id, req.input.hook_id), req.server.clock.now()),
  },
  {
    method: 'POST', url: '/projects/:id/hooks', summary: 'Add a webhook to a project', tags, access: 'authenticated', project,
    response: ProjectHook,
    input: Input({ id: IdOrPath(), url: Str(), ...hookProperties }),
    handler: async (req) => {
      const row = await createHook(req.server, req.project.project.id, { ...inputOf(req), url: req.input.url });
      return projectHook(row, req.server.clock.now());
    },
  },
  {
    method: 'PUT', url: '/projects/:id/hooks/:hook_id', summary: 'Change a webhook of a project', tags, access: 'authenticated', project,
    response: ProjectHook,
    input: Input({ id: IdOrPath(), hook_id: Int(), url: Opt(Str()), ...hookProperties }),
    handler: async (req) => {
      const hook = await getHookOr404(req.server.db, req.project.project.id, req.input.hook_id);
      return projectHook(await updateHook(req.server, hook, inputOf(req)), req.server.clock.now());
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/hooks/:hook_id', summary: 'Remove a webhook from a project', tags, access: 'authenticated', project,
    response: null,
    input: Input({ id: IdOrPath(), hook_id: Int() }),
    handler: async (req) => {
      const hook = await getHookOr404(req.server.db, req.project.project.id, req.input.hook_id);
      checkUnmodifiedSince(req, hook.updated_at);
      await deleteHook(req.server, hook);
      return undefined;
    },
  },
  {
    method: 'POST', url: '/projects/:id/hooks/:hook_id/test/:trigger', summary: 'Send a test event to a webhook now', tags, access: 'authenticated', project,
    response: Created,
    input: Input({ id: IdOrPath(), hook_id: Int(), trigger: Enum(TEST_TRIGGERS) }),
    handler: async (req) => {
      const hook = await getHookOr404(req.server.db, req.project.project.id, req.input.hook_id);
      const problem = await testHook(req.server, hook, req.actor.user!.id, req.input.trigger);
      if (problem !== null) throw new RuleError('unprocessable', problem);
      return { message: '201 Created' };
    },
  },
];
