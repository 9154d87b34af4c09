import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import qs from 'qs';
import { buildTestApp, call, type TestApp } from '../support/app.ts';
import { createProject, makeGroup, makeToken, makeUser, type TestUser } from '../support/fixtures.ts';

// Every route of the OpenAPI document, given malformed values of each declared parameter type (as a query, a JSON
// body and a form body; as an administrator and anonymously), answers below 500, and a refusal has a v4 error
// body. A few runs per route with a fixed seed keep this quick; FUZZ_SEED and FUZZ_RUNS run it longer by hand:
//   FUZZ_SEED=$RANDOM FUZZ_RUNS=200 FUZZ_SWEEP=all node scripts/test.mjs openapi-fuzz

const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 2);

// Routes left out, each with the defect that fails it; they come back when the defect is fixed.
const EXCLUDED: Record<string, string> = {};

let t: TestApp;
let victim: TestUser;
let admin: TestUser;
let pool: Record<string, string[]>;
let doc: any;

before(async () => {
  t = await buildTestApp();
  // The user the path pool names is made first, so that id 1 is never the administrator making the requests.
  victim = await makeUser(t.app);
  admin = await makeUser(t.app, { admin: true });
  const project = await createProject(t.app, admin.token, { name: 'fuzzed', visibility: 'public', initialize_with_readme: true });
  const group = await makeGroup(t.app, { visibility: 20 });
  pool = {
    project: [String(project.id), encodeURIComponent(project.path_with_namespace)],
    user: [String(victim.user.id), victim.user.username],
    group: [String(group.id), group.full_path],
    other: ['main', 'README.md', 'v1', '1', 'x'],
  };
  doc = (await call(t.app, 'GET', '/openapi.json', { token: admin.token })).body;
});
after(async () => { await t.close(); });

// Values no parameter of any type should take: wrong types, huge strings, ill-formed text, odd numbers, nesting.
const anyBad = fc.oneof(
  fc.constantFrom('\ud800', 'x\udfffy', 'a\u0000b', '\u0000', '', ' ', '-', '--help', '../..', '%', '%00', '\\', '"', "'", '\n', 'null', 'undefined', '[]', '{}'),
  fc.constantFrom('x'.repeat(5000), '\u{1F600}'.repeat(1000)),
  fc.constantFrom(-1, 0, 1.5, -2147483649, 2147483648, 1e21, Number.MAX_SAFE_INTEGER, -0.0001),
  fc.constantFrom('-1', '1.5', '0x10', '1e3', '+1', '01', '99999999999999999999', 'NaN', 'Infinity'),
  fc.constantFrom(true, false, null, 'yes', 'TRUE', 'on'),
  fc.constantFrom('2024-02-31', '0000-00-00', '99999-01-01T00:00:00Z', 'yesterday', '2024-01-01T25:61:00'),
  fc.string({ maxLength: 20, unit: 'binary' }),
  fc.integer(),
);
const nested = fc.oneof(
  anyBad,
  fc.array(anyBad, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', '0', 'key', '\u0000', '\ud800'), anyBad, { maxKeys: 2 }),
  fc.array(fc.dictionary(fc.constantFrom('a', 'action', 'file_path'), anyBad, { maxKeys: 2 }), { maxLength: 2 }),
);

// The values that have broken servers before, tried often: ill-formed text, NUL, huge text, structure for scalars.
const killer = fc.constantFrom<unknown>('\ud800x', ['\ud800x', '\udbffx'], 'a\u0000b', 'x'.repeat(20000), ['a', { b: 1 }], { a: { b: 'c' } }, -1, 1.5, '99999999999999999999', true, null);

let goodSeq = 0;
function goodValue(schema: any): unknown {
  if (schema?.type === 'integer' || schema?.type === 'number') return 1;
  if (Array.isArray(schema?.anyOf)) return schema.anyOf[0]?.enum?.[0] ?? schema.anyOf[0]?.const ?? 'a';
  if (schema?.type === 'boolean') return true;
  if (schema?.format === 'date-time') return '2026-01-01T00:00:00Z';
  if (schema?.format === 'date') return '2026-12-31';
  if (schema?.type === 'array') return ['a'];
  if (Array.isArray(schema?.enum)) return schema.enum[0];
  return `fz${++goodSeq}`;
}

// Mostly malformed, sometimes well-formed for the declared type, so later checks are reached as well.
function valueFor(schema: any): fc.Arbitrary<unknown> {
  const good = schema?.type === 'integer' ? fc.constantFrom(1, 10, 30) : schema?.type === 'boolean' ? fc.constantFrom(true, 'false')
    : schema?.format === 'date-time' ? fc.constant('2026-01-01T00:00:00Z') : schema?.format === 'date' ? fc.constant('2026-12-31')
      : schema?.type === 'array' ? fc.constant(['a']) : fc.constantFrom('a', 'main', 'name');
  return fc.oneof({ arbitrary: killer, weight: 3 }, { arbitrary: nested, weight: 2 }, { arbitrary: good, weight: 2 });
}

const RAW_PATH_BAD = ['%ED%A0%80', '%00', '0x1', '-1', '1.0', '%2B1', '01', '99999999999999999999', 'a'.repeat(300), '..%2F..%2Fetc', '%FF', '-rf'];

function pathKind(route: string, name: string): string {
  return /^\/api\/v4\/projects\/\{id\}/.test(route) && name === 'id' ? 'project'
    : /^\/api\/v4\/users\/\{(id|user_id)\}/.test(route) ? 'user'
      : /^\/api\/v4\/(groups|namespaces)\/\{id\}/.test(route) && name === 'id' ? 'group' : 'other';
}
function pathExample(route: string, name: string): string {
  return pool[pathKind(route, name)][0];
}

function pathValue(route: string, name: string): fc.Arbitrary<string> {
  const kind = /^\/api\/v4\/projects\/\{id\}/.test(route) && name === 'id' ? 'project'
    : /^\/api\/v4\/users\/\{(id|user_id)\}/.test(route) ? 'user'
      : /^\/api\/v4\/(groups|namespaces)\/\{id\}/.test(route) && name === 'id' ? 'group' : 'other';
  return fc.oneof({ arbitrary: fc.constantFrom(...pool[kind]), weight: 5 }, { arbitrary: fc.constantFrom(...RAW_PATH_BAD), weight: 1 });
}

// Besides the random runs, every declared parameter once, alone, as an administrator on a real record, with a value
// picked by its type: so each parameter meets at least one hostile value on every run.
const SWEEP: Record<string, unknown[]> = {
  string: ['\ud800x', 'x'.repeat(5000), '-x', ['a'], { a: 'b' }, '../..', ' '],
  integer: ['-1', 2147483647, '1.5', [1], -2147483648],
  boolean: ['yes', null, [true]],
  other: [{ a: { b: 'c' } }, 'x'.repeat(5000), ['\ud800x', '\udbffx'], '\u0000'],
};
function sweep(op: Operation, names: string[]): any[] {
  const one = (n: string, i: number, value: unknown) => [{
    path: op.pathParams.map((p) => pathExample(op.route, p)), picked: [n], values: names.map((m) => (m === n ? value : undefined)),
    mode: op.method === 'GET' ? 'query' : (['json', 'form'] as const)[i % 2], anonymous: false,
  }];
  // By default a slice of each route's parameters, moved along by the seed; FUZZ_SWEEP=all takes every one.
  const cap = process.env.FUZZ_SWEEP === 'all' ? names.length : Math.min(names.length, 5);
  const start = SEED % Math.max(1, names.length);
  const chosen = names.map((_, k) => (start + k) % names.length).slice(0, cap);
  return chosen.flatMap((i) => {
    const n = names[i];
    const type = op.params[n]?.type;
    const list = SWEEP[type === 'string' || type === 'integer' || type === 'boolean' ? type : 'other'];
    const out = [one(n, i, list[(i + SEED) % list.length])];
    // Text parameters also meet ill-formed text every time: it once reached services and broke unique indexes.
    // Only JSON carries one (a query or form encoder writes U+FFFD instead).
    if (type === 'string' && op.method !== 'GET') out.push(one(n, 0, '\ud800x'));
    return out;
  });
}

interface Operation { method: string; route: string; pathParams: string[]; params: Record<string, any>; required: string[] }

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [route, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const pathParams = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      const params: Record<string, any> = {};
      const required: string[] = [];
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') continue;
        params[p.name] = p.schema;
        if (p.required) required.push(p.name);
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const [k, s] of Object.entries<any>(body?.properties ?? {})) params[k] = s;
      required.push(...(body?.required ?? []));
      out.push({ method: method.toUpperCase(), route, pathParams, params, required });
    }
  }
  return out;
}

function isV4Error(body: unknown): boolean {
  return !!body && typeof body === 'object' && !Array.isArray(body) && ('message' in body || 'error' in body) && !('statusCode' in body);
}

test('every route answers malformed parameters below 500, refusals in v4 shapes', async () => {
  const t0 = Date.now();
  // Routes that remove or lock the records of the pool (delete, archive, transfer, block) go last, so the others
  // meet live records.
  const late = (o: Operation) => (o.method === 'DELETE' ? 2 : /\/(archive|transfer|block|deactivate|ban|reject)$/.test(o.route) ? 1 : 0);
  const ops = operations().sort((a, b) => late(a) - late(b));
  assert.ok(ops.length > 100, `the document lists the routes (${ops.length})`);
  // FUZZ_ONLY=<part of "METHOD /route"> runs the matching routes alone and prints every exchange.
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  for (const op of ops) {
    const key = `${op.method} ${op.route}`;
    if (EXCLUDED[key] || (process.env.FUZZ_ONLY && !key.includes(process.env.FUZZ_ONLY))) continue;
    const names = Object.keys(op.params);
    const sample = fc.record({
      path: fc.tuple(...op.pathParams.map((n) => pathValue(op.route, n))),
      picked: names.length ? fc.subarray(names, { minLength: 1, maxLength: Math.min(2, names.length) }) : fc.constant([] as string[]),
      values: fc.tuple(...names.map((n) => valueFor(op.params[n]))),
      mode: op.method === 'GET' ? fc.constant('query' as const) : fc.constantFrom('query' as const, 'json' as const, 'form' as const),
      anonymous: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
    });
    const started = Date.now();
    // Examples count against numRuns: the random runs come on top of them.
    const examples = sweep(op, names);
    // A route may revoke or rotate the token it was called with (personal_access_tokens/self): a fresh one per route.
    const token = await makeToken(t.app, admin.user, ['api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode']);
    try {
      await fc.assert(fc.asyncProperty(sample, async (s) => {
        let url = op.route;
        op.pathParams.forEach((n, i) => { url = url.replace(`{${n}}`, s.path[i]); });
        const input: Record<string, unknown> = {};
        // Required parameters get a plausible value, so that the hostile one is what the route has to deal with.
        for (const n of op.required) input[n] = goodValue(op.params[n]);
        for (const n of s.picked) input[n] = s.values[names.indexOf(n)];
        const headers: Record<string, string> = s.anonymous ? {} : { 'private-token': token };
        let payload: string | undefined;
        if (s.mode === 'query' && names.length) url += `?${qs.stringify(input, { allowEmptyArrays: false })}`;
        if (s.mode === 'json') { headers['content-type'] = 'application/json'; payload = JSON.stringify(input); }
        if (s.mode === 'form') { headers['content-type'] = 'application/x-www-form-urlencoded'; payload = qs.stringify(input); }
        const res = await t.app.inject({ method: op.method as any, url, headers, payload });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (process.env.FUZZ_ONLY) console.log(res.statusCode, op.method, url.slice(0, 200), payload?.slice(0, 200), res.body.slice(0, 100));
        let body: unknown = res.body;
        try { body = res.body ? JSON.parse(res.body) : null; } catch { /* not JSON */ }
        const where = `${op.method} ${url.slice(0, 300)} ${s.mode} ${s.anonymous ? 'anonymous' : 'admin'} ${payload?.slice(0, 300) ?? ''}`;
        assert.ok(res.statusCode < 500, `${where} -> ${res.statusCode} ${res.body.slice(0, 300)}`);
        // OAuth protected-resource errors are a challenge header with no body (RFC 6750 §3).
        const challenge = op.route.startsWith('/oauth/') && res.body === '' && !!res.headers['www-authenticate'];
        if (res.statusCode >= 400 && !challenge) assert.ok(isV4Error(body), `${where} -> ${res.statusCode} not a v4 error body: ${res.body.slice(0, 300)}`);
      }), { seed: SEED, numRuns: RUNS + examples.length, endOnFailure: true, examples });
    } catch (e) {
      const lines = String((e as Error).message).split('\n');
      failures.push(`${key}: ${(lines.find((l) => l.includes(' -> ')) ?? lines[0]).replace(/(.)\1{40,}/g, '$1$1$1...').slice(0, 600)}`);
    }
    if (process.env.FUZZ_VERBOSE) console.log(`${Date.now() - started} ms ${key}`);
  }
  if (process.env.FUZZ_VERBOSE) console.log('total ms', Date.now() - t0);
  if (process.env.FUZZ_VERBOSE) console.log('statuses', [...statuses].sort((a, b) => a[0] - b[0]));
  assert.deepEqual(failures, []);
});
