import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (Debian's python3-gitlab) against a listening server: the calls its users make first.

const SCRIPT = `
gl.auth()
out["me"] = gl.user.username
user = gl.users.create({"email": "pg@example.com", "username": "pyuser", "name": "Py User", "password": "s3cret-password"})
out["user"] = [user.username, user.name]
group = gl.groups.create({"name": "Py Group", "path": "py-group", "visibility": "internal"})
out["group"] = [group.full_path, group.visibility]
sub = gl.groups.create({"name": "Py Sub", "path": "py-sub", "parent_id": group.id})
out["sub"] = sub.full_path
member = group.members.create({"user_id": user.id, "access_level": 30})
out["member"] = [member.username, member.access_level]
out["all"] = sorted(m.username for m in sub.members_all.list(get_all=True))
pat = user.personal_access_tokens.create({"name": "py", "scopes": ["api"]})
out["pat"] = [pat.name, pat.scopes, pat.token.startswith("glpat-")]
gat = group.access_tokens.create({"name": "bot", "scopes": ["read_api"], "access_level": 30, "expires_at": "2026-12-31"})
out["gat"] = [gat.access_level, gat.resource_type]
as_user = gitlab.Gitlab(os.environ["GL_URL"], private_token=pat.token)
out["user_groups"] = sorted(g.full_path for g in as_user.groups.list(get_all=True))
`;

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pyadmin', admin: true })).token;
});

test('python-gitlab: auth, create user, groups, members, tokens', { skip: pythonSkip }, async () => {
  assert.deepEqual(await pythonGitlab(server.url, token, SCRIPT), {
    me: 'pyadmin',
    user: ['pyuser', 'Py User'],
    group: ['py-group', 'internal'],
    sub: 'py-group/py-sub',
    member: ['pyuser', 30],
    all: ['pyadmin', 'pyuser'],
    pat: ['py', ['api'], true],
    gat: [30, 'group'],
    user_groups: ['py-group', 'py-group/py-sub'],
  });
});
