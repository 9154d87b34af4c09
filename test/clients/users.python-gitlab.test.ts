import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser } from '../support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (3.12) as its users call it: Python booleans, multipart bodies, the users area's answers.

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'pyadmin', admin: true })).token;
});

const py = (script: string, env: Record<string, string> = {}) => pythonGitlab(server.url, token, script, { env });

test('python-gitlab: boolean filters and flags sent as True/False', { skip: pythonSkip }, async () => {
  const out = await py(`
u = gl.users.create({"email": "bool@example.com", "username": "booluser", "name": "Bool", "password": "s3cret-password"})
u.block()
out["blocked"] = [x.username for x in gl.users.list(blocked=True)]
out["active"] = sorted(x.username for x in gl.users.list(active=True))
try:
    gl.http_get("/users", query_data={"blocked": "yes"})
except gitlab.GitlabHttpError as e:
    out["yes"] = [e.response_code, e.error_message]
gl.users.delete(u.id, hard_delete=True)
out["gone"] = [x.username for x in gl.users.list(username="booluser")]
`);
  assert.deepEqual(out, {
    blocked: ['booluser'],
    active: ['pyadmin'],
    yes: [400, 'blocked is invalid'],
    gone: [],
  });
});

test('python-gitlab: searches take _ and % literally', { skip: pythonSkip }, async () => {
  const out = await py(`
for name in ["a_b", "axb", "c%d"]:
    gl.users.create({"email": name.replace("%", "p") + "@example.com", "username": name.replace("%", "p"), "name": "Name " + name, "password": "s3cret-password"})
out["underscore"] = sorted(x.username for x in gl.users.list(search="a_b"))
out["percent"] = sorted(x.username for x in gl.users.list(search="c%d"))
gl.projects.create({"name": "topical", "topics": ["my_topic", "myxtopic"]})
out["topics"] = sorted(x.name for x in gl.topics.list(search="my_topic"))
`);
  assert.deepEqual(out, { underscore: ['a_b'], percent: ['cpd'], topics: ['my_topic'] });
});

test('python-gitlab: block, unblock, ban, unban, deactivate, activate answer as the reference', { skip: pythonSkip }, async () => {
  const out = await py(`
u = gl.users.create({"email": "states@example.com", "username": "stateuser", "name": "States", "password": "s3cret-password"})
def call(action):
    try:
        return getattr(u, action)()
    except gitlab.GitlabError as e:
        return [e.response_code, e.error_message]
out["steps"] = [[a, call(a), gl.users.get(u.id).state] for a in
    ["unblock", "block", "block", "activate", "unblock", "unban", "ban", "ban", "block", "unban",
     "activate", "deactivate", "deactivate", "unblock", "activate", "activate"]]
`);
  assert.deepEqual(out.steps, [
    ['unblock', false, 'active'],
    ['block', true, 'blocked'],
    ['block', null, 'blocked'],
    ['activate', [403, '403 Forbidden - A blocked user must be unblocked to be activated'], 'blocked'],
    ['unblock', true, 'active'],
    ['unban', [403, 'You cannot unban active users.'], 'active'],
    ['ban', true, 'banned'],
    ['ban', [403, 'You cannot ban banned users.'], 'banned'],
    ['block', null, 'banned'],
    ['unban', true, 'active'],
    ['activate', false, 'active'],
    ['deactivate', true, 'deactivated'],
    ['deactivate', null, 'deactivated'],
    ['unblock', [403, '403 Forbidden - Deactivated users cannot be unblocked by the API'], 'deactivated'],
    ['activate', true, 'active'],
    ['activate', false, 'active'],
  ]);
});

test('form bodies with arrays of hashes group keys as Rack does; scopes take a comma-separated list', { skip: pythonSkip }, async () => {
  const out = await py(`
p = gl.projects.create({"name": "forms", "initialize_with_readme": True})
# The form body of the ruby and perl clients, sent through python-gitlab's own session.
form = [("branch", "main"), ("commit_message", "two files"),
        ("actions[][action]", "create"), ("actions[][file_path]", "a.txt"), ("actions[][content]", "A&B"),
        ("actions[][action]", "create"), ("actions[][file_path]", "b.txt"), ("actions[][content]", "C")]
r = gl.session.post(gl.api_url + "/projects/%d/repository/commits" % p.id, data=form, headers={"PRIVATE-TOKEN": os.environ["GL_TOKEN"]})
out["commit"] = r.status_code if r.status_code == 201 else r.text
out["files"] = sorted(x["path"] for x in p.repository_tree(ref="main", recursive=False))
try:
    out["a"] = p.files.get(file_path="a.txt", ref="main").decode().decode()
except gitlab.GitlabError as e:
    out["a"] = str(e)
u = gl.users.create({"email": "scopes@example.com", "username": "scopeuser", "name": "Scopes", "password": "s3cret-password"})
pat = u.personal_access_tokens.create({"name": "two", "scopes": ["api", "read_user"]})
out["scopes"] = pat.scopes
`);
  assert.deepEqual(out, { commit: 201, files: ['README.md', 'a.txt', 'b.txt'], a: 'A&B', scopes: ['api', 'read_user'] });
});

test('python-gitlab: multipart bodies (a file attached) carry their fields; undeclared files are ignored; limits hold', { skip: pythonSkip }, async () => {
  const out = await py(`
import io, base64
png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
u = gl.users.create({"email": "pic@example.com", "username": "picuser", "name": "Pic User", "password": "s3cret-password", "bio": "has a picture", "avatar": io.BytesIO(png)})
out["created"] = [u.username, u.name, u.bio]
u.name = "Pic Renamed"
u.avatar = io.BytesIO(png)
u.save()
out["updated"] = gl.users.get(u.id).name
try:
    gl.users.create({"email": "big@example.com", "username": "bigpic", "name": "Big", "password": "s3cret-password", "avatar": io.BytesIO(b"x" * 300 * 1024)})
except gitlab.GitlabError as e:
    out["big"] = [e.response_code, e.error_message]
out["big_exists"] = len(gl.users.list(username="bigpic"))
# A file part on a route that takes no file: its fields still count.
g = gl.http_post("/groups", post_data={"name": "Multi", "path": "multi"}, files={"file": ("x.txt", b"ignored")})
out["group"] = g["full_path"]
`);
  assert.deepEqual(out, {
    created: ['picuser', 'Pic User', 'has a picture'],
    updated: 'Pic Renamed',
    big: [400, { avatar: ['is too big (should be at most 200 KB)'] }],
    big_exists: 0,
    group: 'multi',
  });
  // Nothing is left behind in the temporary upload folder.
  const { readdir } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const left = await readdir(join(server.t.app.config.dataDir, 'uploads', 'tmp')).catch(() => []);
  assert.deepEqual(left, []);
});

test('python-gitlab: reserved names per level: top-level routes for top-level namespaces, wildcard routes below', { skip: pythonSkip }, async () => {
  const out = await py(`
def attempt(fn):
    try:
        return fn()
    except gitlab.GitlabError as e:
        return [e.response_code, e.error_message]
g = gl.groups.create({"name": "Levels", "path": "levels"})
out["project_api"] = attempt(lambda: gl.projects.create({"name": "api", "path": "api", "namespace_id": g.id}).path_with_namespace)
g2 = gl.groups.create({"name": "Levels two", "path": "levels2"})
out["subgroup_api"] = attempt(lambda: gl.groups.create({"name": "api", "path": "api", "parent_id": g2.id}).full_path)
out["top_api"] = attempt(lambda: gl.groups.create({"name": "api", "path": "api"}).full_path)
out["project_tree"] = attempt(lambda: gl.projects.create({"name": "tree", "path": "tree", "namespace_id": g.id}).path_with_namespace)
out["subgroup_dash"] = attempt(lambda: gl.groups.create({"name": "dash", "path": "-", "parent_id": g.id}).full_path)
`);
  assert.deepEqual(out.project_api, 'levels/api');
  assert.deepEqual(out.subgroup_api, 'levels2/api');
  assert.deepEqual(out.top_api[0], 400);
  assert.match(JSON.stringify(out.top_api[1]), /api is a reserved name/);
  assert.deepEqual(out.project_tree[0], 400);
  assert.match(JSON.stringify(out.project_tree[1]), /tree is a reserved name/);
  assert.deepEqual(out.subgroup_dash[0], 400);
});

test('python-gitlab: version, metadata, SSH keys, e-mails, status, custom attributes, memberships', { skip: pythonSkip }, async () => {
  const { ed25519Key } = await import('../support/ssh-key-fixtures.ts');
  const { parseSshPublicKey } = await import('../../src/platform/crypto/ssh-keys.ts');
  const key1 = ed25519Key('one@example.com');
  const out = await py(`
gl.auth()
out["version"] = list(gl.version())
out["metadata"] = sorted(gl.http_get("/metadata").keys())
u = gl.users.create({"email": "prof@example.com", "username": "profuser", "name": "Prof User", "password": "s3cret-password"})
k = u.keys.create({"title": "laptop", "key": os.environ["KEY1"]})
out["key"] = [k.title, k.key.split(" ", 2)[2], k.key.split(" ")[:2] == os.environ["KEY1"].split(" ")[:2], k.usage_type]
out["keys"] = [x.title for x in u.keys.list()]
mine = gl.user.keys.create({"title": "mine", "key": os.environ["KEY2"]})
out["my_keys"] = [x.title for x in gl.user.keys.list()]
found = gl.keys.get(k.id)
out["by_id"] = [found.title, found.user["username"]]
fp = gl.keys.get(fingerprint=os.environ["FP1"])
out["by_fingerprint"] = [fp.id == k.id, fp.user["username"]]
try:
    u.keys.create({"title": "again", "key": os.environ["KEY1"]})
except gitlab.GitlabError as e:
    out["dup"] = [e.response_code, e.error_message]
mine.delete()
out["my_keys_after"] = len(gl.user.keys.list())
e = u.emails.create({"email": "second@example.com", "skip_confirmation": True})
out["emails"] = [[x.email, x.confirmed_at is not None] for x in u.emails.list()]
try:
    gl.user.emails.create({"email": "prof@example.com"})
except gitlab.GitlabError as err:
    out["email_taken"] = [err.response_code, err.error_message]
e.delete()
out["emails_after"] = len(u.emails.list())
s = gl.user.status.get()
out["no_status"] = [s.emoji, s.message]
s.message = "out to lunch"
s.availability = "busy"
s.save()
gl.auth()
st = gl.users.get(gl.user.id, lazy=True).status.get()
out["status"] = [st.emoji, st.message, st.availability, st.message_html]
u.customattributes.set("team", "blue")
out["attrs"] = [[a.key, a.value] for a in u.customattributes.list()]
out["attr"] = u.customattributes.get("team").value
u.customattributes.delete("team")
out["attrs_after"] = len(u.customattributes.list())
g = gl.groups.create({"name": "Member Group", "path": "member-group"})
g.members.create({"user_id": u.id, "access_level": 30})
out["memberships"] = [[m.source_name, m.source_type, m.access_level] for m in u.memberships.list()]
out["project_memberships"] = len(u.memberships.list(type="Project"))
`, { KEY1: key1, KEY2: ed25519Key('two@example.com'), FP1: `SHA256:${parseSshPublicKey(key1)!.fingerprintSha256}` });
  assert.deepEqual(out, {
    version: ['15.11.0', 'bellows'],
    metadata: ['enterprise', 'kas', 'revision', 'version'],
    // The comment (often an e-mail address) is replaced by the owner's name and the host.
    key: ['laptop', `Prof User (${new URL(server.t.app.config.externalUrl).hostname})`, true, 'auth_and_signing'],
    keys: ['laptop'],
    my_keys: ['mine'],
    by_id: ['laptop', 'profuser'],
    by_fingerprint: [true, 'profuser'],
    dup: [400, { fingerprint_sha256: ['has already been taken'] }],
    my_keys_after: 0,
    emails: [['second@example.com', true]],
    email_taken: [400, { email: ['has already been taken'] }],
    emails_after: 0,
    no_status: [null, null],
    status: ['speech_balloon', 'out to lunch', 'busy', '<p dir="auto">out to lunch</p>'],
    attrs: [['team', 'blue']],
    attr: 'blue',
    attrs_after: 0,
    memberships: [['Member Group', 'Namespace', 30]],
    project_memberships: 0,
  });
});

// An ed25519 public key made with `gpg --quick-gen-key`; gpg gives its fingerprint as F8A095B98CBC35F5386D08FA69A08D2986F3A408.
const GPG_KEY = `-----BEGIN PGP PUBLIC KEY BLOCK-----

mDMEawVKyRYJKwYBBAHaRw8BAQdAGUTsNk2hloHmzUPWxIsy5eAuC4Wi6tfZxYdn
QBNUPLe0GlRlc3QgS2V5IDxncGdAZXhhbXBsZS5jb20+iJAEExYIADgWIQT4oJW5
jLw19ThtCPppoI0phvOkCAUCawVKyQIbAwULCQgHAgYVCgkICwIEFgIDAQIeAQIX
gAAKCRBpoI0phvOkCAG0AQCWze9W1zdk20gz/SH9EAUh4p8ji3/Pvc+tForse9w4
TgEAsWFkhBUmNFxX2E9JjeM/GmbaRiXLVzBSpJ3GxXhicAk=
=r7y4
-----END PGP PUBLIC KEY BLOCK-----`;

test('python-gitlab: GPG keys of the signed-in user and of a user', { skip: pythonSkip }, async () => {
  const out = await py(`
gl.auth()
u = gl.users.create({"email": "gpg@example.com", "username": "gpguser", "name": "Gpg User", "password": "s3cret-password"})
k = u.gpgkeys.create({"key": os.environ["GPG"]})
out["created"] = [k.key == os.environ["GPG"].strip(), bool(k.created_at)]
out["listed"] = [x.id == k.id for x in u.gpgkeys.list()]
def attempt(fn):
    try:
        return fn()
    except gitlab.GitlabError as e:
        return [e.response_code, e.error_message]
out["dup"] = attempt(lambda: gl.user.gpgkeys.create({"key": os.environ["GPG"]}))
out["bad"] = attempt(lambda: gl.user.gpgkeys.create({"key": "not a key"}))
out["mine"] = len(gl.user.gpgkeys.list())
u.gpgkeys.delete(k.id)
out["after"] = len(u.gpgkeys.list())
mine = gl.user.gpgkeys.create({"key": os.environ["GPG"]})
out["mine_after_add"] = len(gl.user.gpgkeys.list())
mine.delete()
out["mine_after_delete"] = len(gl.user.gpgkeys.list())
`, { GPG: GPG_KEY });
  assert.deepEqual(out, {
    created: [true, true],
    listed: [true],
    dup: [400, { fingerprint: ['has already been taken'] }],
    bad: [400, { key: ["is invalid. A valid public GPG key begins with '-----BEGIN PGP PUBLIC KEY BLOCK-----'"] }],
    mine: 0,
    after: 0,
    mine_after_add: 1,
    mine_after_delete: 0,
  });
});
