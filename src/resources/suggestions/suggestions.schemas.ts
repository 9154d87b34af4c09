import { Type } from '@sinclair/typebox';
import { Entity } from '../../http/response-schemas.ts';

// Response shape of suggestions.presenter.ts, same field order.

export const Suggestion = Entity({
  id: Type.Integer(),
  from_line: Type.Integer(),
  to_line: Type.Integer(),
  applicable: Type.Boolean(),
  applied: Type.Boolean(),
  from_content: Type.String(),
  to_content: Type.String(),
}, { description: 'Suggestion' });
