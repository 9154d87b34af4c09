import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeGroup, makeIssue, makeProject, quickUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { AUTOMATIC_CADENCES } from './iterations.routes.ts';

// The test clock stands at 2026-06-01T12:00:00Z, a Monday.
let t: TestApp;
let admin: string;
before(async () => {
  t = await buildTestApp();
  admin = (await quickUser(t.app, { admin: true })).token;
});
after(async () => { await t.close(); });

const day = (s: string) => Date.parse(`${s}T00:00:00Z`);
const clock = () => t.clock as ManualClock;
const jobs = () => t.app.db.selectFrom('jobs').select(['state', 'run_at', 'unique_key']).where('kind', '=', AUTOMATIC_CADENCES).orderBy('id').execute();
const iterationsOf = async (cadenceId: number) =>
  (await t.app.db.selectFrom('iterations').select(['id', 'start_date', 'due_date', 'sequence']).where('cadence_id', '=', cadenceId).orderBy('start_date').execute())
    .map((i) => ({ ...i, start: new Date(i.start_date).toISOString().slice(0, 10), due: new Date(i.due_date).toISOString().slice(0, 10) }));
const issueRow = (id: number) => t.app.db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

test('each day automatic cadences keep their iterations in advance, and roll_over moves the open issues of a closed iteration', async () => {
  const group = await makeGroup(t.app);
  const project = await makeProject(t.app, { namespace: group });
  const cadence = async (body: Record<string, unknown>) => {
    const r = await call(t.app, 'POST', `/groups/${group.id}/iteration_cadences`, { token: admin, body: { start_date: '2026-06-01', duration_in_weeks: 1, iterations_in_advance: 2, ...body } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as number;
  };
  const rolling = await cadence({ title: 'rolling', roll_over: true });
  const still = await cadence({ title: 'still', roll_over: false });
  const manual = await cadence({ title: 'manual', automatic: false });
  const [current, next] = await iterationsOf(rolling);
  assert.deepEqual((await iterationsOf(rolling)).map((i) => [i.start, i.due]), [['2026-06-01', '2026-06-07'], ['2026-06-08', '2026-06-14'], ['2026-06-15', '2026-06-21']]);
  const [stillCurrent] = await iterationsOf(still);
  const open = await makeIssue(t.app, project, { iterationId: current.id });
  const closed = await makeIssue(t.app, project, { iterationId: current.id, state: 'closed' });
  const ahead = await makeIssue(t.app, project, { iterationId: next.id });
  const stays = await makeIssue(t.app, project, { iterationId: stillCurrent.id });

  // Starting the queue (in every process) queues tomorrow's run once.
  await t.app.jobs.scheduleRecurring();
  await t.app.jobs.scheduleRecurring();
  assert.deepEqual(await jobs(), [{ state: 'queued', run_at: day('2026-06-02'), unique_key: `${AUTOMATIC_CADENCES}@2026-06-02T00:00:00.000Z` }]);

  // Tuesday: nothing closed; the run keeps the schedule and queues Wednesday's.
  clock().set(day('2026-06-02') + 1000);
  await t.app.jobs.drain();
  assert.equal((await iterationsOf(rolling)).length, 3);
  assert.equal((await issueRow(open.id)).iteration_id, current.id);
  assert.deepEqual((await jobs()).map((j) => [j.state, j.run_at]), [['succeeded', day('2026-06-02')], ['queued', day('2026-06-03')]]);

  // The next Monday (runs of Wednesday to Sunday missed): the first iteration closed on Sunday night.
  clock().set(day('2026-06-08') + 60_000);
  await t.app.jobs.drain();
  const after = await iterationsOf(rolling);
  assert.deepEqual(after.map((i) => [i.start, i.due, i.sequence]), [
    ['2026-06-01', '2026-06-07', 1], ['2026-06-08', '2026-06-14', 2], ['2026-06-15', '2026-06-21', 3], ['2026-06-22', '2026-06-28', 4],
  ]);
  assert.equal((await iterationsOf(still)).length, 4);
  assert.equal((await iterationsOf(manual)).length, 0);
  const moved = await issueRow(open.id);
  assert.deepEqual([moved.iteration_id, moved.updated_at], [next.id, t.clock.now()]);
  assert.equal((await issueRow(closed.id)).iteration_id, current.id);
  assert.equal((await issueRow(ahead.id)).iteration_id, next.id);
  assert.equal((await issueRow(stays.id)).iteration_id, stillCurrent.id);
  const notes = await call(t.app, 'GET', `/projects/${project.id}/issues/${open.iid}/notes`, { token: admin });
  assert.deepEqual(notes.body.map((n: any) => [n.body, n.system, n.author]), [[`changed iteration to *iteration:${next.id}`, true, null]]);
  assert.deepEqual((await jobs()).map((j) => [j.state, j.run_at]), [['succeeded', day('2026-06-02')], ['succeeded', day('2026-06-03')], ['queued', day('2026-06-09')]]);

  // The following day nothing more moves: the closed iteration was handled.
  const back = await makeIssue(t.app, project, { iterationId: current.id });
  clock().set(day('2026-06-09') + 60_000);
  await t.app.jobs.drain();
  assert.equal((await issueRow(back.id)).iteration_id, current.id);
  assert.equal((await issueRow(open.id)).iteration_id, next.id);
  clock().set(Date.parse('2026-06-01T12:00:00Z'));
});
