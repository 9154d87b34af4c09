import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { buildTestApp, call } from '../../../test/support/app.ts';
import { makeIssue, makeProject, quickUser } from '../../../test/support/fixtures.ts';

// The statement timeout of API reads (config dbStatementTimeoutMs, platform/db/index.ts read scopes): a read the
// database cannot finish in time is stopped there and answered 500 in the v4 shape; writes are not cut short; the
// server goes on serving. The read here waits for a table another connection holds locked, which the database counts
// as running time like any other: a read that takes longer than the limit for a reason the test controls.

const pgOnly = !process.env.DATABASE_URL && 'the statement timeout is PostgreSQL\'s: runs only when DATABASE_URL is PostgreSQL';

async function lockIssues(databaseUrl: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  await c.query('begin');
  await c.query('lock table issues in access exclusive mode');
  return c;
}

test('a read past the limit answers 500 and stops in the database; writes wait; the server goes on serving', { skip: pgOnly, timeout: 60_000 }, async () => {
  const t = await buildTestApp({ env: { BELLOWS_DB_STATEMENT_TIMEOUT_MS: '300' } });
  try {
    assert.equal(t.config.dbStatementTimeoutMs, 300);
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { owner: user.user });
    await makeIssue(t.app, project, { title: 'First' });
    const list = `/api/v4/projects/${project.id}/issues`;

    const lock = await lockIssues(t.config.databaseUrl!);
    let locked = true;
    try {
      // Answered while the lock is still held: stopped by the limit (without it the read waits for the lock).
      const slow = await call(t.app, 'GET', list, { token: user.token });
      assert.equal(slow.status, 500);
      assert.deepEqual(slow.body, { message: '500 Internal Server Error' });
      // Nothing of it runs on in the database.
      const running = await lock.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`);
      assert.equal(running.rows[0].n, 0);

      // A write is not cut short: it waits for the lock, longer than the limit, and is done once the lock goes.
      const write = call(t.app, 'POST', list, { token: user.token, body: { title: 'Second' } });
      await new Promise((r) => setTimeout(r, 800));
      await lock.query('rollback');
      locked = false;
      const created = await write;
      assert.equal(created.status, 201);
      assert.equal(created.body.title, 'Second');
    } finally {
      if (locked) await lock.query('rollback');
      await lock.end();
    }

    // The same server reads again, on the same pool.
    for (let i = 0; i < 3; i++) {
      const again = await call(t.app, 'GET', list, { token: user.token });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.map((x: any) => x.title), ['Second', 'First']);
    }
    // Statements outside an API read (jobs, the command line) keep the database's own limit.
    const outside = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(t.app.db);
    assert.equal(outside.rows[0].statement_timeout, '0');
  } finally {
    await t.close();
  }
});

test('the limit is a setting: 0 turns it off, bad values stop start-up', async () => {
  const { loadConfig } = await import('../../config/index.ts');
  assert.equal(loadConfig({ BELLOWS_DATA_DIR: '/tmp/x' } as NodeJS.ProcessEnv).dbStatementTimeoutMs, 15_000);
  assert.equal(loadConfig({ BELLOWS_DATA_DIR: '/tmp/x', BELLOWS_DB_STATEMENT_TIMEOUT_MS: '0' } as NodeJS.ProcessEnv).dbStatementTimeoutMs, 0);
  assert.throws(() => loadConfig({ BELLOWS_DATA_DIR: '/tmp/x', BELLOWS_DB_STATEMENT_TIMEOUT_MS: '-1' } as NodeJS.ProcessEnv), /BELLOWS_DB_STATEMENT_TIMEOUT_MS must be an integer/);
});

test('with the limit off a slow read waits for what it waits for', { skip: pgOnly, timeout: 60_000 }, async () => {
  const t = await buildTestApp({ env: { BELLOWS_DB_STATEMENT_TIMEOUT_MS: '0' } });
  try {
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { owner: user.user });
    await makeIssue(t.app, project, { title: 'Only' });
    const lock = await lockIssues(t.config.databaseUrl!);
    const read = call(t.app, 'GET', `/api/v4/projects/${project.id}/issues`, { token: user.token });
    await new Promise((r) => setTimeout(r, 800));
    await lock.query('rollback');
    await lock.end();
    const r = await read;
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((x: any) => x.title), ['Only']);
  } finally {
    await t.close();
  }
});
