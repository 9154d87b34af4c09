import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shape of namespaces.presenter.ts, same field order.

const basicFields = {
  id: Type.Integer(), name: Type.String(), path: Type.String(), kind: Type.String(), full_path: Type.String(),
  parent_id: Nullable(Type.Integer()), avatar_url: Nullable(Type.String()), web_url: Type.String(),
};
export const NamespaceBasic = Entity(basicFields, { description: 'NamespaceBasic' });

export const Namespace = Entity({
  ...basicFields,
  /** Only for a namespace the caller owns. */
  members_count_with_descendants: Type.Optional(Type.Integer()),
}, { description: 'Namespace' });
