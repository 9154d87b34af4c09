import type { Db } from './db/index.ts';
import type { JobQueue } from './jobs/queue.ts';

// Domain events: what happened to a record, recorded in the transaction of the change that caused it.
//
// A service that changes a record calls `emitEvent(deps, trx, event)` inside its transaction. The event becomes one
// durable job per subscriber (`events.<subscriber>`): the webhooks and the notification e-mails each run, retry and
// fail on their own, and an event exists exactly when its change was committed (kill -9 between the two is
// impossible). A subscriber whose job kind is not defined in this process is skipped, so an area can be left out.
//
// Events name records by id; a subscriber reads what it needs when it runs. What only the moment of the change knows
// (previous values, the pushed range) is carried in the event.

/** Previous and current value of a changed attribute, as the reference's hook payloads carry them in `changes`. */
export type Changes = Record<string, { previous: unknown; current: unknown }>;

export type DomainEvent =
  | { type: 'issue'; action: 'open' | 'update' | 'close' | 'reopen'; projectId: number; issueId: number; actorId: number; changes?: Changes }
  | {
      type: 'merge_request';
      action: 'open' | 'update' | 'close' | 'reopen' | 'merge' | 'approved' | 'unapproved';
      projectId: number; mergeRequestId: number; actorId: number; changes?: Changes;
      /** A push to the source branch: the head before it (the reference's `oldrev`). */
      oldrev?: string;
    }
  | { type: 'note'; action: 'create' | 'update'; projectId: number; noteId: number; actorId: number }
  | {
      type: 'push' | 'tag_push';
      projectId: number; actorId: number;
      /** Full ref name (`refs/heads/main`, `refs/tags/v1`). */
      ref: string;
      /** 40 zeros when the ref was created / removed, as git says it. */
      before: string; after: string;
    }
  | { type: 'wiki_page'; action: 'create' | 'update' | 'delete'; projectId: number; slug: string; title: string; actorId: number; sha?: string }
  | { type: 'project'; action: 'transfer' | 'rename'; projectId: number; actorId: number; oldPathWithNamespace: string };

/** The subscribers, each a job kind `events.<name>` defined by its area. */
export const EVENT_SUBSCRIBERS = ['webhooks', 'notifications'] as const;
export type EventSubscriber = (typeof EVENT_SUBSCRIBERS)[number];

export function eventJobKind(subscriber: EventSubscriber): string {
  return `events.${subscriber}`;
}

/**
 * Records `event` for every subscriber defined in this process that has anything to do with it (its job kind's
 * `wanted`, asked inside `trx`, the change's transaction).
 */
export async function emitEvent(deps: { jobs: JobQueue }, trx: Db, event: DomainEvent): Promise<void> {
  const kinds: string[] = [];
  for (const kind of EVENT_SUBSCRIBERS.map(eventJobKind)) if (deps.jobs.defines(kind) && (await deps.jobs.wanted(trx, kind, event))) kinds.push(kind);
  await deps.jobs.enqueueAll(trx, kinds.map((kind) => ({ kind, args: event })));
}

/**
 * The attributes among `keys` that differ between a record before and after a change (all set ones for a new
 * record), as `changes` carries them: datetimes (`*_at`, epoch ms) as ISO text, `state` as the reference's
 * `state_id` (opened 1, closed 2, merged 3, locked 4).
 */
export function attributeChanges<R extends Record<string, unknown>>(before: R | null, after: R, keys: readonly (keyof R & string)[]): Changes {
  const STATE_ID: Record<string, number> = { opened: 1, closed: 2, merged: 3, locked: 4 };
  const value = (k: string, v: unknown) => (/_at$/.test(k) && typeof v === 'number' ? new Date(v).toISOString()
    : k === 'due_date' && typeof v === 'number' ? new Date(v).toISOString().slice(0, 10) : v);
  const out: Changes = {};
  for (const k of keys) {
    const prev = before ? before[k] : null;
    const cur = after[k];
    if (prev === cur || (before === null && (cur === null || cur === undefined))) continue;
    if (k === 'state') out.state_id = { previous: before ? STATE_ID[prev as string] ?? null : null, current: STATE_ID[cur as string] ?? null };
    else out[k] = { previous: value(k, prev), current: value(k, cur) };
  }
  return out;
}

/** A list attribute (label or user ids) before and after, from the list now and what was added and removed. */
export function listChange(now: readonly number[], added: readonly number[], removed: readonly number[]): { previous: number[]; current: number[] } {
  return {
    previous: [...now.filter((id) => !added.includes(id)), ...removed].sort((a, b) => a - b),
    current: [...now].sort((a, b) => a - b),
  };
}
