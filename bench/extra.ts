// The benchmark sets that are not rows of requests against seeded data (run through bench/run.ts):
//
//   npm run bench -- --set startup [--runs 5]              start-up of `bellows serve` (bundled) to its first 200
//   npm run bench -- --set storage-move [--size-mb 100]    a storage move of a repository beside `cp -r` of it
//   DATABASE_URL=postgres://.../<db> npm run bench -- --set two-servers --data-dir <seeded dir>
//                                                          the project rows served by one process, then by two
//                                                          server processes on the same database, in one run
//
// Each gives a table (columns and rows of text) that run.ts writes to bench/results-<set>-<dialect>.json and into
// bench/RESULTS.md, with the machine's load (`uptime`) before and after.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Table {
  /** What was measured and how, one paragraph. */
  about: string;
  columns: string[];
  rows: string[][];
}

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => resolve(p));
  });
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${Math.round(x).toLocaleString('en')} ms`;

async function waitFor200(url: string, limitMs = 120_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch { /* not listening yet */ }
    if (Date.now() - t0 > limitMs) throw new Error(`no 200 from ${url} within ${limitMs} ms`);
    await sleep(5);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.on('exit', r));
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
}

/** `bellows serve` from the bundled output, detached into its own process group (its workers go with it). */
function serve(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['bin/bellows.mjs', 'serve'], { env: { ...process.env, BELLOWS_LOG_LEVEL: 'warn', ...env }, stdio: 'ignore', detached: true });
}

// ---- start-up --------------------------------------------------------------------------------------------------

/**
 * From starting `node bin/bellows.mjs serve` (bundled JavaScript, default workers) on an existing data directory
 * (migrated, root made by a first start that is not counted) to the first 200 of GET /-/readiness.
 */
export async function startup(o: { runs: number }): Promise<Table> {
  spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  const dataDir = mkdtempSync(join(tmpdir(), 'bellows-startup-'));
  const env = { BELLOWS_DATA_DIR: dataDir, BELLOWS_ROOT_PASSWORD: 'startup-bench-pw', DATABASE_URL: '' };
  const once = async () => {
    const port = await freePort();
    const t0 = performance.now();
    const child = serve({ ...env, PORT: String(port) });
    await waitFor200(`http://127.0.0.1:${port}/-/readiness`);
    const took = performance.now() - t0;
    await stop(child);
    return took;
  };
  // The ceiling of the row: a bare `node -e 0`, from its start to its exit, taken between the server's starts. This
  // machine's speed drifts by a third within minutes; the two columns of one run compare.
  const bare = async () => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => child.on('exit', r));
    return performance.now() - t0;
  };
  const row = (name: string, times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return [name, String(times.length), ms(sorted[Math.floor(sorted.length / 2)]), ms(sorted[0]), ms(sorted.at(-1)!), times.map((t) => Math.round(t)).join(', ')];
  };
  try {
    await once();
    const times: number[] = [];
    const bareTimes: number[] = [];
    for (let i = 0; i < o.runs; i++) {
      bareTimes.push(await bare());
      times.push(await once());
    }
    return {
      about: 'From starting `node bin/bellows.mjs serve` (bundled `dist/bundle/`, default workers: one per core) on an existing SQLite data ' +
        'directory to the first `200` of `GET /-/readiness`. Target: 1 s. Ceiling: a bare `node -e 0` from start to exit, between the starts.',
      columns: ['Row', 'Runs', 'Median', 'Best', 'Worst', 'Each'],
      rows: [row('`bellows serve` to its first answer', times), row('ceiling: `node -e 0`', bareTimes)],
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- storage move ----------------------------------------------------------------------------------------------

/**
 * A project whose repository holds `sizeMb` of incompressible files (one commit, one pack) is moved from shard
 * `default` to shard `other` through the API (POST .../repository_storage_moves, then its state read every 20 ms
 * until `finished`); beside it, `cp -r` of the same repository directory. Both on the same filesystem, the
 * repository's files in the page cache for both.
 */
export async function storageMove(o: { sizeMb: number }): Promise<Table> {
  spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  const root = mkdtempSync(join(tmpdir(), 'bellows-move-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const config = join(root, 'bellows.yml');
  writeFileSync(config, [
    'storage:',
    `  - { name: default, path: ${join(root, 'shard-a')}, weight: 100 }`,
    `  - { name: other, path: ${join(root, 'shard-b')}, weight: 0 }`,
  ].join('\n'));
  const port = await freePort();
  const token = 'move-bench-root-token-0123456789';
  const child = serve({ BELLOWS_DATA_DIR: dataDir, BELLOWS_CONFIG: config, PORT: String(port), BELLOWS_ROOT_PASSWORD: 'move-bench-pw', BELLOWS_ROOT_TOKEN: token, DATABASE_URL: '' });
  const api = `http://127.0.0.1:${port}/api/v4`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${api}${path}`, { method, headers: { 'private-token': token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
    return r.json() as Promise<any>;
  };
  const git = (args: string[], cwd?: string) => {
    const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  try {
    await waitFor200(`http://127.0.0.1:${port}/-/readiness`);
    const project = await call('POST', '/projects', { name: 'moved', initialize_with_readme: false });
    // The content: sizeMb files of 1 MB of random bytes, in one commit, pushed as one pack.
    const work = join(root, 'work');
    git(['init', '-q', '-b', 'main', work]);
    for (let i = 0; i < o.sizeMb; i++) spawnSync('sh', ['-c', `head -c 1048576 /dev/urandom > f${i}.bin`], { cwd: work });
    git(['add', '.'], work);
    git(['commit', '-qm', 'content'], work);
    const path = spawnSync(process.execPath, ['--import', 'tsx', '-e',
      `import('./src/config/index.ts').then(async ({ loadConfig }) => { const { repositoryPath } = await import('./src/resources/projects/repository.ts');` +
      ` process.stdout.write(repositoryPath(loadConfig({ BELLOWS_DATA_DIR: ${JSON.stringify(dataDir)}, BELLOWS_CONFIG: ${JSON.stringify(config)} }), 'default', ${project.id})); })`],
    { encoding: 'utf8' }).stdout.trim();
    git(['-c', 'receive.unpackLimit=1', 'push', '-q', path, 'main'], work);
    const size = Number(spawnSync('du', ['-sm', path], { encoding: 'utf8' }).stdout.split('\t')[0]);
    // The connection kept from before the push may have been closed by the server meanwhile (a long push on a loaded
    // machine): an idempotent request first, retried once, so that the timed POST goes out on a live connection.
    await call('GET', '/version').catch(() => call('GET', '/version'));
    // cp -r first (it also reads the files into the page cache for the move), then the move.
    const t0 = performance.now();
    const cp = spawnSync('cp', ['-r', path, join(root, 'cp-copy')]);
    if (cp.status !== 0) throw new Error('cp -r failed');
    const cpMs = performance.now() - t0;
    const t1 = performance.now();
    const move = await call('POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'other' });
    let state = move.state as string;
    while (state !== 'finished' && state !== 'failed' && state !== 'cleanup failed') {
      await sleep(20);
      state = (await call('GET', `/projects/${project.id}/repository_storage_moves/${move.id}`)).state;
    }
    const moveMs = performance.now() - t1;
    if (state !== 'finished') throw new Error(`the move ended ${state}`);
    return {
      about: `A ${size} MB repository (${o.sizeMb} files of 1 MB of random bytes, one commit, one pack), moved between two shards on ` +
        'the same filesystem through the API, from the POST to the state `finished` (the job queue picks the move up, the ' +
        'project turns read-only, the copy is checksummed against its source, the project switches and the source is removed), ' +
        'beside `cp -r` of the same directory. Target: a small multiple of `cp -r`.',
      columns: ['What', 'Time', 'vs cp -r'],
      rows: [
        ['`cp -r` of the repository directory', ms(cpMs), '1'],
        ['storage move through the API (POST to `finished`)', ms(moveMs), (moveMs / cpMs).toFixed(1)],
      ],
    };
  } finally {
    await stop(child);
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- two server processes on one PostgreSQL -------------------------------------------------------------------

interface Measured { rps: number; p50: number; p99: number; non2xx: number; errors: number }

/**
 * The project rows of run.ts against one server process, then against two server processes on the same
 * PostgreSQL database (each its own port, as two machines behind a balancer would be; each load generator drives
 * one of them with half the connections and the figures are summed). `measure` is run.ts's load generator.
 */
export async function twoServers(o: {
  dataDir: string;
  port: number;
  token: string;
  connections: number;
  start: (port: number, env?: NodeJS.ProcessEnv) => Promise<ChildProcess>;
  measure: (base: string, paths: string[], connections: number) => Promise<Measured>;
}): Promise<Table> {
  const api = '/api/v4';
  const one = await o.start(o.port);
  let ids: number[] = [];
  const rows: string[][] = [];
  const fmt = (m: Measured) => [m.rps.toLocaleString('en'), String(m.p50), String(m.p99), String(m.non2xx), String(m.errors)];
  // The first requests of a process compile its code and fill its caches: not measured.
  const warm = (at: number, paths: string[]) => Promise.all(paths.slice(0, 20).map((p) => fetch(`http://127.0.0.1:${at}${p}`, { headers: { 'private-token': o.token } }).then((r) => r.arrayBuffer())));
  const scenarios = () => [
    { name: 'GET /projects/:id (authenticated, full form)', paths: ids.map((id) => `${api}/projects/${id}`) },
    { name: 'GET /projects (20 per page, authenticated, full form)', paths: [`${api}/projects`] },
    { name: 'GET /projects?simple=true (authenticated)', paths: [`${api}/projects?simple=true`] },
  ];
  try {
    const sample = await (await fetch(`http://127.0.0.1:${o.port}${api}/projects?simple=true&per_page=100`, { headers: { 'private-token': o.token } })).json() as Array<{ id: number }>;
    ids = sample.map((p) => p.id);
    for (const s of scenarios()) {
      await warm(o.port, s.paths);
      rows.push([s.name, 'one process', ...fmt(await o.measure(`http://127.0.0.1:${o.port}`, s.paths, o.connections))]);
    }
  } finally {
    one.kill('SIGTERM');
    await new Promise((r) => one.exitCode !== null ? r(null) : one.on('exit', r));
  }
  const a = await o.start(o.port);
  const b = await o.start(o.port + 2);
  try {
    for (const s of scenarios()) {
      await Promise.all([warm(o.port, s.paths), warm(o.port + 2, s.paths)]);
      const [ra, rb] = await Promise.all([
        o.measure(`http://127.0.0.1:${o.port}`, s.paths, Math.ceil(o.connections / 2)),
        o.measure(`http://127.0.0.1:${o.port + 2}`, s.paths, Math.floor(o.connections / 2)),
      ]);
      rows.push([s.name, 'two processes (sum; p50/p99 the worse of the two)', ...fmt({ rps: ra.rps + rb.rps, p50: Math.max(ra.p50, rb.p50), p99: Math.max(ra.p99, rb.p99), non2xx: ra.non2xx + rb.non2xx, errors: ra.errors + rb.errors })]);
    }
  } finally {
    a.kill('SIGTERM');
    b.kill('SIGTERM');
  }
  rows.sort((x, y) => scenarios().findIndex((s) => s.name === x[0]) - scenarios().findIndex((s) => s.name === y[0]));
  return {
    about: `The project rows of \`npm run bench\` against one server process (\`bench/server.ts\`, one worker, not pinned), then against ` +
      'two server processes on the same PostgreSQL database, each on its own port with its own read caches and its own ' +
      `listening connection for the cache bus (as two machines would be), in the same run; ${o.connections} connections in all, ` +
      'split between the two.',
    columns: ['Scenario', 'Served by', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors and timeouts (60 s)'],
    rows,
  };
}
