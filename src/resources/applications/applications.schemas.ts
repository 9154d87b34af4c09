import { Type } from '@sinclair/typebox';
import { Entity } from '../../http/response-schemas.ts';

// Response shape of applications.presenter.ts, same field order.

export const Application = Entity({
  id: Type.Integer(), application_id: Type.String(), application_name: Type.String(),
  /** Only when the secret was just made (create, renew). */
  secret: Type.Optional(Type.String()),
  callback_url: Type.String(), confidential: Type.Boolean(),
}, { description: 'Application' });
