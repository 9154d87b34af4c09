import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';

// Response shapes of user-profile.presenter.ts, same field order.

export const Email = Entity({ id: Type.Integer(), email: Type.String(), confirmed_at: Nullable(Iso()) }, { description: 'Email' });

/** Every field is null for a user without a status. */
export const UserStatus = Entity({
  emoji: Nullable(Type.String()), availability: Nullable(Type.String()), message: Nullable(Type.String()),
  message_html: Nullable(Type.String()), clear_status_at: Nullable(Iso()),
}, { description: 'UserStatus' });

export const CustomAttribute = Entity({ key: Type.String(), value: Type.String() }, { description: 'CustomAttribute' });

export const Membership = Entity({
  source_id: Type.Integer(), source_name: Type.String(), source_type: Type.String(), access_level: Type.Integer(),
}, { description: 'Membership' });
