import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab 3.12 on merge request diffs, versions and diff threads, in the steps of its functional tests (tests/functional/api/
// test_merge_requests.py) and its documented discussion examples.

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pydiffs', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);

test('python-gitlab: mr.diffs (versions), mr.changes(), a diff thread with a position, resolved by save()', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "py-mr-diffs", "initialize_with_readme": True})
p.branches.create({"branch": "topic", "ref": "main"})
p.commits.create({"branch": "topic", "commit_message": "Add a file", "actions": [
    {"action": "create", "file_path": "app.py", "content": "print(1)\\nprint(2)\\n"},
    {"action": "update", "file_path": "README.md", "content": "changed\\n"}]})
mr = p.mergerequests.create({"source_branch": "topic", "target_branch": "main", "title": "Topic"})
versions = mr.diffs.list()
out["versions"] = len(versions)
v = mr.diffs.get(versions[0].id)
out["version_files"] = sorted(d["new_path"] for d in v.diffs)
out["version_commits"] = [c["title"] for c in v.commits]
out["changes"] = sorted(c["new_path"] for c in mr.changes()["changes"])
pos = {"position_type": "text", "base_sha": v.base_commit_sha, "start_sha": v.start_commit_sha, "head_sha": v.head_commit_sha,
       "old_path": "app.py", "new_path": "app.py", "new_line": 2}
d = mr.discussions.create({"body": "Why 2?", "position": pos})
note = d.attributes["notes"][0]
out["note"] = [note["type"], note["position"]["new_line"], note["resolvable"], note["resolved"]]
try:
    mr.discussions.create({"body": "Nowhere", "position": dict(pos, new_line=40)})
    out["bad"] = "created"
except gitlab.GitlabCreateError as e:
    out["bad"] = [e.response_code, e.error_message]
d.notes.create({"body": "Because"})
d.resolved = True
d.save()
got = mr.discussions.get(d.id)
out["resolved"] = [n["resolved"] for n in got.attributes["notes"]]
out["listed"] = [len(x.attributes["notes"]) for x in mr.discussions.list()]
`);
  assert.deepEqual(out, {
    versions: 1, version_files: ['README.md', 'app.py'], version_commits: ['Add a file'], changes: ['README.md', 'app.py'],
    note: ['DiffNote', 2, true, false],
    bad: [400, '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}'],
    resolved: [true, true], listed: [2],
  });
});
