import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeGroup, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';
import { setResolver } from '../../platform/outbound-url.ts';
import { IMPORT_JOB } from './projects.import.ts';

// POST /projects with import_url: refused for local addresses unless the application setting allows them; with it,
// a job mirrors a repository served over HTTP by a second server (another Bellows) into the new project.
// Credentials in the URL work and are never shown back, stored on the project row or written to the job.

let src: TestApp;
let t: TestApp;
let srcAdmin: TestUser;
let admin: TestUser;
let port: number;
let privateRepo: string;
let publicRepo: string;

before(async () => {
  src = await buildTestApp();
  await src.app.listen({ port: 0, host: '127.0.0.1' });
  port = (src.app.server.address() as AddressInfo).port;
  srcAdmin = await quickUser(src.app, { admin: true });
  const tok = srcAdmin.token;
  const p = await call(src.app, 'POST', '/projects', { token: tok, body: { name: 'upstream', default_branch: 'trunk', initialize_with_readme: true } });
  assert.equal(p.status, 201);
  privateRepo = `${p.body.path_with_namespace}.git`;
  await call(src.app, 'POST', `/projects/${p.body.id}/repository/commits`, { token: tok, body: { branch: 'trunk', commit_message: 'two', actions: [{ action: 'create', file_path: 'src/a.ts', content: 'export const a = 1;\n' }] } });
  assert.equal((await call(src.app, 'POST', `/projects/${p.body.id}/repository/branches`, { token: tok, body: { branch: 'feature', ref: 'trunk' } })).status, 201);
  assert.equal((await call(src.app, 'POST', `/projects/${p.body.id}/repository/tags`, { token: tok, body: { tag_name: 'v1', ref: 'trunk' } })).status, 201);
  const pub = await call(src.app, 'POST', '/projects', { token: tok, body: { name: 'open', visibility: 'public', initialize_with_readme: true } });
  publicRepo = `${pub.body.path_with_namespace}.git`;

  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => {
  setResolver(null);
  await t.close();
  await src.close();
});

const allowLocal = (on: boolean) => call(t.app, 'PUT', '/application/settings', { token: admin.token, body: { allow_local_requests_from_web_hooks_and_services: on } });
const projectCount = async () => (await t.app.db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
const jobsOf = () => t.app.db.selectFrom('jobs').selectAll().where('kind', '=', IMPORT_JOB).execute();
const refs = async (id: number) => ({
  branches: (await call(t.app, 'GET', `/projects/${id}/repository/branches`, { token: admin.token })).body.map((b: any) => b.name),
  tags: (await call(t.app, 'GET', `/projects/${id}/repository/tags`, { token: admin.token })).body.map((b: any) => b.name),
});
const srcHead = async (branch: string) => (await call(src.app, 'GET', `/projects/${encodeURIComponent(privateRepo.replace(/\.git$/, ''))}/repository/branches/${branch}`, { token: srcAdmin.token })).body.commit.id;

describe('refused addresses: 400 as the reference, nothing created', () => {
  const cases: Array<[string, string]> = [
    [`http://127.0.0.1:${1025}/a.git`, 'is blocked: Requests to localhost are not allowed'],
    ['http://127.0.0.2:8080/a.git', 'is blocked: Requests to loopback addresses are not allowed'],
    ['http://10.0.0.8/a.git', 'is blocked: Requests to the local network are not allowed'],
    ['https://192.168.1.20/a.git', 'is blocked: Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest/meta-data', 'is blocked: Requests to the link local network are not allowed'],
    ['http://100.64.1.1/a.git', 'is blocked: Requests to the shared address space are not allowed'],
    ['http://[::1]:8080/a.git', 'is blocked: Requests to localhost are not allowed'],
    ['http://[::ffff:10.0.0.1]/a.git', 'is blocked: Requests to the local network are not allowed'],
    ['http://0.0.0.0:8080/a.git', 'is blocked: Requests to localhost are not allowed'],
    ['git://10.1.1.1/a.git', 'is blocked: Requests to the local network are not allowed'],
    ['ftp://example.com/a.git', 'is blocked: Only allowed schemes are http, https, git'],
    ['file:///etc/passwd', 'is blocked: Only allowed schemes are http, https, git'],
    ['ssh://git@example.com/a.git', 'is blocked: Only allowed schemes are http, https, git'],
    ['http://no-such-host.invalid/a.git', 'is blocked: Host cannot be resolved or invalid'],
  ];
  for (const [url, text] of cases) {
    test(url, async () => {
      await allowLocal(false);
      const before = await projectCount();
      const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'refused', import_url: url } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { message: { import_url: [text] } });
      assert.equal(await projectCount(), before);
      assert.equal((await jobsOf()).length, 0);
    });
  }
  test('multicast stays refused with the setting on', async () => {
    await allowLocal(true);
    const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'refused', import_url: 'http://224.0.0.1/a.git' } });
    assert.deepEqual([res.status, res.body], [400, { message: { import_url: ['is blocked: Requests to multicast addresses are not allowed'] } }]);
    await allowLocal(false);
  });
});

test('with local requests allowed: scheduled, then a job mirrors branches, tags and the default branch; credentials never shown', async () => {
  assert.equal((await allowLocal(true)).status, 200);
  const url = `http://root:${srcAdmin.token}@127.0.0.1:${port}/${privateRepo}`;
  const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'imported', import_url: url, initialize_with_readme: true } });
  assert.equal(res.status, 201);
  const clean = `http://127.0.0.1:${port}/${privateRepo}`;
  assert.deepEqual([res.body.import_url, res.body.import_type, res.body.import_status, res.body.import_error, res.body.empty_repo], [clean, 'git', 'scheduled', null, true]);
  assert.ok(!JSON.stringify(res.body).includes(srcAdmin.token));
  const row = await t.app.db.selectFrom('projects').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
  assert.equal(row.import_url, clean);
  const jobs = await jobsOf();
  assert.equal(jobs.length, 1);
  assert.deepEqual(JSON.parse(jobs[0].args), { project_id: res.body.id });
  assert.equal((await t.app.db.selectFrom('project_import_data').select('url').where('project_id', '=', res.body.id).executeTakeFirstOrThrow()).url, url);

  await t.app.jobs.drain();
  const after = (await call(t.app, 'GET', `/projects/${res.body.id}`, { token: admin.token })).body;
  assert.deepEqual([after.import_status, after.import_error, after.import_url, after.default_branch, after.empty_repo], ['finished', null, clean, 'trunk', false]);
  assert.deepEqual(await refs(res.body.id), { branches: ['feature', 'trunk'], tags: ['v1'] });
  const mine = (await call(t.app, 'GET', `/projects/${res.body.id}/repository/branches/trunk`, { token: admin.token })).body;
  assert.equal(mine.commit.id, await srcHead('trunk'));
  const file = await call(t.app, 'GET', `/projects/${res.body.id}/repository/files/src%2Fa.ts/raw`, { token: admin.token, query: { ref: 'trunk' } });
  assert.equal(file.text, 'export const a = 1;\n');
  // The credentials are gone once the import ended; the job holds none.
  assert.equal((await t.app.db.selectFrom('project_import_data').selectAll().execute()).length, 0);
  assert.ok(!JSON.stringify(await jobsOf()).includes(srcAdmin.token));
  assert.equal((await jobsOf())[0].state, 'succeeded');
  await allowLocal(false);
});

test('a failing import: failed with import_error (no credentials in it), the job itself done', async () => {
  await allowLocal(true);
  const secret = 'pw-that-must-not-leak';
  const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'broken', import_url: `http://someone:${secret}@127.0.0.1:${port}/nobody/nothing.git` } });
  assert.equal(res.status, 201);
  await t.app.jobs.drain();
  const p = (await call(t.app, 'GET', `/projects/${res.body.id}`, { token: admin.token })).body;
  assert.equal(p.import_status, 'failed');
  assert.match(p.import_error, new RegExp(`^Error importing repository http://127\\.0\\.0\\.1:${port}/nobody/nothing\\.git into ${p.path_with_namespace} - `));
  assert.ok(!p.import_error.includes(secret));
  const jobs = await jobsOf();
  assert.ok(!JSON.stringify(jobs).includes(secret));
  assert.equal(jobs.find((j) => JSON.parse(j.args).project_id === res.body.id)!.state, 'succeeded');
  assert.equal(p.empty_repo, true);
  await allowLocal(false);
});

test('the setting turned off before the job runs: the import fails as blocked', async () => {
  await allowLocal(true);
  const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'late-refusal', import_url: `http://127.0.0.1:${port}/${publicRepo}` } });
  assert.equal(res.status, 201);
  await allowLocal(false);
  await t.app.jobs.drain();
  const p = (await call(t.app, 'GET', `/projects/${res.body.id}`, { token: admin.token })).body;
  assert.deepEqual([p.import_status, p.import_error], ['failed', `Error importing repository http://127.0.0.1:${port}/${publicRepo} into ${p.path_with_namespace} - is blocked: Requests to localhost are not allowed`]);
});

test('git connects to the address checked: a name only the guard resolves (no second lookup to rebind)', async () => {
  await allowLocal(true);
  setResolver(async (host) => (host === 'mirror.bellows.test' ? [{ address: '127.0.0.1', family: 4 }] : []));
  try {
    const res = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'pinned', import_url: `http://mirror.bellows.test:${port}/${publicRepo}` } });
    assert.equal(res.status, 201);
    await t.app.jobs.drain();
    const p = (await call(t.app, 'GET', `/projects/${res.body.id}`, { token: admin.token })).body;
    assert.deepEqual([p.import_status, p.import_error, p.default_branch], ['finished', null, 'main']);
    assert.deepEqual(await refs(res.body.id), { branches: ['main'], tags: [] });
  } finally {
    setResolver(null);
    await allowLocal(false);
  }
});

describe('who may import into a group (project creation there: Developers and up); import_url shown to Maintainers', () => {
  const table: Array<[string, number | null, number]> = [
    ['anonymous', null, 401], ['guest', Role.guest, 400], ['reporter', Role.reporter, 400], ['developer', Role.developer, 201],
    ['maintainer', Role.maintainer, 201], ['owner', Role.owner, 201], ['admin', -1, 201],
  ];
  for (const [name, level, status] of table) {
    test(`${name}: ${status}`, async () => {
      await allowLocal(true);
      const group = await makeGroup(t.app, { path: `imp-${name}` });
      let token: string | undefined;
      if (level === -1) token = admin.token;
      else if (level !== null) {
        const u = await quickUser(t.app);
        await addMember(t.app, { type: 'Namespace', id: group.id }, u.user.id, level);
        token = u.token;
      }
      const res = await call(t.app, 'POST', '/projects', { token, body: { name: `imp-${name}`, namespace_id: group.id, import_url: `http://u:secret-${name}@127.0.0.1:${port}/${publicRepo}` } });
      assert.equal(res.status, status);
      if (status === 400) assert.deepEqual(res.body, { message: { namespace: ['is not valid'] } });
      if (status === 201) {
        assert.equal(res.body.import_status, 'scheduled');
        const asDev = level === Role.developer;
        assert.equal(res.body.import_url, asDev ? undefined : `http://127.0.0.1:${port}/${publicRepo}`);
      }
      await allowLocal(false);
    });
  }
});
