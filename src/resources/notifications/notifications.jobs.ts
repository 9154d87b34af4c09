import type { ServiceDeps } from '../../platform/deps.ts';
import { eventJobKind, type DomainEvent } from '../../platform/events.ts';
import { dailyAt, type JobKind } from '../../platform/jobs/queue.ts';
import { createMailer, type MailMessage, type Mailer } from '../../platform/mail.ts';
import { DELIVER, dueIssueMessages, notificationsFor, queueDeliveries } from './notifications.service.ts';

// The notification e-mails' background work:
// - `events.notifications`: a domain event becomes its messages, one delivery job per message, queued together;
// - `notifications.deliver`: one message handed to the mail transport (SMTP, or an .eml file), retried with backoff;
// - `notifications.issue_due`: every day at 00:50 UTC (the reference's schedule), the open issues due the next day.

type Log = { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };

export function notificationJobs(deps: ServiceDeps & { log?: Log }): Record<string, JobKind> {
  let mailer: Mailer | null = null;
  const log = deps.log?.info ? { info: deps.log.info.bind(deps.log) } : undefined;
  return {
    [eventJobKind('notifications')]: {
      maxAttempts: 5,
      async run(event: DomainEvent) {
        const list = await notificationsFor(deps, event);
        if (list.length) await deps.db.transaction().execute((trx) => queueDeliveries(deps, trx, list));
      },
    },
    [DELIVER]: {
      maxAttempts: 10,
      concurrency: 2,
      async run(message: MailMessage) {
        mailer ??= createMailer(deps.config, log);
        await mailer.send(message);
      },
    },
    'notifications.issue_due': {
      maxAttempts: 3,
      recurs: dailyAt(0, 50),
      async run(args: { at: number }) {
        const list = await dueIssueMessages(deps, args.at);
        if (list.length) await deps.db.transaction().execute((trx) => queueDeliveries(deps, trx, list));
      },
    },
  };
}
