import { before, after } from 'node:test';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { buildTestApp, listening, type TestApp } from './app.ts';

// Driving a test server with the real python-gitlab (3.12), as its users call it: a script runs with `gl` signed in
// with the token, fills `out`, and its JSON comes back. `attempt(fn)` turns a GitlabError into [status, message].
// `pythonServer()` is the listening server of a test file's python-gitlab tests.

const run = promisify(execFile);

/** The Python with python-gitlab installed, or null (the tests skip with `pythonSkip`). */
export const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true)
  && spawnSync(p, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0) ?? null;
export const pythonSkip: string | false = python ? false : 'python-gitlab is not installed';

const PRELUDE = `
import base64, json, os, tarfile, zipfile, gitlab
from io import BytesIO
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"])
out = {}
def attempt(fn):
    try:
        return fn()
    except gitlab.GitlabError as e:
        return [e.response_code, e.error_message]
`;

/**
 * Runs `script` after the prelude and answers its `out`. `env` adds variables the script reads (other tokens, ids);
 * `gl` is signed in with `token` (none when null).
 */
export async function pythonGitlab(url: string, token: string | null, script: string, opts: { env?: Record<string, string>; timeout?: number } = {}): Promise<any> {
  try {
    const { stdout } = await run(python!, ['-c', `${PRELUDE}${script}\nprint(json.dumps(out))`], {
      env: { ...process.env, GL_URL: url, GL_TOKEN: token ?? '', ...opts.env }, timeout: opts.timeout ?? 120_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!);
  } catch (e: any) {
    throw new Error(`python-gitlab failed: ${e.stderr ?? e.message}`);
  }
}

/**
 * A test server listening on a free port for the file's python-gitlab tests: `server.t` and `server.url` are set once
 * `server.ready()` resolves (the `before` hook this registers awaits it; a file's own `before` hooks await it too, as
 * top-level hooks do not wait for one another), and the `after` hook closes it.
 */
export function pythonServer(options?: Parameters<typeof buildTestApp>[0]): { t: TestApp; url: string; ready: () => Promise<void> } {
  let starting: Promise<void> | null = null;
  const server = {
    url: '',
    ready: () => (starting ??= (async () => {
      server.t = await buildTestApp(options);
      server.url = await listening(server.t);
    })()),
  } as { t: TestApp; url: string; ready: () => Promise<void> };
  before(async () => { if (!pythonSkip) await server.ready(); });
  after(async () => {
    if (starting) await starting.catch(() => undefined);
    if (server.t) await server.t.close();
  });
  return server;
}
