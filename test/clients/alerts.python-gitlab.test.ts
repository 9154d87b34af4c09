import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { makeAlert, makeProject, makeUser } from '../support/fixtures.ts';

// python-gitlab (3.12) has no manager for alert metric images, so its users reach them through its raw request
// methods (`http_post` with `files`, `http_get`, `http_put`, `http_delete`): the multipart upload, the list, the
// link change and the removal as the client sends them, and the refusals as the client reports them.
const run = promisify(execFile);
const python = ['/usr/bin/python3', 'python3'].find((p) => (p.startsWith('/') ? existsSync(p) : true)
  && spawnSync(p, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0);
const skip = python ? false : 'python-gitlab is not installed';

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

let t: TestApp;
let url = '';
let token = '';
before(async () => {
  if (!python) return;
  t = await buildTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  token = (await makeUser(t.app, { username: 'alertadmin', admin: true })).token;
});
after(async () => { if (t) await t.close(); });

test('python-gitlab: alert metric images through the raw request methods', { skip }, async () => {
  const project = await makeProject(t.app, { visibility: 0 });
  const alert = await makeAlert(t.app, project);
  const script = `
import base64, json, os, gitlab
gl = gitlab.Gitlab(os.environ["GL_URL"], private_token=os.environ["GL_TOKEN"])
path = "/projects/%s/alert_management_alerts/%s/metric_images" % (os.environ["PID"], os.environ["IID"])
png = base64.b64decode(os.environ["PNG"])
out = {}
made = gl.http_post(path, post_data={"url": "https://grafana.example.com/d/1", "url_text": "Dashboard"}, files={"file": ("graph.png", png, "image/png")})
out["made"] = [made["filename"], made["url"], made["url_text"], made["file_path"].endswith("/graph.png")]
out["list"] = [m["filename"] for m in gl.http_get(path)]
upd = gl.http_put(path + "/%s" % made["id"], post_data={"url_text": "Renamed"})
out["updated"] = upd["url_text"]
try:
    gl.http_post(path, files={"file": ("graph.txt", png, "text/plain")})
except gitlab.GitlabHttpError as e:
    out["refused"] = [e.response_code, e.error_message]
try:
    gl.http_post(path, post_data={"url": "http://10.0.0.8/"}, files={"file": ("graph.png", png, "image/png")})
except gitlab.GitlabHttpError as e:
    out["private"] = [e.response_code, e.error_message]
gl.http_delete(path + "/%s" % made["id"])
out["after"] = gl.http_get(path)
print(json.dumps(out))
`;
  const { stdout } = await run(python!, ['-c', script], {
    env: { ...process.env, GL_URL: url, GL_TOKEN: token, PID: String(project.id), IID: String(alert.iid), PNG: PNG_B64 }, timeout: 60_000,
  });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.deepEqual(out, {
    made: ['graph.png', 'https://grafana.example.com/d/1', 'Dashboard', true],
    list: ['graph.png'],
    updated: 'Renamed',
    refused: [400, 'File does not have a supported extension. Only png, jpg, jpeg, gif, bmp, tiff, ico, and webp are supported'],
    private: [400, 'Url is blocked: Requests to the local network are not allowed'],
    after: [],
  });
});
