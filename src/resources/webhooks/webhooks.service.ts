import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { WebHooksTable } from '../../platform/db/schema.ts';
import { NotFoundError, RuleError } from '../../platform/errors.ts';
import { BlockedUrlError, checkOutboundUrl, type GuardOptions } from '../../platform/outbound-url.ts';
import { isValidBranchName } from '../../platform/git/index.ts';
import { refMatches } from '../repository/protection.ts';

// Webhooks: the hooks of a project or of a group (one table, one set of checks), and which of them an event goes to.

export type WebHookRow = Selectable<WebHooksTable>;

/** The event flags a hook may be created or updated with (columns of `web_hooks`). */
export const HOOK_FLAGS = [
  'push_events', 'tag_push_events', 'merge_requests_events', 'repository_update_events', 'enable_ssl_verification',
  'issues_events', 'confidential_issues_events', 'note_events', 'confidential_note_events', 'pipeline_events',
  'wiki_page_events', 'deployment_events', 'feature_flag_events', 'job_events', 'releases_events', 'milestone_events',
  'emoji_events', 'resource_access_token_events',
] as const;
export type HookFlag = (typeof HOOK_FLAGS)[number];

/** Flags only a group hook is created or updated with (events Bellows has no source for yet; kept as given). */
export const GROUP_HOOK_FLAGS = ['subgroup_events', 'member_events', 'project_events', 'vulnerability_events'] as const;
export type GroupHookFlag = (typeof GROUP_HOOK_FLAGS)[number];

/** Whose hooks: a project's or a group's. */
export type HookOwner = { projectId: number } | { groupId: number };

export const BRANCH_FILTER_STRATEGIES = ['wildcard', 'regex', 'all_branches'] as const;
export type BranchFilterStrategy = (typeof BRANCH_FILTER_STRATEGIES)[number];

export interface HookInput {
  url?: string;
  token?: string;
  name?: string;
  description?: string;
  push_events_branch_filter?: string;
  branch_filter_strategy?: BranchFilterStrategy;
  custom_headers?: Array<{ key: string; value?: string }>;
  flags: Partial<Record<HookFlag | GroupHookFlag, boolean>>;
}

/** The one guard's options for webhooks: http(s), local addresses by the webhooks setting. */
export const HOOK_URL_GUARD: GuardOptions = { schemes: ['http', 'https'], allowLocal: 'allow_local_requests_from_web_hooks_and_services' };

const URL_MAX = 2048;
const TOKEN_MAX = 255;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,255}$/;
const CUSTOM_HEADERS_MAX = 20;

// ---- auto-disabling, as the reference's WebHooks::AutoDisabling -----------------------------------------------
export const TEMPORARILY_DISABLED_FAILURE_THRESHOLD = 3;
export const PERMANENTLY_DISABLED_FAILURE_THRESHOLD = 39;
const INITIAL_BACKOFF_MS = 60_000;
const MAX_BACKOFF_MS = 86_400_000;

export type AlertStatus = 'executable' | 'temporarily_disabled' | 'disabled';

export function alertStatus(h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>, now: number): AlertStatus {
  if (h.recent_failures > PERMANENTLY_DISABLED_FAILURE_THRESHOLD) return 'disabled';
  if (h.disabled_until !== null && h.disabled_until >= now && h.recent_failures > TEMPORARILY_DISABLED_FAILURE_THRESHOLD) return 'temporarily_disabled';
  return 'executable';
}

/** The state after one more failure: the count, and past the grace threshold a doubling back-off (1 minute to 1 day). */
export function afterFailure(h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>, now: number): { recent_failures: number; disabled_until: number | null } {
  const recent = Math.min(Math.max(h.recent_failures + 1, 1), PERMANENTLY_DISABLED_FAILURE_THRESHOLD + 1);
  if (recent <= TEMPORARILY_DISABLED_FAILURE_THRESHOLD) return { recent_failures: recent, disabled_until: h.disabled_until };
  const backoff = Math.min(MAX_BACKOFF_MS, Math.max(INITIAL_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (h.recent_failures - TEMPORARILY_DISABLED_FAILURE_THRESHOLD)));
  return { recent_failures: recent, disabled_until: now + backoff };
}

// ---- reading ---------------------------------------------------------------------------------------------------

export function hooksQuery(db: Db, owner: HookOwner) {
  const q = db.selectFrom('web_hooks').selectAll();
  return ('projectId' in owner ? q.where('project_id', '=', owner.projectId) : q.where('group_id', '=', owner.groupId)).orderBy('id');
}

export async function getHookOr404(db: Db, owner: HookOwner, hookId: number): Promise<WebHookRow> {
  const row = await hooksQuery(db, owner).where('id', '=', hookId).executeTakeFirst();
  if (!row) throw new NotFoundError('projectId' in owner ? 'Project hook' : 'Group hook');
  return row;
}

/**
 * Whether a hook may take the project's events: the project has one, or some group has one (its groups are not
 * looked up: one indexed read answers). False only when no hook can reach the project.
 */
export async function anyHookMayReach(db: Db, projectId: number): Promise<boolean> {
  const own = db.selectFrom('web_hooks').select('id').where('project_id', '=', projectId);
  const groups = db.selectFrom('web_hooks').select('id').where('group_id', 'is not', null);
  return !!(await db.selectNoFrom((eb) => eb.or([eb.exists(own), eb.exists(groups)]).as('any')).executeTakeFirst())?.any;
}

/** The hooks an event of the project goes to: its own and those of its group and every ancestor group. */
export function hooksReachingProject(db: Db, projectId: number, groupIds: number[]) {
  return db.selectFrom('web_hooks').selectAll()
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])]))
    .orderBy('id');
}

export function customHeaders(h: Pick<WebHookRow, 'custom_headers'>): Record<string, string> {
  try {
    const v = JSON.parse(h.custom_headers);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

// ---- checks ----------------------------------------------------------------------------------------------------

/** A wildcard filter is a branch name in which `*` may stand for anything; a regex filter must compile. */
export function branchFilterValid(filter: string | null, strategy: BranchFilterStrategy): boolean {
  if (filter === null || filter === '') return true;
  if (strategy === 'all_branches') return true;
  if (strategy === 'regex') {
    try {
      new RegExp(filter, 'u');
      return filter.length <= 4000;
    } catch {
      return false;
    }
  }
  return filter.length <= 4000 && isValidBranchName(filter.replaceAll('*', 'x'));
}

/** Whether a push to `branch` goes to the hook by its filter (an empty filter takes every branch). */
export function branchMatches(h: Pick<WebHookRow, 'push_events_branch_filter' | 'branch_filter_strategy'>, branch: string): boolean {
  const filter = h.push_events_branch_filter;
  if (h.branch_filter_strategy === 'all_branches' || !filter) return true;
  if (h.branch_filter_strategy === 'regex') {
    try {
      return new RegExp(filter, 'u').test(branch);
    } catch {
      return false;
    }
  }
  return refMatches(filter, branch);
}

async function checkUrl(deps: ServiceDeps, url: string): Promise<void> {
  if (url.length > URL_MAX) throw new RuleError('unprocessable', 'Invalid url given');
  try {
    await checkOutboundUrl(deps, url, HOOK_URL_GUARD);
  } catch (err) {
    if (err instanceof BlockedUrlError) throw new RuleError('unprocessable', 'Invalid url given');
    throw err;
  }
}

function checkedFields(input: HookInput, current: WebHookRow | null) {
  const strategy = input.branch_filter_strategy ?? (current?.branch_filter_strategy as BranchFilterStrategy | undefined) ?? 'wildcard';
  let filter = input.push_events_branch_filter !== undefined ? input.push_events_branch_filter : (current?.push_events_branch_filter ?? null);
  // The reference clears the filter of a hook that takes all branches.
  if (strategy === 'all_branches') filter = null;
  if (!branchFilterValid(filter, strategy)) throw new RuleError('unprocessable', 'Invalid branch filter given');
  if (input.token !== undefined && input.token.length > TOKEN_MAX) throw new RuleError('bad_request', { token: [`is too long (maximum is ${TOKEN_MAX} characters)`] });
  if (input.name !== undefined && input.name.length > 255) throw new RuleError('bad_request', { name: ['is too long (maximum is 255 characters)'] });
  if (input.description !== undefined && input.description.length > 2048) throw new RuleError('bad_request', { description: ['is too long (maximum is 2048 characters)'] });
  let headers: Record<string, string> | undefined;
  if (input.custom_headers !== undefined) {
    const old = current ? customHeaders(current) : {};
    headers = {};
    if (input.custom_headers.length > CUSTOM_HEADERS_MAX) throw new RuleError('bad_request', { custom_headers: [`must have at most ${CUSTOM_HEADERS_MAX} headers`] });
    for (const h of input.custom_headers) {
      if (!HEADER_NAME.test(h.key)) throw new RuleError('bad_request', { custom_headers: ['must be valid header names'] });
      // A header sent without a value keeps its stored value (the values are never shown back).
      const value = h.value ?? old[h.key];
      if (value === undefined || /[\r\n\0]/.test(value) || value.length > 2048) throw new RuleError('bad_request', { custom_headers: ['must have valid values'] });
      headers[h.key] = value;
    }
  }
  const values: Record<string, unknown> = { branch_filter_strategy: strategy, push_events_branch_filter: filter };
  for (const f of [...HOOK_FLAGS, ...GROUP_HOOK_FLAGS]) if (input.flags[f] !== undefined) values[f] = input.flags[f] ? 1 : 0;
  if (input.token !== undefined) values.token = input.token === '' ? null : input.token;
  if (input.name !== undefined) values.name = input.name;
  if (input.description !== undefined) values.description = input.description;
  if (headers) values.custom_headers = JSON.stringify(headers);
  return values;
}

// ---- changes ---------------------------------------------------------------------------------------------------

export async function createHook(deps: ServiceDeps, owner: HookOwner, input: HookInput & { url: string }): Promise<WebHookRow> {
  const values = checkedFields(input, null);
  await checkUrl(deps, input.url);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('web_hooks')
      .values({ ...values, project_id: 'projectId' in owner ? owner.projectId : null, group_id: 'groupId' in owner ? owner.groupId : null, url: input.url, disabled_until: null, created_at: now, updated_at: now } as any)
      .returningAll().executeTakeFirstOrThrow();
    return row;
  });
}

export async function updateHook(deps: ServiceDeps, hook: WebHookRow, input: HookInput): Promise<WebHookRow> {
  const values = checkedFields(input, hook);
  if (input.url !== undefined) await checkUrl(deps, input.url);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('web_hooks')
      // Changing a hook gives it a fresh start, as the reference re-enables a hook on update.
      .set({ ...values, ...(input.url !== undefined ? { url: input.url } : {}), recent_failures: 0, disabled_until: null, updated_at: now } as any)
      .where('id', '=', hook.id).returningAll().executeTakeFirst();
    if (!row) throw new NotFoundError(hook.project_id !== null ? 'Project hook' : 'Group hook');
    return row;
  });
}

export async function deleteHook(deps: ServiceDeps, hook: WebHookRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('web_hooks').where('id', '=', hook.id).execute();
  });
}

/** The outcome of one delivery, recorded on the hook (auto-disabling); a success re-enables it. */
export async function recordOutcome(deps: ServiceDeps, hookId: number, ok: boolean): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const h = await trx.selectFrom('web_hooks').select(['recent_failures', 'disabled_until']).where('id', '=', hookId).executeTakeFirst();
    if (!h) return;
    const now = deps.clock.now();
    if (ok) {
      if (h.recent_failures === 0 && h.disabled_until === null) return;
      await trx.updateTable('web_hooks').set({ recent_failures: 0, disabled_until: null }).where('id', '=', hookId).execute();
      return;
    }
    if (alertStatus(h, now) !== 'executable') return;
    await trx.updateTable('web_hooks').set(afterFailure(h, now)).where('id', '=', hookId).execute();
  });
}
