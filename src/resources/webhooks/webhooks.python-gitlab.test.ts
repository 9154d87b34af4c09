import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { updateApplicationSettings } from '../../platform/application-settings.ts';

// python-gitlab (3.12) driving `project.hooks` as its users do.

const server = pythonServer();
let user: TestUser;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  user = await makeUser(server.t.app);
  await updateApplicationSettings(server.t.app, { allow_local_requests_from_web_hooks_and_services: true });
});

test('project.hooks: create, list, get, save, delete; a bad URL is refused', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
p = gl.projects.create({"name": "hooked"})
h = p.hooks.create({"url": "http://127.0.0.1:9999/hook", "push_events": False, "issues_events": True, "token": "secret"})
out["created"] = [h.url, h.push_events, h.issues_events, h.project_id == p.id, hasattr(h, "token")]
out["list"] = [x.url for x in p.hooks.list()]
g = p.hooks.get(h.id)
out["got"] = [g.id == h.id, g.issues_events, g.enable_ssl_verification, g.alert_status]
g.note_events = True
g.url = "http://127.0.0.1:9999/other"
g.save()
again = p.hooks.get(h.id)
out["saved"] = [again.url, again.note_events, again.issues_events]
out["bad"] = attempt(lambda: p.hooks.create({"url": "gopher://example.com/"}))
p.hooks.delete(h.id)
out["after"] = [x.id for x in p.hooks.list()]
out["missing"] = attempt(lambda: p.hooks.get(h.id))
`);
  assert.deepEqual(out.created, ['http://127.0.0.1:9999/hook', false, true, true, false]);
  assert.deepEqual(out.list, ['http://127.0.0.1:9999/hook']);
  assert.deepEqual(out.got, [true, true, true, 'executable']);
  assert.deepEqual(out.saved, ['http://127.0.0.1:9999/other', true, true]);
  assert.deepEqual(out.bad, [422, 'Invalid url given']);
  assert.deepEqual(out.after, []);
  assert.deepEqual(out.missing, [404, '404 Project hook Not Found']);
});
