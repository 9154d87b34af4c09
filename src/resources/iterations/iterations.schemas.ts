import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';

// Response shapes of iterations.presenter.ts, same field order.

export const Iteration = Entity({
  id: Type.Integer(), iid: Type.Integer(), sequence: Type.Integer(), group_id: Type.Integer(), title: Nullable(Type.String()),
  description: Nullable(Type.String()), state: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)]), created_at: Iso(), updated_at: Iso(),
  start_date: IsoDay(), due_date: IsoDay(), web_url: Type.String(),
}, { description: 'Iteration' });

export const IterationCadence = Entity({
  id: Type.Integer(), group_id: Type.Integer(), title: Type.String(), description: Nullable(Type.String()), automatic: Type.Boolean(),
  start_date: Nullable(IsoDay()), duration_in_weeks: Nullable(Type.Integer()), iterations_in_advance: Nullable(Type.Integer()),
  roll_over: Type.Boolean(), created_at: Iso(), updated_at: Iso(),
}, { description: 'IterationCadence (Bellows extension)' });
