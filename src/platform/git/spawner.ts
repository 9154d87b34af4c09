// git processes started by a small helper process (bin/git-spawner.cjs) instead of by this one. On Linux, Node
// starts a child with fork(): every resident page of this process is marked copy-on-write first, and the event loop
// waits meanwhile, 10-20 ms for a server worker of a few hundred megabytes (bench/spawn-cost.ts). The helper stays
// small, so its forks are cheap, and this process goes on serving while they happen.
//
// A child here has what runGit (command.ts) uses of a ChildProcess: stdin, stdout and stderr streams, kill(), and
// the 'error' and 'close' events, in the order a local child gives them. Its output comes as fast as the helper
// reads it (no back-pressure), so it serves calls that read all of their output, as runGit does; streaming calls
// keep their own processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

type HelperMessage =
  | { op: 'out' | 'err'; id: number; data: Uint8Array }
  | { op: 'error'; id: number; message: string; code?: string }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

/** A git process of the helper, seen from here. */
export class RemoteChild extends EventEmitter {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdin: Writable;
  private closed = false;

  constructor(private readonly helper: Helper, readonly id: number) {
    super();
    this.stdin = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        helper.post({ op: 'stdin', id, data: chunk });
        done();
      },
      final: (done) => {
        helper.post({ op: 'end', id });
        done();
      },
    });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.closed) return false;
    this.helper.post({ op: 'kill', id: this.id, signal });
    return true;
  }

  /** A message of the helper about this child. */
  hear(m: HelperMessage): void {
    if (this.closed) return;
    if (m.op === 'error') this.emit('error', Object.assign(new Error(m.message), { code: m.code }));
    else if (m.op === 'close') this.finish(m.code, m.signal);
    else (m.op === 'out' ? this.stdout : this.stderr).write(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
  }

  /** Ends the child as a local one ends: its output streams first (every chunk delivered), then 'close'. */
  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    const ended = [this.stdout, this.stderr].map((s) => new Promise<void>((resolve) => {
      s.once('end', resolve);
      s.once('error', () => resolve());
      // Output nobody reads is let through, as a local child's pipes are drained when it exits.
      if (s.readableFlowing !== true) s.resume();
      s.end();
    }));
    void Promise.all(ended).then(() => this.emit('close', code, signal));
  }
}

class Helper {
  private readonly process: ChildProcess;
  private readonly children = new Map<number, RemoteChild>();
  private nextId = 0;
  gone = false;

  constructor(script: string) {
    // The helper's own environment is empty: each git process gets the one its caller sets (command.ts gitEnv).
    this.process = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced', env: {} });
    this.process.channel?.unref();
    this.process.unref();
    this.process.on('message', (m: HelperMessage) => this.children.get(m.id)?.hear(m));
    // Gone (killed, crashed): its children end with an error, and the next call starts another helper.
    const lost = () => {
      if (this.gone) return;
      this.gone = true;
      for (const child of this.children.values()) {
        child.emit('error', Object.assign(new Error('the git process helper stopped'), { code: 'EHELPER' }));
        child.finish(null, 'SIGKILL');
      }
      this.children.clear();
    };
    this.process.on('exit', lost);
    this.process.on('error', lost);
  }

  start(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): RemoteChild {
    const child = new RemoteChild(this, ++this.nextId);
    this.children.set(child.id, child);
    // While a child runs, the channel keeps this process alive, as a local child's pipes would.
    if (this.children.size === 1) this.process.channel?.ref();
    child.once('close', () => {
      this.children.delete(child.id);
      if (this.children.size === 0) this.process.channel?.unref();
    });
    this.post({ op: 'spawn', id: child.id, file, args, cwd, env });
    return child;
  }

  post(message: object): void {
    if (!this.gone && this.process.connected) this.process.send(message);
  }
}

let helper: Helper | null = null;
let script: string | null | undefined;

/** bin/git-spawner.cjs, found above this module (src/platform/git/ in the sources, dist/bundle/ when bundled). */
function helperScript(): string | null {
  if (script !== undefined) return script;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = dirname(dir)) {
    const candidate = join(dir, 'bin', 'git-spawner.cjs');
    if (existsSync(candidate)) return (script = candidate);
  }
  return (script = null);
}

/** Starts `file` with `args` through the helper (started on first use, again after it stopped); null without one. */
export function startThroughHelper(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): RemoteChild | null {
  if (!helper || helper.gone) {
    const path = helperScript();
    if (!path) return null;
    helper = new Helper(path);
  }
  return helper.start(file, args, cwd, env);
}
