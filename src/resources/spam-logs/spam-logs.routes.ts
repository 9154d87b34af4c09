import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Enum, Input, Int, Opt, PaginationParams } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { dailyAt } from '../../platform/jobs/queue.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import { usersByIds } from '../users/users.service.ts';
import {
  SPAM_LOG_TYPES, deleteSpamLog, getSpamLog, listSpamLogsQuery, markSpamLogAsHam, removeOldSpamLogs, type SpamLogRow,
} from './spam-logs.service.ts';
import { spamLogEntity } from './spam-logs.presenter.ts';
import { SpamLog } from './spam-logs.schemas.ts';

// The spam log for administrators. The reference serves it only as admin pages (Admin::SpamLogsController: index,
// destroy with remove_user, mark_as_ham); here it is a Bellows extension of the API.

const tags = ['spam_logs', 'bellows-extensions'];
const instance = { ability: 'admin_spam_log' as const };

async function present(req: ApiRequest<any>, rows: SpamLogRow[]) {
  const ids = rows.map((r) => r.user_id).filter((id): id is number => id !== null);
  const users = await usersByIds(req.server, [...new Set(ids)]);
  return rows.map((r) => spamLogEntity(r, r.user_id === null ? undefined : users.get(r.user_id), req.server.config.externalUrl));
}

export const spamLogRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/admin/spam_logs', summary: 'List the spam log, newest first (Bellows extension)', tags, access: 'authenticated', instance,
    response: Type.Array(SpamLog),
    input: Input({
      recaptcha_verified: Opt(Bool({ description: 'only rows whose CAPTCHA retry passed (true) or not (false)' })),
      submitted_as_ham: Opt(Bool({ description: 'only rows marked as not spam (true) or not (false)' })),
      user_id: Opt(Int({ description: 'only rows of this user' })),
      noteable_type: Opt(Enum(SPAM_LOG_TYPES, { description: 'only rows of this kind of record' })),
      ...PaginationParams,
    }),
    handler: async (req, reply) => present(req, await paginateQuery(req, reply, listSpamLogsQuery(req.server, req.input))),
  },
  {
    method: 'GET', url: '/admin/spam_logs/:id', summary: 'One spam log row (Bellows extension)', tags, access: 'authenticated', instance,
    response: SpamLog,
    input: Input({ id: Int() }),
    handler: async (req) => (await present(req, [await getSpamLog(req.server, req.input.id)]))[0],
  },
  {
    method: 'POST', url: '/admin/spam_logs/:id/mark_as_ham', summary: 'Mark a spam log row as not spam, telling Akismet when it is on (Bellows extension)',
    tags, access: 'authenticated', instance,
    response: SpamLog,
    input: Input({ id: Int() }),
    handler: async (req) => {
      const row = await markSpamLogAsHam(req.server, await getSpamLog(req.server, req.input.id), req.log);
      return (await present(req, [row]))[0];
    },
  },
  {
    method: 'DELETE', url: '/admin/spam_logs/:id', summary: 'Remove a spam log row, or with remove_user its author (Bellows extension)',
    tags, access: 'authenticated', instance,
    response: null,
    input: Input({ id: Int(), remove_user: Opt(Bool({ description: 'delete the user who sent the content (and their spam log)', default: false })) }),
    handler: async (req) => {
      await deleteSpamLog(req.server, req.actor.user!.id, await getSpamLog(req.server, req.input.id), req.input.remove_user === true);
      return undefined;
    },
  },
];

export const SPAM_LOG_CLEAN_UP = 'spam_logs.clean_up';

/** Every day at 01:10 UTC, rows older than `spam_log_retention_days` go. */
export function spamLogJobs(deps: ServiceDeps): Record<string, JobKind<{ at: number }>> {
  return {
    [SPAM_LOG_CLEAN_UP]: {
      recurs: dailyAt(1, 10), concurrency: 1, maxAttempts: 3,
      async run(args, ctx) {
        await removeOldSpamLogs(deps, args.at, ctx.signal);
      },
    },
  };
}
