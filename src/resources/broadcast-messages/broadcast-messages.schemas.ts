import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';

// Response shape of broadcast-messages.presenter.ts, same field order.

export const BroadcastMessage = Entity({
  id: Type.Integer(), message: Type.String(), starts_at: Nullable(Iso()), ends_at: Nullable(Iso()), font: Nullable(Type.String()),
  active: Type.Boolean(), target_access_levels: Type.Array(Type.Integer()), target_path: Nullable(Type.String()),
  broadcast_type: Type.String(), dismissable: Nullable(Type.Boolean()),
}, { description: 'BroadcastMessage' });
