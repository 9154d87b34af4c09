import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { makeUser } from '../../../test/support/fixtures.ts';

// python-gitlab 3.12 on commit comments, in the steps of its own functional test (tests/functional/api/
// test_repository.py, test_commit_comment).
const run = promisify(execFile);
const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true)
  && spawnSync(p, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0);
const skip = python ? false : 'python-gitlab is not installed';

const PRELUDE = `
import base64, json, os, tarfile, zipfile, gitlab
from io import BytesIO
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"])
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
  token = (await makeUser(t.app, { username: 'pycomment', admin: true })).token;
});
after(async () => { if (t) await t.close(); });

async function py(script: string): Promise<any> {
  try {
    const { stdout } = await run(python!, ['-c', PRELUDE + script + '\nprint(json.dumps(out))'], {
      env: { ...process.env, GL_URL: url, GL_TOKEN: token }, timeout: 120_000,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!);
  } catch (e: any) {
    throw new Error(`python-gitlab failed: ${e.stderr ?? e.message}`);
  }
}

test('python-gitlab: commit.comments.create and list', { skip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "py-comments", "initialize_with_readme": True})
commit = p.commits.create({"branch": "main", "commit_message": "Change", "actions": [{"action": "update", "file_path": "README.md", "content": "new\\n"}]})
out["before"] = len(commit.comments.list())
c = commit.comments.create({"note": "This is a commit comment"})
out["created"] = [c.note, c.author["username"], c.path]
d = commit.comments.create({"note": "On a line", "path": "README.md", "line": 1, "line_type": "new"})
out["on_line"] = [d.path, d.line, d.line_type]
out["after"] = [x.note for x in p.commits.get(commit.id).comments.list()]
try:
    p.commits.get("0" * 40, lazy=True).comments.list()
    out["unknown"] = "listed"
except gitlab.GitlabListError as e:
    out["unknown"] = e.response_code
`);
  assert.deepEqual(out, {
    before: 0, created: ['This is a commit comment', 'pycomment', null], on_line: ['README.md', 1, 'new'],
    after: ['This is a commit comment', 'On a line'], unknown: 404,
  });
});
