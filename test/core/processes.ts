import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import http from 'node:http';
import pg from 'pg';

// Support for tests that run the real command line: a temp data dir and, on PostgreSQL, an empty database.

export const BIN = resolve('bin/bellows.mjs');

export interface Scratch {
  dataDir: string;
  env: Record<string, string>;
  databaseUrl: string | null;
  cleanup(): Promise<void>;
}

/** A temp data dir; with DATABASE_URL set, also a new empty database on that server. */
export async function scratch(): Promise<Scratch> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bellows-cli-'));
  const base = process.env.DATABASE_URL;
  let databaseUrl: string | null = null;
  let name: string | null = null;
  if (base) {
    name = `bellows_cli_${process.pid}_${randomBytes(4).toString('hex')}`;
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
    const u = new URL(base);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dataDir,
    BELLOWS_DATA_DIR: dataDir,
    BELLOWS_LOG_LEVEL: 'info',
  };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return {
    dataDir, env, databaseUrl,
    async cleanup() {
      if (name && base) {
        const c = new pg.Client({ connectionString: base });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function runCli(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000, cwd: env.BELLOWS_CWD ?? process.cwd() });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

export interface Server {
  url: string;
  /** The port of its SSH server (git over SSH). */
  sshPort: number;
  pid: number;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `bellows serve` as a real process; resolves once /-/readiness answers 200. */
/**
 * Starts `bellows serve` and waits until `/-/readiness` answers 200, or, with `until`, until its output satisfies it
 * (no request is sent then).
 */
export async function startServer(env: Record<string, string>, opts: { until?: (output: string) => boolean } = {}): Promise<Server> {
  const port = await freePort();
  const sshPort = env.BELLOWS_SSH_PORT ? Number(env.BELLOWS_SSH_PORT) : await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1', BELLOWS_SSH_PORT: String(sshPort) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  const url = `http://127.0.0.1:${port}`;
  // Generous: these tests check what a started server does, not how fast it starts on a busy machine.
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${out}`);
    if (opts.until) {
      if (opts.until(out)) break;
    } else {
      try {
        const r = await fetch(`${url}/-/readiness`);
        if (r.status === 200) break;
      } catch {
        /* not listening yet */
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    sshPort,
    pid: child.pid!,
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface Answer {
  status: number;
  /** The parsed body when it is JSON, else its text. */
  json: any;
  headers: http.IncomingHttpHeaders;
}

/**
 * One request on a connection of its own (`connection: close`, no agent), so that successive calls spread over a
 * server's workers instead of riding one kept-alive connection to the same one.
 */
export function callServer(url: string, method: string, token: string | null, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, {
      method, agent: false,
      headers: { ...(token ? { 'private-token': token } : {}), connection: 'close', ...(data ? { 'content-type': 'application/json' } : {}) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode!, json: text && res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(data);
  });
}
