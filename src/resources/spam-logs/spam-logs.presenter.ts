import { iso } from '../../http/format.ts';
import type { User } from '../users/users.service.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { SpamLogRow } from './spam-logs.service.ts';

// A spam log row in the order of the reference's SpamLog columns, with its author as a basic user entity.

export function spamLogEntity(r: SpamLogRow, user: User | undefined, base: string) {
  return {
    id: r.id,
    user: user ? userBasic(user, base) : null,
    source_ip: r.source_ip,
    user_agent: r.user_agent,
    via_api: !!r.via_api,
    noteable_type: r.noteable_type,
    title: r.title,
    description: r.description,
    recaptcha_verified: !!r.recaptcha_verified,
    submitted_as_ham: !!r.submitted_as_ham,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}
