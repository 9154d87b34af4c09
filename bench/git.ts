// Repository benchmarks: branch listing on a 10,000-branch repository, and git over HTTP (clone of a 5,000-commit
// repository, fetch of one new commit, push of one commit), each beside plain git over file:// as the ceiling.
//   node --import tsx bench/git.ts            (writes bench/GIT-RESULTS.md)
// The server runs in a child process (as in production); this process only drives the load.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const BRANCHES = 10_000;
const IDENT = { GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };
const COMMITS = 5_000;

// ---- server mode --------------------------------------------------------------------------------

async function serve(dataDir: string): Promise<void> {
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDatabase } = await import('../src/platform/db/index.ts');
  const { buildApp } = await import('../src/app.ts');
  const config = loadConfig({ BELLOWS_DATA_DIR: dataDir, BELLOWS_LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv, { port: 0 });
  const database = openDatabase({ databaseUrl: null, dataDir });
  const app = await buildApp({ config, database });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`PORT ${(app.server.address() as any).port}\n`);
}

// ---- seeding ------------------------------------------------------------------------------------

function git(args: string[], opts: { cwd?: string; input?: string | Buffer } = {}): string {
  const r = spawnSync('git', args, {
    cwd: opts.cwd, input: opts.input, maxBuffer: 1 << 30,
    env: { PATH: process.env.PATH, HOME: opts.cwd ?? tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', ...IDENT },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

/** A linear history of `n` commits on main, each changing one file, written with fast-import. */
function fastImport(repo: string, n: number): void {
  const parts: string[] = [];
  for (let i = 1; i <= n; i++) {
    const msg = `Commit ${i}\n\nSigned-off-by: Bench <bench@example.com>\n`;
    const content = `line ${i}\n`;
    parts.push(`commit refs/heads/main\nmark :${i}\nauthor Bench <bench@example.com> ${1_700_000_000 + i} +0000\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`);
    if (i > 1) parts.push(`from :${i - 1}\n`);
    parts.push(`M 100644 inline file-${i % 50}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`);
  }
  git(['fast-import', '--quiet'], { cwd: repo, input: parts.join('') });
}

async function seed(dataDir: string) {
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDatabase } = await import('../src/platform/db/index.ts');
  const { createUser } = await import('../src/resources/users/users.service.ts');
  const { createPersonalAccessToken } = await import('../src/resources/access-tokens/access-tokens.service.ts');
  const { repoFor } = await import('../src/resources/repository/repository.common.ts');
  const { systemClock } = await import('../src/platform/clock.ts');
  const config = loadConfig({ BELLOWS_DATA_DIR: dataDir } as NodeJS.ProcessEnv);
  const database = openDatabase({ databaseUrl: null, dataDir });
  await database.migrate();
  const { createReadCaches } = await import('../src/platform/read-cache.ts');
  const { JobQueue } = await import('../src/platform/jobs/queue.ts');
  const deps = { db: database.db, config, clock: systemClock, caches: createReadCaches({ window: 0 }), jobs: new JobQueue({ db: database.db, clock: systemClock }) };
  const user = await createUser(deps, { username: 'bench', name: 'Bench', email: 'bench@example.com', password: 'bench-password' });
  const { token } = await createPersonalAccessToken(deps, user, { name: 'bench', scopes: ['api'], expiresAt: null });
  deps.caches.close();
  const ns = await database.db.selectFrom('namespaces').select(['id', 'full_path']).where('owner_id', '=', user.id).executeTakeFirstOrThrow();
  const now = Date.now();
  const make = async (path: string) => database.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: `${ns.full_path}/${path}`, full_path_lower: `${ns.full_path}/${path}`,
    description: null, visibility_level: 0, creator_id: user.id, archived: 0, default_branch: 'main', repository_storage: 'default',
    repository_read_only: 0, empty_repo: 0, pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const history = await make('history');
  const branches = await make('branches');
  const historyRepo = repoFor(config, history);
  const branchesRepo = repoFor(config, branches);
  await historyRepo.ensure('main');
  fastImport(historyRepo.path, COMMITS);
  await branchesRepo.ensure('main');
  fastImport(branchesRepo.path, 200);
  const shas = git(['rev-list', 'main'], { cwd: branchesRepo.path }).trim().split('\n');
  const lines: string[] = [];
  for (let i = 0; i < BRANCHES; i++) lines.push(`create refs/heads/feature-${String(i).padStart(5, '0')} ${shas[i % shas.length]}`);
  git(['update-ref', '--stdin'], { cwd: branchesRepo.path, input: lines.join('\n') + '\n' });
  git(['pack-refs', '--all'], { cwd: branchesRepo.path });
  git(['gc', '--quiet'], { cwd: historyRepo.path });
  await database.close();
  return { token, history, branches, historyPath: historyRepo.path, branchesPath: branchesRepo.path };
}

// ---- load helpers -------------------------------------------------------------------------------

async function httpLoad(port: number, path: string, token: string, seconds: number, concurrency: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const lat: number[] = [];
  const one = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    const req = http.request({ host: '127.0.0.1', port, path, agent, headers: { 'private-token': token } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) done++;
        else errors++;
        lat.push(performance.now() - t0);
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end();
  });
  // Warm-up (fills the ref cache).
  for (let i = 0; i < 20; i++) await one();
  done = 0;
  lat.length = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < deadline) await one();
  }));
  const elapsed = (Date.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { rps: done / elapsed, errors, p50: lat[Math.floor(lat.length * 0.5)] ?? 0, p99: lat[Math.floor(lat.length * 0.99)] ?? 0 };
}

function runGit(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('git', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', ...IDENT } });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')}: ${err}`))));
  });
}

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `rounds` operations per worker, `workers` at once; returns operations per second. */
async function rate(workers: number, rounds: number, op: (w: number, i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; i < rounds; i++) await op(w, i);
  }));
  return (workers * rounds) / ((performance.now() - t0) / 1000);
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bellows-bench-git-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  console.log('seeding…');
  const s = await seed(dataDir);
  const server = spawn(process.execPath, ['--import', 'tsx', SELF, '--serve', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    server.stdout!.on('data', (d) => {
      buf += d;
      const m = /PORT (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const results: string[] = [];
  const notes: string[] = [];
  const loadBefore = loadavg()[0];
  const row = (what: string, bellows: string, ceiling: string, target: string) => {
    results.push(`| ${what} | ${bellows} | ${ceiling} | ${target} |`);
    console.log(`${what}: ${bellows} (file:// ${ceiling}; target ${target})`);
  };
  try {
    const baseline = await httpLoad(port, '/api/v4/user', s.token, 5, 16);
    row('baseline: GET /user (token check and one row, 16 connections)', `${baseline.rps.toFixed(0)} req/s (p50 ${baseline.p50.toFixed(1)} ms)`, 'n/a', '—');
    const base = `/api/v4/projects/${s.branches.id}/repository/branches`;
    const page = await httpLoad(port, `${base}?per_page=20&page=7`, s.token, 5, 16);
    row(`GET branches, page of 20 of ${BRANCHES} (16 connections)`, `${page.rps.toFixed(0)} req/s (p50 ${page.p50.toFixed(1)} ms, p99 ${page.p99.toFixed(1)} ms, ${page.errors} errors)`, 'n/a', '≥ 2,000 req/s');
    const search = await httpLoad(port, `${base}?search=feature-012&per_page=20`, s.token, 5, 16);
    notes.push(`- Branch listing serves ${((page.rps / baseline.rps) * 100).toFixed(0)}% (page) and ${((search.rps / baseline.rps) * 100).toFixed(0)}% (search) of the rate of the simplest`,
      '  authenticated endpoint on the same server: refs, merge status and filters come from the per-repository cache, so a',
      '  repeated page calls git zero times; the rest is project access, the protection rules and JSON for 20 branches.');
    row(`GET branches?search=feature-012 of ${BRANCHES} (16 connections)`, `${search.rps.toFixed(0)} req/s (p50 ${search.p50.toFixed(1)} ms, p99 ${search.p99.toFixed(1)} ms, ${search.errors} errors)`, 'n/a', '≥ 2,000 req/s');

    const httpUrl = (p: { full_path: string }) => `http://bench:${s.token}@127.0.0.1:${port}/${p.full_path}.git`;
    const clones = join(work, 'clones');
    mkdirSync(clones);
    const cloneHttp: number[] = [];
    const cloneFile: number[] = [];
    for (let i = 0; i < 3; i++) {
      cloneHttp.push(await timeIt(() => runGit(['clone', '--quiet', '--bare', httpUrl(s.history), `h${i}`], clones)));
      cloneFile.push(await timeIt(() => runGit(['clone', '--quiet', '--bare', '--no-local', `file://${s.historyPath}`, `f${i}`], clones)));
    }
    row(`clone of a ${COMMITS}-commit repository (median of 3)`, `${median(cloneHttp).toFixed(0)} ms`, `${median(cloneFile).toFixed(0)} ms`, '—');

    // Fetch of one new commit: each worker owns a clone and a branch; the server's branch moves one commit ahead
    // (written directly into the bare repository) before every fetch.
    const workers = 4;
    const rounds = 25;
    const prepare = async (kind: 'http' | 'file') => {
      for (let w = 0; w < workers; w++) {
        const dir = join(clones, `${kind}-fetch-${w}`);
        await runGit(['clone', '--quiet', kind === 'http' ? httpUrl(s.history) : `file://${s.historyPath}`, dir], clones);
      }
    };
    await prepare('http');
    await prepare('file');
    // Every fetch brings exactly one new commit: chains of commits are written beforehand, and the timed loop
    // only moves the worker's branch one commit ahead (on the server's repository) and fetches it.
    const tip = git(['rev-parse', 'main'], { cwd: s.historyPath }).trim();
    const tree = git(['rev-parse', 'main^{tree}'], { cwd: s.historyPath }).trim();
    const chains = new Map<string, string[]>();
    for (const kind of ['http', 'file']) {
      for (let w = 0; w < workers; w++) {
        let prev = tip;
        const list: string[] = [];
        for (let i = 0; i < rounds; i++) {
          prev = git(['commit-tree', tree, '-p', prev, '-m', `fetch ${kind} ${w} ${i}`], { cwd: s.historyPath }).trim();
          list.push(prev);
        }
        chains.set(`${kind}-${w}`, list);
        git(['update-ref', `refs/heads/fetch-${kind}-${w}`, tip], { cwd: s.historyPath });
        await runGit(['fetch', '--quiet', 'origin', `refs/heads/fetch-${kind}-${w}:refs/heads/fetch-${kind}-${w}`], join(clones, `${kind}-fetch-${w}`));
      }
    }
    const fetchRate = async (kind: 'http' | 'file') => rate(workers, rounds, async (w, i) => {
      const ref = `refs/heads/fetch-${kind}-${w}`;
      await runGit(['update-ref', ref, chains.get(`${kind}-${w}`)![i]], s.historyPath);
      await runGit(['fetch', '--quiet', 'origin', `${ref}:${ref}`], join(clones, `${kind}-fetch-${w}`));
    });
    if (process.env.BENCH_TRACE) {
      const dir = join(clones, 'http-fetch-0');
      const r = spawnSync('git', ['fetch', 'origin', 'refs/heads/main:refs/heads/tracemain'], { cwd: dir, env: { PATH: process.env.PATH, HOME: dir, GIT_TRACE2_PERF: '1', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' } });
      console.log(r.stderr.toString().split('\n').filter((l) => /exit|region_leave|Send header: (GET|POST)|Recv header: HTTP/.test(l)).join('\n'));
    }
    const fh = await fetchRate('http');
    const ff = await fetchRate('file');
    // Every clone must hold the last commit of its chain: a fast fetch that missed a ref move would be no result.
    for (const kind of ['http', 'file']) {
      for (let w = 0; w < workers; w++) {
        const got = git(['rev-parse', `refs/heads/fetch-${kind}-${w}`], { cwd: join(clones, `${kind}-fetch-${w}`) }).trim();
        if (got !== chains.get(`${kind}-${w}`)![rounds - 1]) throw new Error(`fetch over ${kind} (worker ${w}) did not bring the branch's last commit`);
      }
    }
    row(`fetch with one new commit (${workers} clients)`, `${fh.toFixed(0)} fetches/s`, `${ff.toFixed(0)} fetches/s`, '≥ 100 fetches/s');
    notes.push(`- Fetch over HTTP reaches ${((fh / ff) * 100).toFixed(0)}% of plain git over file:// here. A protocol v2 fetch over HTTP is four requests: git`,
      '  asks for the capabilities without credentials first and is challenged, then with them (the answer is cached per',
      '  repository); the ref listing (`ls-refs`) is answered from the repository\'s ref files without a process (the branch is',
      '  moved behind the server\'s back before every fetch, and each clone is checked to hold the last commit); only the',
      '  `fetch` command runs `git upload-pack`. The token, the caller\'s authorisation and the project row are reused across',
      '  the requests. What remains above file:// is mostly on the client: git\'s HTTP helper process and the extra round trips.');

    // Push of one commit: each worker commits on its own branch and pushes.
    const pushRate = async (kind: 'http' | 'file') => rate(workers, rounds, async (w) => {
      const dir = join(clones, `${kind}-fetch-${w}`);
      await runGit(['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '--quiet', '--allow-empty', '-m', 'bench'], dir);
      await runGit(['push', '--quiet', 'origin', `HEAD:refs/heads/push-${kind}-${w}`], dir);
    });
    const ph = await pushRate('http');
    const pf = await pushRate('file');
    row(`push of one commit (${workers} clients)`, `${ph.toFixed(0)} pushes/s`, `${pf.toFixed(0)} pushes/s`, '≥ 20 pushes/s');
    notes.push(`- Push over HTTP reaches ${((ph / pf) * 100).toFixed(0)}% of file://: the policy check reads the rules from the database, receive-pack`,
      '  runs with the server\'s pre-receive hook, and the project row is updated before the answer ends.');
  } finally {
    server.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }

  const out = [
    '# Git and branch benchmarks',
    '',
    `Run with \`node --import tsx bench/git.ts\` on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version},`,
    `${git(['--version']).trim()}, SQLite, ${new Date().toISOString().slice(0, 10)}. The server runs in its own process; the load`,
    'generator and the git clients share the same machine. "file://" is plain git between two local repositories, the ceiling',
    'for anything that goes through HTTP.',
    '',
    `One-minute load average: ${loadBefore.toFixed(1)} before the run, ${loadavg()[0].toFixed(1)} after it. The machine is shared with other`,
    'builds and benchmarks; on a loaded machine both columns drop, and the ratio between them is the figure to read.',
    '',
    '| Benchmark | Bellows over HTTP | plain git over file:// | Target |',
    '|---|---|---|---|',
    ...results,
    '',
    '## Reading the figures',
    '',
    ...notes,
    '- When the file:// column is below a target, the machine itself (shared, 2 cores, git clients and server on the same',
    '  cores) cannot reach it even without HTTP; compare against that column.',
    '',
  ].join('\n');
  writeFileSync(join(process.cwd(), 'bench', 'GIT-RESULTS.md'), out);
  console.log('\nwritten to bench/GIT-RESULTS.md');
}

if (process.argv[2] === '--serve') {
  serve(process.argv[3]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else if (process.argv[2] === '--profile') {
  // In-process timing of the branch listing, for looking at where the time goes (node --cpu-prof).
  (async () => {
    const work = mkdtempSync(join(tmpdir(), 'bellows-bench-prof-'));
    const s = await seed(work);
    const { loadConfig } = await import('../src/config/index.ts');
    const { openDatabase } = await import('../src/platform/db/index.ts');
    const { buildApp } = await import('../src/app.ts');
    const app = await buildApp({ config: loadConfig({ BELLOWS_DATA_DIR: work } as NodeJS.ProcessEnv), database: openDatabase({ databaseUrl: null, dataDir: work }) });
    const url = `/api/v4/projects/${s.branches.id}/repository/branches?per_page=20&page=7`;
    for (let i = 0; i < 50; i++) await app.inject({ method: 'GET', url, headers: { 'private-token': s.token } });
    const t0 = performance.now();
    for (let i = 0; i < 2000; i++) await app.inject({ method: 'GET', url, headers: { 'private-token': s.token } });
    console.log('per request ms', (performance.now() - t0) / 2000);
    await app.close();
    rmSync(work, { recursive: true, force: true });
  })();
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
