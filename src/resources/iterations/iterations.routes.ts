import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { parseDateTime } from '../../http/params.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { dayOf } from '../../platform/clock.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import { dailyAt, type JobKind } from '../../platform/jobs/queue.ts';
import {
  runAutomaticCadences, createCadence, createIteration, deleteCadence, getCadence, cadenceListQuery, groupPaths, iterationGroupIds,
  iterationListQuery, projectIterationGroupIds, updateCadence, type CadenceInput, type IterationRow,
} from './iterations.service.ts';
import { cadence, iteration } from './iterations.presenter.ts';
import { Iteration, IterationCadence } from './iterations.schemas.ts';

const tags = ['iterations'];
/** Routes the reference does not have (it manages cadences and iterations through GraphQL). */
const extensionTags = ['iterations', 'bellows-extensions'];

const STATES = ['opened', 'upcoming', 'started', 'current', 'closed', 'all'] as const;

const listInput = Input({
  id: IdOrPath(),
  state: Opt(Enum(STATES, { default: 'all' })),
  search: Opt(Str()),
  in: Opt(Type.Array(Enum(['title', 'cadence_title'] as const), { default: ['title'] })),
  include_ancestors: Opt(Bool({ default: true })),
  updated_before: Opt(DateTime()),
  updated_after: Opt(DateTime()),
  ...PaginationParams,
});

async function present(req: ApiRequest<any>, rows: IterationRow[]) {
  const ctx = { base: req.server.config.externalUrl, today: dayOf(req.server.clock.now()), groups: await groupPaths(req.server.db, rows) };
  return rows.map((i) => iteration(i, ctx));
}

async function list(req: ApiRequest<any>, reply: any, groupIds: number[]) {
  const i = req.input;
  const q = iterationListQuery(req.server.db, groupIds, {
    state: i.state, search: i.search, in: i.in,
    updatedBefore: i.updated_before ? parseDateTime(i.updated_before) : null, updatedAfter: i.updated_after ? parseDateTime(i.updated_after) : null,
  }, dayOf(req.server.clock.now()));
  return present(req, await paginateQuery(req, reply, q));
}

const day = (v: string | null | undefined) => (v === undefined ? undefined : v === null || v === '' ? null : dayOf(parseDateTime(v)!));
const DateParam = () => Type.Union([DateTime(), Type.Literal(''), Type.Null()], { description: 'YYYY-MM-DD' });

function cadenceInput(i: Record<string, any>): CadenceInput {
  return {
    title: i.title, description: i.description, automatic: i.automatic, startDate: day(i.start_date),
    durationInWeeks: i.duration_in_weeks, iterationsInAdvance: i.iterations_in_advance, rollOver: i.roll_over,
  };
}

const cadenceFields = {
  description: Opt(Str()), automatic: Opt(Bool()), start_date: Opt(DateParam()),
  duration_in_weeks: Opt(Int({ description: '1 to 4' })), iterations_in_advance: Opt(Int({ description: '0 to 10' })), roll_over: Opt(Bool()),
};

export const iterationRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/groups/:id/iterations', summary: "List a group's iterations", tags, access: 'public', group: { ability: 'read_iteration' },
    response: Type.Array(Iteration), input: listInput,
    handler: async (req, reply) => list(req, reply, await iterationGroupIds(req.server, req.actor, req.group.group, req.input.include_ancestors)),
  },
  {
    method: 'GET', url: '/projects/:id/iterations', summary: "List the iterations of a project's group", tags, access: 'public', project: { ability: 'read_iteration' },
    response: Type.Array(Iteration), input: listInput,
    handler: async (req, reply) => list(req, reply, await projectIterationGroupIds(req.server, req.actor, req.project.project, req.input.include_ancestors)),
  },
  {
    method: 'POST', url: '/groups/:id/iterations', summary: 'Add an iteration to a manual cadence (Bellows extension)', tags: extensionTags,
    access: 'authenticated', group: { ability: 'admin_iteration' },
    response: Iteration,
    input: Input({ id: IdOrPath(), cadence_id: Int(), title: Opt(Str()), description: Opt(Str()), start_date: DateTime(), due_date: DateTime() }),
    handler: async (req) => {
      const i = req.input;
      const row = await createIteration(req.server, req.group.group.id, {
        cadenceId: i.cadence_id, title: i.title, description: i.description, startDate: day(i.start_date)!, dueDate: day(i.due_date)!,
      });
      return (await present(req, [row]))[0];
    },
  },
  {
    method: 'GET', url: '/groups/:id/iteration_cadences', summary: "List a group's iteration cadences (Bellows extension)", tags: extensionTags,
    access: 'public', group: { ability: 'read_iteration' },
    response: Type.Array(IterationCadence), input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => (await paginateQuery(req, reply, cadenceListQuery(req.server.db, req.group.group.id))).map(cadence),
  },
  {
    method: 'GET', url: '/groups/:id/iteration_cadences/:cadence_id', summary: 'One iteration cadence (Bellows extension)', tags: extensionTags,
    access: 'public', group: { ability: 'read_iteration' },
    response: IterationCadence, input: Input({ id: IdOrPath(), cadence_id: Int() }),
    handler: async (req) => cadence(await getCadence(req.server.db, req.group.group.id, req.input.cadence_id)),
  },
  {
    method: 'POST', url: '/groups/:id/iteration_cadences', summary: 'Create an iteration cadence; an automatic one schedules its iterations (Bellows extension)',
    tags: extensionTags, access: 'authenticated', group: { ability: 'admin_iteration' },
    response: IterationCadence, input: Input({ id: IdOrPath(), title: Str(), ...cadenceFields }),
    handler: async (req) => cadence(await createCadence(req.server, req.group.group.id, cadenceInput(req.input))),
  },
  {
    method: 'PUT', url: '/groups/:id/iteration_cadences/:cadence_id', summary: 'Update an iteration cadence; an automatic one reschedules its upcoming iterations (Bellows extension)',
    tags: extensionTags, access: 'authenticated', group: { ability: 'admin_iteration' },
    response: IterationCadence, input: Input({ id: IdOrPath(), cadence_id: Int(), title: Opt(Str()), ...cadenceFields }),
    handler: async (req) => {
      const found = await getCadence(req.server.db, req.group.group.id, req.input.cadence_id);
      return cadence(await updateCadence(req.server, found, cadenceInput(req.input)));
    },
  },
  {
    method: 'DELETE', url: '/groups/:id/iteration_cadences/:cadence_id', summary: 'Delete an iteration cadence with its iterations (Bellows extension)',
    tags: extensionTags, access: 'authenticated', group: { ability: 'admin_iteration' },
    response: null, input: Input({ id: IdOrPath(), cadence_id: Int() }),
    handler: async (req) => {
      await deleteCadence(req.server, await getCadence(req.server.db, req.group.group.id, req.input.cadence_id));
      return undefined;
    },
  },
];

export const AUTOMATIC_CADENCES = 'iterations:automatic-cadences';

/** The daily run of automatic iteration cadences, at 00:00 UTC. */
export function iterationJobs(deps: ServiceDeps): Record<string, JobKind<{ at: number }>> {
  return {
    [AUTOMATIC_CADENCES]: {
      recurs: dailyAt(0), concurrency: 1, maxAttempts: 5,
      async run(args) {
        await runAutomaticCadences(deps, args.at);
      },
    },
  };
}
