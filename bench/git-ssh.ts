// Git over SSH beside git over HTTP and plain git over file://, in one run: the fetch of one new commit and the push
// of one commit, each timed one at a time (median of ROUNDS) on a 500-commit repository.
//   node --import tsx bench/git-ssh.ts            (writes bench/SSH-RESULTS.md)
// The server (HTTP and SSH) runs in a child process, as in production; this process drives the git clients.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const COMMITS = 500;
const ROUNDS = 15;
const IDENT = { GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };

function git(args: string[], o: { cwd?: string; input?: string; env?: Record<string, string> } = {}): string {
  const r = spawnSync('git', args, {
    cwd: o.cwd, input: o.input, maxBuffer: 1 << 30,
    env: { PATH: process.env.PATH, HOME: o.cwd ?? tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', ...IDENT, ...o.env },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

async function deps(dataDir: string) {
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDatabase } = await import('../src/platform/db/index.ts');
  const { systemClock } = await import('../src/platform/clock.ts');
  const { createReadCaches } = await import('../src/platform/read-cache.ts');
  const { JobQueue } = await import('../src/platform/jobs/queue.ts');
  const config = loadConfig({ BELLOWS_DATA_DIR: dataDir, BELLOWS_LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv, { port: 0 });
  const database = openDatabase({ databaseUrl: null, dataDir });
  await database.migrate();
  return { database, d: { db: database.db, config, clock: systemClock, caches: createReadCaches({ window: 0 }), jobs: new JobQueue({ db: database.db, clock: systemClock }) } };
}

/** A user with a token and an SSH key, and a project with a linear history of COMMITS commits on main. */
async function seed(dataDir: string, publicKey: string) {
  const { database, d } = await deps(dataDir);
  const { createUser } = await import('../src/resources/users/users.service.ts');
  const { createPersonalAccessToken } = await import('../src/resources/access-tokens/access-tokens.service.ts');
  const { createUserKey } = await import('../src/resources/ssh-keys/ssh-keys.service.ts');
  const { repoFor } = await import('../src/resources/repository/repository.common.ts');
  const user = await createUser(d, { username: 'bench', name: 'Bench', email: 'bench@example.com', password: 'bench-password' });
  const { token } = await createPersonalAccessToken(d, user, { name: 'bench', scopes: ['api'], expiresAt: null });
  await createUserKey(d, user.id, { key: publicKey, title: 'bench', expiresAt: null, usageType: 'auth' });
  const ns = await database.db.selectFrom('namespaces').select(['id', 'full_path']).where('owner_id', '=', user.id).executeTakeFirstOrThrow();
  const now = Date.now();
  const project = await database.db.insertInto('projects').values({
    namespace_id: ns.id, name: 'history', path: 'history', full_path: `${ns.full_path}/history`, full_path_lower: `${ns.full_path}/history`,
    description: null, visibility_level: 0, creator_id: user.id, archived: 0, default_branch: 'main', repository_storage: 'default',
    repository_read_only: 0, empty_repo: 0, pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const repo = repoFor(d.config, project);
  await repo.ensure('main');
  const parts: string[] = [];
  for (let i = 1; i <= COMMITS; i++) {
    const msg = `Commit ${i}\n`;
    const content = `line ${i}\n`;
    parts.push(`commit refs/heads/main\nmark :${i}\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata ${msg.length}\n${msg}`);
    if (i > 1) parts.push(`from :${i - 1}\n`);
    parts.push(`M 100644 inline file-${i % 50}.txt\ndata ${content.length}\n${content}\n`);
  }
  git(['fast-import', '--quiet'], { cwd: repo.path, input: parts.join('') });
  d.caches.close();
  await database.close();
  return { token, fullPath: project.full_path, repoPath: repo.path };
}

async function serve(dataDir: string): Promise<void> {
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDatabase } = await import('../src/platform/db/index.ts');
  const { buildApp } = await import('../src/app.ts');
  const { createSshServer } = await import('../src/resources/git-ssh/ssh-server.ts');
  const { ensureHostKeys } = await import('../src/resources/git-ssh/host-keys.ts');
  const config = loadConfig({ BELLOWS_DATA_DIR: dataDir, BELLOWS_LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv, { port: 0 });
  const app = await buildApp({ config, database: openDatabase({ databaseUrl: null, dataDir }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const ssh = createSshServer(app, { hostKeys: ensureHostKeys(dataDir), log: app.log });
  const sshPort = await ssh.listen(0, '127.0.0.1');
  process.stdout.write(`PORTS ${(app.server.address() as any).port} ${sshPort}\n`);
}

function run(args: string[], cwd: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('git', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LANG: 'C', ...IDENT, ...env } });
    let err = '';
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')}: ${err}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bellows-bench-ssh-'));
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);
  const keyFile = join(work, 'id');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
  console.log('seeding…');
  const s = await seed(dataDir, readFileSync(`${keyFile}.pub`, 'utf8'));
  const server = spawn(process.execPath, ['--import', 'tsx', SELF, '--serve', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port, sshPort] = await new Promise<number[]>((resolve, reject) => {
    let buf = '';
    server.stdout!.on('data', (d) => {
      buf += d;
      const m = /PORTS (\d+) (\d+)/.exec(buf);
      if (m) resolve([Number(m[1]), Number(m[2])]);
    });
    server.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const knownHosts = join(work, 'known_hosts');
  const [algo, blob] = readFileSync(join(dataDir, 'ssh', 'ssh_host_ed25519_key.pub'), 'utf8').trim().split(' ');
  writeFileSync(knownHosts, `[127.0.0.1]:${sshPort} ${algo} ${blob}\n`);
  const transports = {
    ssh: { url: `ssh://git@127.0.0.1:${sshPort}/${s.fullPath}.git`, env: { GIT_SSH_COMMAND: `ssh -F /dev/null -i ${keyFile} -o IdentitiesOnly=yes -o UserKnownHostsFile=${knownHosts} -o StrictHostKeyChecking=yes -o BatchMode=yes` } },
    http: { url: `http://bench:${s.token}@127.0.0.1:${port}/${s.fullPath}.git`, env: {} },
    file: { url: `file://${s.repoPath}`, env: {} },
  };
  const rows: string[] = [];
  const loadBefore = loadavg()[0]!;
  try {
    for (const [name, t] of Object.entries(transports)) {
      const pusher = join(work, `${name}-push`);
      const fetcher = join(work, `${name}-fetch`);
      await run(['clone', '--quiet', t.url, pusher], work, t.env);
      await run(['clone', '--quiet', t.url, fetcher], work, t.env);
      const push: number[] = [];
      const fetch: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        await run(['commit', '--quiet', '--allow-empty', '-m', `${name} ${i}`], pusher, t.env);
        let t0 = performance.now();
        await run(['push', '--quiet', 'origin', `HEAD:refs/heads/bench-${name}`], pusher, t.env);
        push.push(performance.now() - t0);
        t0 = performance.now();
        await run(['fetch', '--quiet', 'origin', `refs/heads/bench-${name}:refs/heads/bench-${name}`], fetcher, t.env);
        fetch.push(performance.now() - t0);
      }
      // The fetching clone must hold the pushed commit: a fetch that missed it would be no result.
      if (git(['rev-parse', `refs/heads/bench-${name}`], { cwd: fetcher }).trim() !== git(['rev-parse', 'HEAD'], { cwd: pusher }).trim()) {
        throw new Error(`fetch over ${name} did not bring the pushed commit`);
      }
      rows.push(`| ${name === 'file' ? 'plain git over file://' : `Bellows over ${name.toUpperCase()}`} | ${median(fetch).toFixed(0)} ms | ${median(push).toFixed(0)} ms |`);
      console.log(rows[rows.length - 1]);
    }
  } finally {
    server.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
  const out = [
    '# Git over SSH, HTTP and file://',
    '',
    `Run with \`node --import tsx bench/git-ssh.ts\` on ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version},`,
    `${git(['--version']).trim()}, SQLite, ${new Date().toISOString().slice(0, 10)}. One client at a time; each figure is the median of ${ROUNDS}`,
    `operations on a ${COMMITS}-commit repository: a fetch bringing one new commit, a push of one commit. The server runs in its own`,
    'process; the clients share the machine.',
    '',
    `One-minute load average: ${loadBefore.toFixed(1)} before the run, ${loadavg()[0]!.toFixed(1)} after it (a shared machine: compare the`,
    'rows with each other rather than with other runs).',
    '',
    '| Transport | fetch of one commit | push of one commit |',
    '|---|---|---|',
    ...rows,
    '',
    'Over SSH each operation is one connection: key exchange and public-key sign-in (the key found by its fingerprint),',
    'then the git service; a push reads the command list and decides it before receive-pack runs, as over HTTP, and the',
    'answer ends after the project is brought up to date.',
    '',
  ].join('\n');
  writeFileSync(join(process.cwd(), 'bench', 'SSH-RESULTS.md'), out);
  console.log('\nwritten to bench/SSH-RESULTS.md');
}

if (process.argv[2] === '--serve') {
  serve(process.argv[3]!).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
