import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { makeUser } from '../../../test/support/fixtures.ts';
import { python, pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab 3.12 and its `gitlab` command line on the repository area, in the steps of its own functional tests
// (tests/functional/api/test_repository.py, tests/functional/cli/test_cli_repository.py).

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pyrepo', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);
const run = promisify(execFile);

async function cli(args: Array<string | number>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(python!, ['-m', 'gitlab', '--server-url', server.url, '--private-token', token, ...args.map(String)], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e: any) {
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

test('python-gitlab: a branch in an empty repository, files, headers, blame, raw, tree, blobs', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "py-empty"})
b = p.branches.create({"branch": "feature", "ref": "main"})
out["branch"] = [b.name, b.commit["title"]]
out["branches"] = sorted(x.name for x in p.branches.list())

project = gl.projects.create({"name": "py-repo"})
project.files.create({"file_path": "README.md", "branch": "main", "content": "Initial content", "commit_message": "Initial commit"})
readme = project.files.get(file_path="README.md", ref="main")
readme.content = base64.b64encode(b"Improved README").decode()
readme.save(branch="main", commit_message="new commit")
readme.delete(commit_message="Removing README", branch="main")
project.files.create({"file_path": "README.rst", "branch": "main", "content": "Initial content", "commit_message": "New commit"})
readme = project.files.get(file_path="README.rst", ref="main")
out["decoded"] = readme.decode().decode()
headers = project.files.head("README.rst", ref="main")
out["head"] = [headers["X-Gitlab-File-Path"], headers["X-Gitlab-Blob-Id"] == readme.blob_id, headers["X-Gitlab-Size"], headers["X-Gitlab-Ref"]]
blame = project.files.blame(file_path="README.rst", ref="main")
out["blame"] = [[g["commit"]["message"], g["lines"]] for g in blame]
out["raw"] = [os.fsdecode(project.files.raw(file_path="README.rst", ref="main")), os.fsdecode(project.files.raw(file_path="README.rst", ref=None))]
tree = project.repository_tree()
out["tree"] = tree[0]["name"]
out["blob"] = project.repository_raw_blob(tree[0]["id"]).decode()
out["blob_json"] = base64.b64decode(project.repository_blob(tree[0]["id"])["content"]).decode()
`);
  assert.deepEqual(out, {
    branch: ['feature', 'Add README.md'],
    branches: ['feature', 'main'],
    decoded: 'Initial content',
    head: ['README.rst', true, '15', 'main'],
    blame: [['New commit', ['Initial content']]],
    raw: ['Initial content', 'Initial content'],
    tree: 'README.rst',
    blob: 'Initial content',
    blob_json: 'Initial content',
  });
});

test('python-gitlab: archives in every format, commits, diff, refs, signature, cherry-pick, revert, merge base, contributors', { skip: pythonSkip }, async () => {
  const out = await py(`
project = gl.projects.get("pyrepo/py-repo")
archive = project.repository_archive()
out["archive_same"] = archive == project.repository_archive("main")
checks = {"tbz": tarfile.is_tarfile, "tbz2": tarfile.is_tarfile, "tb2": tarfile.is_tarfile, "bz2": tarfile.is_tarfile, "tar": tarfile.is_tarfile,
          "tar.gz": tarfile.is_tarfile, "tar.bz2": tarfile.is_tarfile, "zip": zipfile.is_zipfile}
out["formats"] = sorted(f for f, check in checks.items() if check(BytesIO(project.repository_archive(format=f))))
names = tarfile.open(fileobj=BytesIO(project.repository_archive(format="tar.gz"))).getnames()
out["members"] = sorted(n.split("/", 1)[1] for n in names if "/" in n)

commit = project.commits.create({"branch": "main", "commit_message": "blah blah blah", "actions": [{"action": "create", "file_path": "blah", "content": "blah"}]})
out["diff"] = "@@" in project.commits.list()[0].diff()[0]["diff"]
out["refs"] = commit.refs()
out["refs_tag"] = commit.refs(type="tag")
try:
    commit.signature()
except gitlab.GitlabGetError as e:
    out["signature"] = str(e)

new = project.commits.create({"branch": "new-branch", "start_branch": "main", "commit_message": "New commit on new branch",
                              "actions": [{"action": "create", "file_path": "new-file", "content": "new content"}]})
out["all"] = new.id in [c.id for c in project.commits.list(get_all=True, all=True)] and new.id not in [c.id for c in project.commits.list(all=True)]

commits = project.commits.list()
picked = commits[1]
project.branches.create({"branch": "test", "ref": picked.parent_ids[0]})
picked.cherry_pick(branch="test")
result = project.commits.list(ref_name="test")[0]
out["cherry_pick"] = result.message.startswith(f"{picked.message}\\n\\n(cherry picked from commit {picked.id})")
try:
    picked.cherry_pick(branch="test")
except gitlab.GitlabCherryPickError as e:
    out["cherry_pick_again"] = [e.response_code, e.error_message]

latest = project.commits.list()[0]
reverted = latest.revert(branch="main")
out["revert"] = reverted["message"] == f'Revert "{latest.message}"\\n\\nThis reverts commit {latest.id}'
try:
    latest.revert(branch="main")
except gitlab.GitlabRevertError as e:
    out["revert_again"] = e.response_code

refs = [c.id for c in project.commits.list(all=True)]
out["merge_base"] = project.repository_merge_base(refs)["id"] in refs
try:
    project.repository_merge_base(refs[0])
except gitlab.GitlabGetError as e:
    out["merge_base_one"] = str(e)
out["contributors"] = [[c["name"], c["commits"]] for c in project.repository_contributors()]
`);
  assert.deepEqual(out, {
    archive_same: true,
    formats: ['bz2', 'tar', 'tar.bz2', 'tar.gz', 'tb2', 'tbz', 'tbz2', 'zip'],
    members: ['README.rst'],
    diff: true,
    refs: [{ type: 'branch', name: 'main' }],
    refs_tag: [],
    signature: '404: 404 Signature Not Found',
    all: true,
    cherry_pick: true,
    cherry_pick_again: [400, 'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.'],
    revert: true,
    revert_again: 400,
    merge_base: true,
    merge_base_one: '400: Provide at least 2 refs',
    contributors: [["User pyrepo", 6]],
  });
});

test('the gitlab command line: file create, branch create, revert, signature', { skip: pythonSkip }, async () => {
  const project = await py(`out["id"] = gl.projects.create({"name": "py-cli"}).id`);
  const id = project.id;
  let r = await cli(['project-branch', 'create', '--project-id', id, '--branch', 'topic', '--ref', 'main']);
  assert.equal(r.code, 0, r.stderr);
  r = await cli(['project-file', 'create', '--project-id', id, '--file-path', 'README', '--branch', 'main', '--content', 'CONTENT', '--commit-message', 'Initial commit']);
  assert.equal(r.code, 0, r.stderr);
  r = await cli(['-o', 'json', 'project-commit', 'list', '--project-id', id]);
  const commits = JSON.parse(r.stdout);
  assert.deepEqual(commits.map((c: any) => c.title), ['Initial commit', 'Add README.md']);
  r = await cli(['project-commit', 'revert', '--project-id', id, '--id', commits[0].id, '--branch', 'main']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Revert "Initial commit"/);
  r = await cli(['project-commit', 'signature', '--project-id', id, '--id', commits[0].id]);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /404 Signature Not Found/);
  r = await cli(['-o', 'json', 'project-commit', 'diff', '--project-id', id, '--id', commits[0].id]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).map((d: any) => [d.new_path, d.new_file]), [['README', true]]);
});
