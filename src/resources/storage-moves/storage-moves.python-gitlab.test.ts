import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeProject, quickUser, reloadProject } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { shards } from './testing.ts';

// python-gitlab (v3.12 has no manager for storage moves) driving the area through its HTTP client: its paginated
// listing, a project move, the whole-shard move and the errors it raises.

const server = pythonServer({ config: { storage: shards() } as any });

const SCRIPT = String.raw`
pid = int(os.environ['PROJECT'])
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
anon = gitlab.Gitlab(os.environ['GL_URL'])
try:
    anon.http_list('/project_repository_storage_moves', get_all=True)
except gitlab.exceptions.GitlabError as e:
    out['anonymous'] = e.response_code
`;

test('python-gitlab schedules and lists moves', { skip: pythonSkip }, async () => {
  const admin = await quickUser(server.t.app, { admin: true });
  const project = await makeProject(server.t.app, { repository: true });
  const out = await pythonGitlab(server.url, admin.token, SCRIPT, { env: { PROJECT: String(project.id) } });
  assert.deepEqual(out.created, ['scheduled', 'default', 'second', project.id]);
  assert.deepEqual(out.again, [400, { project: ['is read-only'] }]);
  assert.deepEqual(out.unknown, [400, 'source_storage_name does not have a valid value']);
  assert.deepEqual(out.shard, { message: '202 Accepted' });
  assert.equal(out.listed.length, 1);
  assert.equal(out.one, out.listed[0]);
  assert.equal(out.anonymous, 401);
  await server.t.app.jobs.drain();
  const row = await reloadProject(server.t.app, project.id);
  assert.equal(row.repository_storage, 'second');
  assert.equal(row.repository_read_only, 0);
});
