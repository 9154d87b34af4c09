import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { DomainEvent } from '../../platform/events.ts';
import { BlockedUrlError, checkOutboundUrl, pinnedLookup, type OutboundTarget } from '../../platform/outbound-url.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { repoFor } from '../repository/repository.common.ts';
import { listPages } from '../wikis/wikis.service.ts';
import { SHA1_ZERO } from '../../platform/git/index.ts';
import { API_COMPATIBLE_VERSION } from '../metadata/metadata.routes.ts';
import { buildEvent, type BuiltEvent } from './webhooks.payloads.ts';
import { projectAncestorGroupIds } from '../labels/labels.lookup.ts';
import { alertStatus, anyHookMayReach, branchMatches, customHeaders, HOOK_URL_GUARD, hooksReachingProject, recordOutcome, type WebHookRow } from './webhooks.service.ts';

// Delivering events to hooks: the project's own, and those of its group and every ancestor group (a group hook takes
// the events of every project below it). `events.webhooks` turns one domain event into one `webhooks.deliver` job per
// hook that takes it (its event flag, branch filter, confidentiality, not disabled); each delivery then runs, fails
// and retries on its own. The URL is checked again at delivery (the name may resolve elsewhere now) and the
// connection goes to the address checked.

export const DELIVER_KIND = 'webhooks.deliver';
/** How long a receiver may take to answer (the reference's default webhook_timeout). */
export const DELIVERY_TIMEOUT_MS = 10_000;
const DELIVERY_ATTEMPTS = 4;
const MAX_RESPONSE_BYTES = 8 * 1024;

export interface DeliveryArgs {
  hookId: number;
  hookName: string;
  payload: Record<string, unknown>;
  /** The same for every attempt of one delivery (the reference's `Idempotency-Key`). */
  idempotencyKey: string;
}

/** Whether the hook takes the built event. */
export function hookTakes(h: WebHookRow, built: BuiltEvent, now: number): boolean {
  if (alertStatus(h, now) !== 'executable') return false;
  if (!h[built.flag]) return false;
  if (built.branch !== undefined && !branchMatches(h, built.branch)) return false;
  return true;
}

/** Queues one delivery per hook reaching the event's project (its own, its groups') that takes it. */
export async function fanOut(deps: ServiceDeps, event: DomainEvent): Promise<number> {
  const project = await deps.db.selectFrom('projects').select('namespace_id').where('id', '=', event.projectId).executeTakeFirst();
  if (!project) return 0;
  const hooks = await hooksReachingProject(deps.db, event.projectId, await projectAncestorGroupIds(deps.db, project)).execute();
  if (!hooks.length) return 0;
  const built = await buildEvent(deps, event);
  if (!built) return 0;
  const now = deps.clock.now();
  const takers = hooks.filter((h) => hookTakes(h, built, now));
  if (!takers.length) return 0;
  await deps.db.transaction().execute(async (trx) => {
    for (const h of takers) {
      const args: DeliveryArgs = { hookId: h.id, hookName: built.hookName, payload: built.payload, idempotencyKey: randomUUID() };
      await deps.jobs.enqueue(trx, DELIVER_KIND, args);
    }
  });
  return takers.length;
}

export interface DeliveryResult {
  status: number | null;
  error: string | null;
}

/** The headers of a delivery: the custom ones first, the reference's own over them. */
export function deliveryHeaders(deps: ServiceDeps, h: WebHookRow, hookName: string, idempotencyKey: string): Record<string, string> {
  const headers: Record<string, string> = {
    ...customHeaders(h),
    'Content-Type': 'application/json',
    'User-Agent': `GitLab/${API_COMPATIBLE_VERSION}`,
    'Idempotency-Key': idempotencyKey,
    'X-Gitlab-Event': hookName,
    'X-Gitlab-Webhook-UUID': randomUUID(),
    'X-Gitlab-Event-UUID': randomUUID(),
    'X-Gitlab-Instance': deps.config.externalUrl,
  };
  if (h.token) headers['X-Gitlab-Token'] = h.token.replace(/[\r\n]/g, '');
  return headers;
}

/** POSTs `body` to the checked target, connecting to the checked address only; never follows a redirect. */
function post(target: OutboundTarget, headers: Record<string, string>, body: string, verifyTls: boolean, signal?: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const isHttps = target.url.protocol === 'https:';
    const auth = target.username || target.password ? { Authorization: `Basic ${Buffer.from(`${target.username}:${target.password}`).toString('base64')}` } : {};
    const req = (isHttps ? https : http).request(target.url, {
      method: 'POST', headers: { ...headers, ...auth, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(target) as any, timeout: DELIVERY_TIMEOUT_MS, signal,
      ...(isHttps ? { rejectUnauthorized: verifyTls, servername: target.host } : {}),
    }, (res) => {
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) res.destroy();
      });
      res.on('close', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error(`timed out after ${DELIVERY_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Executes one delivery now: the URL checked again, the request, the outcome recorded on the hook (auto-disabling).
 * `force` (a test run) delivers to a disabled hook too.
 */
export async function executeHook(deps: ServiceDeps, h: WebHookRow, hookName: string, payload: unknown, o: { force?: boolean; idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<DeliveryResult> {
  if (!o.force && alertStatus(h, deps.clock.now()) !== 'executable') return { status: null, error: 'Hook disabled' };
  let target: OutboundTarget;
  try {
    target = await checkOutboundUrl(deps, h.url, HOOK_URL_GUARD);
  } catch (err) {
    if (!(err instanceof BlockedUrlError)) throw err;
    await recordOutcome(deps, h.id, false);
    return { status: null, error: `URL '${h.url.replace(/\/\/[^@/]*@/, '//')}' is blocked: ${err.message}` };
  }
  const headers = deliveryHeaders(deps, h, hookName, o.idempotencyKey ?? randomUUID());
  try {
    const status = await post(target, headers, JSON.stringify(payload), !!h.enable_ssl_verification, o.signal);
    const ok = status >= 200 && status < 400;
    await recordOutcome(deps, h.id, ok);
    return { status, error: ok ? null : `HTTP ${status}` };
  } catch (err) {
    await recordOutcome(deps, h.id, false);
    return { status: null, error: (err as Error).message };
  }
}

/** A failure worth another attempt: no answer, a server error, or "too many requests". */
function retryable(r: DeliveryResult): boolean {
  if (r.error === null || r.error === 'Hook disabled' || r.error.includes(' is blocked: ')) return false;
  return r.status === null || r.status >= 500 || r.status === 429;
}

export class DeliveryFailed extends Error {
  override name = 'DeliveryFailed';
}

/** The job kinds of webhooks, registered by `registerJobs`. */
export function webhookJobs(deps: ServiceDeps): Record<string, JobKind> {
  return {
    'events.webhooks': {
      maxAttempts: 5,
      concurrency: 2,
      // Not queued where no hook can take it: the project has none and no group has any.
      wanted: (db, event: DomainEvent) => anyHookMayReach(db, event.projectId),
      async run(event: DomainEvent) {
        await fanOut(deps, event);
      },
    } satisfies JobKind<DomainEvent>,
    [DELIVER_KIND]: {
      maxAttempts: DELIVERY_ATTEMPTS,
      concurrency: 4,
      leaseMs: DELIVERY_TIMEOUT_MS * 3,
      async run(args: DeliveryArgs, ctx) {
        const h = await deps.db.selectFrom('web_hooks').selectAll().where('id', '=', args.hookId).executeTakeFirst();
        if (!h) return;
        const r = await executeHook(deps, h, args.hookName, args.payload, { idempotencyKey: args.idempotencyKey, signal: ctx.signal });
        // A failure the hook's state now refuses (auto-disabled) is not retried; the queue backs off the others.
        if (r.error !== null && retryable(r)) throw new DeliveryFailed(`webhook ${h.id}: ${r.error}`);
      },
    } satisfies JobKind<DeliveryArgs>,
  };
}

/** The triggers a hook can be tested with, and the record the reference's TestHooks::ProjectService takes for each. */
export const TEST_TRIGGERS = [
  'push_events', 'tag_push_events', 'issues_events', 'confidential_issues_events', 'merge_requests_events', 'note_events',
  'confidential_note_events', 'wiki_page_events',
] as const;
export type TestTrigger = (typeof TEST_TRIGGERS)[number];

/** The event a test of `trigger` sends: built from the project's latest record of that kind; a sentence when it has none. */
async function testEvent(deps: ServiceDeps, projectId: number, actorId: number, trigger: TestTrigger): Promise<DomainEvent | string> {
  const db = deps.db;
  switch (trigger) {
    case 'push_events':
    case 'tag_push_events': {
      const p = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
      const repo = repoFor(deps.config, p);
      const branch = p.default_branch;
      const head = branch && !p.empty_repo ? await repo.resolveCommit(`refs/heads/${branch}`).catch(() => null) : null;
      if (!head) return 'Ensure the project has at least one commit.';
      const commits = await repo.history({ ref: head, limit: 3 });
      const before = commits.length > 1 ? commits[commits.length - 1].id : SHA1_ZERO;
      return { type: 'push', projectId, actorId, ref: `refs/heads/${branch}`, before, after: head };
    }
    case 'issues_events':
    case 'confidential_issues_events': {
      const issue = await db.selectFrom('issues').select('id').where('project_id', '=', projectId).orderBy('id', 'desc').executeTakeFirst();
      if (!issue) return 'Ensure the project has issues.';
      return { type: 'issue', action: 'open', projectId, issueId: issue.id, actorId };
    }
    case 'merge_requests_events': {
      const mr = await db.selectFrom('merge_requests').select('id').where('target_project_id', '=', projectId).orderBy('id', 'desc').executeTakeFirst();
      if (!mr) return 'Ensure the project has merge requests.';
      return { type: 'merge_request', action: 'open', projectId, mergeRequestId: mr.id, actorId };
    }
    case 'note_events':
    case 'confidential_note_events': {
      const note = await db.selectFrom('notes').select('id').where('project_id', '=', projectId).where('system', '=', 0).orderBy('id', 'desc').executeTakeFirst();
      if (!note) return 'Ensure the project has notes.';
      return { type: 'note', action: 'create', projectId, noteId: note.id, actorId };
    }
    case 'wiki_page_events': {
      const p = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
      const pages = await listPages(deps, p, false).catch(() => []);
      if (!pages.length) return 'Ensure the wiki is enabled and has pages.';
      return { type: 'wiki_page', action: 'create', projectId, slug: pages[0].slug, title: pages[0].title, actorId };
    }
  }
}

/** The project a group hook is tested with, as the reference's: the group's first project with commits. */
async function firstNonEmptyProject(deps: ServiceDeps, groupId: number): Promise<number | null> {
  const p = await deps.db.selectFrom('projects').select('id').where('namespace_id', '=', groupId).where('empty_repo', '=', 0)
    .where('pending_delete', '=', 0).orderBy('id').executeTakeFirst();
  return p?.id ?? null;
}

/** Runs a test delivery now, to a disabled hook too (a success re-enables it). Null on a 2xx answer, else why not. */
export async function testHook(deps: ServiceDeps, h: WebHookRow, actorId: number, trigger: TestTrigger): Promise<string | null> {
  const projectId = h.project_id ?? (h.group_id !== null ? await firstNonEmptyProject(deps, h.group_id) : null);
  if (projectId === null) return 'Ensure the group has a project with commits.';
  const event = await testEvent(deps, projectId, actorId, trigger);
  if (typeof event === 'string') return event;
  const built = await buildEvent(deps, event);
  if (!built) return 'Ensure the project has data for this trigger.';
  const r = await executeHook(deps, h, built.hookName, built.payload, { force: true });
  if (r.status !== null && r.status >= 200 && r.status < 300) return null;
  return r.error ?? `HTTP ${r.status}`;
}
