// Long-lived git processes, one per repository and kind per worker: `git cat-file --batch` reads objects and
// `git update-ref --stdin` applies ref transactions, each without starting a process per call. They are started
// through spawnGit (argument arrays, the fixed environment) and owned by the Repository object, which alone asks
// them anything. A request that gets no answer in time kills its process; a process that dies fails every request
// it holds with a GitError (never a wrong answer) and the next request starts a new one. A process idle for a while
// ends; at most `limits.max` of each kind live per worker (the least recently used idle one ends first).
import type { ChildProcess } from 'node:child_process';
import { spawnGit, GitError } from './command.ts';

const limits = {
  /** A process with nothing to do for this long ends. */
  idleMs: 15_000,
  /** A request unanswered for this long kills its process. */
  requestTimeoutMs: 20_000,
  /** Processes of each kind per worker. */
  max: 16,
};

/** Server-wide limits of the long-lived processes (start-up, or a test that waits for an idle end). */
export function configureGitSessions(opts: Partial<typeof limits>): void {
  Object.assign(limits, Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)));
}

export type SessionKind = 'cat-file' | 'update-ref';

const ARGS: Record<SessionKind, string[]> = {
  'cat-file': ['cat-file', '--batch'],
  'update-ref': ['update-ref', '--no-deref', '--stdin'],
};

/** One request: what is written, and a reader that takes bytes from the front of the output until it is answered. */
interface Pending {
  /** Given the buffered output, the bytes it used and its answer, or null while more is needed. */
  read: (buf: Buffer) => { used: number; value: unknown } | null;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

let started = 0;
/** How many long-lived processes this worker has started (tests use it to prove reuse and replacement). */
export function sessionStartCount(): number {
  return started;
}

export class GitSession {
  private child: ChildProcess | null = null;
  private queue: Pending[] = [];
  private out: Buffer = Buffer.alloc(0);
  private stderr = '';
  private idle: NodeJS.Timeout | null = null;
  private dead = false;
  lastUsed = 0;

  constructor(readonly kind: SessionKind, readonly gitDir: string) {}

  get busy(): boolean {
    return this.queue.length > 0;
  }

  /** The running process's id (undefined before the first request). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return !this.dead;
  }

  private start(): ChildProcess {
    started++;
    const args = ARGS[this.kind];
    const child = spawnGit(args, { gitDir: this.gitDir });
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr] as Array<{ unref?: () => void } | null>) s?.unref?.();
    child.stdout!.on('data', (chunk: Buffer) => this.onData(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      if (this.stderr.length < 16 * 1024) this.stderr += chunk.toString('utf8');
    });
    child.stdin!.on('error', () => {});
    child.on('error', (e) => this.fail(new GitError(`git ${args.join(' ')}: ${e.message}`, args, null, this.stderr, 'spawn')));
    child.on('close', (code, signal) => {
      const first = this.stderr.trim().split('\n')[0] ?? '';
      this.fail(new GitError(`git ${args.slice(0, 2).join(' ')} ended (${code ?? signal}): ${first}`, args, code, this.stderr));
    });
    return child;
  }

  /** Sends `input` and resolves with what `read` makes of the output that follows it. */
  request<T>(input: string, read: (buf: Buffer) => { used: number; value: T } | null, timeoutMs = limits.requestTimeoutMs): Promise<T> {
    if (this.dead) return Promise.reject(new GitError(`git ${this.kind} session ended`, ARGS[this.kind], null, this.stderr));
    this.child ??= this.start();
    this.lastUsed = Date.now();
    if (this.idle) clearTimeout(this.idle), (this.idle = null);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new GitError(`git ${this.kind}: no answer after ${timeoutMs} ms`, ARGS[this.kind], null, this.stderr, 'timeout'));
      }, timeoutMs);
      this.queue.push({ read, resolve: resolve as (v: unknown) => void, reject, timer });
      this.child!.stdin!.write(input);
    });
  }

  private onData(chunk: Buffer): void {
    this.out = this.out.length ? Buffer.concat([this.out, chunk]) : chunk;
    while (this.queue.length) {
      const head = this.queue[0]!;
      let r: { used: number; value: unknown } | null;
      try {
        r = head.read(this.out);
      } catch (e) {
        // Output that is not what the protocol says: nothing after it can be trusted.
        return this.fail(e instanceof Error ? e : new Error(String(e)));
      }
      if (!r) break;
      this.queue.shift();
      clearTimeout(head.timer);
      this.out = this.out.subarray(r.used);
      head.resolve(r.value);
    }
    if (!this.queue.length && this.out.length) {
      return this.fail(new GitError(`git ${this.kind}: unexpected output`, ARGS[this.kind], null, this.stderr));
    }
    if (!this.queue.length) this.armIdle();
  }

  private armIdle(): void {
    if (this.idle || this.dead) return;
    this.idle = setTimeout(() => this.end(), limits.idleMs);
    this.idle.unref();
  }

  /** Fails every waiting request, kills the process and leaves the session dead (its pool entry is replaced). */
  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = true;
    if (this.idle) clearTimeout(this.idle);
    const waiting = this.queue;
    this.queue = [];
    for (const p of waiting) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.child?.kill('SIGKILL');
    forget(this);
  }

  /** Ends the process: stdin closed (git finishes what it was told and exits), killed if it does not. */
  end(): void {
    if (this.dead) return;
    this.dead = true;
    if (this.idle) clearTimeout(this.idle);
    forget(this);
    const child = this.child;
    for (const p of this.queue.splice(0)) {
      clearTimeout(p.timer);
      p.reject(new GitError(`git ${this.kind} session ended`, ARGS[this.kind], null, this.stderr));
    }
    if (!child) return;
    child.stdin!.end();
    const t = setTimeout(() => child.kill('SIGKILL'), 2_000);
    t.unref();
    child.once('close', () => clearTimeout(t));
  }
}

const pools: Record<SessionKind, Map<string, GitSession>> = { 'cat-file': new Map(), 'update-ref': new Map() };

function forget(s: GitSession): void {
  const pool = pools[s.kind];
  if (pool.get(s.gitDir) === s) pool.delete(s.gitDir);
}

/**
 * The live session of `kind` for the repository, started when there is none; null when the worker already has its
 * most and every one of them is answering (the caller runs a process of its own then).
 */
export function sessionFor(kind: SessionKind, gitDir: string): GitSession | null {
  const pool = pools[kind];
  const held = pool.get(gitDir);
  if (held?.alive) {
    // Kept in use order: the first entry is the least recently used.
    pool.delete(gitDir);
    pool.set(gitDir, held);
    return held;
  }
  while (pool.size >= limits.max) {
    const spare = [...pool.values()].find((s) => !s.busy);
    if (!spare) return null;
    spare.end();
  }
  const s = new GitSession(kind, gitDir);
  pool.set(gitDir, s);
  return s;
}

/** Ends the repository's sessions (its directory is being removed or renamed). */
export function endSessionsOf(gitDir: string): void {
  for (const pool of Object.values(pools)) pool.get(gitDir)?.end();
}

/** Ends every session of this worker (shutting down). */
export function endAllSessions(): void {
  for (const pool of Object.values(pools)) for (const s of [...pool.values()]) s.end();
}

/** How many sessions of each kind are alive (tests and metrics). */
export function liveSessions(kind: SessionKind): number {
  return pools[kind].size;
}
