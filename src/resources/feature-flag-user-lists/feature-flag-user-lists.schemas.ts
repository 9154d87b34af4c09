import { Type } from '@sinclair/typebox';
import { Entity, Iso } from '../../http/response-schemas.ts';

// Response shape of feature-flag-user-lists.presenter.ts, same field order.

export const FeatureFlagUserList = Entity({
  name: Type.String(), user_xids: Type.String(), id: Type.Integer(), iid: Type.Integer(), project_id: Type.Integer(),
  created_at: Iso(), updated_at: Iso(),
}, { description: 'FeatureFlag::UserList' });
