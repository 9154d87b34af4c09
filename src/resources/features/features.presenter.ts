import { GateKey, featureDefinition, featureState, type FeatureDefinition, type FeatureGates } from '../../platform/features.ts';

/** A definition as GET /features/definitions and a feature's `definition` show it. */
export function definitionJson(d: FeatureDefinition) {
  return {
    name: d.name,
    introduced_by_url: d.introduced_by_url,
    rollout_issue_url: d.rollout_issue_url,
    milestone: d.milestone,
    log_state_changes: d.log_state_changes,
    type: d.type,
    group: d.group,
    default_enabled: d.default_enabled,
  };
}

/** Gates in the reference's order; the boolean gate is always there, empty sets and zero percentages are not. */
export function gatesJson(g: FeatureGates) {
  const out: Array<{ key: string; value: unknown }> = [{ key: GateKey.boolean, value: g.boolean }];
  if (g.actors.length) out.push({ key: GateKey.actors, value: g.actors });
  if (g.percentageOfActors > 0) out.push({ key: GateKey.percentageOfActors, value: g.percentageOfActors });
  if (g.percentageOfTime > 0) out.push({ key: GateKey.percentageOfTime, value: g.percentageOfTime });
  if (g.groups.length) out.push({ key: GateKey.groups, value: g.groups });
  return out;
}

export function featureJson(name: string, g: FeatureGates) {
  const d = featureDefinition(name);
  return { name, state: featureState(g), gates: gatesJson(g), definition: d ? definitionJson(d) : null };
}
