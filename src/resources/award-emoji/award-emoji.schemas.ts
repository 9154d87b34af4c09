import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';

// Response shape of award-emoji.presenter.ts, same field order.

export const AwardEmoji = Entity({
  id: Type.Integer(), name: Type.String(), user: Nullable(UserBasic), created_at: Iso(), updated_at: Iso(), awardable_id: Type.Integer(),
  awardable_type: Type.String(), url: Nullable(Type.String()),
}, { description: 'AwardEmoji' });
