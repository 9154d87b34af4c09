import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { migrations } from '../../src/platform/db/migrations/index.ts';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, scratch, startServer, type Scratch } from './processes.ts';
import { openDatabase } from '../../src/platform/db/index.ts';
import { verifyPassword } from '../../src/platform/crypto/passwords.ts';
import { digest } from '../../src/platform/crypto/tokens.ts';

// The admin command line and `bellows serve` as real processes, on SQLite or (with DATABASE_URL) PostgreSQL.

let s: Scratch;
before(async () => { s = await scratch(); });
after(async () => { await s.cleanup(); });

async function withDb<T>(sc: Scratch, fn: (db: ReturnType<typeof openDatabase>['db']) => Promise<T>): Promise<T> {
  const database = openDatabase({ databaseUrl: sc.databaseUrl, dataDir: sc.dataDir });
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

test('migrate, user create and token create; the printed token authenticates against the server', async () => {
  let r = runCli(['migrate'], s.env);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `applied: ${[...migrations.map((m) => m.name)].sort().join(', ')}\n`);
  r = runCli(['migrate'], s.env);
  assert.equal(r.stdout, 'database is up to date\n');

  r = runCli(['user', 'create', '--username', 'carol', '--email', 'carol@example.com', '--password', 'sekret-pass', '--admin'], s.env);
  assert.equal(r.status, 0, r.stderr);
  const created = JSON.parse(r.stdout);
  assert.deepEqual(created, { id: created.id, username: 'carol', admin: true });

  r = runCli(['user', 'create', '--username', 'carol', '--email', 'other@example.com'], s.env);
  assert.equal(r.status, 1);
  assert.equal(r.stderr, 'bellows: {"username":["has already been taken"]}\n');

  r = runCli(['token', 'create', '--user', 'CAROL', '--scopes', 'read_api,read_user', '--name', 'automation'], s.env);
  assert.equal(r.status, 0, r.stderr);
  const token = r.stdout.trim();
  assert.match(token, /^glpat-[A-Za-z0-9_-]{32}$/);

  r = runCli(['token', 'create', '--user', 'nobody'], s.env);
  assert.deepEqual([r.status, r.stderr], [1, 'bellows: User not found\n']);

  await withDb(s, async (db) => {
    const row = await db.selectFrom('personal_access_tokens').selectAll().where('token_digest', '=', digest(token)).executeTakeFirstOrThrow();
    assert.equal(row.scopes, 'read_api read_user');
    assert.equal(row.name, 'automation');
    const u = await db.selectFrom('users').selectAll().where('username', '=', 'carol').executeTakeFirstOrThrow();
    assert.ok(await verifyPassword('sekret-pass', u.password_digest));
  });

  const server = await startServer({ ...s.env, BELLOWS_ROOT_PASSWORD: 'root-password-1', BELLOWS_MAX_QUERY_STRING_BYTES: '32768' });
  try {
    const me = await fetch(`${server.url}/api/v4/user`, { headers: { 'private-token': token } });
    assert.equal(me.status, 200);
    const body = await me.json() as { username: string; is_admin: boolean };
    assert.equal(body.username, 'carol');
    assert.equal(body.is_admin, true);
    const write = await fetch(`${server.url}/api/v4/users/${created.id}/block`, { method: 'POST', headers: { 'private-token': token } });
    assert.equal(write.status, 403, 'the scopes given on the command line hold');
    // The HTTP server takes request lines longer than its default 16 KiB, so the configured limit decides.
    const within = await fetch(`${server.url}/api/v4/user?unused=${'x'.repeat(20_000)}`, { headers: { 'private-token': token } });
    assert.equal(within.status, 200);
    const over = await fetch(`${server.url}/api/v4/users?search=${'x'.repeat(33_000)}`, { headers: { 'private-token': token } });
    assert.equal(over.status, 414);
    assert.deepEqual(await over.json(), { message: '414 Request-URI Too Large' });
  } finally {
    assert.equal(await server.stop(), 0);
  }
  // BELLOWS_ROOT_PASSWORD set the root password at that first start; no password file then.
  assert.ok(!existsSync(join(s.dataDir, 'initial_root_password')));
  await withDb(s, async (db) => {
    const u = await db.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
    assert.ok(await verifyPassword('root-password-1', u.password_digest));
  });
});

test('serve: first start creates root with a generated password, registers BELLOWS_ROOT_TOKEN, logs without secrets, stops cleanly on SIGTERM', async () => {
  const sc = await scratch();
  try {
    const rootToken = 'glpat-root-token-for-tests-0123456789';
    const server = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: rootToken });
    let code: number | null;
    try {
      const passwordFile = join(sc.dataDir, 'initial_root_password');
      assert.ok(existsSync(passwordFile), 'the generated password is written down');
      const password = /^Password: (\S+)$/m.exec(readFileSync(passwordFile, 'utf8'))?.[1];
      assert.ok(password && password.length >= 16);

      const ready = await fetch(`${server.url}/-/readiness`);
      assert.deepEqual(await ready.json(), { status: 'ok', master_check: [{ status: 'ok' }] });
      assert.equal(await (await fetch(`${server.url}/-/health`)).text(), 'Bellows OK');

      const me = await fetch(`${server.url}/api/v4/user?private_token=${rootToken}`, { headers: { 'x-request-id': 'serve-req-1' } });
      assert.equal(me.status, 200);
      assert.equal(me.headers.get('x-request-id'), 'serve-req-1');
      const root = await me.json() as { username: string; is_admin: boolean; id: number };
      assert.deepEqual([root.username, root.is_admin], ['root', true]);
      const bearer = await fetch(`${server.url}/api/v4/personal_access_tokens/self`, { headers: { authorization: `Bearer ${rootToken}` } });
      const self = await bearer.json() as { scopes: string[]; expires_at: string | null };
      assert.deepEqual(self.scopes, ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode']);
      assert.equal(self.expires_at, null);
      const users = await fetch(`${server.url}/api/v4/users?per_page=1&access_token=${rootToken}`);
      assert.match(String(users.headers.get('link')), new RegExp(`^<${server.url}/api/v4/users\\?order_by=id&page=1&per_page=1&sort=desc>; rel="first"`));

      await withDb(sc, async (db) => {
        const u = await db.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
        assert.ok(await verifyPassword(password!, u.password_digest));
        assert.equal(u.admin, 1);
      });
    } finally {
      code = await server.stop('SIGTERM');
    }
    assert.equal(code, 0, server.output());
    const out = server.output();
    assert.ok(!out.includes(rootToken), 'the token never reaches the log');
    const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const req = lines.find((l) => l.request_id === 'serve-req-1');
    assert.ok(req, 'a JSON line for the request');
    assert.deepEqual([req.msg, req.path, req.status, req.username], ['request completed', '/api/v4/user', 200, 'root']);
    assert.ok(lines.some((l) => l.msg === 'created the root administrator'));
    assert.ok(lines.some((l) => l.msg === 'stopping' && l.signal === 'SIGTERM'));

    // A second start keeps root as it is and does not write the password again.
    const again = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: rootToken });
    const whoami = await fetch(`${again.url}/api/v4/user`, { headers: { 'private-token': rootToken } });
    assert.equal(whoami.status, 200);
    assert.equal(await again.stop('SIGINT'), 0);
    assert.ok(!again.output().includes('created the root administrator'));
  } finally {
    await sc.cleanup();
  }
});

test('jobs: list by state, retry a dead job, discard a queued one, refuse what does not apply', async () => {
  assert.equal(runCli(['migrate'], s.env).status, 0);
  const ids = await withDb(s, async (db) => {
    const row = (state: string, attempts: number, error: string | null) => ({
      kind: 'delete_merged_branches', args: '{"project_id":7}', state, attempts, max_attempts: 5, run_at: Date.parse('2026-01-01T00:00:00Z'),
      locked_by: null, locked_until: null, unique_key: null, last_error: error, created_at: 1, updated_at: 1, finished_at: state === 'dead' ? 2 : null,
    });
    const dead = await db.insertInto('jobs').values(row('dead', 5, 'Error: disk full\n    at somewhere')).returning('id').executeTakeFirstOrThrow();
    const queued = await db.insertInto('jobs').values(row('queued', 0, null)).returning('id').executeTakeFirstOrThrow();
    return { dead: dead.id, queued: queued.id };
  });
  let r = runCli(['jobs', 'list', '--state', 'dead'], s.env);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n').map((l) => JSON.parse(l)), [{
    id: ids.dead, kind: 'delete_merged_branches', state: 'dead', attempts: 5, max_attempts: 5, run_at: '2026-01-01T00:00:00.000Z',
    locked_by: null, last_error: 'Error: disk full', args: { project_id: 7 },
  }]);
  r = runCli(['jobs', 'list', '--state', 'sleeping'], s.env);
  assert.deepEqual([r.status, r.stderr], [1, 'bellows: --state must be one of queued, running, succeeded, dead, discarded\n']);
  r = runCli(['jobs', 'retry', String(ids.queued)], s.env);
  assert.deepEqual([r.status, r.stderr], [1, `bellows: job ${ids.queued} is not dead or discarded\n`]);
  r = runCli(['jobs', 'retry', String(ids.dead)], s.env);
  assert.deepEqual([r.status, r.stdout], [0, `job ${ids.dead} queued\n`]);
  r = runCli(['jobs', 'discard', String(ids.queued)], s.env);
  assert.deepEqual([r.status, r.stdout], [0, `job ${ids.queued} discarded\n`]);
  r = runCli(['jobs', 'discard', 'x1'], s.env);
  assert.equal(r.status, 1);
  // (The server started earlier in this file queued its recurring jobs too; only these two are looked at.)
  const states = await withDb(s, (db) => db.selectFrom('jobs').select(['id', 'state', 'attempts']).where('id', 'in', [ids.dead, ids.queued]).orderBy('id').execute());
  assert.deepEqual(states, [{ id: ids.dead, state: 'queued', attempts: 0 }, { id: ids.queued, state: 'discarded', attempts: 0 }]);
});
