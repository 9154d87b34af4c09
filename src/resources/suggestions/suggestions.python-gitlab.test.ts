import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab 3.12 on suggestions and context commits: it has no objects for either, so scripts use its HTTP layer
// (`gl.http_put`, `http_post`, ...) as its users do, with its merge request and discussion objects around them.

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pysuggest', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);

test('python-gitlab: a suggestion in a diff thread, applied; batch_apply refusing an applied one; context commits', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "py-suggest", "initialize_with_readme": True})
first = p.commits.list(ref_name="main")[0].id
p.branches.create({"branch": "topic", "ref": "main"})
p.commits.create({"branch": "topic", "commit_message": "Add a file", "actions": [
    {"action": "create", "file_path": "app.py", "content": "print(1)\\nprint(2)\\n"}]})
mr = p.mergerequests.create({"source_branch": "topic", "target_branch": "main", "title": "Topic"})
v = mr.diffs.get(mr.diffs.list()[0].id)
pos = {"position_type": "text", "base_sha": v.base_commit_sha, "start_sha": v.start_commit_sha, "head_sha": v.head_commit_sha,
       "old_path": "app.py", "new_path": "app.py", "new_line": 2}
d = mr.discussions.create({"body": "Better:\\n\`\`\`suggestion\\nprint(2 + 0)\\n\`\`\`", "position": pos})
s = d.attributes["notes"][0]["suggestions"][0]
out["listed"] = [s["from_line"], s["to_line"], s["applicable"], s["applied"], s["from_content"], s["to_content"]]
applied = gl.http_put("/suggestions/%d/apply" % s["id"], post_data={"commit_message": "Apply on %{branch_name}"})
out["applied"] = [applied["applied"], applied["applicable"]]
out["commit"] = p.commits.list(ref_name="topic")[0].title
out["file"] = p.files.get("app.py", ref="topic").decode().decode()
try:
    gl.http_put("/suggestions/batch_apply", post_data={"ids": [s["id"]]})
    out["again"] = "applied"
except gitlab.GitlabHttpError as e:
    out["again"] = [e.response_code, e.error_message]
note = mr.notes.get(d.attributes["notes"][0]["id"])
out["note"] = [len(note.suggestions), note.suggestions[0]["applied"], note.resolved]
created = gl.http_post("/projects/%d/merge_requests/%d/context_commits" % (p.id, mr.iid), post_data={"commits": [first[:12]]})
out["created"] = [c["id"] == first for c in created] + [sorted(created[0].keys()) == sorted(["id", "parent_ids", "message", "author_name", "author_email", "authored_date", "committer_name", "committer_email", "committed_date"])]
out["context"] = [c["id"] == first for c in gl.http_list("/projects/%d/merge_requests/%d/context_commits" % (p.id, mr.iid))]
gl.http_delete("/projects/%d/merge_requests/%d/context_commits" % (p.id, mr.iid), query_data={"commits": first})
out["after"] = len(gl.http_list("/projects/%d/merge_requests/%d/context_commits" % (p.id, mr.iid)))
`);
  assert.deepEqual(out, {
    listed: [2, 2, true, false, 'print(2)\n', 'print(2 + 0)\n'],
    applied: [true, false],
    commit: 'Apply on topic',
    file: 'print(1)\nprint(2 + 0)\n',
    again: [400, "Can't apply this suggestion."],
    note: [1, true, true],
    created: [true, true],
    context: [true],
    after: 0,
  });
});
