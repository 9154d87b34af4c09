import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser, type TestUser } from '../support/fixtures.ts';
import { startHookReceiver, type HookReceiver } from '../support/hook-receiver.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';
import { updateApplicationSettings } from '../../src/platform/application-settings.ts';

// python-gitlab (3.12, which has GroupHook) driving `group.hooks` as its users do, and a delivery of the group hook
// for an issue opened in one of the group's projects, received by a local HTTP server.

const server = pythonServer();
let user: TestUser;
let receiver: HookReceiver;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  receiver = await startHookReceiver();
  user = await makeUser(server.t.app);
  await updateApplicationSettings(server.t.app, { allow_local_requests_from_web_hooks_and_services: true });
});
after(async () => { await receiver?.close(); });

test('group.hooks: create, list, get, save, delete; a bad URL is refused; a delivery carries the secret', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
g = gl.groups.create({"name": "hooked-group", "path": "hooked-group"})
h = g.hooks.create({"url": os.environ["HOOK_URL"], "push_events": False, "issues_events": True, "subgroup_events": True, "token": "g-secret"})
out["created"] = [h.url, h.push_events, h.issues_events, h.subgroup_events, h.group_id == g.id, hasattr(h, "token")]
out["list"] = [x.url for x in g.hooks.list()]
got = g.hooks.get(h.id)
out["got"] = [got.id == h.id, got.issues_events, got.note_events, got.enable_ssl_verification, got.alert_status]
got.note_events = True
got.save()
again = g.hooks.get(h.id)
out["saved"] = [again.url, again.note_events, again.issues_events]
out["bad"] = attempt(lambda: g.hooks.create({"url": "gopher://example.com/"}))
p = gl.projects.create({"name": "in-group", "namespace_id": g.id})
i = p.issues.create({"title": "Hooked"})
out["ids"] = [g.id, p.id, i.iid]
out["hook_id"] = h.id
`, { env: { HOOK_URL: receiver.url } });
  assert.deepEqual(out.created, [receiver.url, false, true, true, true, false]);
  assert.deepEqual(out.list, [receiver.url]);
  assert.deepEqual(out.got, [true, true, false, true, 'executable']);
  assert.deepEqual(out.saved, [receiver.url, true, true]);
  assert.deepEqual(out.bad, [422, 'Invalid url given']);

  receiver.take();
  await server.t.app.jobs.drain();
  const got = receiver.take();
  assert.equal(got.length, 1);
  assert.equal(got[0].headers['x-gitlab-event'], 'Issue Hook');
  assert.equal(got[0].headers['x-gitlab-token'], 'g-secret');
  assert.equal(got[0].body.object_kind, 'issue');
  assert.equal(got[0].body.project.id, out.ids[1]);
  assert.equal(got[0].body.object_attributes.iid, out.ids[2]);

  const removed = await pythonGitlab(server.url, user.token, `
g = gl.groups.get(int(os.environ["GROUP_ID"]))
g.hooks.delete(int(os.environ["HOOK_ID"]))
out["after"] = [x.id for x in g.hooks.list()]
out["missing"] = attempt(lambda: g.hooks.get(int(os.environ["HOOK_ID"])))
`, { env: { GROUP_ID: String(out.ids[0]), HOOK_ID: String(out.hook_id) } });
  assert.deepEqual(removed.after, []);
  assert.deepEqual(removed.missing, [404, '404 Group hook Not Found']);
});
