import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call, type TestApp } from '../../test/support/app.ts';
import { castRoles, makeProject } from '../../test/support/fixtures.ts';
import { EPOCH_TABLES, readEpoch } from './read-epoch.ts';
import { QUIET_COLUMNS } from './db/change-notify.ts';

// The read epoch: the database moves it with every change that decides who a caller is and what they reach, so that
// a state-changing request may reuse what the read caches loaded at the same epoch.

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => {
  await t.close();
});

const postgres = !!process.env.DATABASE_URL;

/** A table's columns, and those whose update moves the epoch (null: the table has no epoch trigger). */
async function watchedColumns(table: string): Promise<{ columns: string[]; watched: string[] | null }> {
  const db = t.app.db;
  if (postgres) {
    const all = (await sql<{ attnum: number; name: string }>`select attnum, attname as name from pg_attribute
      where attrelid = ${table}::regclass and attnum > 0 and not attisdropped order by attnum`.execute(db)).rows;
    const trigger = (await sql<{ attrs: number[] }>`select tgattr::int2[] as attrs from pg_trigger
      where tgrelid = ${table}::regclass and tgname = ${`read_epoch_${table}`}`.execute(db)).rows[0];
    const columns = all.map((c) => c.name);
    if (!trigger) return { columns, watched: null };
    return { columns, watched: trigger.attrs.length === 0 ? columns : all.filter((c) => trigger.attrs.includes(c.attnum)).map((c) => c.name) };
  }
  const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((r) => r.name);
  const triggers = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'trigger' and tbl_name = ${table} and name like 'read_epoch_%'`.execute(db)).rows;
  if (!['ins', 'upd', 'del'].every((s) => triggers.some((r) => r.name === `read_epoch_${table}_${s}`))) return { columns, watched: null };
  const of = /AFTER UPDATE OF (.+?) ON /s.exec(triggers.find((r) => r.name.endsWith('_upd'))!.sql);
  return { columns, watched: of ? of[1].split(',').map((c) => c.trim().replace(/^"|"$/g, '')) : columns };
}

test('every table the epoch follows moves it on any column but a token\'s last use', async () => {
  for (const table of EPOCH_TABLES) {
    const { columns, watched } = await watchedColumns(table);
    assert.ok(watched, `${table} has its epoch triggers`);
    assert.deepEqual([...watched].sort(), columns.filter((c) => !QUIET_COLUMNS.includes(c)).sort(), table);
  }
});

test('a state-changing request sees at once a token revoked, a membership removed or a user blocked outside the server', async () => {
  const project = await makeProject(t.app, { visibility: 0, path: 'epoch-private' });
  const roles = await castRoles(t.app, project);
  const db = t.app.db;
  const create = (token: string, title: string) => call(t.app, 'POST', `/projects/${project.id}/issues`, { token, body: { title } });

  // Each writes twice, so that the second request is served from what the first cached.
  for (const title of ['one', 'two']) {
    assert.equal((await create(roles.developer.token, title)).status, 201);
    assert.equal((await create(roles.reporter.token, title)).status, 201);
    assert.equal((await create(roles.guest.token, title)).status, 201);
  }
  const before = (await readEpoch(db))!;
  assert.equal((await create(roles.developer.token, 'three')).status, 201);
  assert.equal(await readEpoch(db), before, 'an issue is no change the epoch follows');
  // A token's last use is written while reading, and moves nothing.
  await db.updateTable('personal_access_tokens').set({ last_used_at: 1 }).where('user_id', '=', roles.developer.user.id).execute();
  assert.equal(await readEpoch(db), before);

  // A transaction changing many rows moves it (once, on PostgreSQL).
  const many = (await readEpoch(db))!;
  await db.transaction().execute(async (trx) => {
    for (const u of [roles.guest, roles.reporter, roles.developer]) {
      await trx.updateTable('users').set({ bio: 'epoch' }).where('id', '=', u.user.id).execute();
    }
  });
  const after = (await readEpoch(db))!;
  assert.ok(after > many);
  if (postgres) assert.equal(after, many + 1);
  // Rolled back, nothing moves.
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('users').set({ bio: 'undone' }).where('id', '=', roles.guest.user.id).execute();
    throw new Error('undo');
  }).catch(() => {});
  assert.equal(await readEpoch(db), after);

  // Straight to the database, as the command line or another machine would (no announcement to this server).
  await db.updateTable('personal_access_tokens').set({ revoked: 1 }).where('user_id', '=', roles.developer.user.id).execute();
  assert.ok((await readEpoch(db))! > before);
  const revoked = await create(roles.developer.token, 'four');
  assert.equal(revoked.status, 401);
  assert.deepEqual(revoked.body, { error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });

  await db.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', project.id).where('user_id', '=', roles.reporter.user.id).execute();
  const removed = await create(roles.reporter.token, 'four');
  assert.equal(removed.status, 404);
  assert.deepEqual(removed.body, { message: '404 Project Not Found' });

  await db.updateTable('users').set({ state: 'blocked' }).where('id', '=', roles.guest.user.id).execute();
  const blocked = await create(roles.guest.token, 'four');
  assert.equal(blocked.status, 403);
  assert.deepEqual(blocked.body, { message: '403 Forbidden - Your account has been blocked.' });

  const titles = (await db.selectFrom('issues').select('title').where('project_id', '=', project.id).execute()).map((r) => r.title);
  assert.equal(titles.filter((x) => x === 'four').length, 0, 'no refused request wrote anything');
  assert.equal(titles.length, 7);
});

test('without its row (a database emptied by hand) nothing is reused by epoch, and writes still see every change', async () => {
  const project = await makeProject(t.app, { visibility: 0, path: 'epoch-gone' });
  const roles = await castRoles(t.app, project);
  const db = t.app.db;
  await db.deleteFrom('read_epoch').execute();
  try {
    const create = (title: string) => call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.maintainer.token, body: { title } });
    assert.equal((await create('one')).status, 201);
    assert.equal((await create('two')).status, 201);
    await db.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', project.id).where('user_id', '=', roles.maintainer.user.id).execute();
    assert.equal((await create('three')).status, 404);
  } finally {
    await db.insertInto('read_epoch').values({ id: 1, value: 0 }).execute();
  }
});
