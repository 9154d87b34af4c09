import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeSpamLog, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab (3.12) has no spam log objects; a client reaches the extension through its generic HTTP calls,
// with the pagination and errors it applies to every endpoint.

const server = pythonServer();
let admin: TestUser;
let spammer: TestUser;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  admin = await makeUser(server.t.app, { admin: true });
  spammer = await makeUser(server.t.app);
  for (const title of ['one', 'two', 'three']) await makeSpamLog(server.t.app, { userId: spammer.user.id, title });
});

test('http_list pages through the spam log; mark_as_ham and delete; a member is refused', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, admin.token, `
# The next page's link is built on the server's external URL; this client reaches it by another address.
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"], keep_base_url=True)
rows = gl.http_list("/admin/spam_logs", per_page=2, get_all=True)
out["titles"] = [r["title"] for r in rows]
first = rows[-1]["id"]
out["ham"] = gl.http_post(f"/admin/spam_logs/{first}/mark_as_ham")["submitted_as_ham"]
out["hams"] = [r["title"] for r in gl.http_list("/admin/spam_logs", query_data={"submitted_as_ham": True}, get_all=True)]
gl.http_delete(f"/admin/spam_logs/{first}")
out["left"] = len(gl.http_list("/admin/spam_logs", get_all=True))
other = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["OTHER_TOKEN"])
out["member"] = attempt(lambda: other.http_list("/admin/spam_logs", get_all=True))[0]
`, { env: { OTHER_TOKEN: spammer.token } });
  assert.deepEqual(out, { titles: ['three', 'two', 'one'], ham: true, hams: ['one'], left: 2, member: 403 });
});
