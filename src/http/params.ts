import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { TObject, TSchema } from '@sinclair/typebox';
import { MissingParamError, ParamError, type ParamProblem } from '../platform/errors.ts';
import { fitsIntColumn } from '../platform/db/dialect.ts';
import { COMMA_SEPARATED, FILE_MAX_BYTES, FILE_PART } from './schemas.ts';
import { UploadedFile } from '../platform/storage/uploads.ts';

const Ajv = (AjvModule as any).default ?? AjvModule;

// One validator for the merged parameters of a request (path, query, body): the v4 API accepts the
// same parameter from any of them. Coercion follows the spec: booleans only from true/false (any case),
// integers from decimal strings, a scalar where an array is declared becomes a one-element array.
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: true, verbose: true, strict: false, removeAdditional: false });
ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseDateTime(s) !== null });
ajv.addFormat('date', { type: 'string', validate: (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) });

/**
 * `multipartFields`: the parameters that arrived as fields of a multipart body. python-gitlab turns booleans into
 * `1` / `0` there (it cannot send Python values as parts); the reference's Boolean coercion reads them as booleans,
 * so a boolean parameter takes them from a multipart field, and only from one.
 */
export type InputValidator = (merged: Record<string, unknown>, multipartFields?: ReadonlySet<string>) => Record<string, unknown>;

export function compileInput(schema: TObject, pathParams: string[] = []): InputValidator {
  // Compiled on the first request that needs it: compiling every route's schema at start-up would take most of the
  // time to the first answer.
  let compiled: ValidateFunction | null = null;
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  const order = Object.keys(props);
  const nonString = order.filter((k) => !acceptsString(props[k]));
  // Dates and datetimes: JSON null is "not given" (python-gitlab sends `"expires_at": null` for an unset date).
  const formatted = order.filter((k) => typeof props[k].format === 'string');
  const booleans = order.filter((k) => isBoolean(props[k]));
  const scalars = order.filter((k) => isScalar(props[k]));
  const integers = order.filter((k) => props[k].type === 'integer');
  const integerLike = order.filter((k) => isIntegerLike(props[k]));
  const commaLists = order.filter((k) => (props[k] as Record<string, unknown>)[COMMA_SEPARATED] === true);
  const fileParams = fileParamsOf(schema);
  return (merged, multipartFields) => {
    const input: Record<string, unknown> = { ...merged };
    const strict: Array<{ param: string; problem: ParamProblem }> = [];
    for (const k of commaLists) {
      const v = input[k];
      if (typeof v === 'string') input[k] = v.split(',').map((x) => x.trim()).filter(Boolean);
    }
    // Integers arrive as text from paths, queries and forms. Only plain decimal digits are a number here: the
    // validator alone would also read 1.0, 0x1, 1e0 and " 1" as 1, so /users/0x1 would name user 1.
    for (const k of integerLike) {
      const v = input[k];
      const path = pathParams.includes(k);
      const ok = (x: unknown) => typeof x !== 'string' || x === '' || (path ? PATH_ID : DECIMAL).test(x);
      if (Array.isArray(v) && !path) {
        const bad = v.map((x, i) => (ok(x) ? -1 : i)).filter((i) => i >= 0);
        for (const i of bad) strict.push({ param: `${k}[${i}]`, problem: 'invalid' });
      } else if (!ok(v)) {
        strict.push({ param: k, problem: 'invalid' });
      }
    }
    // A file parameter given empty (`avatar=`) or null asks to remove the file, as the reference reads a blank
    // avatar; it stays null for the service.
    const removals = fileParams.filter((k) => input[k] === '' || input[k] === null);
    for (const k of removals) delete input[k];
    // An empty value (or JSON null) for a non-string parameter means "not given" (`?id_after=` is ignored).
    for (const k of nonString) if (input[k] === '' || input[k] === null) delete input[k];
    for (const k of formatted) if (input[k] === null) delete input[k];
    // A scalar parameter given an array or a hash (`name[]=v`) is a type error, not its first element.
    for (const k of scalars) {
      const v = input[k];
      if (v !== null && typeof v === 'object') strict.push({ param: k, problem: 'invalid' });
    }
    // Booleans are `true` / `false` only (spec); the validator alone would also take 1, 0 and null.
    for (const k of booleans) {
      const v = input[k];
      if (v === undefined || v === true || v === false) continue;
      // Compared case-insensitively: python-gitlab sends Python's `True` / `False`.
      const word = typeof v === 'string' ? v.toLowerCase() : null;
      if (word === 'true' || word === 'false') input[k] = word === 'true';
      else if ((word === '1' || word === '0') && multipartFields?.has(k)) input[k] = word === '1';
      else strict.push({ param: k, problem: 'invalid' });
    }
    // A file parameter takes a file part and nothing else (no string, no JSON object).
    for (const k of fileParams) if (input[k] !== undefined && !(input[k] instanceof UploadedFile)) strict.push({ param: k, problem: 'invalid' });
    const files = fileParams.filter((k) => input[k] instanceof UploadedFile).map((k) => [k, input[k]] as const);
    for (const [k] of files) input[k] = {};
    // A NUL character cannot be stored (PostgreSQL refuses it), and a lone UTF-16 surrogate (JSON `"\ud800"`)
    // is no text at all: it cannot be encoded as UTF-8, so it would be stored mangled or collide with another
    // value. No parameter may carry either; no service ever sees them.
    for (const k of order) if (!isCleanText(input[k])) strict.push({ param: k, problem: 'invalid' });
    const validate = (compiled ??= ajv.compile(schema));
    const valid = validate(input);
    for (const [k, f] of files) input[k] = f;
    for (const k of removals) input[k] = null;
    // Integers beyond 32 bits are no id, page or count this API knows; the database would refuse them.
    for (const k of integers) {
      const v = input[k];
      if (typeof v !== 'number' || (v <= INT_MAX && v >= -INT_MAX - 1)) continue;
      // A path id that large names no record: look up 0 (ids start at 1), so the area answers its own 404.
      if (pathParams.includes(k)) input[k] = 0;
      else strict.push({ param: k, problem: 'invalid' });
    }
    if (!valid || strict.length) throw toParamError(validate.errors ?? [], strict, order);
    return input;
  };
}

/** The parameters of an input schema that take a file part. */
export function fileParamsOf(schema: TObject): string[] {
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  return Object.keys(props).filter((k) => (props[k] as Record<string, unknown>)[FILE_PART] === true);
}

/** The smallest size limit the route's file parameters declare (`File({ maxBytes })`), if any. */
export function fileLimitOf(schema: TObject): number | undefined {
  const props = (schema.properties ?? {}) as Record<string, TSchema>;
  const limits = Object.values(props).map((p) => (p as Record<string, unknown>)[FILE_MAX_BYTES]).filter((v): v is number => typeof v === 'number');
  return limits.length ? Math.min(...limits) : undefined;
}

function acceptsString(s: TSchema): boolean {
  if (s.type === 'string') return true;
  if (Array.isArray(s.anyOf)) return s.anyOf.some((x: TSchema) => acceptsString(x));
  return false;
}

const INT_MAX = 2_147_483_647;

/** A path id: decimal digits, no sign, no leading zeros beyond "0". */
const PATH_ID = /^(0|[1-9]\d*)$/;
/** Any other integer parameter: decimal digits with an optional sign, as the reference's `Integer(value, 10)`. */
const DECIMAL = /^[+-]?\d+$/;

/** Declared as an integer, an array of integers, or a set of integer values (access levels). */
function isIntegerLike(s: TSchema): boolean {
  if (s.type === 'integer') return true;
  if (s.type === 'array' && s.items) return isIntegerLike(s.items as TSchema);
  if (Array.isArray(s.anyOf)) return s.anyOf.length > 0 && s.anyOf.every((x: TSchema) => x.type === 'integer' || (x.type === 'number' && Number.isInteger(x.const)));
  return false;
}

const BAD_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** No NUL and no lone surrogate, in the value, its elements and its keys. */
export function isCleanText(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return !BAD_TEXT.test(v);
  if (depth > 8 || v === null || typeof v !== 'object') return true;
  return Object.entries(v).every(([k, x]) => !BAD_TEXT.test(k) && isCleanText(x, depth + 1));
}

const SCALAR = new Set(['string', 'integer', 'number', 'boolean']);

function isScalar(s: TSchema): boolean {
  if (typeof s.type === 'string') return SCALAR.has(s.type);
  if (Array.isArray(s.anyOf)) return s.anyOf.every((x: TSchema) => isScalar(x));
  return false;
}

function isBoolean(s: TSchema): boolean {
  return s.type === 'boolean';
}

const RANK: Record<ParamProblem, number> = { missing: 0, invalid: 1, value: 2, not_allowed: 3, empty: 4, at_least_one: 5, mutually_exclusive: 6, exactly_one: 7, all_or_none: 8 };

/**
 * The reference reports every parameter problem at once, in declaration order, joined with ", ".
 * A missing required root parameter wins and is reported alone, in the spec's rule-2 wording.
 */
function toParamError(errors: ErrorObject[], extra: Array<{ param: string; problem: ParamProblem }>, order: string[]): Error {
  const missing = errors.filter((e) => e.keyword === 'required' && e.instancePath === '')
    .map((e) => (e.params as { missingProperty: string }).missingProperty)
    .sort((a, b) => order.indexOf(a) - order.indexOf(b));
  if (missing.length) return new MissingParamError(missing[0]);

  // One problem per parameter: group the validator's errors by the value they are about.
  const byParam = new Map<string, ParamProblem>();
  const note = (param: string, problem: ParamProblem) => {
    const had = byParam.get(param);
    if (had === undefined || RANK[problem] < RANK[had]) byParam.set(param, problem);
  };
  for (const x of extra) note(x.param, x.problem);
  const enumPaths = new Set(errors.filter((e) => e.keyword === 'anyOf' && isEnumLike(e)).map((e) => e.instancePath));
  for (const e of errors) {
    const base = pathToName(e.instancePath);
    if (e.keyword === 'required') {
      note(`${base}[${(e.params as { missingProperty: string }).missingProperty}]`, 'missing');
      continue;
    }
    if (enumPaths.has(e.instancePath)) {
      note(base || 'params', 'value');
      continue;
    }
    let problem: ParamProblem = 'invalid';
    if (e.keyword === 'enum' || e.keyword === 'const') problem = 'value';
    else if (e.keyword === 'not') problem = 'not_allowed';
    else if (e.keyword === 'minLength' && (e.params as any).limit === 1) problem = 'empty';
    else if (e.keyword === 'minimum' || e.keyword === 'maximum') problem = 'value';
    note(base || 'params', problem);
  }
  // Declaration order, nested names after their root parameter.
  const rootOf = (name: string) => name.split('[')[0];
  const problems = [...byParam.entries()]
    .map(([param, problem]) => ({ param, problem }))
    .sort((a, b) => {
      const ia = order.indexOf(rootOf(a.param));
      const ib = order.indexOf(rootOf(b.param));
      return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib) || (a.param < b.param ? -1 : a.param > b.param ? 1 : 0);
    });
  if (problems.length === 0) return ParamError.of('params', 'invalid');
  return new ParamError(problems);
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

/** A path id given as text: the one path-id rule, and null for anything else or beyond the id columns. */
export function parsePathId(raw: string): number | null {
  return PATH_ID.test(raw) && fitsIntColumn(Number(raw)) ? Number(raw) : null;
}

/** A project or group `:id`: an integer id, or a full path (URL-decoded by the router). */
export function parseIdOrPath(raw: string): { id: number } | { path: string } {
  // The one path-id rule (digits, no sign, no leading zeros); digits beyond the id column's range are no id
  // (and PostgreSQL would refuse the comparison).
  if (PATH_ID.test(raw) && fitsIntColumn(Number(raw))) return { id: Number(raw) };
  return { path: raw };
}
