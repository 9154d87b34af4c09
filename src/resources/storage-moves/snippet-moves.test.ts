import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, makeSnippet, quickUser, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import { gitClient } from '../repository/testing.ts';
import { snippetRepositoryPath } from '../projects/repository.ts';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { READ_ONLY, moveApp, readMove, shards, type MoveApp } from './testing.ts';

// Snippet repository storage moves: the project moves' machinery (one state machine, one job kind) with a snippet as
// the container. Real repositories are moved between shards, then cloned and pushed from where they now live.

let shardApp: MoveApp;
let t: TestApp;
let host: string;
let admin: TestUser;
let alice: TestUser;
const g = gitClient();

before(async () => {
  shardApp = await moveApp(shards());
  ({ t, host, admin } = shardApp);
  alice = await quickUser(t.app);
});
after(async () => { await t.close(); });

const other = (shard: string) => (shard === 'default' ? 'second' : 'default');
const row = (id: number) => t.app.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('snippet repository storage moves', () => {
  test('a move: scheduled read-only, copied and verified, switched; the snippet is cloned and pushed from its new shard', async () => {
    const s = await makeSnippet(t.app, alice.user, { visibility: 'public', files: [{ file_path: 'a.txt', content: 'one\n' }] });
    const from = s.repository_storage;
    const to = other(from);
    const r = await call(t.app, 'POST', `/snippets/${s.id}/repository_storage_moves`, { token: admin.token, body: { destination_storage_name: to } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), ['id', 'created_at', 'state', 'source_storage_name', 'destination_storage_name', 'error_message', 'snippet']);
    assert.deepEqual({ ...r.body, snippet: undefined }, {
      id: r.body.id, created_at: r.body.created_at, state: 'scheduled', source_storage_name: from, destination_storage_name: to, error_message: null, snippet: undefined,
    });
    assert.equal(r.body.snippet.id, s.id);
    assert.equal(r.body.snippet.author.id, alice.user.id);
    assert.equal('files' in r.body.snippet, false);
    assert.equal((await row(s.id)).repository_read_only, 1);

    // While it moves: no API edit, no push, a second move refused; reads still served.
    const edit = await call(t.app, 'PUT', `/snippets/${s.id}`, { token: alice.token, body: { files: [{ action: 'update', file_path: 'a.txt', content: 'x\n' }] } });
    assert.equal(edit.status, 400);
    assert.deepEqual(edit.body, { message: READ_ONLY });
    const dir = join(g.home, `s${s.id}`);
    const url = `http://${alice.user.username}:${alice.token}@${host}/snippets/${s.id}.git`;
    assert.equal((await g.run(['clone', '-q', url, dir])).code, 0);
    await g.run(['commit', '--allow-empty', '-q', '-m', 'during'], dir);
    const refused = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /read-only/);
    const again = await call(t.app, 'POST', `/snippets/${s.id}/repository_storage_moves`, { token: admin.token, body: { destination_storage_name: to } });
    assert.equal(again.status, 400);
    assert.deepEqual(again.body, { message: { snippet: ['is read-only'] } });
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/raw`, { token: alice.token })).text, 'one\n');

    await t.app.jobs.drain();
    const after = await row(s.id);
    assert.equal(after.repository_storage, to);
    assert.equal(after.repository_read_only, 0);
    assert.equal(existsSync(snippetRepositoryPath(t.config, from, s.id)), false);
    assert.equal(existsSync(snippetRepositoryPath(t.config, to, s.id)), true);
    const one = await readMove(shardApp, 'snippet', r.body.id);
    assert.equal(one.state, 'finished');
    assert.deepEqual((await call(t.app, 'GET', `/snippets/${s.id}/repository_storage_moves/${r.body.id}`, { token: admin.token })).body, one);

    // From the new shard: the API reads it, a fresh clone has it, a push lands there.
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/raw`, { token: alice.token })).text, 'one\n');
    const dir2 = join(g.home, `s${s.id}b`);
    assert.equal((await g.run(['clone', '-q', url, dir2])).code, 0);
    await g.run(['pull', '-q', '--rebase', 'origin', 'main'], dir);
    await import('node:fs').then((fs) => fs.writeFileSync(join(dir, 'a.txt'), 'two\n'));
    await g.run(['commit', '-q', '-am', 'after'], dir);
    const pushed = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/raw`, { token: alice.token })).text, 'two\n');
    const edited = await call(t.app, 'PUT', `/snippets/${s.id}`, { token: alice.token, body: { files: [{ action: 'update', file_path: 'a.txt', content: 'three\n' }] } });
    assert.equal(edited.status, 200);
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/raw`, { token: alice.token })).text, 'three\n');
  });

  test('the whole-shard move moves every snippet on the source, project snippets too', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const a = await makeSnippet(t.app, alice.user, { visibility: 'public' });
    const b = await makeSnippet(t.app, admin.user, { project, visibility: 'public' });
    for (const s of [a, b]) await t.app.db.updateTable('snippets').set({ repository_storage: 'default' }).where('id', '=', s.id).execute();
    // Rows were pointed at `default`: put their repositories there too.
    for (const s of [a, b]) {
      if (s.repository_storage !== 'default') {
        const fs = await import('node:fs');
        fs.mkdirSync(join(snippetRepositoryPath(t.config, 'default', s.id), '..'), { recursive: true });
        fs.renameSync(snippetRepositoryPath(t.config, s.repository_storage, s.id), snippetRepositoryPath(t.config, 'default', s.id));
      }
    }
    const bad = await call(t.app, 'POST', '/snippet_repository_storage_moves', { token: admin.token, body: { source_storage_name: 'nowhere' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'source_storage_name does not have a valid value' });
    const r = await call(t.app, 'POST', '/snippet_repository_storage_moves', { token: admin.token, body: { source_storage_name: 'default', destination_storage_name: 'second' } });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { message: '202 Accepted' });
    await t.app.jobs.drain();
    await t.app.jobs.drain();
    const rows = await t.app.db.selectFrom('snippets').select(['id', 'repository_storage', 'repository_read_only']).where('repository_storage', '=', 'default').execute();
    assert.deepEqual(rows, []);
    for (const s of [a, b]) {
      assert.equal((await row(s.id)).repository_storage, 'second');
      assert.equal(existsSync(snippetRepositoryPath(t.config, 'second', s.id)), true);
    }
    const listed = await call(t.app, 'GET', '/snippet_repository_storage_moves', { token: admin.token, query: { per_page: '100' } });
    assert.ok([a.id, b.id].every((id) => listed.body.some((m: any) => m.snippet.id === id && m.state === 'finished')));
    const ofB = await call(t.app, 'GET', `/snippets/${b.id}/repository_storage_moves`, { token: admin.token });
    assert.equal(ofB.body.length, 1);
    assert.equal(ofB.body[0].snippet.project_id, project.id);
    const dir = join(g.home, `p${b.id}`);
    assert.equal((await g.run(['clone', '-q', `http://x:${admin.token}@${host}/${project.full_path}/snippets/${b.id}.git`, dir])).code, 0);
  });

  test('errors: unknown snippet, a move of another snippet, an unknown shard', async () => {
    const s = await makeSnippet(t.app, alice.user);
    const missing = await call(t.app, 'GET', '/snippets/999999/repository_storage_moves', { token: admin.token });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: '404 Snippet Not Found' });
    assert.equal((await call(t.app, 'POST', '/snippets/999999/repository_storage_moves', { token: admin.token, body: {} })).status, 404);
    const noMove = await call(t.app, 'GET', `/snippets/${s.id}/repository_storage_moves/1`, { token: admin.token });
    assert.equal(noMove.status, 404);
    assert.deepEqual(noMove.body, { message: '404 Not found' });
    const shard = await call(t.app, 'POST', `/snippets/${s.id}/repository_storage_moves`, { token: admin.token, body: { destination_storage_name: 'nowhere' } });
    assert.equal(shard.status, 400);
    assert.deepEqual(shard.body, { message: { destination_storage_name: ['is not included in the list'] } });
    assert.equal((await row(s.id)).repository_read_only, 0);
    assert.equal(Number((await t.app.db.selectFrom('snippet_repository_storage_moves').select((eb) => eb.fn.countAll<number>().as('n')).where('snippet_id', '=', s.id).executeTakeFirstOrThrow()).n), 0);
  });

  test('access: administrators only', async () => {
    const s = await makeSnippet(t.app, alice.user, { visibility: 'public' });
    const cast: RoleCast = await castRoles(t.app, await makeProject(t.app, { visibility: 20 }));
    const routes: Array<[string, string, Record<string, unknown> | undefined, number]> = [
      ['GET', '/snippet_repository_storage_moves', undefined, 200],
      ['GET', `/snippets/${s.id}/repository_storage_moves`, undefined, 200],
      ['POST', '/snippet_repository_storage_moves', { source_storage_name: 'second', destination_storage_name: 'default' }, 202],
      ['POST', `/snippets/${s.id}/repository_storage_moves`, {}, 201],
    ];
    for (const [method, url, body, ok] of routes) {
      for (const role of ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const) {
        const token = role === 'anonymous' ? undefined : cast[role].token;
        const r = await call(t.app, method as any, url, { token, body });
        assert.equal(r.status, role === 'anonymous' ? 401 : role === 'admin' ? ok : 403, `${role} ${method} ${url}`);
      }
      // The author is no administrator either.
      assert.equal((await call(t.app, method as any, url, { token: alice.token, body })).status, 403);
    }
    await t.app.jobs.drain();
  });
});

test('python-gitlab (no storage-move manager in v3.12: its HTTP client) moves a snippet and lists the moves', { skip: pythonSkip }, async () => {
  const s = await makeSnippet(t.app, alice.user, { visibility: 'public' });
  const to = other(s.repository_storage);
  const out = await pythonGitlab(`http://${host}`, admin.token, String.raw`
sid = int(os.environ['SNIPPET'])
move = gl.http_post('/snippets/%d/repository_storage_moves' % sid, post_data={'destination_storage_name': os.environ['TO']})
out['created'] = [move['state'], move['destination_storage_name'], move['snippet']['id']]
try:
    gl.http_post('/snippets/%d/repository_storage_moves' % sid, post_data={})
except gitlab.exceptions.GitlabError as e:
    out['again'] = [e.response_code, e.error_message]
out['listed'] = [m['id'] for m in gl.http_list('/snippets/%d/repository_storage_moves' % sid, get_all=True)]
out['all'] = move['id'] in [m['id'] for m in gl.http_list('/snippet_repository_storage_moves', get_all=True)]
`, { env: { SNIPPET: String(s.id), TO: to } });
  assert.deepEqual(out.created, ['scheduled', to, s.id]);
  assert.deepEqual(out.again, [400, { snippet: ['is read-only'] }]);
  assert.equal(out.listed.length, 1);
  assert.equal(out.all, true);
  await t.app.jobs.drain();
  assert.equal((await row(s.id)).repository_storage, to);
});
