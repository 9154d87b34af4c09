import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shapes of metadata.routes.ts, same field order.

export const Version = Entity({ version: Type.String(), revision: Type.String() }, { description: 'Version' });

export const Metadata = Entity({
  version: Type.String(), revision: Type.String(),
  kas: Entity({ enabled: Type.Boolean(), externalUrl: Nullable(Type.String()), version: Nullable(Type.String()) }),
  enterprise: Type.Boolean(),
}, { description: 'Metadata' });
