import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { BadRequestError, ParamError } from '../../platform/errors.ts';
import {
  GateKey, featureState, gatesFromRows, readFeatureGates, type FeatureGates,
} from '../../platform/features.ts';

// Setting and removing instance feature gates (POST/DELETE /features/:name), as the reference's
// SetFeatureFlagService does: one target list, or one global operation.

export const TARGET_PARAMS = ['feature_group', 'user', 'group', 'namespace', 'project', 'repository'] as const;
type TargetParam = (typeof TARGET_PARAMS)[number];

export interface SetFeatureInput {
  value: unknown;
  key?: string;
  feature_group?: string;
  user?: string;
  group?: string;
  namespace?: string;
  project?: string;
  repository?: string;
  force?: boolean;
}

/** A resolved target: an actor (`User:12`) or a feature group (`admins`). */
interface Target {
  gate: typeof GateKey.actors | typeof GateKey.groups;
  value: string;
}

const ENABLE = ['100', '100.0', 'true'];
const DISABLE = ['0', '0.0', 'false'];
const NUMERIC = /^\d+(\.\d+)?$/;

/** The value as text: `true`, `false` and numbers may arrive as JSON booleans and numbers. */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw ParamError.of('value', 'invalid');
}

/** Ruby's String#inspect, which the reference's error texts use. */
const inspect = (s: string) => JSON.stringify(s);

function entries(list: string): string[] {
  return list.split(',').map((s) => s.trim()).filter(Boolean);
}

async function resolveTargets(db: Db, input: SetFeatureInput): Promise<Target[]> {
  const out: Target[] = [];
  const missing = (entry: string) => new BadRequestError(`${entry} is not found!`);
  if (input.feature_group !== undefined) {
    for (const g of entries(input.feature_group)) out.push({ gate: GateKey.groups, value: g });
  }
  if (input.user !== undefined) {
    for (const e of entries(input.user)) {
      const u = await db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['username']), '=', e.toLowerCase())).executeTakeFirst();
      if (!u) throw missing(e);
      out.push({ gate: GateKey.actors, value: `User:${u.id}` });
    }
  }
  if (input.group !== undefined) {
    for (const e of entries(input.group)) {
      const g = await db.selectFrom('namespaces').select('id').where('kind', '=', 'group').where('full_path_lower', '=', e.toLowerCase()).executeTakeFirst();
      if (!g) throw missing(e);
      out.push({ gate: GateKey.actors, value: `Group:${g.id}` });
    }
  }
  if (input.namespace !== undefined) {
    for (const e of entries(input.namespace)) {
      const n = await db.selectFrom('namespaces').select('id').where('kind', 'in', ['user', 'group']).where('full_path_lower', '=', e.toLowerCase()).executeTakeFirst();
      if (!n) throw missing(e);
      out.push({ gate: GateKey.actors, value: `Namespace:${n.id}` });
    }
  }
  const projectId = async (path: string) => (await db.selectFrom('projects').select('id')
    .where('full_path_lower', '=', path.toLowerCase()).where('pending_delete', '=', 0).executeTakeFirst())?.id;
  if (input.project !== undefined) {
    for (const e of entries(input.project)) {
      const id = await projectId(e);
      if (id === undefined) throw missing(e);
      out.push({ gate: GateKey.actors, value: `Project:${id}` });
    }
  }
  if (input.repository !== undefined) {
    for (const e of entries(input.repository)) {
      // A project repository is addressed as "<project path>.git"; wikis and snippets have no repositories here.
      const m = /^(.+)\.git$/i.exec(e);
      const id = m && !/\.wiki$/i.test(m[1]) ? await projectId(m[1]) : undefined;
      if (id === undefined) throw missing(e);
      out.push({ gate: GateKey.actors, value: `Repository:${id}` });
    }
  }
  return out;
}

/** Parameter rules checked before anything else: `key` cannot be combined with a target. */
export function checkExclusive(input: SetFeatureInput): void {
  if (input.key === undefined) return;
  const other = TARGET_PARAMS.find((p: TargetParam) => input[p] !== undefined);
  if (other) throw ParamError.of(`key, ${other}`, 'mutually_exclusive');
}

function percentage(name: string, value: string, g: FeatureGates, kind: 'time' | 'actors'): number {
  if (!NUMERIC.test(value)) throw new BadRequestError('Not a percentage');
  const pct = Number(value);
  if (pct > 100) throw new BadRequestError(`value must be a positive number less than or equal to 100, but was ${value}`);
  if (featureState(g) === 'on') throw new BadRequestError(`Cannot enable percentage of ${kind} for a fully-enabled flag`);
  return pct;
}

/** Applies one POST /features/:name; returns the flag's gates afterwards. */
export async function setFeature(deps: ServiceDeps, name: string, input: SetFeatureInput): Promise<FeatureGates> {
  checkExclusive(input);
  const value = valueText(input.value);
  // A name without a definition file is created (the spec: "created if absent"); its `definition` is null.
  // `force` is accepted as the reference accepts it; the check it skips there (licensed feature names) has no
  // counterpart here, and a definition's own fields are checked when the file is loaded.
  const gateSpecified = TARGET_PARAMS.some((p) => input[p] !== undefined);
  const targets = gateSpecified ? await resolveTargets(deps.db, input) : [];
  const now = deps.clock.now();
  const current = await readFeatureGates(deps.db, name);

  await deps.db.transaction().execute(async (trx) => {
    const del = () => trx.deleteFrom('feature_gates').where('feature_key', '=', name);
    const insert = (key: string, v: string) => trx.insertInto('feature_gates').values({ feature_key: name, key, value: v, created_at: now, updated_at: now }).execute();
    // The boolean row doubles as the mark that a flag is persisted (listed by GET /features).
    const ensurePersisted = async () => {
      if (!(await trx.selectFrom('feature_gates').select('id').where('feature_key', '=', name).where('key', '=', GateKey.boolean).executeTakeFirst())) {
        await insert(GateKey.boolean, 'false');
      }
    };
    const setBoolean = async (on: boolean) => {
      await del().execute();
      await insert(GateKey.boolean, on ? 'true' : 'false');
    };
    const setPercentage = async (key: string, pct: number) => {
      await ensurePersisted();
      await del().where('key', '=', key).execute();
      await insert(key, String(pct));
    };

    if (gateSpecified) {
      await ensurePersisted();
      for (const t of targets) {
        if (ENABLE.includes(value)) {
          const exists = await trx.selectFrom('feature_gates').select('id').where('feature_key', '=', name).where('key', '=', t.gate).where('value', '=', t.value).executeTakeFirst();
          if (!exists) await insert(t.gate, t.value);
        } else if (DISABLE.includes(value)) {
          await del().where('key', '=', t.gate).where('value', '=', t.value).execute();
        } else {
          throw new BadRequestError(`Cannot set '${name}' to ${inspect(value)} for ${t.value}`);
        }
      }
      return;
    }
    if (ENABLE.includes(value)) await setBoolean(true);
    else if (DISABLE.includes(value)) await setBoolean(false);
    else if (input.key === 'percentage_of_actors') await setPercentage(GateKey.percentageOfActors, percentage(name, value, current, 'actors'));
    else if (input.key === 'percentage_of_time' || (input.key === undefined && NUMERIC.test(value))) {
      await setPercentage(GateKey.percentageOfTime, percentage(name, value, current, 'time'));
    } else if (input.key) throw new BadRequestError(`Cannot set '${name}' (${inspect(input.key)}) to ${inspect(value)}`);
    else throw new BadRequestError(`Cannot set '${name}' to ${inspect(value)}`);
  });
  return readFeatureGates(deps.db, name);
}

/** Removes every gate of the flag; nothing happens when it was never set. */
export async function removeFeature(deps: ServiceDeps, name: string): Promise<void> {
  await deps.db.deleteFrom('feature_gates').where('feature_key', '=', name).execute();
}

/** Every persisted flag with its gates, by name. */
export async function listFeatures(deps: ServiceDeps): Promise<Array<{ name: string; gates: FeatureGates }>> {
  const rows = await deps.db.selectFrom('feature_gates').select(['feature_key', 'key', 'value']).orderBy('feature_key').orderBy('id').execute();
  const byName = new Map<string, Array<{ key: string; value: string }>>();
  for (const r of rows) {
    let list = byName.get(r.feature_key);
    if (!list) byName.set(r.feature_key, (list = []));
    list.push(r);
  }
  return [...byName].map(([name, list]) => ({ name, gates: gatesFromRows(list) }));
}
