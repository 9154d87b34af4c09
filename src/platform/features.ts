import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import type { Db } from './db/index.ts';
import { defineMemo } from './read-cache.ts';

// Instance feature gates. Definitions are versioned YAML files, one per flag, in config/feature_flags/;
// gate values live in the `feature_gates` table (feature_key, key, value). Every part of the server reads a
// flag through isFeatureEnabled().

export interface FeatureDefinition {
  name: string;
  introduced_by_url: string | null;
  rollout_issue_url: string | null;
  milestone: string | null;
  log_state_changes: boolean | null;
  type: string;
  group: string | null;
  default_enabled: boolean;
}

export type FeatureActorType = 'User' | 'Group' | 'Project' | 'Namespace' | 'Repository';
export interface FeatureActor {
  type: FeatureActorType;
  id: number;
}

/** Gate keys as stored and shown; `actors` and `groups` hold one row per member. */
export const GateKey = {
  boolean: 'boolean',
  actors: 'actors',
  percentageOfActors: 'percentage_of_actors',
  percentageOfTime: 'percentage_of_time',
  groups: 'groups',
} as const;

export const DEFINITIONS_DIR = fileURLToPath(new URL('../../config/feature_flags/', import.meta.url));

// The definition files, read once per process (a memo: they ship with the server and do not change under it).
const definitions = defineMemo<string, Map<string, FeatureDefinition>>('feature-definitions', { max: 4 });

/** Reads and checks every definition file; a malformed file stops start-up with its name. */
export function loadFeatureDefinitions(dir = DEFINITIONS_DIR): Map<string, FeatureDefinition> {
  const out = new Map<string, FeatureDefinition>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yml')).sort()) {
    const raw = parseYaml(readFileSync(`${dir}/${file}`, 'utf8')) as Record<string, unknown> | null;
    const where = `feature flag definition ${file}`;
    if (!raw || typeof raw !== 'object') throw new Error(`${where}: not a mapping`);
    const name = raw.name;
    if (typeof name !== 'string' || `${name}.yml` !== file) throw new Error(`${where}: name must match the file name`);
    if (typeof raw.default_enabled !== 'boolean') throw new Error(`${where}: default_enabled must be true or false`);
    if (typeof raw.type !== 'string' || raw.type === '') throw new Error(`${where}: type is required`);
    const str = (v: unknown) => (v === undefined || v === null ? null : String(v));
    out.set(name, {
      name,
      introduced_by_url: str(raw.introduced_by_url),
      rollout_issue_url: str(raw.rollout_issue_url),
      milestone: str(raw.milestone),
      log_state_changes: typeof raw.log_state_changes === 'boolean' ? raw.log_state_changes : null,
      type: raw.type,
      group: str(raw.group),
      default_enabled: raw.default_enabled,
    });
  }
  return out;
}

export function featureDefinitions(): Map<string, FeatureDefinition> {
  let d = definitions.get(DEFINITIONS_DIR);
  if (!d) definitions.set(DEFINITIONS_DIR, (d = loadFeatureDefinitions()));
  return d;
}

export function featureDefinition(name: string): FeatureDefinition | null {
  return featureDefinitions().get(name) ?? null;
}

/** The stored gates of one flag; `persisted` is false when the flag was never set (or was deleted). */
export interface FeatureGates {
  persisted: boolean;
  boolean: boolean;
  actors: string[];
  percentageOfActors: number;
  percentageOfTime: number;
  groups: string[];
}

export async function readFeatureGates(db: Db, name: string): Promise<FeatureGates> {
  const rows = await db.selectFrom('feature_gates').select(['key', 'value']).where('feature_key', '=', name).orderBy('id').execute();
  return gatesFromRows(rows);
}

export function gatesFromRows(rows: Array<{ key: string; value: string }>): FeatureGates {
  const g: FeatureGates = { persisted: rows.length > 0, boolean: false, actors: [], percentageOfActors: 0, percentageOfTime: 0, groups: [] };
  for (const r of rows) {
    if (r.key === GateKey.boolean) g.boolean = r.value === 'true';
    else if (r.key === GateKey.actors) g.actors.push(r.value);
    else if (r.key === GateKey.groups) g.groups.push(r.value);
    else if (r.key === GateKey.percentageOfActors) g.percentageOfActors = Number(r.value) || 0;
    else if (r.key === GateKey.percentageOfTime) g.percentageOfTime = Number(r.value) || 0;
  }
  return g;
}

/** `on` when fully enabled, `conditional` when any other gate lets something through, else `off`. */
export function featureState(g: FeatureGates): 'on' | 'off' | 'conditional' {
  if (g.boolean || g.percentageOfTime >= 100) return 'on';
  if (g.actors.length || g.groups.length || g.percentageOfActors > 0 || g.percentageOfTime > 0) return 'conditional';
  return 'off';
}

export function flipperId(actor: FeatureActor): string {
  return `${actor.type}:${actor.id}`;
}

/**
 * Whether an actor falls inside a percentage-of-actors rollout. Stable: the same flag and actor always give
 * the same answer, and raising the percentage only adds actors (CRC32 of name and actor id, in 1/1000 %).
 */
export function actorInPercentage(name: string, actor: FeatureActor, percentage: number): boolean {
  return crc32(`${name}${flipperId(actor)}`) % 100_000 < percentage * 1000;
}

/** Feature groups an administrator may enable a flag for (`feature_group`), and who belongs to them. */
export const FEATURE_GROUPS: Record<string, (db: Db, actor: FeatureActor) => Promise<boolean>> = {
  admins: async (db, actor) => {
    if (actor.type !== 'User') return false;
    const u = await db.selectFrom('users').select('admin').where('id', '=', actor.id).executeTakeFirst();
    return !!u?.admin;
  },
};

/**
 * The one way the server asks whether a flag is on, optionally for an actor: the boolean gate, actor and
 * feature-group gates, percentage of actors (stable per actor), then percentage of time. A flag never set
 * answers its definition's default (off when it has no definition).
 */
export async function isFeatureEnabled(db: Db, name: string, actor?: FeatureActor): Promise<boolean> {
  const g = await readFeatureGates(db, name);
  if (!g.persisted) return featureDefinition(name)?.default_enabled ?? false;
  if (g.boolean) return true;
  if (actor) {
    if (g.actors.includes(flipperId(actor))) return true;
    for (const group of g.groups) {
      const member = FEATURE_GROUPS[group];
      if (member && (await member(db, actor))) return true;
    }
    if (g.percentageOfActors > 0 && actorInPercentage(name, actor, g.percentageOfActors)) return true;
  }
  if (g.percentageOfTime > 0 && Math.random() * 100 < g.percentageOfTime) return true;
  return false;
}
