import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { makeProject, quickUser, reloadProject } from '../../../test/support/fixtures.ts';

// python-gitlab (v3.12 has no manager for storage moves) driving the area through its HTTP client: its paginated
// listing, a project move, the whole-shard move and the errors it raises.

let t: TestApp;
let base: string;
before(async () => {
  t = await buildTestApp({ config: { storage: [{ name: 'default', path: 'repositories', weight: 100 }, { name: 'second', path: 'second', weight: 100 }] } as any });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
after(async () => { await t.close(); });

function runPython(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('/usr/bin/python3', ['-'], { env: { ...process.env, ...env }, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as any).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin!.end(script);
  });
}

const SCRIPT = String.raw`
import json, os
import gitlab

gl = gitlab.Gitlab(os.environ['BASE'], private_token=os.environ['TOKEN'])
pid = int(os.environ['PROJECT'])
out = {}
move = gl.http_post('/projects/%d/repository_storage_moves' % pid, post_data={'destination_storage_name': 'second'})
out['created'] = [move['state'], move['source_storage_name'], move['destination_storage_name'], move['project']['id']]
try:
    gl.http_post('/projects/%d/repository_storage_moves' % pid, post_data={'destination_storage_name': 'default'})
except gitlab.exceptions.GitlabError as e:
    out['again'] = [e.response_code, e.error_message]
try:
    gl.http_post('/project_repository_storage_moves', post_data={'source_storage_name': 'nowhere'})
except gitlab.exceptions.GitlabError as e:
    out['unknown'] = [e.response_code, e.error_message]
out['shard'] = gl.http_post('/project_repository_storage_moves', post_data={'source_storage_name': 'default', 'destination_storage_name': 'second'})
out['one'] = gl.http_get('/project_repository_storage_moves/%d' % move['id'])['id']
out['listed'] = [m['id'] for m in gl.http_list('/projects/%d/repository_storage_moves' % pid, get_all=True)]
anon = gitlab.Gitlab(os.environ['BASE'])
try:
    anon.http_list('/project_repository_storage_moves', get_all=True)
except gitlab.exceptions.GitlabError as e:
    out['anonymous'] = e.response_code
print(json.dumps(out))
`;

test('python-gitlab schedules and lists moves', async () => {
  const admin = await quickUser(t.app, { admin: true });
  const project = await makeProject(t.app, { repository: true });
  const r = await runPython(SCRIPT, { BASE: base, TOKEN: admin.token, PROJECT: String(project.id) });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.created, ['scheduled', 'default', 'second', project.id]);
  assert.deepEqual(out.again, [400, { project: ['is read-only'] }]);
  assert.deepEqual(out.unknown, [400, 'source_storage_name does not have a valid value']);
  assert.deepEqual(out.shard, { message: '202 Accepted' });
  assert.equal(out.listed.length, 1);
  assert.equal(out.one, out.listed[0]);
  assert.equal(out.anonymous, 401);
  await t.app.jobs.drain();
  const row = await reloadProject(t.app, project.id);
  assert.equal(row.repository_storage, 'second');
  assert.equal(row.repository_read_only, 0);
});
