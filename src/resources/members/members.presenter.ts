import { iso, isoDate } from '../../http/format.ts';
import type { User } from '../users/users.service.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { MemberRow } from './members.service.ts';

// Member: the user's basic fields merged with the membership, in the reference's order.
export function memberEntity(m: MemberRow, user: User, createdBy: User | undefined, base: string) {
  const out: Record<string, unknown> = {
    ...userBasic(user, base),
    access_level: m.access_level,
    created_at: iso(m.created_at),
  };
  if (createdBy) out.created_by = userBasic(createdBy, base);
  out.expires_at = isoDate(m.expires_at);
  out.membership_state = 'active';
  return out;
}
