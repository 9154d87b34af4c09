import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab (3.12) driving `project.wikis` as its users do, nested slugs included.

const server = pythonServer();
let user: TestUser;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  user = await makeUser(server.t.app);
});

test('project.wikis: create, list, get, save, delete', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
p = gl.projects.create({"name": "wikied"})
w = p.wikis.create({"title": "Home", "content": "hello"})
n = p.wikis.create({"title": "docs/Install guide", "content": "== install", "format": "asciidoc"})
out["created"] = [w.slug, n.slug, n.format, n.title]
out["list"] = [x.slug for x in p.wikis.list()]
out["with_content"] = [x.content for x in p.wikis.list(with_content=True)]
page = p.wikis.get("docs/Install-guide")
out["got"] = [page.title, page.content, page.encoding]
page.content = "== install now"
page.save()
out["saved"] = p.wikis.get("docs/Install-guide").content
p.wikis.delete("Home")
out["after"] = [x.slug for x in p.wikis.list()]
out["missing"] = attempt(lambda: p.wikis.get("Home"))
`);
  assert.deepEqual(out.created, ['Home', 'docs/Install-guide', 'asciidoc', 'Install guide']);
  assert.deepEqual(out.list, ['Home', 'docs/Install-guide']);
  assert.deepEqual(out.with_content, ['hello', '== install']);
  assert.deepEqual(out.got, ['Install guide', '== install', 'UTF-8']);
  assert.equal(out.saved, '== install now');
  assert.deepEqual(out.after, ['docs/Install-guide']);
  assert.deepEqual(out.missing, [404, '404 Wiki Page Not Found']);
});
