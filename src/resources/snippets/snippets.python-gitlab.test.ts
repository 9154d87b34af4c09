import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab (3.12) driving `gl.snippets` and `project.snippets` (with notes and award emoji) as its users do.

const server = pythonServer();
let user: TestUser;
let admin: TestUser;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  user = await makeUser(server.t.app);
  admin = await makeUser(server.t.app, { admin: true });
});

test('gl.snippets: create, get, content, list, public, update, user agent detail, delete', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
s = gl.snippets.create({"title": "py", "file_name": "a.py", "content": "print(1)\\n", "visibility": "public"})
out["created"] = [s.title, s.file_name, s.visibility, [f["path"] for f in s.files]]
got = gl.snippets.get(s.id)
out["content"] = got.content().decode()
out["mine"] = [x.id for x in gl.snippets.list()]
out["public"] = s.id in [x.id for x in gl.snippets.public(all=True)]
got.title = "renamed"
got.content = "print(2)\\n"
got.save()
again = gl.snippets.get(s.id)
out["updated"] = [again.title, again.content().decode()]
out["agent"] = attempt(lambda: again.user_agent_detail())
out["id"] = s.id
again.delete()
out["gone"] = attempt(lambda: gl.snippets.get(s.id))
`);
  assert.deepEqual(out.created, ['py', 'a.py', 'public', ['a.py']]);
  assert.equal(out.content, 'print(1)\n');
  assert.deepEqual(out.mine, [out.id]);
  assert.equal(out.public, true);
  assert.deepEqual(out.updated, ['renamed', 'print(2)\n']);
  assert.deepEqual(out.agent, [403, '403 Forbidden']);
  assert.deepEqual(out.gone, [404, '404 Snippet Not Found']);

  const adm = await pythonGitlab(server.url, admin.token, `
s = gl.snippets.create({"title": "x", "file_name": "x.txt", "content": "x"})
d = s.user_agent_detail()
out["detail"] = sorted(d.keys())
out["agent"] = d["user_agent"].startswith("python-gitlab")
`);
  assert.deepEqual(adm.detail, ['akismet_submitted', 'ip_address', 'user_agent']);
  assert.equal(adm.agent, true);
});

test('project.snippets with notes, discussions and award emoji', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
p = gl.projects.create({"name": "snippy", "visibility": "private"})
s = p.snippets.create({"title": "ps", "file_name": "f.md", "content": "# f", "visibility": "private"})
out["listed"] = [x.title for x in p.snippets.list()]
out["content"] = p.snippets.get(s.id).content().decode()
note = s.notes.create({"body": "a note"})
out["notes"] = [n.body for n in s.notes.list()]
d = s.discussions.create({"body": "a thread"})
out["discussions"] = len(s.discussions.list())
e = s.awardemojis.create({"name": "thumbsup"})
out["awards"] = [a.name for a in s.awardemojis.list()]
s.description = "described"
s.save()
out["description"] = p.snippets.get(s.id).description
s.delete()
out["after"] = [x.id for x in p.snippets.list()]
`);
  assert.deepEqual(out.listed, ['ps']);
  assert.equal(out.content, '# f');
  assert.deepEqual(out.notes, ['a note']);
  assert.equal(out.discussions, 2);
  assert.deepEqual(out.awards, ['thumbsup']);
  assert.equal(out.description, 'described');
  assert.deepEqual(out.after, []);
});
