import { iso, isoDate, webUrl } from '../../http/format.ts';
import { dayOf } from '../../platform/clock.ts';
import type { MilestoneRow } from './milestones.service.ts';

// A milestone in the reference's field order; `project_id` or `group_id` by its owner. `expired`: its due date
// has passed (false without one).

export interface MilestoneContext {
  base: string;
  now: number;
  /** Full paths of the owners, for `web_url`. */
  projectPath(id: number): string | undefined;
  groupPath(id: number): string | undefined;
}

export function milestone(m: MilestoneRow, ctx: MilestoneContext) {
  return {
    id: m.id,
    iid: m.iid,
    ...(m.project_id !== null ? { project_id: m.project_id } : {}),
    ...(m.group_id !== null ? { group_id: m.group_id } : {}),
    title: m.title,
    description: m.description,
    state: m.state,
    created_at: iso(m.created_at),
    updated_at: iso(m.updated_at),
    due_date: isoDate(m.due_date),
    start_date: isoDate(m.start_date),
    expired: m.due_date !== null && m.due_date < dayOf(ctx.now),
    web_url: m.project_id !== null
      ? webUrl(ctx.base, ctx.projectPath(m.project_id) ?? '', '-/milestones', String(m.iid))
      : webUrl(ctx.base, 'groups', ctx.groupPath(m.group_id!) ?? '', '-/milestones', String(m.iid)),
  };
}
