import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (3.12) driving groups, projects and users as its own functional tests do: multipart bodies with
// booleans, avatars, group projects and shares, group deletion, the project's groups, users and uploads.

// A 1x1 PNG the avatar scripts upload.
const PNG = `png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")\n`;

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'gpadmin', admin: true })).token;
});

const py = (script: string, env: Record<string, string> = {}) => pythonGitlab(server.url, token, PNG + script, { env });

test('python-gitlab: booleans of a multipart body (sent as 1/0) are read as booleans', { skip: pythonSkip }, async () => {
  const out = await py(`
u = gl.users.create({"email": "mp@example.com", "username": "mpuser", "name": "Mp", "password": "s3cret-password",
                     "private_profile": True, "can_create_group": False, "avatar": BytesIO(png)})
out["user"] = [u.private_profile, u.can_create_group]
`);
  assert.deepEqual(out, { user: [true, false] });
});

test('python-gitlab: project, group and user avatars are stored and served back', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "pic-project", "initialize_with_readme": True, "avatar": BytesIO(png)})
out["project"] = [p.default_branch, p.avatar_url.split("/uploads/")[1]]
g = gl.groups.create({"name": "pic-group", "path": "pic-group", "avatar": BytesIO(png)})
out["group"] = g.avatar_url.split("/uploads/")[1] if g.avatar_url else None
local = lambda u: os.environ["GL_URL"] + "/uploads/" + u.split("/uploads/", 1)[1]
r = gl.session.get(local(p.avatar_url), headers={"PRIVATE-TOKEN": os.environ["GL_TOKEN"]})
out["served"] = [r.status_code, r.headers["content-type"], r.content == png]
# python-gitlab sends avatar="" as an empty file part: the reference's uploader skips it, nothing changes.
p.avatar = ""
p.save()
out["empty_file"] = gl.projects.get(p.id).avatar_url == out_url if (out_url := p.avatar_url) else "lost"
# A blank form field removes it.
gl.http_put("/projects/%d" % p.id, post_data={"avatar": ""})
out["removed"] = gl.projects.get(p.id).avatar_url
u = gl.users.create({"email": "picu@example.com", "username": "picu", "name": "Pic", "password": "s3cret-password", "avatar": BytesIO(png)})
out["user"] = u.avatar_url.split("/uploads/")[1]
out["anon"] = gitlab.Gitlab(os.environ["GL_URL"]).session.get(local(u.avatar_url)).status_code
`);
  assert.equal(out.project[0], 'main');
  assert.match(out.project[1], /^-\/system\/project\/avatar\/\d+\/avatar\.png$/);
  assert.match(out.group, /^-\/system\/group\/avatar\/\d+\/avatar\.png$/);
  assert.deepEqual(out.served, [200, 'image/png', true]);
  assert.equal(out.removed, null);
  assert.equal(out.empty_file, true);
  assert.match(out.user, /^-\/system\/user\/avatar\/\d+\/avatar\.png$/);
  assert.equal(out.anon, 200);
});

test('python-gitlab: group projects with include_subgroups, with_shared and filters', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "gp-top", "path": "gp-top"})
s = gl.groups.create({"name": "gp-sub", "path": "gp-sub", "parent_id": g.id})
gl.projects.create({"name": "top-one", "namespace_id": g.id})
gl.projects.create({"name": "sub-one", "namespace_id": s.id})
other = gl.projects.create({"name": "elsewhere"})
other.share(g.id, 30)
out["plain"] = sorted(p.path for p in g.projects.list())
out["subgroups"] = sorted(p.path for p in g.projects.list(include_subgroups=True, with_shared=False))
out["search"] = [p.path for p in g.projects.list(search="top", simple=True)]
out["archived"] = [p.path for p in g.projects.list(archived=True)]
`);
  assert.deepEqual(out, { plain: ['elsewhere', 'top-one'], subgroups: ['sub-one', 'top-one'], search: ['top-one'], archived: [] });
});

test('python-gitlab: group share and unshare, group custom attributes', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "share-me", "path": "share-me"})
team = gl.groups.create({"name": "team", "path": "team"})
g.share(team.id, 30)
g = gl.groups.get(g.id)
out["shared"] = [[s["group_id"] == team.id, s["group_access_level"]] for s in g.shared_with_groups]
g.unshare(team.id)
out["unshared"] = gl.groups.get(g.id).shared_with_groups
g.customattributes.set("color", "blue")
out["attrs"] = [[a.key, a.value] for a in g.customattributes.list()]
g.customattributes.delete("color")
out["after"] = len(g.customattributes.list())
`);
  assert.deepEqual(out, { shared: [[true, 30]], unshared: [], attrs: [['color', 'blue']], after: 0 });
});

test('python-gitlab: default branch protection of new projects, and of groups', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "guarded", "initialize_with_readme": True})
out["personal"] = [[b.name, b.push_access_levels[0]["access_level"], b.merge_access_levels[0]["access_level"]] for b in p.protectedbranches.list()]
g = gl.groups.create({"name": "open-group", "path": "open-group", "default_branch_protection": 0})
out["group_level"] = g.default_branch_protection
q = gl.projects.create({"name": "unguarded", "namespace_id": g.id, "initialize_with_readme": True})
out["in_open_group"] = [b.name for b in q.protectedbranches.list()]
g.default_branch_protection = 2
g.save()
out["group_level_after"] = gl.groups.get(g.id).default_branch_protection
`);
  assert.deepEqual(out, { personal: [['main', 40, 40]], group_level: 0, in_open_group: [], group_level_after: 2 });
});

test('python-gitlab: deleting a group that holds projects', { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "to-delete", "path": "to-delete"})
s = gl.groups.create({"name": "to-delete-sub", "path": "to-delete-sub", "parent_id": g.id})
p = gl.projects.create({"name": "inside", "namespace_id": s.id, "initialize_with_readme": True})
g.delete()
try:
    gl.projects.get(p.id)
    out["project"] = "still there"
except gitlab.GitlabGetError as e:
    out["project"] = e.response_code
out["groups"] = [x.path for x in gl.groups.list(search="to-delete")]
`);
  assert.deepEqual(out, { project: 404, groups: [] });
});

test("python-gitlab: a project's groups and users, starred projects, languages, namespace exists, topics, uploads", { skip: pythonSkip }, async () => {
  const out = await py(`
g = gl.groups.create({"name": "pg-parent", "path": "pg-parent"})
p = gl.projects.create({"name": "extras", "namespace_id": g.id, "initialize_with_readme": True})
out["groups"] = [x.full_path for x in p.groups.list()]
out["users"] = [x.username for x in p.users.list()]
p.star()
me = gl.users.get(gl.http_get("/user")["id"])
out["starred"] = [x.path for x in me.starred_projects.list()]
p.files.create({"file_path": "main.py", "branch": "main", "content": "print('hi')", "commit_message": "code"})
out["languages"] = p.languages()
out["exists"] = gl.http_get("/namespaces/pg-parent/exists")
t = gl.topics.create({"name": "py-topic", "title": "Py topic"})
t.description = "described"
t.save()
out["topic"] = [gl.topics.get(t.id).description, gl.topics.get(t.id).title]
t.delete()
up = p.upload("shot.png", filedata=png)
# python-gitlab 3.12 keeps alt, url and markdown of the answer.
out["upload"] = [up["alt"], up["markdown"] == "![shot](%s)" % up["url"], up["url"].startswith("/uploads/")]
r = gl.session.get(os.environ["GL_URL"] + "/pg-parent/extras" + up["url"], headers={"PRIVATE-TOKEN": os.environ["GL_TOKEN"]})
out["served"] = [r.status_code, r.content == png]
`);
  assert.deepEqual(out, {
    groups: ['pg-parent'], users: ['gpadmin'], starred: ['extras'], languages: { Python: 100 },
    exists: { exists: true, suggests: ['pg-parent1'] }, topic: ['described', 'Py topic'],
    upload: ['shot', true, true], served: [200, true],
  });
});
