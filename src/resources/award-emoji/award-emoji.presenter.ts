import { iso } from '../../http/format.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { User } from '../users/users.service.ts';
import type { AwardRow } from './award-emoji.service.ts';

/** The reference's AwardEmoji entity, whatever the awardable. */
export function awardEmojiEntity(a: AwardRow, u: User | undefined, base: string) {
  return {
    id: a.id, name: a.name, user: u ? userBasic(u, base) : null, created_at: iso(a.created_at), updated_at: iso(a.updated_at),
    awardable_id: a.awardable_id, awardable_type: a.awardable_type, url: null,
  };
}
