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

/** Records `event` for every subscriber defined in this process, inside `trx` (the change's transaction). */
export async function emitEvent(deps: { jobs: JobQueue }, trx: Db, event: DomainEvent): Promise<void> {
  for (const s of EVENT_SUBSCRIBERS) {
    const kind = eventJobKind(s);
    if (deps.jobs.defines(kind)) await deps.jobs.enqueue(trx, kind, event);
  }
}
