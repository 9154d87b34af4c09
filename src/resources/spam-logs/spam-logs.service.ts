import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { SpamLogsTable } from '../../platform/db/schema.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { ForbiddenError, RecordNotFoundError } from '../../platform/errors.ts';
import { applicationSettings } from '../../platform/application-settings.ts';
import { akismetSubmitHam } from '../../platform/spam/services.ts';
import { deleteUser, usersByIds } from '../users/users.service.ts';

// The spam log's administration (the reference's admin pages, served here as API extensions): the list and one row,
// marking a row as not spam (told to Akismet when it is on), removing a row or its author, and the daily clean-up of
// rows older than `spam_log_retention_days`.

export type SpamLogRow = Selectable<SpamLogsTable>;

type Log = { warn(obj: object, msg: string): void };

export interface SpamLogFilters {
  recaptcha_verified?: boolean;
  submitted_as_ham?: boolean;
  user_id?: number;
  noteable_type?: string;
}

/** The NOTEABLE types a spam log names (the records the spam check runs on). */
export const SPAM_LOG_TYPES = ['Issue', 'MergeRequest', 'Note', 'Snippet'] as const;

/** Newest first, as the reference's admin page lists them. */
export function listSpamLogsQuery(deps: ServiceDeps, f: SpamLogFilters) {
  let q = deps.db.selectFrom('spam_logs').selectAll();
  if (f.recaptcha_verified !== undefined) q = q.where('recaptcha_verified', '=', f.recaptcha_verified ? 1 : 0);
  if (f.submitted_as_ham !== undefined) q = q.where('submitted_as_ham', '=', f.submitted_as_ham ? 1 : 0);
  if (f.user_id !== undefined) q = q.where('user_id', '=', fitsIntColumn(f.user_id) ? f.user_id : 0);
  if (f.noteable_type !== undefined) q = q.where('noteable_type', '=', f.noteable_type);
  return q.orderBy('id', 'desc');
}

export async function getSpamLog(deps: ServiceDeps, id: number): Promise<SpamLogRow> {
  const row = fitsIntColumn(id) ? await deps.db.selectFrom('spam_logs').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
  if (!row) throw new RecordNotFoundError();
  return row;
}

/**
 * Marks a row as not spam. With Akismet on, the text goes to its `submit-ham` first, as the reference's HamService
 * does; unlike the reference, a failing Akismet does not stop the mark (it is logged). A row already marked is
 * answered as it is, without a second submission.
 */
export async function markSpamLogAsHam(deps: ServiceDeps, row: SpamLogRow, log?: Log): Promise<SpamLogRow> {
  if (row.submitted_as_ham) return row;
  const st = await applicationSettings(deps);
  if (st.akismet_enabled && st.akismet_api_key) {
    const user = row.user_id === null ? undefined : (await usersByIds(deps, [row.user_id])).get(row.user_id);
    try {
      await akismetSubmitHam(st.akismet_url, st.akismet_api_key, {
        blog: deps.config.externalUrl, userIp: row.source_ip ?? '', userAgent: row.user_agent ?? '', referrer: '',
        author: user?.name ?? '', authorEmail: user?.email ?? '', content: [row.title ?? '', row.description ?? ''].join('\n'),
      });
    } catch (err) {
      log?.warn({ err, spam_log_id: row.id }, 'Akismet ham submission failed, spam log marked as ham all the same');
    }
  }
  const now = deps.clock.now();
  await deps.db.updateTable('spam_logs').set({ submitted_as_ham: 1, updated_at: now }).where('id', '=', row.id).execute();
  return { ...row, submitted_as_ham: 1, updated_at: now };
}

/**
 * Removes a row; with `removeUser`, its author instead (the reference's `remove_user`: the user is deleted, and their
 * spam log rows with them). An administrator cannot remove themself this way.
 */
export async function deleteSpamLog(deps: ServiceDeps, actorUserId: number, row: SpamLogRow, removeUser: boolean): Promise<void> {
  if (removeUser && row.user_id !== null) {
    if (row.user_id === actorUserId) throw new ForbiddenError('You cannot delete your own account');
    const user = (await usersByIds(deps, [row.user_id])).get(row.user_id);
    if (user) {
      await deleteUser(deps, user);
      // The user's rows went with the user (on delete cascade); this one too, whatever the database.
    }
  }
  await deps.db.deleteFrom('spam_logs').where('id', '=', row.id).execute();
}

const DAY_MS = 86_400_000;
const BATCH = 1000;

/**
 * The clean-up of one day's run: removes rows created before `at` minus the retention (none when it is 0), in
 * batches, so that a large backlog never holds one long transaction. Answers how many rows went.
 */
export async function removeOldSpamLogs(deps: ServiceDeps, at: number, signal?: AbortSignal): Promise<number> {
  const days = (await applicationSettings(deps)).spam_log_retention_days;
  if (!days) return 0;
  const cutoff = at - days * DAY_MS;
  let removed = 0;
  for (;;) {
    if (signal?.aborted) return removed;
    const ids = (await deps.db.selectFrom('spam_logs').select('id').where('created_at', '<', cutoff).orderBy('id').limit(BATCH).execute()).map((r) => r.id);
    if (!ids.length) return removed;
    await deps.db.deleteFrom('spam_logs').where('id', 'in', ids).execute();
    removed += ids.length;
    if (ids.length < BATCH) return removed;
  }
}
