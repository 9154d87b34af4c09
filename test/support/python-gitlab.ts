import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

// Driving a test server with the real python-gitlab (3.12), as its users call it: a script runs with `gl` signed in
// with the token, fills `out`, and its JSON comes back. `attempt(fn)` turns a GitlabError into [status, message].

const run = promisify(execFile);

/** The Python with python-gitlab installed, or null (the tests skip with `pythonSkip`). */
export const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true)
  && spawnSync(p, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0) ?? null;
export const pythonSkip: string | false = python ? false : 'python-gitlab is not installed';

const PRELUDE = `
import json, os, gitlab
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"])
out = {}
def attempt(fn):
    try:
        return fn()
    except gitlab.GitlabError as e:
        return [e.response_code, e.error_message]
`;

export async function pythonGitlab(url: string, token: string, script: string): Promise<any> {
  try {
    const { stdout } = await run(python!, ['-c', `${PRELUDE}${script}\nprint(json.dumps(out))`], {
      env: { ...process.env, GL_URL: url, GL_TOKEN: token }, timeout: 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!);
  } catch (e: any) {
    throw new Error(`python-gitlab failed: ${e.stderr ?? e.message}`);
  }
}
