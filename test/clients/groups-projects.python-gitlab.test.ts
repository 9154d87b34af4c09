import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/factories.ts';

// python-gitlab (3.12) driving groups, projects and users as its own functional tests do: multipart bodies with
// booleans, avatars, group projects and shares, group deletion, the project's groups, users and uploads.
const run = promisify(execFile);
const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true)
  && spawnSync(p, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0);
const skip = python ? false : 'python-gitlab is not installed';

const PRELUDE = `
import json, os, io, base64, gitlab
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"])
png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
out = {}
`;

let t: TestApp;
let url = '';
let token = '';
before(async () => {
  if (!python) return;
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  token = (await makeUser(t.app, { username: 'gpadmin', admin: true })).token;
});
after(async () => { if (t) await t.close(); });

async function py(script: string, env: Record<string, string> = {}): Promise<any> {
  try {
    const { stdout } = await run(python!, ['-c', PRELUDE + script + '\nprint(json.dumps(out))'], {
      env: { ...process.env, GL_URL: url, GL_TOKEN: token, ...env }, timeout: 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!);
  } catch (e: any) {
    throw new Error(`python-gitlab failed: ${e.stderr ?? e.message}`);
  }
}

test('python-gitlab: booleans of a multipart body (sent as 1/0) are read as booleans', { skip }, async () => {
  const out = await py(`
u = gl.users.create({"email": "mp@example.com", "username": "mpuser", "name": "Mp", "password": "s3cret-password",
                     "private_profile": True, "can_create_group": False, "avatar": io.BytesIO(png)})
out["user"] = [u.private_profile, u.can_create_group]
`);
  assert.deepEqual(out, { user: [true, false] });
});
