import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shapes of error-tracking.presenter.ts, same field order.

export const ErrorTrackingSetting = Entity({
  active: Type.Boolean(), project_name: Nullable(Type.String()), tracker_external_url: Nullable(Type.String()),
  api_url: Nullable(Type.String()), integrated: Type.Boolean(),
}, { description: 'ErrorTracking::ProjectSetting' });

export const ErrorTrackingClientKey = Entity({
  id: Type.Integer(), active: Type.Boolean(), public_key: Type.String(), tracker_dsn: Type.String(),
}, { description: 'ErrorTracking::ClientKey' });
