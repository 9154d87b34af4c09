import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab 3.12 on commit comments, in the steps of its own functional test (tests/functional/api/
// test_repository.py, test_commit_comment).

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pycomment', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);

test('python-gitlab: commit.comments.create and list', { skip: pythonSkip }, async () => {
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
