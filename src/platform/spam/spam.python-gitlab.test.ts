import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../../../test/support/app.ts';
import { makeProject, makeUser, startSpamStandIns, type SpamStandIns, type TestUser } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab (3.12) meeting a spam refusal and repeating the request with the CAPTCHA headers, as a client would.

const server = pythonServer();
let svc: SpamStandIns;
let user: TestUser;
let projectId = 0;
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  svc = await startSpamStandIns();
  user = await makeUser(server.t.app);
  const admin = await makeUser(server.t.app, { admin: true });
  projectId = (await makeProject(server.t.app, { visibility: 20 })).id;
  const r = await call(server.t.app, 'PUT', '/application/settings', {
    token: admin.token,
    body: { spam_check_blocked_words: ['casino'], recaptcha_enabled: true, recaptcha_site_key: 'site-key', recaptcha_private_key: 'recaptcha-secret', recaptcha_verify_url: `${svc.url}/siteverify` },
  });
  assert.equal(r.status, 200);
});
after(async () => { if (svc) await svc.close(); });

test('project.issues.create: a 409 asking for a CAPTCHA, then the retry with the headers creates the issue', { skip: pythonSkip }, async () => {
  const out = await pythonGitlab(server.url, user.token, `
project = gl.projects.get(${projectId}, lazy=True)
try:
    project.issues.create({"title": "casino night"})
except gitlab.GitlabCreateError as e:
    out["refused"] = [e.response_code, json.loads(e.response_body)]
body = out["refused"][1]
gl.headers["X-Service-Captcha-Response"] = "solved"
gl.headers["X-Service-Spam-Log-Id"] = str(body["spam_log_id"])
issue = project.issues.create({"title": "casino night"})
out["created"] = issue.title
out["again"] = attempt(lambda: project.issues.create({"title": "casino night"}))[0]
`);
  const log = await server.t.app.db.selectFrom('spam_logs').select('id').orderBy('id').executeTakeFirstOrThrow();
  assert.deepEqual(out.refused, [409, {
    needs_captcha_response: true, spam_log_id: log.id, captcha_site_key: 'site-key',
    message: { error: 'Your issue has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.' },
  }]);
  assert.equal(out.created, 'casino night');
  assert.equal(out.again, 409);
});
