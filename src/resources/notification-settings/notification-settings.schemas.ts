import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shape of notification-settings.presenter.ts, same field order.

export const NotificationSetting = Entity({
  level: Type.String(),
  /** Only for the custom level: each event with whether it notifies. */
  events: Type.Optional(Type.Record(Type.String(), Type.Boolean())),
  /** The global setting only. */
  notification_email: Type.Optional(Nullable(Type.String())),
}, { description: 'NotificationSetting' });
