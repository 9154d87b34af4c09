import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { callServer, scratch, startServer, type Server } from '../core/processes.ts';
import { diskPath } from '../../src/platform/git/storage.ts';

// Two machines of one installation: two `bellows serve` processes with data directories of their own, one
// PostgreSQL database and one repository storage path; different ports stand in for the machines. Each keeps read
// caches (credentials and rules for a minute here, refs until they change), and a change made through one is
// seen by the next read on the other; counts and jobs are the installation's, and concurrent pushes stay whole.

const ROOT = 'glpat-multi-machine-root-token-0123';
const LIMIT = 40;

const call = callServer;

function git(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const branchNames = (r: { json: Array<{ name: string }> }) => r.json.map((b) => b.name).sort();

test('two machines on one PostgreSQL database and one storage path', {
  skip: !process.env.DATABASE_URL && 'several machines share a PostgreSQL database: runs only when DATABASE_URL is PostgreSQL',
  timeout: 300_000,
}, async () => {
  const sc = await scratch();
  const shared = mkdtempSync(join(tmpdir(), 'bellows-shared-'));
  const dirB = mkdtempSync(join(tmpdir(), 'bellows-machine-b-'));
  const work = mkdtempSync(join(tmpdir(), 'bellows-clients-'));
  const config = join(shared, 'bellows.yml');
  writeFileSync(config, `storage:\n  - name: default\n    path: ${join(shared, 'repositories')}\n`);
  const env = {
    // One process per machine: what is cached where is then known (workers of one machine are workers.test.ts's).
    ...sc.env, BELLOWS_WORKERS: '1', BELLOWS_CONFIG: config, BELLOWS_ROOT_TOKEN: ROOT, BELLOWS_AUTH_CACHE_MS: '60000',
    BELLOWS_RATE_LIMIT_UNAUTHENTICATED: String(LIMIT), BELLOWS_RATE_LIMIT_PERIOD: '86400',
  };
  const db = new pg.Client({ connectionString: sc.databaseUrl! });
  let a: Server | null = null;
  let b: Server | null = null;
  try {
    // Started together: they take turns migrating and making root and its token, once.
    [a, b] = await Promise.all([startServer(env), startServer({ ...env, BELLOWS_DATA_DIR: dirB })]);
    await db.connect();
    const apiA = `${a.url}/api/v4`;
    const apiB = `${b.url}/api/v4`;
    assert.equal(Number((await db.query('select count(*) from users')).rows[0].count), 1);
    assert.equal(Number((await db.query('select count(*) from personal_access_tokens')).rows[0].count), 1);
    assert.equal(Number((await db.query('select count(*) from machines')).rows[0].count), 2);

    // A machine with another shard list refuses to start beside them.
    const otherConfig = join(shared, 'other.yml');
    writeFileSync(otherConfig, `storage:\n  - name: default\n    path: ${join(shared, 'repositories')}\n  - name: extra\n    path: ${join(shared, 'extra')}\n`);
    const dirC = mkdtempSync(join(tmpdir(), 'bellows-machine-c-'));
    try {
      await assert.rejects(startServer({ ...env, BELLOWS_CONFIG: otherConfig, BELLOWS_DATA_DIR: dirC }), /storage shards differ from those of the running machine .*there \[default\], here \[default,extra\]/);
    } finally {
      rmSync(dirC, { recursive: true, force: true });
    }

    // A token revoked on A is refused on B at once, though B had it cached.
    const created = await call(`${apiA}/users/1/personal_access_tokens`, 'POST', ROOT, { name: 'reader', scopes: ['api'] });
    assert.equal(created.status, 201);
    const token = created.json.token as string;
    for (let i = 0; i < 3; i++) assert.equal((await call(`${apiB}/user`, 'GET', token)).status, 200);
    assert.equal((await call(`${apiA}/personal_access_tokens/${created.json.id}`, 'DELETE', ROOT)).status, 204);
    assert.equal((await call(`${apiB}/user`, 'GET', token)).status, 401);

    // A project made on A; a branch protected on A reads protected on B at once.
    const project = await call(`${apiA}/projects`, 'POST', ROOT, { name: 'shared', initialize_with_readme: true });
    assert.equal(project.status, 201);
    const id = project.json.id as number;
    assert.equal((await call(`${apiA}/projects/${id}/repository/branches?branch=topic&ref=main`, 'POST', ROOT)).status, 201);
    const topicOnB = async () => (await call(`${apiB}/projects/${id}/repository/branches/topic`, 'GET', ROOT)).json.protected;
    assert.equal(await topicOnB(), false);
    assert.equal(await topicOnB(), false);
    assert.equal((await call(`${apiA}/projects/${id}/protected_branches?name=topic`, 'POST', ROOT)).status, 201);
    assert.equal(await topicOnB(), true);

    // A push through A is seen by B's API at once (B had the branch list cached).
    const clone = join(work, 'one');
    const remoteA = `http://root:${ROOT}@${a.url.slice(7)}/${project.json.path_with_namespace}.git`;
    const remoteB = `http://root:${ROOT}@${b.url.slice(7)}/${project.json.path_with_namespace}.git`;
    assert.equal((await git(['clone', '-q', remoteA, clone], work)).code, 0);
    const listB = () => call(`${apiB}/projects/${id}/repository/branches`, 'GET', ROOT);
    assert.deepEqual(branchNames(await listB()), ['main', 'topic']);
    assert.deepEqual(branchNames(await listB()), ['main', 'topic']);
    await git(['commit', '-q', '--allow-empty', '-m', 'pushed through A'], clone);
    const pushed = await git(['push', '-q', remoteA, 'HEAD:refs/heads/from-a'], clone);
    assert.equal(pushed.code, 0, pushed.out);
    const head = (await git(['rev-parse', 'HEAD'], clone)).out.trim();
    const seen = await listB();
    assert.deepEqual(branchNames(seen), ['from-a', 'main', 'topic']);
    assert.equal(seen.json.find((x: { name: string }) => x.name === 'from-a').commit.id, head);

    // Concurrent pushes through A and B: to different branches both land; to one branch from one old head,
    // exactly one lands and the other is refused cleanly; the repository stays whole.
    const clones = [join(work, 'x'), join(work, 'y')];
    for (const c of clones) assert.equal((await git(['clone', '-q', remoteA, c], work)).code, 0);
    for (let round = 1; round <= 4; round++) {
      const made = await Promise.all(clones.map(async (c, i) => {
        await git(['checkout', '-q', '-B', 'main', 'origin/main'], c);
        writeFileSync(join(c, `file-${round}-${i}.txt`), `round ${round} from ${i}\n`.repeat(2000));
        await git(['add', '.'], c);
        await git(['commit', '-q', '-m', `round ${round} from ${i}`], c);
        return (await git(['rev-parse', 'HEAD'], c)).out.trim();
      }));
      const apart = await Promise.all(clones.map((c, i) => git(['push', '-q', i ? remoteB : remoteA, `HEAD:refs/heads/r${round}-${i}`], c)));
      assert.deepEqual(apart.map((r) => r.code), [0, 0], apart.map((r) => r.out).join('\n'));
      const together = await Promise.all(clones.map((c, i) => git(['push', i ? remoteB : remoteA, 'HEAD:refs/heads/main'], c)));
      const landed = together.map((r) => r.code === 0);
      assert.equal(landed.filter(Boolean).length, 1, together.map((r) => r.out).join('\n'));
      const refused = together[landed.indexOf(false)]!.out;
      assert.match(refused, /\[rejected\]|failed to push|cannot lock ref|fetch first|non-fast-forward/);
      assert.doesNotMatch(refused, /HTTP 5\d\d|500|internal server error/i);
      const winner = made[landed.indexOf(true)];
      for (const api of [apiA, apiB]) {
        const main = await call(`${api}/projects/${id}/repository/branches/main`, 'GET', ROOT);
        assert.equal(main.json.commit.id, winner, `round ${round}: main on ${api}`);
      }
      for (const c of clones) await git(['fetch', '-q', 'origin'], c);
    }
    const fsck = await git(['--git-dir', join(shared, 'repositories', diskPath(id)), 'fsck', '--strict', '--no-dangling'], work);
    assert.equal(fsck.code, 0, fsck.out);

    // A job queued through A runs once, on one machine or the other.
    await call(`${apiA}/projects/${id}/repository/branches?branch=merged-1&ref=main`, 'POST', ROOT);
    const queued = await call(`${apiA}/projects/${id}/repository/merged_branches`, 'DELETE', ROOT);
    assert.equal(queued.status, 202);
    await until(async () => (await db.query(`select state from jobs where kind = 'delete_merged_branches'`)).rows.every((r) => r.state === 'succeeded'), 'the job');
    const jobs = (await db.query(`select state, attempts from jobs where kind = 'delete_merged_branches'`)).rows;
    assert.deepEqual(jobs, [{ state: 'succeeded', attempts: 1 }]);
    assert.equal((await call(`${apiB}/projects/${id}/repository/branches/merged-1`, 'GET', ROOT)).status, 404);

    // Without the notifications B would serve what it cached: with the trigger of the tokens table off, a token
    // revoked on A keeps working on B (the caches are real, and the notifications are what keeps them true).
    const second = await call(`${apiA}/users/1/personal_access_tokens`, 'POST', ROOT, { name: 'second', scopes: ['api'] });
    const third = await call(`${apiA}/users/1/personal_access_tokens`, 'POST', ROOT, { name: 'third', scopes: ['api'] });
    for (const t of [second, third]) assert.equal((await call(`${apiB}/user`, 'GET', t.json.token)).status, 200);
    await db.query('alter table personal_access_tokens disable trigger bellows_cache_void');
    assert.equal((await call(`${apiA}/personal_access_tokens/${second.json.id}`, 'DELETE', ROOT)).status, 204);
    assert.equal((await call(`${apiB}/user`, 'GET', second.json.token)).status, 200, 'B answers from its cache');
    // B loses its listening connection: it drops its caches and does not cache until it listens again.
    const killed = await db.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [`bellows cache bus ${b.pid}/${b.pid}`]);
    assert.equal(killed.rowCount, 1);
    await until(() => b!.output().includes('lost the cache notification connection'), 'B to notice');
    assert.equal((await call(`${apiB}/user`, 'GET', second.json.token)).status, 401);
    assert.equal((await call(`${apiA}/personal_access_tokens/${third.json.id}`, 'DELETE', ROOT)).status, 204);
    assert.equal((await call(`${apiB}/user`, 'GET', third.json.token)).status, 401);
    await db.query('alter table personal_access_tokens enable trigger bellows_cache_void');
    await until(async () => (await db.query(`select 1 from pg_stat_activity where application_name = $1`, [`bellows cache bus ${b!.pid}/${b!.pid}`])).rowCount === 1, 'B to listen again');

    // The address's requests without a credential are counted once for the installation: a limit of N is N
    // across both machines. (Refused credentials above were counted against the address too.)
    const before = Number((await db.query(`select coalesce(sum(count), 0) as n from rate_limit_counters where key = 'u:127.0.0.1'`)).rows[0].n);
    const left = LIMIT - before;
    assert.ok(left > 10, `budget left: ${left}`);
    const answers = [];
    for (let i = 0; i < left + 6; i++) answers.push(await call(`${i % 2 ? apiB : apiA}/version`, 'GET', null));
    assert.deepEqual(answers.slice(0, left).map((r) => r.status), Array(left).fill(401));
    assert.deepEqual(answers.slice(left).map((r) => r.status), Array(6).fill(429));
    const over = answers[left]!;
    assert.equal(over.headers['ratelimit-limit'], String(Math.ceil((LIMIT * 60) / 86400)));
    assert.equal(over.headers['ratelimit-observed'], String(LIMIT + 1));
    assert.equal(answers[left + 1]!.headers['ratelimit-observed'], String(LIMIT + 2));
  } finally {
    await db.end().catch(() => {});
    const codes = await Promise.all([a?.stop(), b?.stop()]);
    if (a && b) {
      assert.deepEqual(codes, [0, 0]);
      const c = new pg.Client({ connectionString: sc.databaseUrl! });
      await c.connect();
      assert.equal(Number((await c.query('select count(*) from machines')).rows[0].count), 0, 'stopped machines leave');
      await c.end();
    }
    for (const d of [shared, dirB, work]) rmSync(d, { recursive: true, force: true });
    await sc.cleanup();
  }
});
