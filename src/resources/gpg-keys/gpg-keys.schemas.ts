import { Type } from '@sinclair/typebox';
import { Entity, Iso } from '../../http/response-schemas.ts';

// Response shapes of gpg-keys.presenter.ts, same field order.

export const GpgKey = Entity({ id: Type.Integer(), key: Type.String(), created_at: Iso() }, { description: 'GpgKey' });
