import { iso } from '../../http/format.ts';
import type { UserListRow } from './feature-flag-user-lists.service.ts';

// A feature-flag user list in the spec's field order.
export function userList(l: UserListRow) {
  return {
    name: l.name,
    user_xids: l.user_xids,
    id: l.id,
    iid: l.iid,
    project_id: l.project_id,
    created_at: iso(l.created_at),
    updated_at: iso(l.updated_at),
  };
}
