import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';

// Response shapes of access-tokens.presenter.ts, same field order.

export const personalAccessTokenFields = {
  id: Type.Integer(), name: Type.String(), revoked: Type.Boolean(), created_at: Iso(), description: Nullable(Type.String()),
  scopes: Type.Array(Type.String()), user_id: Type.Integer(), last_used_at: Nullable(Iso()), active: Type.Boolean(),
  expires_at: Nullable(IsoDay()),
  /** Impersonation tokens only. */
  impersonation: Type.Optional(Type.Literal(true)),
  /** Only in the answer that created the token. */
  token: Type.Optional(Type.String()),
};
export const PersonalAccessToken = Entity(personalAccessTokenFields, { description: 'PersonalAccessToken' });
