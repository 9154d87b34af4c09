import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { personalAccessTokenFields } from '../access-tokens/access-tokens.schemas.ts';

// Response shapes of members.presenter.ts and resource-access-tokens.routes.ts, same field order.

export const Member = Entity({
  ...UserBasic.properties,
  access_level: Type.Integer(), created_at: Iso(),
  /** When the membership records who made it. */
  created_by: Type.Optional(UserBasic),
  expires_at: Nullable(IsoDay()), membership_state: Type.String(),
}, { description: 'Member' });

const { token, ...tokenFields } = personalAccessTokenFields;
export const ResourceAccessToken = Entity({
  ...tokenFields,
  last_used_ips: Type.Array(Type.String()), access_level: Type.Integer(), resource_type: Type.String(), resource_id: Type.Integer(),
  token,
}, { description: 'ResourceAccessToken' });
