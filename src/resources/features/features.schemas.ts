import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shapes of features.presenter.ts, same field order.

export const FeatureDefinition = Entity({
  name: Type.String(), introduced_by_url: Nullable(Type.String()), rollout_issue_url: Nullable(Type.String()),
  milestone: Nullable(Type.String()), log_state_changes: Nullable(Type.Boolean()), type: Type.String(), group: Nullable(Type.String()),
  default_enabled: Type.Boolean(),
}, { description: 'Feature::Definition' });

export const FeatureGate = Entity({
  key: Type.String(),
  value: Type.Union([Type.Boolean(), Type.Number(), Type.Array(Type.String())]),
});

export const Feature = Entity({
  name: Type.String(), state: Type.String(), gates: Type.Array(FeatureGate), definition: Nullable(FeatureDefinition),
}, { description: 'Feature' });
