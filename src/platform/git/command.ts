// Runs the git binary. Every call goes through here so the argument and environment rules hold everywhere:
// argv arrays (never a shell), a fixed environment, a timeout, and stderr kept for the error.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startThroughHelper, type RemoteChild } from './spawner.ts';

export interface GitRunOptions {
  /** Repository (bare) to run in; sets GIT_DIR so git never searches parent directories for another repo. */
  gitDir?: string;
  /** Working directory when no gitDir is given (e.g. `git init`). */
  cwd?: string;
  input?: Buffer | string;
  /** Extra variables on top of the fixed environment (GIT_INDEX_FILE, GIT_AUTHOR_*, GIT_PROTOCOL, hook context). */
  env?: Record<string, string>;
  timeoutMs?: number;
  maxBuffer?: number;
  /** Exit codes that are answers rather than failures (e.g. 1 for "no match"). */
  okExitCodes?: number[];
  /** On reaching maxBuffer, stop git and resolve with the output so far instead of failing. */
  truncate?: boolean;
  /**
   * Given each piece of output as it comes, whether enough is read: git is stopped there and the call resolves with
   * the output so far, `truncated` set (a bounded search stops once its page is full).
   */
  enough?: (chunk: Buffer) => boolean;
  signal?: AbortSignal;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
  /** Set when `truncate` cut the output short. */
  truncated?: boolean;
}

/** git exited badly, was killed by the timeout, or produced more output than allowed. */
export class GitError extends Error {
  override name = 'GitError';
  constructor(
    message: string,
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly reason: 'exit' | 'timeout' | 'max_buffer' | 'spawn' | 'aborted' = 'exit',
  ) {
    super(message);
  }
}

/** A caller-supplied value that git could read as an option; refused before anything is spawned. */
export class UnsafeArgumentError extends Error {
  override name = 'UnsafeArgumentError';
  constructor(readonly value: string, readonly what = 'argument') {
    super(`unsafe ${what}: ${JSON.stringify(value)}`);
  }
}

/** Refuses values git would parse as options, and NUL bytes, which argv cannot carry. */
export function assertSafeArg(value: string, what = 'argument'): string {
  if (typeof value !== 'string' || value === '' || value.startsWith('-') || value.includes('\0')) {
    throw new UnsafeArgumentError(String(value), what);
  }
  return value;
}

const settings = {
  binary: 'git',
  home: undefined as string | undefined,
  timeoutMs: 60_000,
  maxBuffer: 64 * 1024 * 1024,
  /** Whether runGit starts its processes through the helper process (spawner.ts); the application turns it on. */
  helper: false,
};

/** Server-wide defaults; call once at start-up with a server-owned home directory. */
export function configureGit(opts: { binary?: string; home?: string; timeoutMs?: number; maxBuffer?: number; helper?: boolean }): void {
  Object.assign(settings, Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)));
}

// A HOME of plain os.tmpdir() would let any local user plant /tmp/.gitconfig (core.fsmonitor and friends run
// programs), so the fallback is a private directory created once.
function home(): string {
  settings.home ??= mkdtempSync(join(tmpdir(), 'bellows-git-home-'));
  return settings.home;
}

let invocations = 0;
const invocationsByRepo = new Map<string, number>();
/**
 * Number of git processes started (in total, or with the given gitDir); tests use it to prove caching and batching.
 */
export function gitInvocationCount(gitDir?: string): number {
  return gitDir === undefined ? invocations : (invocationsByRepo.get(gitDir) ?? 0);
}

export function gitEnv(extra?: Record<string, string>, gitDir?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home(),
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    // Paths we pass are file names, never pathspec magic such as ":(glob)" or "*".
    GIT_LITERAL_PATHSPECS: '1',
  };
  if (gitDir) env.GIT_DIR = gitDir;
  return { ...env, ...extra };
}

type GitObserver = (command: string, seconds: number, ok: boolean) => void;
const observers = new Set<GitObserver>();
/** Calls `fn` as each git process ends (the metrics count git operations); returns the way to stop. */
export function onGitFinished(fn: GitObserver): () => void {
  observers.add(fn);
  return () => void observers.delete(fn);
}

/** The git subcommand of an argument list (after `-c k=v` and other global options). */
function subcommand(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') i++;
    else if (!args[i]!.startsWith('-')) return /^[a-z][a-z0-9-]{0,31}$/.test(args[i]!) ? args[i]! : 'other';
  }
  return 'other';
}

function observe(child: GitChild, args: readonly string[]): void {
  if (!observers.size) return;
  const started = process.hrtime.bigint();
  child.once('close', (code) => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    for (const fn of observers) fn(subcommand(args), seconds, code === 0);
  });
}

/** What runGit uses of a git process, whether this process started it or the helper did. */
type GitChild = Pick<ChildProcess, 'stdin' | 'stdout' | 'stderr' | 'kill' | 'on' | 'once'> | RemoteChild;

function start(args: string[], opts: GitRunOptions, stdio: StdioOptions): ChildProcess;
function start(args: string[], opts: GitRunOptions, stdio: 'helper'): GitChild;
function start(args: string[], opts: GitRunOptions, stdio: StdioOptions | 'helper'): GitChild {
  invocations++;
  if (opts.gitDir) invocationsByRepo.set(opts.gitDir, (invocationsByRepo.get(opts.gitDir) ?? 0) + 1);
  const cwd = opts.gitDir ?? opts.cwd ?? home();
  const env = gitEnv(opts.env, opts.gitDir);
  const child = (stdio === 'helper' ? startThroughHelper(settings.binary, args, cwd, env) : null)
    ?? spawn(settings.binary, args, { cwd, env, stdio: stdio === 'helper' ? 'pipe' : stdio, windowsHide: true });
  observe(child, args);
  return child;
}

function describe(args: string[]): string {
  return `git ${args.slice(0, 3).join(' ')}${args.length > 3 ? ' …' : ''}`;
}

/** Runs git to completion and buffers its output. Rejects with GitError unless the exit code is 0 or allowed. */
export function runGit(args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? settings.timeoutMs;
  const maxBuffer = opts.maxBuffer ?? settings.maxBuffer;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new GitError(`${describe(args)}: aborted`, args, null, '', 'aborted'));
    // Its output is read whole: the helper process may start it, sparing this one a fork (spawner.ts).
    const child = settings.helper ? start(args, opts, 'helper') : start(args, opts, ['pipe', 'pipe', 'pipe']);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    let failure: GitError | undefined;
    let truncated = false;
    const kill = (why: GitError) => {
      failure ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () => kill(new GitError(`${describe(args)}: timed out after ${timeoutMs} ms`, args, null, '', 'timeout')),
      timeoutMs,
    );
    const onAbort = () => kill(new GitError(`${describe(args)}: aborted`, args, null, '', 'aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout!.on('data', (chunk: Buffer) => {
      if (truncated) return;
      outLen += chunk.length;
      if (outLen <= maxBuffer) return void out.push(chunk);
      if (!opts.truncate) return kill(new GitError(`${describe(args)}: output over ${maxBuffer} bytes`, args, null, '', 'max_buffer'));
      out.push(chunk.subarray(0, chunk.length - (outLen - maxBuffer)));
      truncated = true;
      child.kill('SIGKILL');
    });
    if (opts.enough) {
      const enough = opts.enough;
      child.stdout!.on('data', (chunk: Buffer) => {
        if (truncated || failure || !enough(chunk)) return;
        truncated = true;
        child.kill('SIGKILL');
      });
    }
    child.stderr!.on('data', (chunk: Buffer) => {
      // stderr is for the error message only; keep the start, which holds the "fatal:" line.
      if (errLen < 64 * 1024) err.push(chunk);
      errLen += chunk.length;
    });
    // git may exit before reading all of stdin (e.g. an early fatal); that EPIPE is not the interesting error.
    child.stdin!.on('error', () => {});
    child.on('error', (e: NodeJS.ErrnoException) => {
      const missing = opts.gitDir && !existsSync(opts.gitDir) ? ` (no repository at ${opts.gitDir})` : '';
      failure ??= new GitError(`${describe(args)}: ${e.message}${missing}`, args, null, '', 'spawn');
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(err).toString('utf8');
      if (failure) return reject(Object.assign(failure, { stderr: stderr || failure.stderr }) as GitError);
      if (truncated) return resolve({ stdout: Buffer.concat(out), stderr, code: code ?? -1, truncated });
      if (code === 0 || (code !== null && opts.okExitCodes?.includes(code))) {
        return resolve({ stdout: Buffer.concat(out), stderr, code });
      }
      const first = stderr.trim().split('\n')[0] ?? '';
      reject(new GitError(`${describe(args)} failed (${code ?? signal}): ${first}`, args, code, stderr));
    });
    child.stdin!.end(opts.input ?? '');
  });
}

export interface GitSpawnOptions extends Omit<GitRunOptions, 'input' | 'maxBuffer' | 'okExitCodes'> {
  stdio?: StdioOptions;
}

/**
 * Starts git and hands back the process for streaming (smart HTTP, large blobs). The caller owns the pipes;
 * the timeout and abort signal still kill the process.
 */
export function spawnGit(args: string[], opts: GitSpawnOptions = {}): ChildProcess {
  const child = start(args, opts, opts.stdio ?? ['pipe', 'pipe', 'pipe']);
  const kill = () => child.kill('SIGKILL');
  const timer = opts.timeoutMs ? setTimeout(kill, opts.timeoutMs) : undefined;
  if (opts.signal?.aborted) kill();
  opts.signal?.addEventListener('abort', kill, { once: true });
  child.on('close', () => {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', kill);
  });
  child.on('error', () => {});
  return child;
}
