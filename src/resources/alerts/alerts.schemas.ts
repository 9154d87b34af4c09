import { Type } from '@sinclair/typebox';
import { Any, Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';

// Response shapes of alerts.presenter.ts, same field order.

export const AlertIntegration = Entity({
  id: Type.Integer(), name: Type.String(), type: Type.String(), active: Type.Boolean(), url: Type.String(),
  token: Type.Optional(Type.String()), created_at: Iso(), updated_at: Iso(),
}, { description: 'AlertIntegration (Bellows extension)' });

export const Alert = Entity({
  id: Type.Integer(), iid: Type.Integer(), project_id: Type.Integer(), title: Type.String(), description: Nullable(Type.String()),
  severity: Type.String(), status: Type.String(), started_at: Iso(), ended_at: Nullable(Iso()), events: Type.Integer(),
  monitoring_tool: Nullable(Type.String()), service: Nullable(Type.String()), hosts: Type.Array(Type.String()),
  fingerprint: Nullable(Type.String()), environment_name: Nullable(Type.String()), issue_iid: Nullable(Type.Integer()),
  assignees: Type.Array(UserBasic), payload: Any(), created_at: Iso(), updated_at: Iso(), web_url: Type.String(),
}, { description: 'Alert (Bellows extension)' });

export const MetricImage = Entity({
  id: Type.Integer(), created_at: Iso(), filename: Type.String(), file_path: Type.String(), url: Nullable(Type.String()), url_text: Nullable(Type.String()),
}, { description: 'MetricImage' });
