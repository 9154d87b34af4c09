import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { makeAlert, makeProject, makeUser } from '../support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (3.12) has no manager for alert metric images, so its users reach them through its raw request
// methods (`http_post` with `files`, `http_get`, `http_put`, `http_delete`): the multipart upload, the list, the
// link change and the removal as the client sends them, and the refusals as the client reports them.

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'alertadmin', admin: true })).token;
});

test('python-gitlab: alert metric images through the raw request methods', { skip: pythonSkip }, async () => {
  const project = await makeProject(server.t.app, { visibility: 0 });
  const alert = await makeAlert(server.t.app, project);
  const script = `
path = "/projects/%s/alert_management_alerts/%s/metric_images" % (os.environ["PID"], os.environ["IID"])
png = base64.b64decode(os.environ["PNG"])
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
`;
  const out = await pythonGitlab(server.url, token, script, { env: { PID: String(project.id), IID: String(alert.iid), PNG: PNG_B64 } });
  assert.deepEqual(out, {
    made: ['graph.png', 'https://grafana.example.com/d/1', 'Dashboard', true],
    list: ['graph.png'],
    updated: 'Renamed',
    refused: [400, 'File does not have a supported extension. Only png, jpg, jpeg, gif, bmp, tiff, ico, and webp are supported'],
    private: [400, 'Url is blocked: Requests to the local network are not allowed'],
    after: [],
  });
});
