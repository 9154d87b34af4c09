import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call } from '../../../test/support/app.ts';
import { makeIssue, makeLabel, makeProject, quickUser } from '../../../test/support/fixtures.ts';
import { dialectOf, plannedForValues, PLANNED_FOR_VALUES } from './dialect.ts';

// Statements marked `plannedForValues` are planned for their values at every execution on PostgreSQL (sent unnamed,
// never kept as a prepared statement, so never switched to a generic plan); the others are prepared once per
// connection. On SQLite the mark changes nothing.

test('a marked statement is never kept prepared on PostgreSQL; the same rows either way', async () => {
  const t = await buildTestApp();
  try {
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { owner: user.user });
    for (const title of ['Crash on start', 'Slow login', 'crash again']) await makeIssue(t.app, project, { title });
    const db = t.app.db;
    const postgres = dialectOf(db) === 'postgres';
    const base = () => db.selectFrom('issues').select('title').where('project_id', '=', project.id).where(sql<boolean>`lower(title) like ${'%crash%'}`).orderBy('id');
    const marked = plannedForValues(db, base());
    assert.equal(marked.compile().sql.includes(PLANNED_FOR_VALUES), postgres);
    await db.transaction().execute(async (trx) => {
      // One connection: what it keeps prepared is its own.
      const inTrx = (q: ReturnType<typeof base>) => trx.executeQuery(q.compile());
      for (let i = 0; i < 7; i++) {
        assert.deepEqual((await inTrx(marked)).rows, [{ title: 'Crash on start' }, { title: 'crash again' }]);
        assert.deepEqual((await inTrx(base())).rows, [{ title: 'Crash on start' }, { title: 'crash again' }]);
      }
      if (!postgres) return;
      const kept = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(trx)).rows.map((r) => r.statement);
      assert.ok(kept.includes(base().compile().sql), 'the unmarked statement is prepared');
      assert.ok(!kept.some((s) => s.includes(PLANNED_FOR_VALUES)), 'the marked statement is not');
    });
    // The issue list with a search term: its list and its count are marked, and it answers as before.
    const label = await makeLabel(t.app, { projectId: project.id, title: 'bug' });
    await makeIssue(t.app, project, { title: 'crash with label', labels: [label.id] });
    for (let i = 0; i < 7; i++) {
      const r = await call(t.app, 'GET', `/projects/${project.id}/issues`, { token: user.token, query: { labels: 'bug', state: 'opened', search: 'crash', per_page: String(1 + (i % 2)) } });
      assert.equal(r.status, 200);
      assert.deepEqual([r.body.map((x: any) => x.title), r.headers['x-total']], [['crash with label'], '1']);
    }
    if (postgres) {
      // Whichever pool connection answers; the one the transaction above used keeps that test's own unmarked statement.
      const ours = base().compile().sql;
      const kept = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement).filter((s) => s !== ours);
      assert.ok(!kept.some((s) => s.includes('like') && s.includes('"issues"')), `no search of issues is kept prepared: ${kept.filter((s) => s.includes('like')).join(' | ')}`);
    }
  } finally {
    await t.close();
  }
});
