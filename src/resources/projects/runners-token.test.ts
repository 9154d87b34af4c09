import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, type Migration } from 'kysely';
import pg from 'pg';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { openDatabase } from '../../platform/db/index.ts';
import { migrations } from '../../platform/db/migrations/index.ts';

// The runner registration token is a secret: stored as its SHA-256 digest, shown once, when the project is made.

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

let t: TestApp;
let owner: TestUser;
let dev: TestUser;
let other: TestUser;
before(async () => {
  t = await buildTestApp();
  owner = await makeUser(t.app);
  dev = await makeUser(t.app);
  other = await makeUser(t.app);
});
after(async () => { await t.close(); });

test('creating and forking a project answer the token once; only its digest is stored; later reads show null', async () => {
  const c = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'runners', visibility: 'public' } });
  assert.equal(c.status, 201);
  const token = c.body.runners_token as string;
  assert.match(token, /^GR1348941[A-Za-z0-9_-]{20}$/);
  const row = await t.app.db.selectFrom('projects').selectAll().where('id', '=', c.body.id).executeTakeFirstOrThrow();
  assert.equal(row.runners_token_digest, sha256(token));
  assert.ok(!JSON.stringify(row).includes(token), 'the token itself is nowhere in the row');

  const again = await call(t.app, 'GET', `/projects/${c.body.id}`, { token: owner.token });
  assert.equal(again.body.runners_token, null);
  const listed = await call(t.app, 'GET', '/projects', { token: owner.token, query: { owned: 'true' } });
  assert.equal(listed.body[0].runners_token, null);
  await addMember(t.app, { type: 'Project', id: c.body.id }, dev.user.id, 30);
  assert.equal('runners_token' in (await call(t.app, 'GET', `/projects/${c.body.id}`, { token: dev.token })).body, false, 'Developers never see the field');

  const f = await call(t.app, 'POST', `/projects/${c.body.id}/fork`, { token: other.token, body: {} });
  assert.equal(f.status, 201);
  assert.match(f.body.runners_token, /^GR1348941/);
  assert.notEqual(f.body.runners_token, token);
  const forkRow = await t.app.db.selectFrom('projects').select('runners_token_digest').where('id', '=', f.body.id).executeTakeFirstOrThrow();
  assert.equal(forkRow.runners_token_digest, sha256(f.body.runners_token));
});

test('the migration turns stored tokens into their digests', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bellows-mig-'));
  const baseUrl = process.env.DATABASE_URL ?? null;
  let databaseUrl: string | null = null;
  const name = `bellows_m_${process.pid}_${randomBytes(4).toString('hex')}`;
  if (baseUrl) {
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(baseUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
  }
  const database = openDatabase({ databaseUrl, dataDir, sqliteFile: databaseUrl ? undefined : ':memory:' });
  try {
    const db = database.db as any;
    const provider = {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const m of migrations) out[m.name] = { up: (k) => m.up(k, database.dialect) };
        return out;
      },
    };
    const migrator = new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
    const before = await migrator.migrateTo('0008_project_row_version');
    assert.equal(before.error, undefined);
    const now = Date.now();
    const ns = await db.insertInto('namespaces').values({
      name: 'g', path: 'g', kind: 'group', parent_id: null, owner_id: null, visibility_level: 0, description: '', full_path: 'g', full_path_lower: 'g',
      full_name: 'g', traversal: '/', request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    const project = (path: string, runners_token: string | null) => ({
      namespace_id: ns.id, name: path, path, full_path: `g/${path}`, full_path_lower: `g/${path}`, description: null, visibility_level: 0, creator_id: null,
      archived: 0, default_branch: null, repository_storage: 'default', repository_read_only: 0, empty_repo: 1, pending_delete: 0,
      created_at: now, updated_at: now, last_activity_at: now, runners_token,
    });
    await db.insertInto('projects').values([project('a', 'GR1348941plainA'), project('b', null), project('c', 'GR1348941plainC')]).execute();
    assert.equal((await database.migrate())[0], '0009_runners_token_digest');
    const rows = await db.selectFrom('projects').selectAll().orderBy('path').execute();
    assert.deepEqual(rows.map((r: any) => [r.path, r.runners_token_digest]), [['a', sha256('GR1348941plainA')], ['b', null], ['c', sha256('GR1348941plainC')]]);
    assert.ok(rows.every((r: any) => !('runners_token' in r)), 'the plain column is gone');
  } finally {
    await database.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (baseUrl) {
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
});
