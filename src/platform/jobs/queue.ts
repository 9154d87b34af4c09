import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/index.ts';
import type { JobsTable } from '../db/schema.ts';
import { dialectOf } from '../db/dialect.ts';
import type { Clock } from '../clock.ts';

// The durable job queue: background work as rows of `jobs`, so that it survives restarts and runs once.
//
// - Claiming takes due jobs (queued and due, or running with a lease that ran out: their process died) and leases
//   them to this runner, in one transaction: `FOR UPDATE SKIP LOCKED` on PostgreSQL, so several processes or
//   machines share one queue without waiting on each other; on SQLite the transaction is immediate (it holds the
//   write lock from its start), which serialises claims between processes.
// - A running job's lease is extended by heartbeats; every state change after the claim is conditional on this
//   runner still holding it, so a runner that lost its lease can never overwrite what the new holder did.
// - A failure is retried after an exponential backoff until the kind's attempt limit, then the job is `dead`.
// - Stopping stops claiming, lets running jobs finish for a while, then gives the others back (with their attempt).
// - A recurring kind (`recurs`) has one run queued per run time: starting the queue queues the next one, and each run
//   queues the one after it as it starts. The run time is in the unique key, so however many processes start, each
//   run time is queued once.

export type JobRow = Selectable<JobsTable>;

export interface JobContext {
  job: JobRow;
  /** Aborted when the runner stops before the job finished; a long job should give up at the next safe point. */
  signal: AbortSignal;
  /**
   * Asks for one more run of this job at `at` (epoch ms) once this run returns: the row goes back to the queue
   * instead of finishing, keeping its unique key (queueing the key meanwhile still finds it waiting) and its attempt.
   */
  runAgainAt(at: number): void;
}

export interface JobKind<A = any> {
  /** At most this many attempts (a lease that ran out counts as one), then `dead`. */
  maxAttempts?: number;
  /** At most this many jobs of the kind at once in one process. */
  concurrency?: number;
  /** How long a claim holds without a heartbeat (ms). */
  leaseMs?: number;
  /** A kind that runs by itself: the time of its next run after a moment (epoch ms), e.g. `dailyAt(0)`. Its args are `{ at }`, the run time. */
  recurs?: (after: number) => number;
  /**
   * Whether a job of the kind for `args` would do anything, asked by `wanted` inside the transaction that would queue
   * it (an event's subscriber with nobody to tell is not queued). Answering true when unsure is always right.
   */
  wanted?: (db: Db, args: A) => Promise<boolean>;
  run(args: A, ctx: JobContext): Promise<void>;
}

/** Every day at hh:mm UTC: the first such moment strictly after `after`. */
export function dailyAt(hour = 0, minute = 0): (after: number) => number {
  const offset = (hour * 60 + minute) * 60_000;
  return (after) => {
    const day = Math.floor(after / 86_400_000) * 86_400_000;
    return day + offset > after ? day + offset : day + 86_400_000 + offset;
  };
}

type KindDef = Required<Omit<JobKind, 'run' | 'recurs' | 'wanted'>> & Pick<JobKind, 'run' | 'recurs' | 'wanted'>;

export interface EnqueueOptions {
  /** While a job with this key waits or runs, queueing another with it does nothing. */
  uniqueKey?: string;
  /** Not before this time (epoch ms). */
  runAt?: number;
}

export interface RunnerOptions {
  db: Db;
  clock: Clock;
  /** How often due jobs are looked for when nothing woke the runner (ms). */
  pollMs?: number;
  log?: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Told how each run ended and how long it took (the metrics). */
  observe?: (kind: string, outcome: 'succeeded' | 'failed' | 'dead', seconds: number) => void;
}

const DEFAULT_ATTEMPTS = 5;
const DEFAULT_LEASE_MS = 60_000;
const MAX_BACKOFF_MS = 3_600_000;
const KEEP_FINISHED_MS = 7 * 86_400_000;
const MAX_ERROR_CHARS = 4000;
/** How long after queueing a job here the runner keeps looking for it sooner than its poll. */
const SOON_MS = 2_000;

/** 2^attempts seconds, capped at an hour, with up to a fifth more at random so that retries do not arrive together. */
export function backoffMs(attempts: number): number {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(attempts, 22));
  return Math.round(base * (1 + Math.random() * 0.2));
}

export class JobQueue {
  readonly #kinds = new Map<string, KindDef>();
  readonly #running = new Map<number, { promise: Promise<void>; abort: AbortController }>();
  readonly #kindOf = new Map<number, string>();
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #log: RunnerOptions['log'];
  readonly #observe: RunnerOptions['observe'];
  /** Who holds a claim: unique per runner, readable in `bellows jobs`. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  #timer: NodeJS.Timeout | null = null;
  #started = false;
  #polling: Promise<void> | null = null;
  #lastPrune = 0;
  /** After a job is queued here: until when the runner looks again soon when it finds nothing, and how soon. */
  #soon: { until: number; delayMs: number } | null = null;

  constructor(o: RunnerOptions) {
    this.#db = o.db;
    this.#clock = o.clock;
    this.#pollMs = o.pollMs ?? 1000;
    this.#log = o.log;
    this.#observe = o.observe;
  }

  /** Declares a kind of job and what runs it. */
  define<A>(name: string, kind: JobKind<A>): void {
    if (this.#kinds.has(name)) throw new Error(`job kind ${name} is defined twice`);
    this.#kinds.set(name, { maxAttempts: DEFAULT_ATTEMPTS, concurrency: 2, leaseMs: DEFAULT_LEASE_MS, ...kind });
  }

  /** Whether a kind of job is declared in this process. */
  defines(name: string): boolean {
    return this.#kinds.has(name);
  }

  /** Whether a job of `kind` for `args` would do anything (its kind's `wanted`; true when it does not say). */
  async wanted(db: Db, kind: string, args: unknown): Promise<boolean> {
    const def = this.#kinds.get(kind);
    if (!def) throw new Error(`unknown job kind ${kind}`);
    return def.wanted ? def.wanted(db, args) : true;
  }

  /**
   * Queues a job; inside the caller's transaction when given one (`db`), so the job exists exactly when the change
   * that asks for it was committed. Answers the new job's id, or null when `uniqueKey` is already waiting or running.
   */
  async enqueue(db: Db, kind: string, args: unknown, o: EnqueueOptions = {}): Promise<number | null> {
    const def = this.#kinds.get(kind);
    if (!def) throw new Error(`unknown job kind ${kind}`);
    const now = this.#clock.now();
    const row = await db.insertInto('jobs').values({
      kind, args: JSON.stringify(args ?? null), state: 'queued', attempts: 0, max_attempts: def.maxAttempts,
      run_at: o.runAt ?? now, locked_by: null, locked_until: null, unique_key: o.uniqueKey ?? null, last_error: null,
      created_at: now, updated_at: now, finished_at: null,
      // The conflict target names the partial index by its predicate, spelled as the index spells it (no parameters:
      // PostgreSQL must prove the two the same when planning).
    }).onConflict((oc) => oc.column('unique_key').where(sql<boolean>`unique_key is not null and state in ('queued', 'running')`).doNothing())
      .returning('id').executeTakeFirst();
    if (row && this.#started) {
      // Queued inside a transaction still open, the job is not visible to a claim until its commit: the runner
      // looks again a few times soon after (20, 40, 80 ... ms) rather than waiting for its next poll.
      this.#soon = { until: performance.now() + SOON_MS, delayMs: 20 };
      this.#wake(db.isTransaction ? 0 : 20);
    }
    return row?.id ?? null;
  }

  /**
   * Queues several jobs due now, without unique keys, in one statement (inside the caller's transaction when given
   * one), e.g. one event for each of its subscribers.
   */
  async enqueueAll(db: Db, jobs: Array<{ kind: string; args: unknown }>): Promise<void> {
    if (!jobs.length) return;
    const now = this.#clock.now();
    await db.insertInto('jobs').values(jobs.map(({ kind, args }) => {
      const def = this.#kinds.get(kind);
      if (!def) throw new Error(`unknown job kind ${kind}`);
      return {
        kind, args: JSON.stringify(args ?? null), state: 'queued', attempts: 0, max_attempts: def.maxAttempts,
        run_at: now, locked_by: null, locked_until: null, unique_key: null, last_error: null, created_at: now, updated_at: now, finished_at: null,
      };
    })).execute();
    if (this.#started) {
      this.#soon = { until: performance.now() + SOON_MS, delayMs: 20 };
      this.#wake(db.isTransaction ? 0 : 20);
    }
  }

  /** Starts claiming and running jobs in the background, with the next run of each recurring kind queued. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.scheduleRecurring().catch((err) => this.#log?.error({ err }, 'queueing recurring jobs failed'));
    this.#wake(0);
  }

  /** Makes sure the next run of every recurring kind is queued (once, whoever asks). */
  async scheduleRecurring(): Promise<void> {
    for (const [name, def] of this.#kinds) if (def.recurs) await this.#queueRun(name, def.recurs(this.#clock.now()));
  }

  #queueRun(kind: string, at: number): Promise<number | null> {
    return this.enqueue(this.#db, kind, { at }, { uniqueKey: `${kind}@${new Date(at).toISOString()}`, runAt: at });
  }

  /**
   * Stops claiming; jobs still running after `graceMs` are aborted and given back to the queue (their attempt
   * returned) for another process or the next start.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#started = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#polling;
    const running = [...this.#running.entries()];
    if (!running.length) return;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => { timer = setTimeout(resolve, graceMs); });
    await Promise.race([Promise.allSettled(running.map(([, r]) => r.promise)), grace]);
    clearTimeout(timer);
    for (const [id, r] of this.#running) {
      r.abort.abort();
      await this.#db.updateTable('jobs').set({ state: 'queued', locked_by: null, locked_until: null, attempts: (eb) => eb('attempts', '-', 1), updated_at: this.#clock.now() })
        .where('id', '=', id).where('locked_by', '=', this.owner).where('state', '=', 'running').execute();
    }
  }

  /** Runs whatever is due now until nothing is (tests and `bellows jobs run`); jobs due later are left. */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.#claimAll();
      if (!claimed && !this.#running.size) return;
      await Promise.allSettled([...this.#running.values()].map((r) => r.promise));
    }
  }

  #wake(delayMs: number): void {
    if (!this.#started) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#polling = this.#poll().then((claimed) => {
        this.#polling = null;
        // Nothing found just after a job was queued here: its transaction may not have committed yet.
        const soon = this.#soon;
        if (!claimed && soon && performance.now() < soon.until) {
          soon.delayMs = Math.min(soon.delayMs * 2, this.#pollMs);
          this.#wake(soon.delayMs / 2);
        } else {
          this.#soon = null;
          this.#wake(this.#pollMs);
        }
      });
    }, delayMs);
  }

  /** Claims what is due (answers how many), and now and then removes old finished jobs. */
  async #poll(): Promise<number> {
    let claimed = 0;
    try {
      claimed = await this.#claimAll();
      const now = this.#clock.now();
      if (now - this.#lastPrune > 600_000) {
        this.#lastPrune = now;
        await this.#db.deleteFrom('jobs').where('state', 'in', ['succeeded', 'discarded']).where('finished_at', '<', now - KEEP_FINISHED_MS).execute();
      }
    } catch (err) {
      this.#log?.error({ err }, 'job queue poll failed');
    }
    return claimed;
  }

  /**
   * Claims due jobs of every kind with free slots and starts them; answers how many. One read (outside any
   * transaction) says which kinds have due jobs; only those are claimed, each in its own short transaction, so a
   * poll that finds one kind's job does not take the database's write lock once for every kind defined.
   */
  async #claimAll(): Promise<number> {
    let claimed = 0;
    const open = [...this.#kinds].filter(([name, def]) => def.concurrency - this.#runningOf(name) > 0).map(([name]) => name);
    if (!open.length) return 0;
    const due = await this.#dueKinds(open, this.#clock.now());
    for (const name of open) {
      if (!due.has(name)) continue;
      const def = this.#kinds.get(name)!;
      const free = def.concurrency - this.#runningOf(name);
      if (free <= 0) continue;
      for (const job of await this.#claim(name, free, def.leaseMs)) {
        claimed++;
        this.#start(job, def);
      }
    }
    return claimed;
  }

  #runningOf(kind: string): number {
    let n = 0;
    for (const id of this.#running.keys()) if (this.#kindOf.get(id) === kind) n++;
    return n;
  }

  /**
   * Which of `kinds` have a job due at `now` (queued and due, or running with a lease that ran out), in one read
   * outside any transaction: an existence test per kind, each a seek in the (kind, state, run_at) index, so a
   * backlog of thousands of due jobs costs a poll no more than one job does.
   */
  async #dueKinds(kinds: string[], now: number): Promise<Set<string>> {
    const tests = kinds.map((kind) => sql<{ kind: string }>`select cast(${kind} as text) as kind where exists (select 1 from jobs where kind = ${kind} and state = 'queued' and run_at <= ${now}) or exists (select 1 from jobs where kind = ${kind} and state = 'running' and locked_until < ${now})`);
    const { rows } = await sql<{ kind: string }>`${sql.join(tests, sql` union all `)}`.execute(this.#db);
    return new Set(rows.map((r) => r.kind));
  }

  async #claim(kind: string, limit: number, leaseMs: number): Promise<JobRow[]> {
    const pg = dialectOf(this.#db) === 'postgres';
    return this.#db.transaction().execute(async (trx) => {
      const now = this.#clock.now();
      // The jobs whose process died first (their lease ran out; rare), then the queued ones that are due, each in
      // claim order straight from the (kind, state, run_at, id) index.
      const pick = (state: 'running' | 'queued', n: number) => {
        let q = trx.selectFrom('jobs').select('id').where('kind', '=', kind).where('state', '=', state)
          .where(state === 'queued' ? 'run_at' : 'locked_until', state === 'queued' ? '<=' : '<', now).orderBy('run_at').orderBy('id').limit(n);
        if (pg) q = q.forUpdate().skipLocked();
        return q.execute();
      };
      const ids = (await pick('running', limit)).map((r) => r.id);
      if (ids.length < limit) ids.push(...(await pick('queued', limit - ids.length)).map((r) => r.id));
      if (!ids.length) return [];
      return trx.updateTable('jobs')
        .set({ state: 'running', locked_by: this.owner, locked_until: now + leaseMs, attempts: (eb) => eb('attempts', '+', 1), updated_at: now })
        .where('id', 'in', ids).returningAll().execute();
    });
  }

  #start(job: JobRow, def: KindDef): void {
    const abort = new AbortController();
    this.#kindOf.set(job.id, job.kind);
    const promise = this.#execute(job, def, abort.signal).finally(() => {
      this.#running.delete(job.id);
      this.#kindOf.delete(job.id);
      if (this.#started) this.#wake(0);
    });
    this.#running.set(job.id, { promise, abort });
  }

  async #execute(job: JobRow, def: KindDef, signal: AbortSignal): Promise<void> {
    const mine = () => this.#db.updateTable('jobs').where('id', '=', job.id).where('locked_by', '=', this.owner).where('state', '=', 'running');
    // Claimed again after its process died on its last allowed attempt: it is not run once more.
    if (job.attempts > job.max_attempts) {
      await mine().set({ state: 'dead', locked_by: null, locked_until: null, finished_at: this.#clock.now(), updated_at: this.#clock.now(), last_error: job.last_error ?? 'lease expired' }).execute();
      return;
    }
    const heartbeat = setInterval(() => {
      const now = this.#clock.now();
      mine().set({ locked_until: now + def.leaseMs, updated_at: now }).execute()
        .catch((err) => this.#log?.warn({ err, job: job.id }, 'job heartbeat failed'));
    }, Math.max(50, Math.floor(def.leaseMs / 3)));
    heartbeat.unref();
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      // The following run is queued before this one does anything, so that a failing run does not end the series.
      if (def.recurs) await this.#queueRun(job.kind, def.recurs(Math.max(this.#clock.now(), job.run_at)));
      let again: number | null = null;
      await def.run(JSON.parse(job.args), { job, signal, runAgainAt: (at) => { again = at; } });
      const now = this.#clock.now();
      await mine().set(again === null
        ? { state: 'succeeded', locked_by: null, locked_until: null, finished_at: now, updated_at: now, last_error: null }
        : { state: 'queued', locked_by: null, locked_until: null, run_at: again, attempts: (eb) => eb('attempts', '-', 1), updated_at: now, last_error: null }).execute();
      this.#observe?.(job.kind, 'succeeded', seconds());
    } catch (err) {
      if (signal.aborted) return; // stopping: stop() gives the job back
      const now = this.#clock.now();
      const text = (err instanceof Error ? err.stack ?? err.message : String(err)).slice(0, MAX_ERROR_CHARS);
      const dead = job.attempts >= job.max_attempts;
      this.#log?.warn({ err, job: job.id, kind: job.kind, attempt: job.attempts, dead }, 'job failed');
      this.#observe?.(job.kind, dead ? 'dead' : 'failed', seconds());
      await mine().set(dead
        ? { state: 'dead', locked_by: null, locked_until: null, finished_at: now, updated_at: now, last_error: text }
        : { state: 'queued', locked_by: null, locked_until: null, run_at: now + backoffMs(job.attempts), updated_at: now, last_error: text }).execute();
    } finally {
      clearInterval(heartbeat);
    }
  }
}
