import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, makeGroup, quickUser, Role, type TestUser } from '../../../test/support/fixtures.ts';
import { repositoryPath } from '../projects/repository.ts';
import { DESTROY_GROUP_JOB, destroyGroup } from './groups.service.ts';

// DELETE /groups/:id on a group that holds projects: 202, the group with its subgroups and their projects marked
// pending deletion (hidden at once) and a job queued in the same transaction; the job removes the repositories and
// files, then the rows in one transaction, and unlinks what pointed at them from outside. A run killed on the way
// is run again and leaves nothing behind.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
let t: TestApp;
let admin: TestUser;
before(async () => {
  t = await buildTestApp();
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

test('role table: deleting a group with projects needs Owner (admin_group)', async () => {
  const g = await makeGroup(t.app, { visibility: 0 });
  const cast: Record<string, TestUser | null> = { anonymous: null, nonMember: await quickUser(t.app) };
  for (const [name, level] of Object.entries(Role)) {
    cast[name] = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, cast[name]!.user.id, level);
  }
  const p = await call(t.app, 'POST', '/projects', { token: cast.owner!.token, body: { name: 'held', namespace_id: g.id, initialize_with_readme: true } });
  assert.equal(p.status, 201);
  const expect: Record<string, number> = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403 };
  for (const [role, status] of Object.entries(expect)) {
    assert.equal((await call(t.app, 'DELETE', `/groups/${g.id}`, { token: cast[role]?.token })).status, status, role);
  }
  assert.equal((await call(t.app, 'GET', `/projects/${p.body.id}`, { token: admin.token })).status, 200);
  const r = await call(t.app, 'DELETE', `/groups/${g.id}`, { token: cast.owner!.token });
  assert.deepEqual([r.status, r.body], [202, { message: '202 Accepted' }]);
  assert.equal((await call(t.app, 'GET', `/projects/${p.body.id}`, { token: admin.token })).status, 404);
});

test('the group, its subgroups and their projects go, with repositories, avatars and links; outsiders stay', async () => {
  const top = await call(t.app, 'POST', '/groups', { token: admin.token, multipart: { name: 'doomed', path: 'doomed', avatar: { filename: 'g.png', content: PNG } } });
  const sub = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'doomed-sub', path: 'doomed-sub', parent_id: top.body.id } });
  const team = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'team', path: 'team' } });
  const p1 = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'one', namespace_id: top.body.id, initialize_with_readme: true, topics: ['doomed-topic'] } });
  const p2 = await call(t.app, 'POST', '/projects', { token: admin.token, multipart: { name: 'two', namespace_id: String(sub.body.id), initialize_with_readme: 'true', avatar: { filename: 'p.png', content: PNG } } });
  const outside = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'outside', initialize_with_readme: true, topics: ['doomed-topic'] } });
  const fork = await call(t.app, 'POST', `/projects/${p1.body.id}/fork`, { token: admin.token, body: { namespace_path: admin.user.username, path: 'one-fork', name: 'one-fork' } });
  assert.equal(fork.status, 201, fork.text);
  await call(t.app, 'POST', `/projects/${outside.body.id}/share`, { token: admin.token, body: { group_id: top.body.id, group_access: 30 } });
  await call(t.app, 'POST', `/groups/${team.body.id}/share`, { token: admin.token, body: { group_id: top.body.id, group_access: 30 } });
  await call(t.app, 'POST', `/groups/${top.body.id}/share`, { token: admin.token, body: { group_id: team.body.id, group_access: 30 } });
  await call(t.app, 'POST', `/projects/${p1.body.id}/star`, { token: admin.token });
  const repos = [p1.body.id, p2.body.id].map((id) => repositoryPath(t.config, 'default', id));
  for (const r of repos) assert.equal(existsSync(r), true);
  const avatarDir = join(t.dataDir, 'uploads', '-', 'system');
  assert.equal(existsSync(join(avatarDir, 'project', 'avatar', String(p2.body.id), 'p.png')), true);

  const r = await call(t.app, 'DELETE', `/groups/${top.body.id}`, { token: admin.token });
  assert.deepEqual([r.status, r.body], [202, { message: '202 Accepted' }]);
  const db = t.app.db;

  // At once: the groups and their projects are hidden from every read, nothing is removed yet, one job waits.
  for (const id of [top.body.id, sub.body.id]) {
    assert.deepEqual((await call(t.app, 'GET', `/groups/${id}`, { token: admin.token })).body, { message: '404 Group Not Found' });
    assert.deepEqual((await call(t.app, 'GET', `/namespaces/${id}`, { token: admin.token })).status, 404);
  }
  assert.deepEqual((await call(t.app, 'GET', '/groups', { token: admin.token, query: { search: 'doomed' } })).body, []);
  assert.equal((await call(t.app, 'GET', `/projects/${p2.body.id}`, { token: admin.token })).status, 404);
  assert.equal((await call(t.app, 'DELETE', `/groups/${top.body.id}`, { token: admin.token })).status, 404);
  const into = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'late', namespace_id: sub.body.id } });
  assert.deepEqual([into.status, into.body], [404, { message: '404 Namespace Not Found' }]);
  const share = await call(t.app, 'POST', `/projects/${outside.body.id}/share`, { token: admin.token, body: { group_id: sub.body.id, group_access: 30 } });
  assert.deepEqual([share.status, share.body], [404, { message: '404 Group Not Found' }]);
  assert.equal((await db.selectFrom('namespaces').select('id').where('id', 'in', [top.body.id, sub.body.id]).execute()).length, 2);
  for (const repo of repos) assert.equal(existsSync(repo), true);
  const jobs = await db.selectFrom('jobs').select(['kind', 'args', 'state']).where('unique_key', '=', `${DESTROY_GROUP_JOB}:${top.body.id}`).execute();
  assert.deepEqual(jobs, [{ kind: DESTROY_GROUP_JOB, args: JSON.stringify({ group_id: top.body.id }), state: 'queued' }]);

  await t.app.jobs.drain();
  assert.deepEqual(await db.selectFrom('namespaces').select('id').where('id', 'in', [top.body.id, sub.body.id]).execute(), []);
  assert.deepEqual(await db.selectFrom('projects').select('id').where('id', 'in', [p1.body.id, p2.body.id]).execute(), []);
  assert.deepEqual(await db.selectFrom('members').select('id').where('source_type', '=', 'Project').where('source_id', 'in', [p1.body.id, p2.body.id]).execute(), []);
  assert.deepEqual(await db.selectFrom('project_group_links').select('id').where('group_id', '=', top.body.id).execute(), []);
  assert.deepEqual(await db.selectFrom('group_group_links').select('id').execute(), []);
  assert.deepEqual(await db.selectFrom('users_star_projects').select('id').where('project_id', '=', p1.body.id).execute(), []);
  for (const repo of repos) {
    assert.equal(existsSync(repo), false);
    assert.deepEqual(readdirSync(dirname(repo)).filter((n) => n.endsWith('+deleted')), []);
  }
  assert.equal(existsSync(join(avatarDir, 'project', 'avatar', String(p2.body.id))), false);
  assert.equal(existsSync(join(avatarDir, 'group', 'avatar', String(top.body.id))), false);
  // Outsiders stay: the shared project, the other group, the fork (no longer a fork), the topic's count.
  const o = await call(t.app, 'GET', `/projects/${outside.body.id}`, { token: admin.token });
  assert.deepEqual([o.status, o.body.shared_with_groups], [200, []]);
  assert.deepEqual((await call(t.app, 'GET', `/groups/${team.body.id}`, { token: admin.token })).body.shared_with_groups, []);
  const f = await call(t.app, 'GET', `/projects/${fork.body.id}`, { token: admin.token });
  assert.deepEqual([f.status, f.body.forked_from_project], [200, undefined]);
  const topic = await call(t.app, 'GET', '/topics', { query: { search: 'doomed-topic' } });
  assert.equal(topic.body[0].total_projects_count, 2); // the outside project and the fork (which took the topics along)
});

test('a deletion killed on the way is run again and leaves nothing: rows, repositories, leftovers', async () => {
  const top = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'crashy', path: 'crashy' } });
  const sub = await call(t.app, 'POST', '/groups', { token: admin.token, body: { name: 'crashy-sub', path: 'crashy-sub', parent_id: top.body.id } });
  const p1 = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'a', namespace_id: top.body.id, initialize_with_readme: true } });
  const p2 = await call(t.app, 'POST', '/projects', { token: admin.token, body: { name: 'b', namespace_id: sub.body.id, initialize_with_readme: true } });
  const [repo1, repo2] = [p1.body.id, p2.body.id].map((id) => repositoryPath(t.config, 'default', id));
  assert.equal((await call(t.app, 'DELETE', `/groups/${top.body.id}`, { token: admin.token })).status, 202);

  // What a run killed while removing the first repository leaves: that repository moved aside but not yet removed,
  // the second untouched, every row in place, the job `running` with a lease that ran out.
  const trash = `${repo1}+99999-1+deleted`;
  renameSync(repo1, trash);
  mkdirSync(join(trash, 'objects', 'pack'), { recursive: true });
  writeFileSync(join(trash, 'objects', 'pack', 'half.pack'), 'x');
  await t.app.db.updateTable('jobs').set({ state: 'running', attempts: 1, locked_by: 'gone:1:dead', locked_until: t.clock.now() - 1 })
    .where('unique_key', '=', `${DESTROY_GROUP_JOB}:${top.body.id}`).execute();
  // Still hidden meanwhile.
  assert.equal((await call(t.app, 'GET', `/groups/${sub.body.id}`, { token: admin.token })).status, 404);

  await t.app.jobs.drain();
  const db = t.app.db;
  const job = await db.selectFrom('jobs').select(['state', 'attempts']).where('unique_key', '=', `${DESTROY_GROUP_JOB}:${top.body.id}`).executeTakeFirstOrThrow();
  assert.deepEqual(job, { state: 'succeeded', attempts: 2 });
  assert.deepEqual(await db.selectFrom('namespaces').select('id').where('id', 'in', [top.body.id, sub.body.id]).execute(), []);
  assert.deepEqual(await db.selectFrom('projects').select('id').where('id', 'in', [p1.body.id, p2.body.id]).execute(), []);
  assert.equal(existsSync(repo1), false);
  assert.equal(existsSync(repo2), false);
  assert.deepEqual(readdirSync(dirname(repo1)).filter((n) => n.endsWith('+deleted')), []);
  // Run once more (a second delivery): nothing left to do, no error.
  await destroyGroup(t.app, top.body.id);
});

test('the job removes only a group marked pending deletion', async () => {
  // A group that was not marked (its id given by mistake) stays.
  const g = await makeGroup(t.app, { visibility: 20 });
  await destroyGroup(t.app, g.id);
  assert.equal((await call(t.app, 'GET', `/groups/${g.id}`, { token: admin.token })).status, 200);
});
