import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { TObject, TSchema } from '@sinclair/typebox';
import { MissingParamError, ParamError, type ParamProblem } from '../platform/errors.ts';

const Ajv = (AjvModule as any).default ?? AjvModule;

// One validator for the merged parameters of a request (path, query, body): the v4 API accepts the
// same parameter from any of them. Coercion follows the spec: booleans only from true/false,
// integers from decimal strings, a scalar where an array is declared becomes a one-element array.
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false, removeAdditional: false });
ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseDateTime(s) !== null });
ajv.addFormat('date', { type: 'string', validate: (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) });

export type InputValidator = (merged: Record<string, unknown>) => Record<string, unknown>;

export function compileInput(schema: TObject): InputValidator {
  const validate: ValidateFunction = ajv.compile(schema);
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  const nonString = Object.entries(props).filter(([, s]) => !acceptsString(s)).map(([k]) => k);
  return (merged) => {
    const input: Record<string, unknown> = { ...merged };
    // An empty value for a non-string parameter means "not given" (`?id_after=` is ignored).
    for (const k of nonString) if (input[k] === '') delete input[k];
    if (!validate(input)) throw toParamError(validate.errors ?? []);
    return input;
  };
}

function acceptsString(s: TSchema): boolean {
  if (s.type === 'string') return true;
  if (Array.isArray(s.anyOf)) return s.anyOf.some((x: TSchema) => acceptsString(x));
  return false;
}

function toParamError(errors: ErrorObject[]): Error {
  const e = errors[0];
  if (!e) return ParamError.of('params', 'invalid');
  const base = pathToName(e.instancePath);
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return base ? ParamError.of(`${base}[${missing}]`, 'missing') : new MissingParamError(missing);
  }
  let problem: ParamProblem = 'invalid';
  if (e.keyword === 'enum' || e.keyword === 'const' || (e.keyword === 'anyOf' && isEnumLike(e))) problem = 'value';
  else if (e.keyword === 'not') problem = 'not_allowed';
  else if (e.keyword === 'minLength' && (e.params as any).limit === 1) problem = 'empty';
  else if (e.keyword === 'minimum' || e.keyword === 'maximum') problem = 'value';
  return ParamError.of(base || 'params', problem);
}

function isEnumLike(e: ErrorObject): boolean {
  const s = e.parentSchema as { anyOf?: Array<{ const?: unknown }> } | undefined;
  return !!s?.anyOf?.every((x) => 'const' in x);
}

/** "/actions/0/file_path" -> "actions[0][file_path]", the parameter's full name as clients send it. */
function pathToName(p: string): string {
  const parts = p.split('/').filter(Boolean).map((x) => x.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (parts.length === 0) return '';
  return parts[0] + parts.slice(1).map((x) => `[${x}]`).join('');
}

/**
 * ISO 8601 datetimes with or without an offset, and plain dates; no offset means UTC.
 * Returns epoch milliseconds or null.
 */
export function parseDateTime(s: string): number | null {
  if (typeof s !== 'string') return null;
  const v = s.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|z|[+-]\d{2}:?\d{2}|UTC)?)?$/.exec(v);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', sec = '00', frac = '', zone] = m;
  let offset = 'Z';
  if (zone && zone !== 'Z' && zone !== 'z' && zone !== 'UTC') offset = zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const ms = frac ? frac.slice(0, 4).padEnd(4, '0') : '.000';
  const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${sec}${ms}${offset}`);
  if (Number.isNaN(t)) return null;
  // Reject roll-overs such as 2024-02-31.
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  return t;
}

/** A project or group `:id`: an integer id, or a full path (URL-decoded by the router). */
export function parseIdOrPath(raw: string): { id: number } | { path: string } {
  // Ids beyond the integer column's range cannot exist; as a path they simply match nothing.
  if (/^\d+$/.test(raw) && Number(raw) <= 2_147_483_647) return { id: Number(raw) };
  return { path: raw };
}
