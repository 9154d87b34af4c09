import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { buildTestApp, type TestApp } from '../support/app.ts';
import { addMember, makeProject, quickUser, Role } from '../support/fixtures.ts';
import { ed25519Key } from '../support/ssh-key-fixtures.ts';

// Deploy keys, error tracking and feature-flag user lists driven by @gitbeaker/rest over real HTTP.

let t: TestApp;
let host: string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  const port = await freePort();
  host = `http://127.0.0.1:${port}`;
  // The external URL is the listening address, so that Link headers lead back here.
  t = await buildTestApp({ config: { externalUrl: host } });
  await t.app.listen({ port, host: '127.0.0.1' });
});
after(async () => { await t.close(); });

test('deploy keys through gitbeaker: create, show, list, edit, enable, instance list, remove', async () => {
  const maint = await quickUser(t.app);
  const admin = await quickUser(t.app, { admin: true });
  const a = await makeProject(t.app);
  const b = await makeProject(t.app);
  for (const p of [a, b]) await addMember(t.app, { type: 'Project', id: p.id }, maint.user.id, Role.maintainer);
  const api = new Gitlab({ host, token: maint.token });
  const adminApi = new Gitlab({ host, token: admin.token });

  const key = ed25519Key('ci@example');
  const created = await api.DeployKeys.create(a.id, 'ci', key, { canPush: true });
  assert.equal(created.title, 'ci');
  assert.equal(created.key, key);
  assert.equal(created.can_push, true);
  assert.match(String(created.fingerprint_sha256), /^SHA256:/);

  const shown = await api.DeployKeys.show(a.id, created.id);
  assert.deepEqual(shown, created);
  const listed = await api.DeployKeys.all({ projectId: a.id });
  assert.deepEqual(listed.map((k) => k.id), [created.id]);

  const edited = await api.DeployKeys.edit(a.id, created.id, { title: 'ci-renamed', canPush: false });
  assert.equal(edited.title, 'ci-renamed');
  assert.equal(edited.can_push, false);

  const enabled = await api.DeployKeys.enable(b.id, created.id);
  assert.equal(enabled.id, created.id);
  assert.deepEqual((await api.DeployKeys.all({ projectId: b.id })).map((k) => k.can_push), [false]);

  const mine = await api.DeployKeys.all({ userId: maint.user.id });
  assert.deepEqual(mine.map((k) => k.id), [created.id]);

  const instance = await adminApi.DeployKeys.all({ public: false });
  const entry = instance.find((k) => k.id === created.id)!;
  assert.deepEqual((entry.projects_with_readonly_access as Array<{ id: number }>).map((p) => p.id).sort(), [a.id, b.id].sort());

  await api.DeployKeys.remove(a.id, created.id);
  await api.DeployKeys.remove(b.id, created.id);
  await assert.rejects(api.DeployKeys.show(a.id, created.id), (err: any) => err?.cause?.response?.status === 404);
  assert.equal(await t.app.db.selectFrom('deploy_keys').select('id').where('id', '=', created.id).executeTakeFirst(), undefined);

  // Offset pagination across several pages follows the Link headers.
  for (let i = 0; i < 3; i++) await api.DeployKeys.create(a.id, `k${i}`, ed25519Key());
  const all = await api.DeployKeys.all({ projectId: a.id, perPage: 2 });
  assert.deepEqual(all.map((k) => k.title), ['k0', 'k1', 'k2']);
});

test('error tracking and feature-flag user lists through gitbeaker', async () => {
  const owner = await quickUser(t.app);
  const project = await makeProject(t.app, { owner: owner.user });
  const api = new Gitlab({ host, token: owner.token });

  const setting = await api.ErrorTrackingSettings.create(project.id, true, true);
  assert.equal(setting.active, true);
  const edited = await api.ErrorTrackingSettings.edit(project.id, false);
  assert.equal(edited.active, false);
  assert.equal((await api.ErrorTrackingSettings.show(project.id)).integrated, true);
  const key = await api.ErrorTrackingClientKeys.create(project.id);
  assert.equal(key.tracker_dsn, `http://${key.public_key}@127.0.0.1:${new URL(host).port}/api/v4/error_tracking/collector/${project.id}`);
  assert.deepEqual((await api.ErrorTrackingClientKeys.all(project.id)).map((k) => k.id), [key.id]);

  const list = await api.FeatureFlagUserLists.create(project.id, 'beta', 'u1,u2');
  assert.equal(list.iid, 1);
  assert.deepEqual(await api.FeatureFlagUserLists.show(project.id, list.iid), list);
  assert.deepEqual((await api.FeatureFlagUserLists.all(project.id, { search: 'bet' })).map((l) => l.iid), [1]);
  await api.FeatureFlagUserLists.remove(project.id, list.iid);
  assert.deepEqual(await api.FeatureFlagUserLists.all(project.id), []);
});
