import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scratch, startServer } from './processes.ts';
import { pythonGitlab, pythonSkip } from '../support/python-gitlab.ts';

// A real v4 client against a real server: python-gitlab (Debian's python3-gitlab).

const SCRIPT = String.raw`
import warnings
url, token = os.environ["GL_URL"], os.environ["GL_TOKEN"]
warnings.simplefilter("error", UserWarning)  # a Link host differing from the URL would warn
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
`;

test('python-gitlab: auth, users, personal access tokens, pagination, sudo', { skip: pythonSkip }, async () => {
  const sc = await scratch();
  const token = 'glpat-python-gitlab-test-token-0001';
  const server = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: token, BELLOWS_ROOT_PASSWORD: 'root-password-1' });
  try {
    const out = await pythonGitlab(server.url, token, SCRIPT);
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
