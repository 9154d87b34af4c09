import { iso, isoDate, webUrl } from '../../http/format.ts';
import { iterationState, type CadenceRow, type IterationRow } from './iterations.service.ts';

// Iterations in the reference's field order; `state` is the reference's integer (1 upcoming, 2 current, 3 closed).
// Cadences are a Bellows extension, shaped after the reference's GraphQL type.

export function iteration(i: IterationRow, ctx: { base: string; today: number; groups: Map<number, string> }) {
  return {
    id: i.id,
    iid: i.iid,
    sequence: i.sequence,
    group_id: i.group_id,
    title: i.title,
    description: i.description,
    state: iterationState(i, ctx.today),
    created_at: iso(i.created_at),
    updated_at: iso(i.updated_at),
    start_date: isoDate(i.start_date),
    due_date: isoDate(i.due_date),
    web_url: webUrl(ctx.base, 'groups', ctx.groups.get(i.group_id) ?? '', '-/iterations', String(i.id)),
  };
}

export function cadence(c: CadenceRow) {
  return {
    id: c.id,
    group_id: c.group_id,
    title: c.title,
    description: c.description,
    automatic: !!c.automatic,
    start_date: isoDate(c.start_date),
    duration_in_weeks: c.duration_in_weeks,
    iterations_in_advance: c.iterations_in_advance,
    roll_over: !!c.roll_over,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}
