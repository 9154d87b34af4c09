import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { scratch, startServer } from './processes.ts';

// A real v4 client against a real server: python-gitlab (Debian's python3-gitlab).

function findPython(): string | null {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(candidate, ['-c', 'import gitlab'], { encoding: 'utf8' });
    if (r.status === 0) return candidate;
  }
  return null;
}

const python = findPython();

const SCRIPT = String.raw`
import json, sys, warnings
import gitlab
url, token = sys.argv[1], sys.argv[2]
warnings.simplefilter("error", UserWarning)  # a Link host differing from the URL would warn
out = {}
gl = gitlab.Gitlab(url, private_token=token)
gl.auth()
out["me"] = gl.user.username
u = gl.users.create({"email": "py@example.com", "password": "password123", "username": "pyuser", "name": "Py User"})
out["created"] = [u.username, u.name]
try:
    gl.users.create({"email": "py@example.com", "password": "password123", "username": "pyuser2", "name": "Dup"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
pat = u.personal_access_tokens.create({"name": "py", "scopes": ["api"]})
out["pat_scopes"] = pat.scopes
gl2 = gitlab.Gitlab(url, private_token=pat.token)
gl2.auth()
out["pat_user"] = gl2.user.username
gl3 = gitlab.Gitlab(url, oauth_token=pat.token)
gl3.auth()
out["bearer_user"] = gl3.user.username
for i in range(3):
    gl.users.create({"email": "bulk%d@example.com" % i, "password": "password123", "username": "bulk%d" % i, "name": "Bulk %d" % i})
out["all"] = sorted(x.username for x in gl.users.list(get_all=True, per_page=2))
page = gl.users.list(per_page=2, page=1)
out["one_page"] = len(page)
found = gl.users.list(username="PYUSER")
out["found"] = [x.id == u.id for x in found]
u.block()
out["blocked"] = gl.users.get(u.id).state
u.unblock()
out["unblocked"] = gl.users.get(u.id).state
sudo = gitlab.Gitlab(url, private_token=token)
sudo.headers["Sudo"] = "pyuser"
sudo.auth()
out["sudo"] = sudo.user.username
try:
    gl2.users.create({"email": "x@example.com", "password": "password123", "username": "xx", "name": "X"})
except gitlab.exceptions.GitlabCreateError as e:
    out["forbidden"] = e.response_code
print(json.dumps(out))
`;

test('python-gitlab: auth, users, personal access tokens, pagination, sudo', { skip: python ? false : 'python3-gitlab is not installed' }, async () => {
  const sc = await scratch();
  const token = 'glpat-python-gitlab-test-token-0001';
  const server = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: token, BELLOWS_ROOT_PASSWORD: 'root-password-1' });
  try {
    const r = spawnSync(python!, ['-c', SCRIPT, server.url, token], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out, {
      me: 'root',
      created: ['pyuser', 'Py User'],
      duplicate: [409, 'Email has already been taken'],
      pat_scopes: ['api'],
      pat_user: 'pyuser',
      bearer_user: 'pyuser',
      all: ['bulk0', 'bulk1', 'bulk2', 'pyuser', 'root'],
      one_page: 2,
      found: [true],
      blocked: 'blocked',
      unblocked: 'active',
      sudo: 'pyuser',
      forbidden: 403,
    });
  } finally {
    assert.equal(await server.stop(), 0);
    await sc.cleanup();
  }
});
