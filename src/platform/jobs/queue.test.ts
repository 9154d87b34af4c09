import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { ManualClock } from '../clock.ts';
import { JobQueue, backoffMs, dailyAt } from './queue.ts';

let t: TestApp;
let clock: ManualClock;
before(async () => {
  clock = new ManualClock(Date.parse('2026-06-01T12:00:00Z'));
  t = await buildTestApp({ clock });
});
after(() => t.close());

/** A queue of its own on the test database, with kinds that record what ran. */
function queue(o: { pollMs?: number } = {}) {
  const q = new JobQueue({ db: t.app.db, clock, pollMs: o.pollMs ?? 10 });
  const ran: Array<{ kind: string; args: unknown; attempt: number }> = [];
  return { q, ran };
}

const jobsOf = (kind: string) => t.app.db.selectFrom('jobs').selectAll().where('kind', '=', kind).orderBy('id').execute();

test('a queued job runs once with its arguments and ends succeeded', async () => {
  const { q, ran } = queue();
  q.define('greet', { async run(args, ctx) { ran.push({ kind: 'greet', args, attempt: ctx.job.attempts }); } });
  const id = await q.enqueue(t.app.db, 'greet', { name: 'ada' });
  assert.ok(id);
  const [queued] = await jobsOf('greet');
  assert.deepEqual([queued.state, queued.attempts, queued.run_at], ['queued', 0, clock.now()]);
  await q.drain();
  await q.drain();
  assert.deepEqual(ran, [{ kind: 'greet', args: { name: 'ada' }, attempt: 1 }]);
  const [done] = await jobsOf('greet');
  assert.deepEqual([done.state, done.attempts, done.locked_by, done.finished_at], ['succeeded', 1, null, clock.now()]);
});

test('a job due later waits for its time', async () => {
  const { q, ran } = queue();
  q.define('later', { async run(args) { ran.push({ kind: 'later', args, attempt: 0 }); } });
  await q.enqueue(t.app.db, 'later', 1, { runAt: clock.now() + 60_000 });
  await q.drain();
  assert.equal(ran.length, 0);
  clock.advance(60_000);
  await q.drain();
  assert.equal(ran.length, 1);
});

test('a unique key is queued once while it waits or runs, and again once it finished', async () => {
  const { q } = queue();
  q.define('uniq', { async run() {} });
  const first = await q.enqueue(t.app.db, 'uniq', {}, { uniqueKey: 'uniq:1' });
  assert.ok(first);
  assert.equal(await q.enqueue(t.app.db, 'uniq', {}, { uniqueKey: 'uniq:1' }), null);
  assert.ok(await q.enqueue(t.app.db, 'uniq', {}, { uniqueKey: 'uniq:2' }));
  await q.drain();
  assert.ok(await q.enqueue(t.app.db, 'uniq', {}, { uniqueKey: 'uniq:1' }));
  assert.deepEqual((await jobsOf('uniq')).map((j) => [j.unique_key, j.state]), [['uniq:1', 'succeeded'], ['uniq:2', 'succeeded'], ['uniq:1', 'queued']]);
});

test('a run that asks to run again goes back to the queue at that time, keeping its unique key and its attempt', async () => {
  const { q, ran } = queue();
  let more = 1;
  q.define('again', { async run(args, ctx) { ran.push({ kind: 'again', args, attempt: ctx.job.attempts }); if (more-- > 0) ctx.runAgainAt(clock.now() + 5_000); } });
  assert.ok(await q.enqueue(t.app.db, 'again', { n: 1 }, { uniqueKey: 'again:1' }));
  await q.drain();
  const [waiting] = await jobsOf('again');
  assert.deepEqual([waiting.state, waiting.run_at, waiting.attempts, waiting.locked_by], ['queued', clock.now() + 5_000, 0, null]);
  // Queued again meanwhile: the waiting run is shared.
  assert.equal(await q.enqueue(t.app.db, 'again', { n: 1 }, { uniqueKey: 'again:1' }), null);
  await q.drain();
  assert.equal(ran.length, 1);
  clock.advance(5_000);
  await q.drain();
  assert.deepEqual(ran, [{ kind: 'again', args: { n: 1 }, attempt: 1 }, { kind: 'again', args: { n: 1 }, attempt: 1 }]);
  assert.deepEqual((await jobsOf('again')).map((j) => [j.state, j.attempts]), [['succeeded', 1]]);
});

test('a job queued in a transaction that rolls back does not exist', async () => {
  const { q } = queue();
  q.define('rolled', { async run() {} });
  await assert.rejects(t.app.db.transaction().execute(async (trx) => {
    await q.enqueue(trx, 'rolled', {});
    throw new Error('changed my mind');
  }), /changed my mind/);
  assert.equal((await jobsOf('rolled')).length, 0);
});

test('a failing job is retried after a growing backoff, then dead with its last error', async () => {
  const { q } = queue();
  let runs = 0;
  q.define('flaky', { maxAttempts: 3, async run() { runs++; throw new Error(`broken ${runs}`); } });
  await q.enqueue(t.app.db, 'flaky', {});
  await q.drain();
  let [j] = await jobsOf('flaky');
  assert.equal(j.state, 'queued');
  assert.equal(j.attempts, 1);
  assert.match(j.last_error!, /^Error: broken 1/);
  const wait1 = j.run_at - clock.now();
  assert.ok(wait1 >= 2000 && wait1 <= 2400, `first backoff ${wait1}`);
  await q.drain();
  assert.equal(runs, 1, 'not before its time');
  clock.advance(wait1);
  await q.drain();
  [j] = await jobsOf('flaky');
  const wait2 = j.run_at - clock.now();
  assert.ok(wait2 >= 4000 && wait2 <= 4800, `second backoff ${wait2}`);
  clock.advance(wait2);
  await q.drain();
  [j] = await jobsOf('flaky');
  assert.deepEqual([j.state, j.attempts, runs, j.finished_at], ['dead', 3, 3, clock.now()]);
  assert.match(j.last_error!, /^Error: broken 3/);
  clock.advance(3_600_000);
  await q.drain();
  assert.equal(runs, 3, 'a dead job never runs again');
});

test('backoff doubles per attempt and stops growing at an hour', () => {
  for (let a = 1; a < 30; a++) {
    const b = backoffMs(a);
    const base = Math.min(3_600_000, 1000 * 2 ** a);
    assert.ok(b >= base && b <= base * 1.2, `${a}: ${b}`);
  }
});

test('a job whose runner died (lease ran out) is claimed again; on its last attempt it is dead instead', async () => {
  const { q } = queue();
  let runs = 0;
  q.define('orphan', { maxAttempts: 2, async run() { runs++; } });
  await q.enqueue(t.app.db, 'orphan', { n: 1 });
  await q.enqueue(t.app.db, 'orphan', { n: 2 });
  // Claimed by a process that died: running, its lease in the past (job 1 on its first attempt, job 2 on its last).
  const [a, b] = await jobsOf('orphan');
  await t.app.db.updateTable('jobs').set({ state: 'running', locked_by: 'gone:1', locked_until: clock.now() + 60_000, attempts: 1 }).where('id', '=', a.id).execute();
  await t.app.db.updateTable('jobs').set({ state: 'running', locked_by: 'gone:1', locked_until: clock.now() + 60_000, attempts: 2, last_error: null }).where('id', '=', b.id).execute();
  await q.drain();
  assert.equal(runs, 0, 'a lease that holds is respected');
  clock.advance(60_001);
  await q.drain();
  assert.equal(runs, 1);
  const [ra, rb] = await jobsOf('orphan');
  assert.deepEqual([ra.state, ra.attempts], ['succeeded', 2]);
  assert.deepEqual([rb.state, rb.attempts, rb.last_error], ['dead', 3, 'lease expired']);
});

test('claims take a job whose lease ran out before a backlog of due jobs, then the backlog oldest first', async () => {
  const { q } = queue();
  const order: number[] = [];
  q.define('backlog', { concurrency: 1, async run(args: { n: number }) { order.push(args.n); } });
  // Queued at falling run_at (the last one queued is the oldest due), and one more due only later.
  for (let n = 1; n <= 5; n++) await q.enqueue(t.app.db, 'backlog', { n }, { runAt: clock.now() - n * 1000 });
  await q.enqueue(t.app.db, 'backlog', { n: 6 }, { runAt: clock.now() + 60_000 });
  // Job 3 was claimed by a process that died; its lease ran out.
  const job3 = (await jobsOf('backlog'))[2]!;
  await t.app.db.updateTable('jobs').set({ state: 'running', locked_by: 'gone:1', locked_until: clock.now() - 1, attempts: 1 }).where('id', '=', job3.id).execute();
  await q.drain();
  assert.deepEqual(order, [3, 5, 4, 2, 1]);
  assert.deepEqual((await jobsOf('backlog')).map((j) => j.state), ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded', 'queued']);
});

test('a runner that lost its lease cannot overwrite the new holder', async () => {
  const { q } = queue();
  let release!: () => void;
  q.define('slow', { async run() { await new Promise<void>((r) => { release = r; }); } });
  await q.enqueue(t.app.db, 'slow', {});
  const draining = q.drain();
  while (!release) await new Promise((r) => setTimeout(r, 5));
  // Another runner took the job over meanwhile (this one's lease had run out).
  await t.app.db.updateTable('jobs').set({ locked_by: 'other:2' }).where('kind', '=', 'slow').execute();
  release();
  await draining;
  const [j] = await jobsOf('slow');
  assert.deepEqual([j.state, j.locked_by], ['running', 'other:2']);
});

test('at most `concurrency` jobs of a kind run at once in a process', async () => {
  const { q } = queue();
  let now = 0;
  let peak = 0;
  q.define('narrow', { concurrency: 2, async run() { now++; peak = Math.max(peak, now); await new Promise((r) => setTimeout(r, 15)); now--; } });
  for (let i = 0; i < 7; i++) await q.enqueue(t.app.db, 'narrow', { i });
  await q.drain();
  assert.equal(peak, 2);
  assert.deepEqual((await jobsOf('narrow')).map((j) => j.state), Array(7).fill('succeeded'));
});

test('stopping lets running jobs finish within the grace time, then gives the rest back with their attempt', async () => {
  const { q } = queue({ pollMs: 5 });
  const seen: string[] = [];
  // Both are known to have started from inside them, not from a poll of the table that a slow machine may miss.
  const starts: Array<() => void> = [];
  const started = [new Promise<void>((r) => starts.push(r)), new Promise<void>((r) => starts.push(r))];
  q.define('quick', { async run() { starts[0](); await new Promise((r) => setTimeout(r, 20)); seen.push('quick done'); } });
  q.define('endless', {
    async run(_args, ctx) {
      starts[1]();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      seen.push('endless aborted');
      throw new Error('aborted');
    },
  });
  await q.enqueue(t.app.db, 'quick', {});
  await q.enqueue(t.app.db, 'endless', {});
  q.start();
  await Promise.all(started);
  await q.stop(100);
  assert.deepEqual(seen.sort(), ['endless aborted', 'quick done']);
  const [quick] = await jobsOf('quick');
  const [endless] = await jobsOf('endless');
  assert.equal(quick.state, 'succeeded');
  assert.deepEqual([endless.state, endless.attempts, endless.locked_by, endless.last_error], ['queued', 0, null, null]);
});

test('a started queue runs what is queued without being asked', async () => {
  const { q } = queue({ pollMs: 1000 });
  const done = new Promise<unknown>((resolve) => q.define('woken', { async run(args) { resolve(args); } }));
  q.start();
  await q.enqueue(t.app.db, 'woken', { soon: true });
  assert.deepEqual(await done, { soon: true });
  await q.stop();
});

test('an unknown kind is refused when queued', async () => {
  const { q } = queue();
  await assert.rejects(q.enqueue(t.app.db, 'nothing-runs-this', {}), /unknown job kind/);
});

test('dailyAt: the first such moment strictly after', () => {
  const at = dailyAt(0);
  assert.equal(at(Date.parse('2026-06-01T12:00:00Z')), Date.parse('2026-06-02T00:00:00Z'));
  assert.equal(at(Date.parse('2026-06-02T00:00:00Z')), Date.parse('2026-06-03T00:00:00Z'));
  assert.equal(at(Date.parse('2026-06-01T23:59:59.999Z')), Date.parse('2026-06-02T00:00:00Z'));
  assert.equal(dailyAt(6, 30)(Date.parse('2026-06-01T05:00:00Z')), Date.parse('2026-06-01T06:30:00Z'));
});

test('a recurring kind: queued once however many processes start, each run queues the next, a failing run too', async () => {
  const a = queue();
  const b = queue();
  const runs: number[] = [];
  let fail = false;
  for (const { q } of [a, b]) {
    q.define('tick', {
      recurs: dailyAt(0), maxAttempts: 1,
      async run(args, ctx) {
        assert.deepEqual(args, { at: ctx.job.run_at });
        runs.push(ctx.job.run_at);
        if (fail) throw new Error('bad day');
      },
    });
  }
  const day = (s: string) => Date.parse(`${s}T00:00:00Z`);
  await a.q.scheduleRecurring();
  await b.q.scheduleRecurring();
  await a.q.scheduleRecurring();
  assert.deepEqual((await jobsOf('tick')).map((j) => [j.state, j.run_at, j.unique_key]), [['queued', day('2026-06-02'), 'tick@2026-06-02T00:00:00.000Z']]);
  await a.q.drain();
  assert.deepEqual(runs, []);
  clock.set(day('2026-06-02') + 5_000);
  await b.q.drain();
  await a.q.drain();
  assert.deepEqual(runs, [day('2026-06-02')]);
  // A process starting now finds the next run already queued.
  await a.q.scheduleRecurring();
  assert.deepEqual((await jobsOf('tick')).map((j) => [j.state, j.run_at]), [['succeeded', day('2026-06-02')], ['queued', day('2026-06-03')]]);
  fail = true;
  clock.set(day('2026-06-03') + 1);
  await a.q.drain();
  assert.deepEqual((await jobsOf('tick')).map((j) => [j.state, j.run_at]), [['succeeded', day('2026-06-02')], ['dead', day('2026-06-03')], ['queued', day('2026-06-04')]]);
  // Three days late (no process ran): one run, and the next is tomorrow's, not a backlog.
  fail = false;
  clock.set(day('2026-06-07') + 3_600_000);
  await a.q.drain();
  assert.deepEqual(runs.slice(-1), [day('2026-06-04')]);
  assert.deepEqual((await jobsOf('tick')).slice(-1).map((j) => [j.state, j.run_at]), [['queued', day('2026-06-08')]]);
  clock.set(Date.parse('2026-06-01T12:00:00Z'));
});

test('enqueueAll queues every job in the caller\'s transaction, or none when it rolls back', async () => {
  const { q, ran } = queue();
  q.define('all-a', { maxAttempts: 3, async run(args) { ran.push({ kind: 'all-a', args, attempt: 0 }); } });
  q.define('all-b', { async run(args) { ran.push({ kind: 'all-b', args, attempt: 0 }); } });
  await assert.rejects(t.app.db.transaction().execute(async (trx) => {
    await q.enqueueAll(trx, [{ kind: 'all-a', args: { n: 0 } }, { kind: 'all-b', args: { n: 0 } }]);
    throw new Error('rolled back');
  }), /rolled back/);
  assert.deepEqual([...await jobsOf('all-a'), ...await jobsOf('all-b')], []);
  await t.app.db.transaction().execute((trx) => q.enqueueAll(trx, [{ kind: 'all-a', args: { n: 1 } }, { kind: 'all-b', args: { n: 1 } }]));
  const [a] = await jobsOf('all-a');
  const [b] = await jobsOf('all-b');
  assert.deepEqual([a.state, a.attempts, a.max_attempts, a.run_at, a.unique_key, JSON.parse(a.args)], ['queued', 0, 3, clock.now(), null, { n: 1 }]);
  assert.deepEqual([b.state, b.max_attempts, JSON.parse(b.args)], ['queued', 5, { n: 1 }]);
  assert.ok(a.id < b.id);
  await assert.rejects(q.enqueueAll(t.app.db, [{ kind: 'all-a', args: {} }, { kind: 'nope', args: {} }]), /unknown job kind nope/);
  assert.equal((await jobsOf('all-a')).length, 1);
  await q.drain();
  assert.deepEqual(ran.map((r) => [r.kind, r.args]).sort(), [['all-a', { n: 1 }], ['all-b', { n: 1 }]]);
});
