// HTTP benchmark of the project endpoints against a seeded data dir (see bench/seed.ts).
//
//   npm run bench -- --data-dir /work/bench-data/sqlite [--duration 10] [--connections 32]
//   DATABASE_URL=postgres://... npm run bench -- --data-dir /work/bench-data/pg
//   npm run bench -- --set planning|search|merge-requests|... --data-dir D --workers 2 [--scratch: print, write no results]
//
// By default the server runs as one process pinned to CPU 0 and the load generator on CPU 1 (when the machine
// has two cores or more): the cost of a request on one core. With `--workers n` the server runs n worker
// processes on every core, sharing them with the load generator: the throughput of the whole machine.
// The load generator is wrk when installed (a C program: it leaves more of the machine to the server), else
// autocannon. The fixed-rate rows send requests evenly spaced in time from this process (an open loop: latency
// is counted from when a request was due, so a stall is not hidden by requests that were never sent; autocannon's
// rate option sends each second's budget in a burst). Results go to bench/results-<dialect>[-w<n>].json and
// bench/RESULTS.md.
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startup, storageMove, twoServers, type Table } from './extra.ts';
import { Repository } from '../src/platform/git/repository.ts';
import { dropWork, prepareTargets, prepareWork, readFacts, type MergeRequestFacts } from './merge-requests.ts';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '/work/bench-data/sqlite' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    port: { type: 'string', default: '18080' },
    only: { type: 'string' },
    'report-only': { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
    loadgen: { type: 'string' },
    set: { type: 'string', default: 'projects' },
    runs: { type: 'string', default: '5' },
    'size-mb': { type: 'string', default: '100' },
    work: { type: 'string', default: '3000' },
    scratch: { type: 'boolean', default: false },
    // merge-requests: leave the repository's commit-graph as it is (the housekeeping run before the rows is skipped).
    'no-housekeeping': { type: 'boolean', default: false },
  },
});
const workers = Number(args.workers);
const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
const loadgen = args.loadgen ?? (hasWrk ? 'wrk' : 'autocannon');
const dataDir = args['data-dir']!;
const duration = Number(args.duration);
const connections = Number(args.connections);
const port = Number(args.port);
const dialect = process.env.DATABASE_URL ? 'postgres' : 'sqlite';
const ownData = args.set === 'startup' || args.set === 'storage-move';
const token = args['report-only'] || ownData ? '' : readFileSync(join(dataDir, 'bench-token'), 'utf8').trim();
const cores = cpus().length;
const pin = workers === 1 && cores >= 2 && args.set !== 'two-servers' && spawnSync('taskset', ['--version']).status === 0;

// The server runs bundled, as `npm start` runs it (scripts/build.mjs), built once per bench run.
let benchServer: string | undefined;

function startServer(at = port): Promise<ReturnType<typeof spawn>> {
  if (!benchServer) {
    const built = spawnSync(process.execPath, ['scripts/build.mjs', '--bench-server'], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`bundling bench/server.ts: ${built.stderr}`);
    benchServer = built.stdout.trim();
  }
  const file = benchServer;
  const cmd = pin ? 'taskset' : process.execPath;
  const argv = [...(pin ? ['-c', '0', process.execPath] : []), file];
  const child = spawn(cmd, argv, { env: { ...process.env, BELLOWS_DATA_DIR: dataDir, PORT: String(at), NODE_ENV: 'production', BENCH_WORKERS: String(workers) }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('ready')) resolve(child); });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

interface Row { name: string; rps: number; p50: number; p99: number; non2xx: number; errors: number; rate?: number }

/** wrk with a script that cycles through the paths; latency percentiles from its --latency table. */
function runWrk(base: string, o: { paths: string[]; auth?: boolean; post?: string }): Omit<Row, 'name'> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'paths.lua');
  const headers = `{ ${[o.auth ? `["PRIVATE-TOKEN"] = ${JSON.stringify(token)}` : '', o.post ? '["Content-Type"] = "application/json"' : ''].filter(Boolean).join(', ')} }`;
  writeFileSync(script, [
    `local paths = { ${o.paths.map((p) => JSON.stringify(p)).join(', ')} }`,
    `local headers = ${headers}`,
    'local i = 0',
    'request = function()',
    '  i = i + 1',
    o.post ? `  return wrk.format("POST", paths[(i % #paths) + 1], headers, ${JSON.stringify(o.post)})` : '  return wrk.format("GET", paths[(i % #paths) + 1], headers)',
    'end',
  ].join('\n'));
  const argv = ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, base];
  const r = pin ? spawnSync('taskset', ['-c', '1', 'wrk', ...argv], { encoding: 'utf8' }) : spawnSync('wrk', argv, { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  const out = r.stdout;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    if (!m) return NaN;
    const v = Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
    return Math.round(v * 10) / 10;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  if (!Number.isFinite(rps)) throw new Error(`wrk: ${out}${r.stderr}`);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = Number(/Socket errors:.*?(\d+)/.exec(out)?.[1] ?? 0);
  return { rps: Math.round(rps), p50: ms('50'), p99: ms('99'), non2xx, errors };
}

/**
 * Requests due every 1/rate s over keep-alive connections, whatever the answers' pace; latency from due time.
 * The first two seconds warm the server up (connections, caches, compiled code) and are not counted.
 */
async function runFixedRate(o: { url?: string; paths: string[]; auth?: boolean; rate: number }): Promise<Omit<Row, 'name'>> {
  const target = new URL(o.url ?? `http://127.0.0.1:${port}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const headers: Record<string, string> = o.auth ? { 'private-token': token } : {};
  const warmup = o.rate * 2;
  const total = warmup + o.rate * duration;
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  let answered = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const finish = () => {
      if (++answered === total) resolve();
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * o.rate) / 1000) + 1);
      for (; sent < due; sent++) {
        const n = sent;
        const dueAt = start + (n * 1000) / o.rate;
        const req = http.get({ host: target.hostname, port: Number(target.port), path: o.paths[n % o.paths.length], agent, headers }, (res) => {
          if (n >= warmup && res.statusCode! >= 300) non2xx++;
          res.resume();
          res.on('end', () => {
            if (n >= warmup) latencies.push(performance.now() - dueAt);
            finish();
          });
        });
        req.on('error', () => {
          if (n >= warmup) errors++;
          finish();
        });
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const elapsed = (performance.now() - start) / 1000 - 2;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? NaN) * 10) / 10;
  if (process.env.BENCH_DEBUG) console.log([0.5, 0.9, 0.99, 0.999, 1].map((q) => `${q}: ${at(q)}`).join('  '));
  return { rps: Math.round(latencies.length / elapsed), p50: at(0.5), p99: at(0.99), non2xx, errors, rate: o.rate };
}

async function run(name: string, o: { url?: string; paths: string[]; auth?: boolean; rate?: number; post?: string }): Promise<Row> {
  if (o.rate) {
    const row = { name, ...(await runFixedRate({ ...o, rate: o.rate })) };
    console.log(`${name.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms${row.non2xx ? `  non-2xx ${row.non2xx}` : ''}${row.errors ? `  errors ${row.errors}` : ''}`);
    return row;
  }
  if (loadgen === 'wrk') {
    const row = { name, ...runWrk(o.url ?? `http://127.0.0.1:${port}`, o) };
    console.log(`${name.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms${row.non2xx ? `  non-2xx ${row.non2xx}` : ''}${row.errors ? `  errors ${row.errors}` : ''}`);
    return row;
  }
  let i = 0;
  const base = o.url ?? `http://127.0.0.1:${port}`;
  const headers: Record<string, string> = { ...(o.auth ? { 'private-token': token } : {}), ...(o.post ? { 'content-type': 'application/json' } : {}) };
  const result = await autocannon({
    url: base,
    connections: o.rate ? 16 : connections,
    duration,
    headers,
    overallRate: o.rate,
    requests: [{ method: o.post ? 'POST' : 'GET', body: o.post, setupRequest: (req: any) => ({ ...req, path: o.paths[i++ % o.paths.length] }) }],
  } as any);
  const row: Row = { name, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors, rate: o.rate };
  console.log(`${name.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms${row.non2xx ? `  non-2xx ${row.non2xx}` : ''}${row.errors ? `  errors ${row.errors}` : ''}`);
  return row;
}

/** The same load as a throughput row, against `base` with `conns` connections (two-servers drives two at once). */
async function measure(base: string, paths: string[], conns: number) {
  let i = 0;
  const result = await autocannon({
    url: base, connections: conns, duration, timeout: 60, headers: { 'private-token': token },
    requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: paths[i++ % paths.length] }) }],
  } as any);
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors + result.timeouts };
}

const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim().replace(/^.*load average/, 'load average');

/** The sets measured by bench/extra.ts: a table, with the load before and after. */
async function extra(set: string) {
  const before = uptime();
  let table: Table;
  if (set === 'startup') table = await startup({ runs: Number(args.runs) });
  else if (set === 'storage-move') table = await storageMove({ sizeMb: Number(args['size-mb']) });
  else if (set === 'two-servers') {
    if (dialect !== 'postgres') throw new Error('two-servers runs on PostgreSQL (DATABASE_URL)');
    table = await twoServers({ dataDir, port, token, connections, start: (at) => startServer(at), measure });
  } else throw new Error(`unknown set ${set}`);
  const out = {
    set, dialect, date: new Date().toISOString(), cores, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version, duration, connections, ...table, uptime: { before, after: uptime() },
  };
  console.log(JSON.stringify(out, null, 2));
  if (args.scratch) return;
  writeFileSync(join('bench', `results-${set}-${dialect}.json`), `${JSON.stringify(out, null, 2)}\n`);
  writeResults();
}

const EXTRA_TITLES: Record<string, string> = {
  startup: 'Start-up — `bellows serve` to its first answer',
  'storage-move': 'Storage move of a repository beside `cp -r`',
  'two-servers': 'Two server processes on one PostgreSQL beside one process',
};

async function main() {
  if (['startup', 'storage-move', 'two-servers'].includes(args.set!)) return extra(args.set!);
  if (pin) spawnSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  const loadBefore = loadavg()[0];
  // The merge request set's state-changing rows consume branches written before the server reads any ref.
  const work = args.set === 'merge-requests' ? await mergeRequestWork() : null;
  const server = await startServer();
  if (work) {
    try {
      await mergeRequestRows(work);
    } finally {
      server.kill('SIGTERM');
    }
    return;
  }
  if (args.set === 'search') {
    try {
      await searchRows();
    } finally {
      server.kill('SIGTERM');
    }
    return;
  }
  if (args.set === 'planning') {
    try {
      await planning();
    } finally {
      server.kill('SIGTERM');
    }
    return;
  }
  try {
    const api = `/api/v4`;
    const probe = await fetch(`http://127.0.0.1:${port}${api}/projects?simple=true&per_page=100`);
    const total = Number(probe.headers.get('x-total') ?? 0);
    const sample: Array<{ id: number }> = await probe.json();
    const ids = sample.map((p) => p.id);
    const maxId = ids[0] ?? 1;
    const count = (await (await fetch(`http://127.0.0.1:${port}${api}/projects?order_by=id&sort=desc&per_page=1`, { headers: { 'private-token': token } })).json())[0]?.id ?? 0;
    console.log(`${dialect}: newest project id ${count}; ${cores} cores; ${workers} worker(s); ${loadgen}; pinned: ${pin}`);
    // Random keyset positions spread over the whole id range, each a page of 20 after that bound.
    const keysetPaths = Array.from({ length: 1000 }, (_, k) => `${api}/projects?pagination=keyset&order_by=id&sort=desc&per_page=20&id_before=${Math.max(2, Math.floor(((k * 7919) % 1000 + 1) / 1000 * count))}`);
    const only = args.only ? new Set(args.only.split(',')) : null;
    const rows: Row[] = [];
    const want = (k: string) => !only || only.has(k);
    void total; void maxId;
    if (want('ceiling')) rows.push(await run('ceiling: bare Fastify route, fixed JSON', { url: `http://127.0.0.1:${port + 1}`, paths: ['/'] }));
    if (want('one')) rows.push(await run('GET /projects/:id (authenticated, full form)', { paths: ids.map((id) => `${api}/projects/${id}`), auth: true }));
    if (want('cold')) {
      // 40,000 projects the caller can read, spread over the whole id range: more than the entity cache holds,
      // so nearly every request builds its entity (the cost of a read that no cache helps).
      const spread: number[] = [];
      for (let k = 0; k < 400; k++) {
        const before = Math.max(2, Math.floor(((k * 7919) % 400 + 1) / 400 * count));
        const page = await fetch(`http://127.0.0.1:${port}${api}/projects?pagination=keyset&order_by=id&sort=desc&per_page=100&simple=true&id_before=${before}`, { headers: { 'private-token': token } });
        for (const p of (await page.json()) as Array<{ id: number }>) spread.push(p.id);
      }
      rows.push(await run(`GET /projects/:id, ${spread.length.toLocaleString('en')} different projects (cold caches)`, { paths: spread.map((id) => `${api}/projects/${id}`), auth: true }));
    }
    if (want('list20')) rows.push(await run('GET /projects (20 per page, authenticated, full form)', { paths: [`${api}/projects`], auth: true }));
    if (want('list100')) rows.push(await run('GET /projects?per_page=100 (authenticated, full form)', { paths: [`${api}/projects?per_page=100`], auth: true }));
    if (want('simple')) rows.push(await run('GET /projects?simple=true (anonymous)', { paths: [`${api}/projects?simple=true`] }));
    if (want('keyset')) rows.push(await run('keyset: GET /projects?pagination=keyset&order_by=id (20, authenticated)', { paths: keysetPaths, auth: true }));
    if (want('fixed-ceiling')) rows.push(await run('ceiling at a fixed 1,000 req/s', { url: `http://127.0.0.1:${port + 1}`, paths: ['/'], rate: 1000 }));
    if (want('fixed')) {
      rows.push(await run('GET /projects/:id at a fixed 1,000 req/s', { paths: ids.map((id) => `${api}/projects/${id}`), auth: true, rate: 1000 }));
      rows.push(await run('GET /projects (20, full) at a fixed 1,000 req/s', { paths: [`${api}/projects`], auth: true, rate: 1000 }));
    }
    const out = {
      dialect, date: new Date().toISOString(), cores, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version, projects: count, duration, connections, pinned: pin, workers, loadgen, rows,
      loadAverage: { before: Math.round(loadBefore * 10) / 10, after: Math.round(loadavg()[0] * 10) / 10 },
    };
    if (!only) writeFileSync(join('bench', `results-${dialect}${workers > 1 ? `-w${workers}` : ''}.json`), `${JSON.stringify(out, null, 2)}\n`);
    writeResults();
  } finally {
    server.kill('SIGTERM');
  }
}

/**
 * The planning rows (data from `bench:seed --issues`): a project's issue list in its default order and filtered, one
 * issue, the cross-project list of a member of about 300 projects, issue creation, and single issues over more
 * projects than the caches hold.
 */
async function planning() {
  const api = '/api/v4';
  const get = async (path: string) => (await fetch(`http://127.0.0.1:${port}${api}${path}`, { headers: { 'private-token': token } })).json();
  const big = Number(readFileSync(join(dataDir, 'bench-big-project'), 'utf8'));
  const only = args.only ? new Set(args.only.split(',')) : null;
  const want = (k: string) => !only || only.has(k);
  const loadBefore = loadavg()[0];
  // The newest issue's iid is how many the project has had (its total is not counted past 10,000).
  const total = ((await get(`/projects/${big}/issues?per_page=1`)) as Array<{ iid: number }>)[0]?.iid ?? 0;
  console.log(`${dialect} planning: project ${big} has ${total} issues; ${cores} cores; ${workers} worker(s); ${loadgen}`);
  const sample = (await get(`/issues?scope=all&per_page=100`)) as Array<{ project_id: number; iid: number }>;
  const singles = sample.map((i) => `${api}/projects/${i.project_id}/issues/${i.iid}`);
  const rows: Row[] = [];
  if (want('ceiling')) rows.push(await run('ceiling: bare Fastify route, fixed JSON', { url: `http://127.0.0.1:${port + 1}`, paths: ['/'] }));
  if (want('list')) rows.push(await run(`GET /projects/:id/issues (20, default order, ${total.toLocaleString('en')} issues)`, { paths: [`${api}/projects/${big}/issues`], auth: true }));
  if (want('filtered')) rows.push(await run('GET /projects/:id/issues?labels=&state=opened&search= (20)', { paths: ['label-1', 'label-5', 'label-9'].map((l, k) => `${api}/projects/${big}/issues?labels=${l}&state=opened&search=${['crash', 'login', 'slow'][k]}`), auth: true }));
  if (want('one')) rows.push(await run('GET /projects/:id/issues/:iid', { paths: singles, auth: true }));
  if (want('mine')) rows.push(await run('GET /issues (member of ~300 projects, 20)', { paths: [`${api}/issues?scope=all`], auth: true }));
  if (want('cold')) {
    const spread = Array.from({ length: 20_000 }, (_, k) => `${api}/projects/${big}/issues/${1 + ((k * 7919) % Math.max(1, total))}`);
    rows.push(await run('GET /projects/:id/issues/:iid, 20,000 different issues (cold caches)', { paths: spread, auth: true }));
  }
  if (want('create')) rows.push(await run('POST /projects/:id/issues', { paths: [`${api}/projects/${big}/issues`], auth: true, post: JSON.stringify({ title: 'Created by the benchmark', labels: 'label-1,label-2', description: 'Body' }) }));
  const out = {
    set: 'planning', dialect, date: new Date().toISOString(), cores, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version, issues: total, duration, connections, pinned: pin, workers, loadgen, rows,
    loadAverage: { before: Math.round(loadBefore * 10) / 10, after: Math.round(loadavg()[0] * 10) / 10 },
  };
  if (args.scratch) {
    console.log(JSON.stringify(out.loadAverage));
    return;
  }
  if (!only) writeFileSync(join('bench', `results-planning-${dialect}${workers > 1 ? `-w${workers}` : ''}.json`), `${JSON.stringify(out, null, 2)}\n`);
  writeResults();
}

/**
 * The search rows (data from `bench:seed --issues` then bench/search.ts): global issue search for a word in 0.1 % of
 * the issues, by a member of ~300 projects and by a user who sees 1 % of the instance; global project search;
 * project blobs and commits on the generated repository.
 */
async function searchRows() {
  const api = '/api/v4';
  const facts = JSON.parse(readFileSync(join(dataDir, 'bench-search.json'), 'utf8'));
  const only = args.only ? new Set(args.only.split(',')) : null;
  const want = (k: string) => !only || only.has(k);
  const loadBefore = loadavg()[0];
  console.log(`${dialect} search: ${facts.projects} projects, repository of ${facts.files} files / ${facts.repoMb} MB / ${facts.commits} commits; ${cores} cores; ${workers} worker(s); ${loadgen}`);
  const rows: Row[] = [];
  if (want('ceiling')) rows.push(await run('ceiling: bare Fastify route, fixed JSON', { url: `http://127.0.0.1:${port + 1}`, paths: ['/'] }));
  if (want('issues')) rows.push(await run('GET /search?scope=issues (word in 0.1 % of issues)', { paths: [`${api}/search?scope=issues&search=zephyr`], auth: true }));
  if (want('sparse')) {
    rows.push(await run('GET /search?scope=issues, user who sees 1 % of projects', { paths: [`${api}/search?scope=issues&search=zephyr&private_token=${facts.sparseToken}`] }));
  }
  if (want('merge_requests')) rows.push(await run('GET /search?scope=merge_requests (word in 0.1 %)', { paths: [`${api}/search?scope=merge_requests&search=zephyr`], auth: true }));
  // The rows above repeat one URL, so after its first answer they read the answer cache (kept for the read-cache
  // window). These ask 2,000 different pages of the same search in turn: at these rates no URL comes back within
  // the 2 s window, so every request runs the search.
  const pages = Array.from({ length: 2000 }, (_, k) => `&per_page=${(k % 100) + 1}&page=${Math.floor(k / 100) + 1}`);
  if (want('issues-cold')) rows.push(await run('GET /search?scope=issues, 2,000 different pages (answers not cached)', { paths: pages.map((q) => `${api}/search?scope=issues&search=zephyr${q}`), auth: true }));
  if (want('merge_requests-cold')) rows.push(await run('GET /search?scope=merge_requests, 2,000 different pages (answers not cached)', { paths: pages.map((q) => `${api}/search?scope=merge_requests&search=zephyr${q}`), auth: true }));
  if (want('projects')) rows.push(await run('GET /search?scope=projects', { paths: [`${api}/search?scope=projects&search=project-12`], auth: true }));
  if (want('blobs')) rows.push(await run(`GET /projects/:id/search?scope=blobs (${facts.repoMb} MB)`, { paths: [`${api}/projects/${facts.bigProject}/search?scope=blobs&search=quasar&private_token=root-token-0123456789abcdef`] }));
  if (want('blobs-cold')) rows.push(await blobQueriesRow(facts));
  if (want('commits')) rows.push(await run(`GET /projects/:id/search?scope=commits (${facts.commits} commits)`, { paths: [`${api}/projects/${facts.bigProject}/search?scope=commits&search=nebula&private_token=root-token-0123456789abcdef`] }));
  const out = {
    set: 'search', dialect, date: new Date().toISOString(), cores, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version, projects: facts.projects, repository: { files: facts.files, mb: facts.repoMb, commits: facts.commits }, duration, connections,
    pinned: pin, workers, loadgen, rows, loadAverage: { before: Math.round(loadBefore * 10) / 10, after: Math.round(loadavg()[0] * 10) / 10 },
  };
  if (args.scratch) return void console.log(JSON.stringify(out.loadAverage));
  if (!only) writeFileSync(join('bench', `results-search-${dialect}${workers > 1 ? `-w${workers}` : ''}.json`), `${JSON.stringify(out, null, 2)}\n`);
  writeResults();
}

/** Branches for the creation and merge rows, written before the server starts (after dropping earlier runs' ones). */
/**
 * Blob search of 1,000 different queries, identifiers read from the repository's files (`<word>_<n>`, each in one
 * file or a few), asked in turn: each query's first answer runs git (later ones read the git answer kept per
 * commit and query, so the row runs git for every request while it makes at most 1,000 in its duration). The index
 * of main's tree, which the job queued by a first search builds, is built here first (the bench server runs no jobs);
 * its build time is printed.
 */
async function blobQueriesRow(facts: { bigProject: number; repoMb: number }): Promise<Row> {
  const api = '/api/v4';
  const auth = 'private_token=root-token-0123456789abcdef';
  const base = `http://127.0.0.1:${port}${api}/projects/${facts.bigProject}`;
  const words = new Set<string>();
  for (let page = 1; words.size < 1001 && page <= 20; page++) {
    const tree = await (await fetch(`${base}/repository/tree?recursive=true&per_page=100&page=${page}&${auth}`)).json() as Array<{ path: string; type: string }>;
    for (const f of tree.filter((e) => e.type === 'blob')) {
      const text = await (await fetch(`${base}/repository/files/${encodeURIComponent(f.path)}/raw?ref=main&${auth}`)).text();
      for (const m of text.matchAll(/\b[a-z]+_\d+\b/g)) words.add(m[0]);
    }
  }
  const queries = [...words].slice(0, 1001);
  if (queries.length < 1001) throw new Error(`only ${queries.length} identifiers read from the repository`);
  queries.pop();
  // The index the job a first search queues would build (the bench server runs no jobs), built here beforehand.
  const built = await import('../src/resources/search/blob-index.ts').catch(() => null);
  if (built) {
    const [{ loadConfig }, { repositoryPath }] = await Promise.all([import('../src/config/index.ts'), import('../src/resources/projects/repository.ts')]);
    const repo = new Repository(repositoryPath(loadConfig({ BELLOWS_DATA_DIR: dataDir }), 'default', facts.bigProject));
    const tree = (await repo.treeOf((await repo.resolveCommit('refs/heads/main'))!))!;
    const t = Date.now();
    const made = await built.buildBlobIndex(repo, tree);
    console.log(`blob index of main's tree: ${made ? `built in ${((Date.now() - t) / 1000).toFixed(1)} s` : 'there already'} (${(statSync(built.indexFile(repo, tree)).size / 2 ** 20).toFixed(1)} MB), ${uptime()}`);
  }
  return run(`GET /projects/:id/search?scope=blobs, 1,000 different queries (${facts.repoMb} MB)`, { paths: queries.map((q) => `${api}/projects/${facts.bigProject}/search?scope=blobs&search=${q}&${auth}`) });
}

async function mergeRequestWork(): Promise<{ facts: MergeRequestFacts; branches: string[]; targets: string[] }> {
  const facts = readFacts(dataDir);
  const dropped = await dropWork(facts.repoPath, 'bench-work-');
  const t = Date.now();
  const tag = `bench-work-${Date.now().toString(36)}-`;
  const branches = await prepareWork(facts.repoPath, tag, Number(args.work));
  // The targets of the spread merge row: branches made at main, one per connection of that row.
  const targets = await prepareTargets(facts.repoPath, `${tag}target-`, SPREAD_TARGETS);
  console.log(`${branches.length} work branches and ${targets.length} target branches written in ${Date.now() - t} ms (${dropped} left by earlier runs dropped)`);
  // What the server's housekeeping job does after ref changes (30 s later, once per burst), done once now for the
  // repository as the seed and the steps above left it: the commit-graph holds every reachable commit.
  if (!args['no-housekeeping']) {
    const h = Date.now();
    await new Repository(facts.repoPath).writeCommitGraph();
    console.log(`commit-graph written in ${Date.now() - h} ms`);
  }
  return { facts, branches, targets };
}

/** How many target branches the spread merge row merges into at once (one connection each). */
const SPREAD_TARGETS = 4;

interface WorkItem { method: 'POST' | 'PUT'; path: string; body?: unknown }

/**
 * State-changing requests, each sent once, over `conns` keep-alive connections in a closed loop, until the work runs
 * out or `duration` seconds pass. The rate counts successes only; the others are reported as non-2xx. `ok` receives
 * each successful answer's body with its item's index.
 */
async function runWork(name: string, work: WorkItem[] | WorkItem[][], conns: number, ok?: (body: any, i: number) => void): Promise<Row> {
  // Lanes: each connection sends its own list in order (the spread merge row: one target branch per connection).
  const lanes = Array.isArray(work[0]) ? (work as WorkItem[][]) : null;
  const items = lanes ? lanes.flat() : (work as WorkItem[]);
  if (lanes) conns = lanes.length;
  const agent = new http.Agent({ keepAlive: true, maxSockets: conns });
  const latencies: number[] = [];
  let next = 0;
  let successes = 0;
  let non2xx = 0;
  let errors = 0;
  const start = performance.now();
  const deadline = start + duration * 1000;
  const send = (item: WorkItem) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const payload = item.body === undefined ? '' : JSON.stringify(item.body);
    const req = http.request({
      host: '127.0.0.1', port, path: item.path, method: item.method, agent,
      headers: { 'private-token': token, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(payload);
  });
  let firstFailure = '';
  const laneNext = lanes ? lanes.map(() => 0) : [];
  let sent = 0;
  await Promise.all(Array.from({ length: conns }, async (_, lane) => {
    for (;;) {
      if (performance.now() >= deadline) break;
      let i: number;
      if (lanes) {
        if (laneNext[lane] >= lanes[lane].length) break;
        i = lanes.slice(0, lane).reduce((n, l) => n + l.length, 0) + laneNext[lane]++;
      } else {
        if (next >= items.length) break;
        i = next++;
      }
      sent++;
      const at = performance.now();
      try {
        const r = await send(items[i]);
        latencies.push(performance.now() - at);
        if (r.status >= 200 && r.status < 300) {
          successes++;
          ok?.(JSON.parse(r.body), i);
        } else {
          non2xx++;
          firstFailure ||= `${r.status} ${r.body.slice(0, 200)}`;
        }
      } catch {
        errors++;
      }
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? NaN) * 10) / 10;
  const row: Row = { name: `${name} (${successes.toLocaleString('en')} done)`, rps: Math.round((successes / elapsed) * 10) / 10, p50: at(0.5), p99: at(0.99), non2xx, errors };
  console.log(`${row.name.padEnd(58)} ${String(row.rps).padStart(7)} /s     p50 ${row.p50} ms  p99 ${row.p99} ms${non2xx ? `  non-2xx ${non2xx} (first: ${firstFailure})` : ''}${sent === items.length && elapsed < duration ? '  (work ran out before the duration)' : ''}`);
  return row;
}

/**
 * The merge request rows (data from bench/search.ts then bench/merge-requests.ts): the list of the largest project
 * (a tenth of the merge requests), one merge request, the same over 20,000 different ones, a 20-file page of the
 * 1,000-file diff, the mergeability of the 1,000-commit source when its pair was never checked, creation on prepared
 * branches and merging what was created.
 */
async function mergeRequestRows({ facts, branches, targets }: { facts: MergeRequestFacts; branches: string[]; targets: string[] }) {
  const api = '/api/v4';
  const base = `http://127.0.0.1:${port}${api}`;
  const headers = { 'private-token': token, 'content-type': 'application/json' };
  const get = async (path: string) => (await fetch(`${base}${path}`, { headers })).json();
  const only = args.only ? new Set(args.only.split(',')) : null;
  const want = (k: string) => !only || only.has(k);
  const loadBefore = loadavg()[0];
  const p = facts.project;
  // The seeded rows hold iids 1 .. filesIid - 1 (bench/merge-requests.ts created the 1,000-file one right after them).
  const seeded = facts.filesIid - 1;
  console.log(`${dialect} merge-requests: project ${p} has ${seeded.toLocaleString('en')} seeded merge requests; ${cores} cores; ${workers} worker(s); ${loadgen}`);
  const sample = (await get(`/projects/${p}/merge_requests?per_page=100`)) as Array<{ iid: number }>;
  const rows: Row[] = [];
  if (want('ceiling')) rows.push(await run('ceiling: bare Fastify route, fixed JSON', { url: `http://127.0.0.1:${port + 1}`, paths: ['/'] }));
  if (want('list')) rows.push(await run(`GET /projects/:id/merge_requests (20, ${seeded.toLocaleString('en')} merge requests)`, { paths: [`${api}/projects/${p}/merge_requests`], auth: true }));
  if (want('one')) rows.push(await run('GET /projects/:id/merge_requests/:iid', { paths: sample.map((m) => `${api}/projects/${p}/merge_requests/${m.iid}`), auth: true }));
  if (want('cold')) {
    const spread = Array.from({ length: 20_000 }, (_, k) => `${api}/projects/${p}/merge_requests/${1 + ((k * 7919) % Math.max(1, seeded))}`);
    rows.push(await run(`GET /projects/:id/merge_requests/:iid, ${Math.min(20_000, seeded).toLocaleString('en')} different merge requests (cold caches)`, { paths: spread, auth: true }));
  }
  if (want('diffs')) {
    const pages = Math.ceil(facts.files / 20);
    // The version's first read (its stored file list) before the row, timed apart.
    const first = performance.now();
    const r = await fetch(`${base}/projects/${p}/merge_requests/${facts.filesIid}/diffs?page=1&per_page=20`, { headers });
    await r.arrayBuffer();
    console.log(`first read of the ${facts.files}-file diff: ${r.status} in ${Math.round(performance.now() - first)} ms`);
    rows.push(await run(`GET .../merge_requests/:iid/diffs?page=N&per_page=20 (${facts.files.toLocaleString('en')} files)`, {
      paths: Array.from({ length: pages }, (_, k) => `${api}/projects/${p}/merge_requests/${facts.filesIid}/diffs?page=${k + 1}&per_page=20`), auth: true,
    }));
  }
  if (want('mergeability')) {
    // Each round moves the target branch by one commit through the API, so the (target, source) pair has never been
    // checked: no memo or row holds it, and the read asks git (merge-tree and the divergence walk).
    const rounds = 20;
    const times: number[] = [];
    let failures = 0;
    const tag = Date.now().toString(36);
    for (let i = 0; i < rounds; i++) {
      const moved = await fetch(`${base}/projects/${p}/repository/commits`, {
        method: 'POST', headers,
        body: JSON.stringify({ branch: facts.longTarget, commit_message: `Target moves ${tag}-${i}`, actions: [{ action: 'create', file_path: `bench/target/${tag}-${i}.txt`, content: `${i}\n` }] }),
      });
      if (moved.status !== 201) throw new Error(`moving ${facts.longTarget}: ${moved.status} ${await moved.text()}`);
      const at = performance.now();
      const r = await fetch(`${base}/projects/${p}/merge_requests/${facts.longIid}?include_diverged_commits_count=true`, { headers });
      const body = (await r.json()) as { detailed_merge_status: string; diverged_commits_count: number };
      times.push(performance.now() - at);
      if (r.status !== 200 || body.detailed_merge_status !== 'mergeable' || !(body.diverged_commits_count > 0)) failures++;
    }
    const sorted = [...times].sort((a, b) => a - b);
    const q = (x: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * x))] * 10) / 10;
    const row: Row = { name: `mergeability: GET .../merge_requests/:iid, source ${facts.ahead.toLocaleString('en')} commits ahead, pair never checked (${rounds} rounds, one at a time)`, rps: Math.round(1000 / (times.reduce((a, b) => a + b, 0) / rounds)), p50: q(0.5), p99: q(0.99), non2xx: failures, errors: 0 };
    console.log(`${row.name.padEnd(58)} ${String(row.rps).padStart(7)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms${failures ? `  not mergeable or failed ${failures}` : ''}`);
    rows.push(row);
  }
  // Creation: each request names a branch of its own (written before the server started); merging: what was created.
  // With the spread row asked for, every second creation targets one of the spread targets in turn instead of main.
  const spread = want('merge-spread');
  const created: Array<{ iid: number; target: string }> = [];
  if (want('create') || want('merge') || spread) {
    const targetOf = (i: number) => (spread && i % 2 === 1 ? targets[((i - 1) / 2) % targets.length] : 'main');
    rows.push(await runWork(`POST /projects/:id/merge_requests, each from its own new branch${spread ? ' (half into main, half into 4 other branches)' : ''}`, branches.map((b, i) => ({
      method: 'POST', path: `${api}/projects/${p}/merge_requests`, body: { source_branch: b, target_branch: targetOf(i), title: `Work ${b}` },
    })), connections, (body, i) => created.push({ iid: body.iid, target: targetOf(i) })));
  }
  const mergeItem = (iid: number): WorkItem => ({ method: 'PUT', path: `${api}/projects/${p}/merge_requests/${iid}/merge` });
  if (want('merge')) {
    // One at a time: merges into one branch are serialised by the compare-and-swap of its ref (a concurrent one that
    // loses the race answers 409 and would be counted as a failure, not retried).
    rows.push(await runWork('PUT .../merge_requests/:iid/merge, each a merge commit, into main one at a time',
      created.filter((c) => c.target === 'main').map((c) => mergeItem(c.iid)), 1));
  }
  if (spread) {
    // Merges into several branches at once: one connection per target branch, each merging into its own branch one
    // at a time (so no merge loses a compare-and-swap to another of the row).
    rows.push(await runWork(`PUT .../merge_requests/:iid/merge, each a merge commit, into ${targets.length} branches at once`,
      targets.map((t) => created.filter((c) => c.target === t).map((c) => mergeItem(c.iid))), targets.length));
  }
  // What the creation row made and the merge row left open is deleted (the merged ones stay, as merged history).
  const left = (await Promise.all(created.map(async ({ iid }) => ({ iid, state: ((await get(`/projects/${p}/merge_requests/${iid}`)) as { state: string }).state }))))
    .filter((m) => m.state === 'opened');
  for (const m of left) await fetch(`${base}/projects/${p}/merge_requests/${m.iid}`, { method: 'DELETE', headers: { 'private-token': token } });
  if (left.length) console.log(`${left.length} merge requests left open by the rows deleted`);
  const out = {
    set: 'merge-requests', dialect, date: new Date().toISOString(), cores, cpu: cpus()[0]?.model ?? 'unknown', memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version, mergeRequests: seeded, files: facts.files, ahead: facts.ahead, duration, connections, pinned: pin, workers, loadgen, rows,
    loadAverage: { before: Math.round(loadBefore * 10) / 10, after: Math.round(loadavg()[0] * 10) / 10 },
  };
  if (!only && !args.scratch) writeFileSync(join('bench', `results-merge-requests-${dialect}${workers > 1 ? `-w${workers}` : ''}.json`), `${JSON.stringify(out, null, 2)}\n`);
  if (args.scratch) console.log(JSON.stringify(out.loadAverage));
  else writeResults();
}

function writeResults() {
  const files = readdirSync('bench').filter((f) => /^results-.*\.json$/.test(f)).sort();
  const parts = ['# Benchmark results', '',
    'Produced by `npm run bench` (bench/run.ts) against data from `npm run bench:seed` (bench/seed.ts). Two set-ups:',
    '"one core": the server is one process pinned to CPU 0 and the load generator is pinned to CPU 1 (what one core',
    'of the server does); "2 workers": `workers: 2`, two server processes on both cores, sharing them with the load',
    'generator (what the machine does). The throughput rows use wrk when installed (else autocannon). The fixed-rate',
    'rows send one request every millisecond from the benchmark process, whatever the answers\' pace, and count each',
    'latency from the moment its request was due, after two seconds of the same load to warm up. The ceiling row is a',
    'bare Fastify route returning a fixed JSON body, served the same way in the same run.', '',
    'Targets (2 cores, 1,000,000 projects): `GET /projects/:id` ≥ 8,000 req/s; a 20-item page ≥ 2,500 req/s; a 100-item',
    'full page ≥ 600 req/s; p99 under 10 ms at a fixed 1,000 req/s.',
    'Planning targets (2 workers, 1,000,000 issues over 10,000 projects, 100,000 in one, 5,000,000 notes): a 20-issue page',
    '≥ 2,500 req/s, filtered by labels + state + search ≥ 800 req/s; one issue ≥ 8,000 req/s; `GET /issues` for a member of',
    '300 projects ≥ 1,000 req/s; issue creation ≥ 500/s.',
    'Merge request targets (2 workers, 1,000,000 merge requests over 10,000 projects): a 20-item page ≥ 2,500 req/s; one',
    'merge request ≥ 6,000 req/s; a 20-file page of a 1,000-file diff ≥ 500 req/s; creation ≥ 100/s; merging (each a merge',
    'commit) ≥ 20/s; the mergeability of a source 1,000 commits ahead, never checked before, under 50 ms. The creation and',
    'merge rows count successes per second (each request does new work, prepared before the run).', ''];
  for (const f of files) {
    const r = JSON.parse(readFileSync(join('bench', f), 'utf8'));
    if (EXTRA_TITLES[r.set]) {
      parts.push(`## ${r.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} — ${EXTRA_TITLES[r.set]}`, '',
        `${r.date} · ${r.cores} cores (${r.cpu}) · ${r.memoryGb} GB · Node ${r.node} · \`uptime\` ${r.uptime.before} before, ${r.uptime.after} after`,
        '', r.about, '',
        `| ${r.columns.join(' | ')} |`, `|${r.columns.map((_: string, i: number) => (i === 0 ? '---' : '---:')).join('|')}|`,
        ...r.rows.map((row: string[]) => `| ${row.join(' | ')} |`), '');
      continue;
    }
    const setup = (r.workers ?? 1) > 1 ? `${r.workers} workers on ${r.cores} cores` : 'one core';
    const size = r.set === 'planning' ? `planning, ${r.issues.toLocaleString('en')} issues in the largest project`
      : r.set === 'merge-requests' ? `merge requests, ${r.mergeRequests.toLocaleString('en')} in the largest project, diff of ${r.files.toLocaleString('en')} files, source ${r.ahead.toLocaleString('en')} commits ahead`
      : r.set === 'search' ? `search, ${r.projects.toLocaleString('en')} projects, repository of ${r.repository.files.toLocaleString('en')} files / ${r.repository.mb} MB / ${r.repository.commits.toLocaleString('en')} commits`
        : `${r.projects.toLocaleString('en')} projects`;
    parts.push(`## ${r.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite'} — ${size} — ${setup}`, '',
      `${r.date} · ${r.cores} cores (${r.cpu}) · ${r.memoryGb} GB · Node ${r.node} · ${r.duration} s per row · ${r.connections} connections · ${r.loadgen ?? 'autocannon'} · pinned: ${r.pinned}` +
        (r.loadAverage ? ` · 1-minute load average ${r.loadAverage.before} before, ${r.loadAverage.after} after` : ''), '',
      '| Scenario | req/s | p50 ms | p99 ms | non-2xx |', '|---|---:|---:|---:|---:|',
      ...r.rows.map((x: Row) => `| ${x.name} | ${x.rps.toLocaleString('en')} | ${x.p50} | ${x.p99} | ${x.non2xx} |`), '');
  }
  if (existsSync('bench/NOTES.md')) parts.push(readFileSync('bench/NOTES.md', 'utf8'));
  writeFileSync('bench/RESULTS.md', `${parts.join('\n')}\n`);
}

if (args['report-only']) writeResults();
else main().catch((e) => {
  console.error(e);
  process.exit(1);
});
