import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';

// Response shape of milestones.presenter.ts, same field order.

export const Milestone = Entity({
  id: Type.Integer(), iid: Type.Integer(), project_id: Type.Optional(Type.Integer()), group_id: Type.Optional(Type.Integer()),
  title: Type.String(), description: Nullable(Type.String()), state: Type.Union([Type.Literal('active'), Type.Literal('closed')]),
  created_at: Iso(), updated_at: Iso(), due_date: Nullable(IsoDay()), start_date: Nullable(IsoDay()), expired: Type.Boolean(),
  web_url: Type.String(),
}, { description: 'Milestone' });
