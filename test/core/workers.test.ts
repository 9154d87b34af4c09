import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { callServer, runCli, scratch, startServer } from './processes.ts';

// `bellows serve` with two workers sharing the port: a write through one worker is seen at once by reads on the
// other, although each keeps read caches (credentials, authorisations and rules for a minute here, refs until
// they change).

const ROOT = 'glpat-workers-root-token-0123456789';

const call = callServer;

test('two workers: revocations, edits and new branches are seen by the next read on any worker', async () => {
  const sc = await scratch();
  const server = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: ROOT, BELLOWS_WORKERS: '2', BELLOWS_AUTH_CACHE_MS: '60000' });
  try {
    const api = `${server.url}/api/v4`;
    const created = await call(`${api}/users/1/personal_access_tokens`, 'POST', ROOT, { name: 'reader', scopes: ['api'] });
    assert.equal(created.status, 201);
    const token = created.json.token as string;
    // Both workers resolve and cache the token.
    for (let i = 0; i < 6; i++) assert.equal((await call(`${api}/user`, 'GET', token)).status, 200);
    assert.equal((await call(`${api}/personal_access_tokens/${created.json.id}`, 'DELETE', ROOT)).status, 204);
    const after = await Promise.all(Array.from({ length: 6 }, () => call(`${api}/user`, 'GET', token)));
    assert.deepEqual(after.map((r) => r.status), [401, 401, 401, 401, 401, 401]);

    const project = await call(`${api}/projects`, 'POST', ROOT, { name: 'shared', initialize_with_readme: true });
    assert.equal(project.status, 201);
    const branches = `${api}/projects/${project.json.id}/repository/branches`;
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 4; i++) assert.equal((await call(branches, 'GET', ROOT)).status, 200);
      assert.equal((await call(`${branches}?branch=topic-${round}&ref=main`, 'POST', ROOT)).status, 201);
      const seen = await Promise.all(Array.from({ length: 4 }, () => call(branches, 'GET', ROOT)));
      for (const r of seen) assert.ok(r.json.some((b: { name: string }) => b.name === `topic-${round}`), `round ${round}: ${JSON.stringify(r.json.map((b: { name: string }) => b.name))}`);
    }

    // Branch protection rules are cached with branch listings; protecting a branch through one worker shows at
    // once on the other. (The default branch is protected from the project's creation; a topic branch is not.)
    const isProtected = async () => (await call(branches, 'GET', ROOT)).json.find((b: { name: string }) => b.name === 'topic-1').protected;
    assert.deepEqual(await Promise.all(Array.from({ length: 4 }, isProtected)), [false, false, false, false]);
    assert.equal((await call(`${api}/projects/${project.json.id}/protected_branches?name=topic-1`, 'POST', ROOT)).status, 201);
    assert.deepEqual(await Promise.all(Array.from({ length: 4 }, isProtected)), [true, true, true, true]);

    // Writers in both workers at once: transactions wait for each other instead of failing.
    const parallel = await Promise.all(Array.from({ length: 12 }, (_, i) => call(`${api}/projects`, 'POST', ROOT, { name: `parallel-${i}` })));
    assert.deepEqual(parallel.map((r) => r.status), Array(12).fill(201));
    const stars = await Promise.all(parallel.map((r) => call(`${api}/projects/${r.json.id}/star`, 'POST', ROOT)));
    assert.deepEqual(stars.map((r) => r.status), Array(12).fill(201));

    // The namespace owner's name is cached with project entities; a rename shows at once.
    for (let i = 0; i < 4; i++) await call(`${api}/projects/${project.json.id}`, 'GET', ROOT);
    assert.equal((await call(`${api}/projects/${project.json.id}`, 'PUT', ROOT, { description: 'changed' })).status, 200);
    const reads = await Promise.all(Array.from({ length: 4 }, () => call(`${api}/projects/${project.json.id}`, 'GET', ROOT)));
    assert.deepEqual(reads.map((r) => r.json.description), ['changed', 'changed', 'changed', 'changed']);
  } finally {
    const code = await server.stop('SIGTERM');
    const out = server.output();
    await sc.cleanup();
    assert.equal(code, 0, out);
    const stops = out.split('\n').filter((l) => l.includes('"msg":"stopping"'));
    assert.equal(stops.length, 3, 'the primary and both workers stop: ' + out);
  }
});

test('two workers: with no request at all, the second worker starts too and the server reports serving with both', async () => {
  const sc = await scratch();
  // The first worker is not asked anything: the others start a moment after it listens all the same.
  const server = await startServer({ ...sc.env, BELLOWS_WORKERS: '2' }, { until: (out) => out.includes('"msg":"serving"') });
  try {
    const serving = server.output().split('\n').find((l) => l.includes('"msg":"serving"'))!;
    assert.equal(JSON.parse(serving).workers, 2);
    assert.equal((await fetch(`${server.url}/-/readiness`)).status, 200);
  } finally {
    const code = await server.stop('SIGTERM');
    const out = server.output();
    await sc.cleanup();
    assert.equal(code, 0, out);
    assert.equal(out.split('\n').filter((l) => l.includes('"msg":"stopping"')).length, 3, 'the primary and both workers stop: ' + out);
  }
});

// `serve` forks its first worker before it reads the configuration (bin/bellows.mjs); that worker is ended when the
// configuration is wrong or asks for no worker processes.

/** The `bellows serve` processes whose parent is `pid`. */
function servingChildren(pid: number): string[] {
  const r = spawnSync('ps', ['--ppid', String(pid), '-o', 'args='], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.includes('bellows.mjs serve'));
}

test('serve with a wrong setting: exit code 78, one line on stderr, no worker left behind', async () => {
  const sc = await scratch();
  try {
    const started = Date.now();
    const r = runCli(['serve'], { ...sc.env, PORT: 'eighty' });
    assert.equal(r.status, 78);
    assert.equal(r.stderr, 'bellows: configuration error: PORT must be an integer between 0 and 65535, got "eighty"\n');
    // A worker that outlived its primary would keep the output pipes open until it noticed (runCli waits for them).
    assert.ok(Date.now() - started < 30_000);
  } finally {
    await sc.cleanup();
  }
});

test('serve with one worker serves from its own process: the worker forked at start is ended', async () => {
  const sc = await scratch();
  const server = await startServer({ ...sc.env, BELLOWS_WORKERS: '1' });
  try {
    assert.equal((await fetch(`${server.url}/-/readiness`)).status, 200);
    assert.deepEqual(servingChildren(server.pid), []);
  } finally {
    const code = await server.stop('SIGTERM');
    const out = server.output();
    await sc.cleanup();
    assert.equal(code, 0, out);
  }
});

test('serve with two workers: the worker forked at start is one of the two', async () => {
  const sc = await scratch();
  const server = await startServer({ ...sc.env, BELLOWS_WORKERS: '2' }, { until: (out) => out.includes('"msg":"serving"') });
  try {
    assert.equal(servingChildren(server.pid).length, 2);
  } finally {
    const code = await server.stop('SIGTERM');
    await sc.cleanup();
    assert.equal(code, 0);
  }
});
