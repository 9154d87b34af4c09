import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';

// Response shape of spam-logs.presenter.ts, same field order.

export const SpamLog = Entity({
  id: Type.Integer(), user: Nullable(UserBasic), source_ip: Nullable(Type.String()), user_agent: Nullable(Type.String()),
  via_api: Type.Boolean(), noteable_type: Type.String(), title: Nullable(Type.String()), description: Nullable(Type.String()),
  recaptcha_verified: Type.Boolean(), submitted_as_ham: Type.Boolean(), created_at: Iso(), updated_at: Iso(),
}, { description: 'SpamLog' });
