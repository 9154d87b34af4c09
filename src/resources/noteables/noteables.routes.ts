import { Type, type TSchema } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import type { ProjectAbility } from '../../platform/access/policy.ts';
import { addSpentTime, eventsQuery, findEvent, setTimeEstimate, timeStats, type EventTable, type TimeTarget } from './noteables.service.ts';
import { loadEventContext } from '../issues/issues.service.ts';
import { labelEventEntity, milestoneEventEntity, stateEventEntity, timeStatsEntity } from '../issues/issues.presenter.ts';
import { ResourceLabelEvent, ResourceMilestoneEvent, ResourceStateEvent, TimeStats } from '../issues/issues.schemas.ts';
import { parseDuration } from '../issues/durations.ts';

// The routes issues and merge requests share, the same for each: time tracking (`<base>/time_stats`,
// `time_estimate`, `reset_time_estimate`, `add_spent_time`, `reset_spent_time`) and the resource events
// (`<base>/resource_{label,state,milestone}_events[/:event_id]`). The kind finds its row for the caller (404 exactly
// as its own routes answer when it is hidden).

export interface NoteableRoutesKind {
  /** The noteable's URL, relative to /api/v4: "/projects/:id/issues/:issue_iid". */
  base: string;
  /** Its path parameters. */
  params: Record<string, TSchema>;
  /** "an issue", "a merge request". */
  what: string;
  /** Reading it (`read_issue`) and changing its time tracking (`admin_issue`). */
  read: ProjectAbility;
  admin: ProjectAbility;
  tags: string[];
  find(req: ApiRequest<any>): Promise<TimeTarget & { type: 'Issue' | 'MergeRequest' }>;
}

export function timeTrackingRoutes(kind: NoteableRoutesKind): RouteDef<any>[] {
  const { base, params, what, tags } = kind;
  const admin = { access: 'authenticated' as const, project: { ability: kind.admin }, response: TimeStats };
  const stats = async (req: ApiRequest<any>, target: TimeTarget) => timeStatsEntity(await timeStats(req.server.db, target));
  return [
    {
      method: 'GET', url: `${base}/time_stats`, summary: `The time estimate and time spent of ${what}`, tags, access: 'public', project: { ability: kind.read },
      response: TimeStats, input: Input(params),
      handler: async (req) => stats(req, await kind.find(req)),
    },
    {
      method: 'POST', url: `${base}/time_estimate`, summary: `Set the time estimate of ${what} (a human duration such as 3h30m)`, tags, ...admin,
      input: Input({ ...params, duration: Str() }),
      handler: async (req, reply) => {
        const target = await kind.find(req);
        await setTimeEstimate(req.server, target, parseDuration(req.input.duration));
        return reply.code(200).send(await stats(req, target));
      },
    },
    {
      method: 'POST', url: `${base}/reset_time_estimate`, summary: `Reset the time estimate of ${what}`, tags, ...admin, input: Input(params),
      handler: async (req, reply) => {
        const target = await kind.find(req);
        await setTimeEstimate(req.server, target, 0);
        return reply.code(200).send(await stats(req, target));
      },
    },
    {
      method: 'POST', url: `${base}/add_spent_time`, summary: `Log time spent on ${what} (negative subtracts)`, tags, ...admin,
      input: Input({ ...params, duration: Str(), summary: Opt(Str()) }),
      handler: async (req) => {
        const target = await kind.find(req);
        await addSpentTime(req.server, { actor: req.actor }, target, parseDuration(req.input.duration), req.input.summary ?? null);
        return stats(req, target);
      },
    },
    {
      method: 'POST', url: `${base}/reset_spent_time`, summary: `Reset the time spent on ${what}`, tags, ...admin, input: Input(params),
      handler: async (req, reply) => {
        const target = await kind.find(req);
        await addSpentTime(req.server, { actor: req.actor }, target, 'reset', null);
        return reply.code(200).send(await stats(req, target));
      },
    },
  ];
}

const EVENTS = [
  ['label', 'resource_label_events', ResourceLabelEvent],
  ['state', 'resource_state_events', ResourceStateEvent],
  ['milestone', 'resource_milestone_events', ResourceMilestoneEvent],
] as const;

export function resourceEventRoutes(kind: NoteableRoutesKind): RouteDef<any>[] {
  const { base, params, what, tags } = kind;
  const project = { ability: kind.read };
  return EVENTS.flatMap(([name, table, schema]: readonly [string, EventTable, TSchema]): RouteDef<any>[] => {
    const present = (rows: any[], ctx: Awaited<ReturnType<typeof loadEventContext>>) =>
      rows.map((r) => (name === 'label' ? labelEventEntity(r, ctx) : name === 'state' ? stateEventEntity(r, ctx) : milestoneEventEntity(r, ctx)));
    return [
      {
        method: 'GET', url: `${base}/resource_${name}_events`, summary: `The ${name} events of ${what}`, tags, access: 'public', project,
        response: Type.Array(schema), input: Input({ ...params, ...PaginationParams }),
        handler: async (req, reply) => {
          const target = await kind.find(req);
          const rows = await paginateQuery(req, reply, eventsQuery(req.server.db, table, target.id, target.type) as any) as any[];
          return present(rows, await loadEventContext(req.server, rows));
        },
      },
      {
        method: 'GET', url: `${base}/resource_${name}_events/:event_id`, summary: `One ${name} event of ${what}`, tags, access: 'public', project,
        response: schema, input: Input({ ...params, event_id: Int() }),
        handler: async (req) => {
          const target = await kind.find(req);
          const row = await findEvent(req.server.db, table, target.id, req.input.event_id, target.type);
          return present([row], await loadEventContext(req.server, [row]))[0];
        },
      },
    ];
  });
}
