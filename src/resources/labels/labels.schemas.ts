import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shapes of labels.presenter.ts, same field order.

const basic = {
  id: Type.Integer(), name: Type.String(), color: Type.String(), description: Nullable(Type.String()),
  description_html: Nullable(Type.String()), text_color: Type.String(), remove_on_close: Type.Boolean(),
};
export const LabelBasic = Entity(basic, { description: 'LabelBasic' });

const withSubscription = {
  ...basic,
  open_issues_count: Type.Optional(Type.Integer()), closed_issues_count: Type.Optional(Type.Integer()),
  open_merge_requests_count: Type.Optional(Type.Integer()),
  subscribed: Type.Boolean(),
};
/** A group's label (GroupLabel), and a label answered by subscribe / unsubscribe. */
export const Label = Entity(withSubscription, { description: 'Label' });

export const ProjectLabel = Entity({ ...withSubscription, priority: Nullable(Type.Integer()), is_project_label: Type.Boolean() }, { description: 'ProjectLabel' });
