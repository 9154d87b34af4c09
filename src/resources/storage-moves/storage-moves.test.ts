import { test, before, after, describe, mock } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, quickUser, reloadProject, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import { gitClient } from '../repository/testing.ts';
import { Repository } from '../../platform/git/repository.ts';
import { repositoryPath } from '../projects/repository.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { MOVE_JOB, waitForPushes } from './storage-moves.service.ts';
import { READ_ONLY, moveApp, readMove, shards, type MoveApp } from './testing.ts';

const NOW = '2026-06-01T12:00:00.000Z';

let shardApp: MoveApp;
let t: TestApp;
let host: string;
let admin: TestUser;
const g = gitClient();

before(async () => {
  shardApp = await moveApp(shards({ name: 'unused', path: 'unused', weight: 0 }));
  ({ t, host, admin } = shardApp);
});
after(async () => { await t.close(); });

const pathOn = (storage: string, p: { id: number }) => repositoryPath(t.config, storage, p.id);
const url = (p: ProjectRow) => `http://root:${admin.token}@${host}/${p.full_path}.git`;
const moveCount = async () => Number((await t.app.db.selectFrom('project_repository_storage_moves').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

/** A project whose repository has one commit on main, pushed over HTTP; answers a clone to push from. */
async function seeded(): Promise<{ project: ProjectRow; dir: string; head: string }> {
  const project = await makeProject(t.app, { repository: true });
  const dir = join(g.home, `w${project.id}`);
  assert.equal((await g.run(['clone', '-q', url(project), dir])).code, 0);
  await g.run(['commit', '--allow-empty', '-q', '-m', 'first'], dir);
  const r = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
  assert.equal(r.code, 0, r.stderr);
  await g.run(['tag', 'v1'], dir);
  assert.equal((await g.run(['push', '-q', 'origin', 'v1'], dir)).code, 0);
  return { project: await reloadProject(t.app, project.id), dir, head: (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim() };
}

async function schedule(project: { id: number }, body: Record<string, unknown> = { destination_storage_name: 'second' }) {
  return call(t.app, 'POST', `/projects/${project.id}/repository_storage_moves`, { token: admin.token, body });
}

const moveOf = (id: number) => readMove(shardApp, 'project', id);

describe('access: administrators only', () => {
  let project: ProjectRow;
  let roles: RoleCast;
  let moveId: number;
  before(async () => {
    project = await makeProject(t.app, { visibility: 20, repository: true });
    roles = await castRoles(t.app, project);
    const r = await schedule(project);
    assert.equal(r.status, 201);
    moveId = r.body.id;
    await t.app.jobs.drain();
  });

  const refused: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 403], ['guest', 403], ['reporter', 403], ['developer', 403], ['maintainer', 403], ['owner', 403],
  ];
  const endpoints = (): Array<[string, string, Record<string, unknown> | undefined, number]> => [
    ['GET', '/project_repository_storage_moves', undefined, 200],
    ['GET', `/project_repository_storage_moves/${moveId}`, undefined, 200],
    ['GET', `/projects/${project.id}/repository_storage_moves`, undefined, 200],
    ['GET', `/projects/${project.id}/repository_storage_moves/${moveId}`, undefined, 200],
    ['POST', `/projects/${project.id}/repository_storage_moves`, { destination_storage_name: 'default' }, 201],
    ['POST', '/project_repository_storage_moves', { source_storage_name: 'unused', destination_storage_name: 'default' }, 202],
  ];
  for (const [role, status] of [...refused, ['admin', 0] as [keyof RoleCast, number]]) {
    test(`${role} on every endpoint`, async () => {
      for (const [method, path, body, ok] of endpoints()) {
        const before = await moveCount();
        const r = await call(t.app, method, path, { token: roles[role]?.token, body });
        assert.equal(r.status, status || ok, `${method} ${path}`);
        if (status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
        if (status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
        if (status) {
          assert.equal(await moveCount(), before);
          assert.equal((await reloadProject(t.app, project.id)).repository_read_only, 0);
        }
        if (ok === 202 && !status) assert.deepEqual(r.body, { message: '202 Accepted' });
        if (ok === 201 && !status) {
          assert.equal(r.body.state, 'scheduled');
          await t.app.jobs.drain();
        }
      }
    });
  }
});

describe('create and read', () => {
  test('a move is scheduled (201), the project turns read-only, and the job moves it: push refused, then accepted', async () => {
    const { project, dir, head } = await seeded();
    const source = new Repository(pathOn('default', project));
    const checksum = await source.checksum();
    const r = await schedule(project);
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      id: r.body.id, created_at: NOW, state: 'scheduled', source_storage_name: 'default', destination_storage_name: 'second', error_message: null,
      project: {
        id: project.id, description: null, name: project.name, name_with_namespace: r.body.project.name_with_namespace,
        path: project.path, path_with_namespace: project.full_path, created_at: NOW,
      },
    });
    assert.match(r.body.project.name_with_namespace, new RegExp(` / ${project.name}$`));
    assert.equal((await reloadProject(t.app, project.id)).repository_read_only, 1);
    const job = await t.app.db.selectFrom('jobs').selectAll().where('unique_key', '=', `${MOVE_JOB}:${r.body.id}`).executeTakeFirstOrThrow();
    assert.equal(job.state, 'queued');

    // While scheduled: a real push is refused with the temporary message, and so is an API write.
    await g.run(['commit', '--allow-empty', '-q', '-m', 'during'], dir);
    const refused = await g.run(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /remote: The repository is temporarily read-only\. Please try again later\./);
    const branch = await call(t.app, 'POST', `/projects/${project.id}/repository/branches`, { token: admin.token, body: { branch: 'b1', ref: 'main' } });
    assert.equal(branch.status, 400);
    assert.deepEqual(branch.body, { message: READ_ONLY });
    // A second move is refused: the project is already read-only.
    const second = await schedule(project, { destination_storage_name: 'default' });
    assert.equal(second.status, 400);
    assert.deepEqual(second.body, { message: { project: ['is read-only'] } });

    await t.app.jobs.drain();
    const done = await moveOf(r.body.id);
    assert.equal(done.state, 'finished');
    assert.equal(done.error_message, null);
    const row = await reloadProject(t.app, project.id);
    assert.equal(row.repository_storage, 'second');
    assert.equal(row.repository_read_only, 0);
    assert.equal(existsSync(pathOn('default', project)), false, 'the source is removed');
    assert.equal(await new Repository(pathOn('second', project)).checksum(), checksum);
    const main = await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token });
    assert.equal(main.body.commit.id, head);

    // After the move the same push goes through, to the destination shard.
    const ok = await g.run(['push', 'origin', 'HEAD:main'], dir);
    assert.equal(ok.code, 0, ok.stderr);
    const pushed = (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
    assert.equal(await new Repository(pathOn('second', project)).resolveRef('refs/heads/main'), pushed);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, pushed);
  });

  test('lists are newest first, paginated, and per project', async () => {
    const project = await makeProject(t.app, { repository: true });
    const first = await schedule(project);
    await t.app.jobs.drain();
    const second = await schedule(project, { destination_storage_name: 'default' });
    await t.app.jobs.drain();
    const mine = await call(t.app, 'GET', `/projects/${project.id}/repository_storage_moves`, { token: admin.token });
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.map((m: any) => [m.id, m.state, m.source_storage_name, m.destination_storage_name]), [
      [second.body.id, 'finished', 'second', 'default'], [first.body.id, 'finished', 'default', 'second'],
    ]);
    assert.equal(mine.headers['x-total'], '2');
    const all = await call(t.app, 'GET', '/project_repository_storage_moves?per_page=1', { token: admin.token });
    assert.equal(all.body.length, 1);
    assert.equal(all.body[0].id, second.body.id);
    assert.equal(all.headers['x-per-page'], '1');
    assert.equal(Number(all.headers['x-total']), await moveCount());
    const one = await call(t.app, 'GET', `/projects/${project.id}/repository_storage_moves/${first.body.id}`, { token: admin.token });
    assert.equal(one.body.id, first.body.id);
    assert.equal((await reloadProject(t.app, project.id)).repository_storage, 'default');
  });

  test('missing moves and moves of another project are 404 Not found; an unknown project is 404 Project Not Found', async () => {
    const a = await makeProject(t.app, { repository: true });
    const b = await makeProject(t.app, { repository: true });
    const m = await schedule(a);
    await t.app.jobs.drain();
    for (const path of [`/project_repository_storage_moves/999999`, `/projects/${b.id}/repository_storage_moves/${m.body.id}`, `/projects/${a.id}/repository_storage_moves/999999`]) {
      const r = await call(t.app, 'GET', path, { token: admin.token });
      assert.equal(r.status, 404, path);
      assert.deepEqual(r.body, { message: '404 Not found' });
    }
    const r = await call(t.app, 'GET', '/projects/999999/repository_storage_moves', { token: admin.token });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { message: '404 Project Not Found' });
    assert.equal((await schedule({ id: 999999 })).status, 404);
  });
});

describe('validation', () => {
  test('an unknown destination is refused and nothing changes', async () => {
    const project = await makeProject(t.app, { repository: true });
    const before = await moveCount();
    const r = await schedule(project, { destination_storage_name: 'nowhere' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: { destination_storage_name: ['is not included in the list'] } });
    assert.equal(await moveCount(), before);
    assert.equal((await reloadProject(t.app, project.id)).repository_read_only, 0);
  });

  test('a project already read-only is refused', async () => {
    const project = await makeProject(t.app, { repository: true });
    await t.app.db.updateTable('projects').set({ repository_read_only: 1 }).where('id', '=', project.id).execute();
    const before = await moveCount();
    const r = await schedule(project);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: { project: ['is read-only'] } });
    assert.equal(await moveCount(), before);
  });

  test('the whole-shard move names configured shards', async () => {
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{}, { message: '400 (Bad request) "source_storage_name" not given' }],
      [{ source_storage_name: 'nowhere' }, { error: 'source_storage_name does not have a valid value' }],
      [{ source_storage_name: 'default', destination_storage_name: 'nowhere' }, { error: 'destination_storage_name does not have a valid value' }],
    ];
    for (const [body, expected] of cases) {
      const jobs = (await t.app.db.selectFrom('jobs').select('id').execute()).length;
      const r = await call(t.app, 'POST', '/project_repository_storage_moves', { token: admin.token, body });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, expected);
      assert.equal((await t.app.db.selectFrom('jobs').select('id').execute()).length, jobs);
    }
  });

  test('an omitted destination is chosen by weight: never a weight-0 shard', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const project = await makeProject(t.app, { repository: true });
      const r = await schedule(project, {});
      assert.equal(r.status, 201);
      seen.add(r.body.destination_storage_name);
    }
    await t.app.jobs.drain();
    assert.ok(!seen.has('unused'), [...seen].join());
    for (const s of seen) assert.ok(s === 'default' || s === 'second', s);
  });
});

describe('failures', () => {
  test('a checksum mismatch ends failed: the copy is removed, the project stays on its source, writable and whole', async () => {
    const { project, dir, head } = await seeded();
    const sourcePath = pathOn('default', project);
    const checksum = await new Repository(sourcePath).checksum();
    const original = Repository.prototype.checksum;
    const spy = mock.method(Repository.prototype, 'checksum', async function (this: Repository) {
      return this.path === sourcePath ? original.call(this) : 'f'.repeat(40);
    });
    let r;
    try {
      r = await schedule(project);
      await t.app.jobs.drain();
    } finally {
      spy.mock.restore();
    }
    const m = await moveOf(r.body.id);
    assert.equal(m.state, 'failed');
    assert.equal(m.error_message, `Failed to verify project repository checksum from ${checksum} to ${'f'.repeat(40)}`);
    const row = await reloadProject(t.app, project.id);
    assert.equal(row.repository_storage, 'default');
    assert.equal(row.repository_read_only, 0);
    assert.equal(await new Repository(sourcePath).checksum(), checksum);
    assert.equal(existsSync(pathOn('second', project)), false);
    assert.deepEqual(readdirSync(join(t.config.storage[1].path, '@staging')), []);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, head);
    await g.run(['commit', '--allow-empty', '-q', '-m', 'after failure'], dir);
    assert.equal((await g.run(['push', '-q', 'origin', 'HEAD:main'], dir)).code, 0);
  });

  test('a push that lands on the source after the copy was verified fails the move instead of being lost', async () => {
    const { project } = await seeded();
    const sourcePath = pathOn('default', project);
    const destPath = pathOn('second', project);
    const original = Repository.prototype.invalidate;
    // The verified copy has just taken its place when a late push writes to the source.
    const spy = mock.method(Repository.prototype, 'invalidate', function (this: Repository) {
      original.call(this);
      if (this.path === destPath) execFileSync('git', ['--git-dir', sourcePath, 'update-ref', 'refs/heads/late', 'refs/heads/main']);
    });
    let r;
    try {
      r = await schedule(project);
      await t.app.jobs.drain();
    } finally {
      spy.mock.restore();
    }
    const m = await moveOf(r.body.id);
    assert.equal(m.state, 'failed');
    assert.match(m.error_message, /^Failed to verify project repository checksum from [0-9a-f]{40} to [0-9a-f]{40}$/);
    const row = await reloadProject(t.app, project.id);
    assert.equal(row.repository_storage, 'default');
    assert.equal(row.repository_read_only, 0);
    assert.ok(await new Repository(sourcePath).resolveRef('refs/heads/late'));
    assert.equal(existsSync(destPath), false);
  });

  test('the error message is cut to 256 characters', async () => {
    const project = await makeProject(t.app, { repository: true });
    const sourcePath = pathOn('default', project);
    const original = Repository.prototype.checksum;
    const spy = mock.method(Repository.prototype, 'checksum', async function (this: Repository) {
      return this.path === sourcePath ? original.call(this) : 'x'.repeat(400);
    });
    let r;
    try {
      r = await schedule(project);
      await t.app.jobs.drain();
    } finally {
      spy.mock.restore();
    }
    const m = await moveOf(r.body.id);
    assert.equal(m.state, 'failed');
    assert.equal(m.error_message.length, 256);
    assert.ok(m.error_message.startsWith('Failed to verify project repository checksum from '));
  });

  test('a source that cannot be removed ends cleanup failed: the project lives on the destination', async () => {
    const { project, head } = await seeded();
    const spy = mock.method(Repository.prototype, 'remove', async () => { throw new Error('Permission denied'); });
    let r;
    try {
      r = await schedule(project);
      await t.app.jobs.drain();
    } finally {
      spy.mock.restore();
    }
    const m = await moveOf(r.body.id);
    assert.equal(m.state, 'cleanup failed');
    assert.equal(m.error_message, 'Permission denied');
    const row = await reloadProject(t.app, project.id);
    assert.equal(row.repository_storage, 'second');
    assert.equal(row.repository_read_only, 0);
    assert.ok(existsSync(pathOn('default', project)), 'the source is left');
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, head);
    // The failed move left the project writable, so it may be moved again.
    assert.equal((await schedule(project, { destination_storage_name: 'default' })).status, 201);
    await t.app.jobs.drain();
  });

  test('pushes in progress are waited for, then the move gives up', async () => {
    const project = await makeProject(t.app, { repository: true });
    const repo = new Repository(pathOn('default', project));
    await waitForPushes(repo, { pushChecks: 2, pushCheckIntervalMs: 5 });
    const quarantine = join(repo.path, 'objects', 'tmp_objdir-incoming-abc');
    mkdirSync(quarantine);
    await assert.rejects(waitForPushes(repo, { pushChecks: 2, pushCheckIntervalMs: 5 }), /^Error: Timeout waiting for project repository pushes$/);
    rmSync(quarantine, { recursive: true });
    assert.equal(await repo.pushInProgress(), false);
    writeFileSync(join(repo.path, 'refs', 'heads', 'main.lock'), '');
    assert.equal(await repo.pushInProgress(), true);
  });
});

describe('restarts', () => {
  async function crashedJob(moveId: number) {
    // The process running the job died: the job is still `running`, with a lease that has run out.
    await t.app.db.updateTable('jobs').set({ state: 'running', attempts: 1, locked_by: 'gone:1:dead', locked_until: t.clock.now() - 1 })
      .where('unique_key', '=', `${MOVE_JOB}:${moveId}`).execute();
  }

  test('a move cut short while copying resumes: the half copy is replaced, nothing was served from it', async () => {
    const { project, head } = await seeded();
    const checksum = await new Repository(pathOn('default', project)).checksum();
    const r = await schedule(project);
    await t.app.db.updateTable('project_repository_storage_moves').set({ state: 'started' }).where('id', '=', r.body.id).execute();
    await crashedJob(r.body.id);
    // What the stop left: a half-made directory at the destination path and a staged copy.
    const dest = pathOn('second', project);
    mkdirSync(join(dest, 'objects'), { recursive: true });
    writeFileSync(join(dest, 'HEAD'), 'ref: refs/heads/broken\n');
    mkdirSync(join(t.config.storage[1].path, '@staging', 'old.git'), { recursive: true });
    // Until the move ends the project reads from its source.
    assert.equal((await reloadProject(t.app, project.id)).repository_storage, 'default');
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, head);

    await t.app.jobs.drain();
    assert.equal((await moveOf(r.body.id)).state, 'finished');
    const row = await reloadProject(t.app, project.id);
    assert.equal(row.repository_storage, 'second');
    assert.equal(row.repository_read_only, 0);
    assert.equal(await new Repository(dest).checksum(), checksum);
    assert.equal(existsSync(pathOn('default', project)), false);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, head);
    const job = await t.app.db.selectFrom('jobs').selectAll().where('unique_key', '=', `${MOVE_JOB}:${r.body.id}`).executeTakeFirstOrThrow();
    assert.equal(job.state, 'succeeded');
  });

  test('a move cut short after the switch resumes with the cleanup', async () => {
    const { project, head } = await seeded();
    const r = await schedule(project);
    // The stop came after the verified copy took its place and the project was switched.
    await Repository.copyFrom(pathOn('default', project), pathOn('second', project), { refs: 'all' });
    await t.app.db.updateTable('project_repository_storage_moves').set({ state: 'replicated' }).where('id', '=', r.body.id).execute();
    await t.app.db.updateTable('projects').set({ repository_storage: 'second', repository_read_only: 0 }).where('id', '=', project.id).execute();
    await crashedJob(r.body.id);
    await t.app.jobs.drain();
    assert.equal((await moveOf(r.body.id)).state, 'finished');
    assert.equal(existsSync(pathOn('default', project)), false);
    assert.equal((await reloadProject(t.app, project.id)).repository_storage, 'second');
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/repository/branches/main`, { token: admin.token })).body.commit.id, head);
  });

  test('a project without a repository on disk moves without finding a leftover at the destination', async () => {
    const project = await makeProject(t.app, { repository: false });
    const leftover = pathOn('second', project);
    await Repository.init(leftover, { defaultBranch: 'stale' });
    const r = await schedule(project);
    await t.app.jobs.drain();
    assert.equal((await moveOf(r.body.id)).state, 'finished');
    assert.equal((await reloadProject(t.app, project.id)).repository_storage, 'second');
    assert.equal(existsSync(leftover), false);
  });

  test('a job run again on a move that is over does nothing', async () => {
    const project = await makeProject(t.app, { repository: true });
    const r = await schedule(project);
    await t.app.jobs.drain();
    await t.app.jobs.enqueue(t.app.db, MOVE_JOB, { move_id: r.body.id });
    await t.app.jobs.drain();
    assert.equal((await moveOf(r.body.id)).state, 'finished');
    assert.equal((await reloadProject(t.app, project.id)).repository_storage, 'second');
  });
});

describe('whole-shard move', () => {
  let s: TestApp;
  let root: TestUser;
  before(async () => {
    s = await buildTestApp({ config: { storage: [
      { name: 'old', path: 'old', weight: 0 }, { name: 'east', path: 'east', weight: 30 }, { name: 'west', path: 'west', weight: 70 },
      { name: 'retired', path: 'retired', weight: 0 },
    ] } as any });
    root = await quickUser(s.app, { admin: true });
  });
  after(async () => { await s.close(); });

  test('every project on the source shard moves to a shard chosen by weight; a read-only one is skipped', async () => {
    const projects: ProjectRow[] = [];
    for (let i = 0; i < 8; i++) {
      const p = await makeProject(s.app, { repository: true });
      await s.app.db.updateTable('projects').set({ repository_storage: 'old' }).where('id', '=', p.id).execute();
      const moved = { ...p, repository_storage: 'old' };
      await new Repository(repositoryPath(s.config, 'old', p.id)).ensure('main');
      await new Repository(repositoryPath(s.config, 'old', p.id)).createCommit({
        branch: 'main', actions: [{ action: 'create', file_path: 'f.txt', content: `project ${i}\n` }], message: 'm',
        author: { name: 'A', email: 'a@example.com', date: new Date(NOW) },
      });
      projects.push(moved);
    }
    const locked = projects[7];
    await s.app.db.updateTable('projects').set({ repository_read_only: 1 }).where('id', '=', locked.id).execute();
    const elsewhere = await makeProject(s.app, { repository: true });
    await s.app.db.updateTable('projects').set({ repository_storage: 'east' }).where('id', '=', elsewhere.id).execute();
    const sums = new Map<number, string>();
    for (const p of projects) sums.set(p.id, await new Repository(repositoryPath(s.config, 'old', p.id)).checksum());

    const r = await call(s.app, 'POST', '/project_repository_storage_moves', { token: root.token, body: { source_storage_name: 'old' } });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { message: '202 Accepted' });
    await s.app.jobs.drain();

    const moves = (await call(s.app, 'GET', '/project_repository_storage_moves', { token: root.token })).body;
    assert.deepEqual(moves.map((m: any) => m.project.id).sort((a: number, b: number) => a - b), projects.slice(0, 7).map((p) => p.id));
    for (const m of moves) {
      assert.equal(m.state, 'finished');
      assert.equal(m.source_storage_name, 'old');
      assert.ok(['east', 'west'].includes(m.destination_storage_name), m.destination_storage_name);
      const row = await reloadProject(s.app, m.project.id);
      assert.equal(row.repository_storage, m.destination_storage_name);
      assert.equal(row.repository_read_only, 0);
      assert.equal(await new Repository(repositoryPath(s.config, row.repository_storage, row.id)).checksum(), sums.get(row.id));
      assert.equal(existsSync(repositoryPath(s.config, 'old', row.id)), false);
    }
    const skipped = await reloadProject(s.app, locked.id);
    assert.equal(skipped.repository_storage, 'old');
    assert.equal(skipped.repository_read_only, 1);
    assert.equal((await reloadProject(s.app, elsewhere.id)).repository_storage, 'east');
  });

  test('a named destination takes every project', async () => {
    const p = await makeProject(s.app, { repository: true });
    await s.app.db.updateTable('projects').set({ repository_storage: 'east' }).where('id', '=', p.id).execute();
    const r = await call(s.app, 'POST', '/project_repository_storage_moves', { token: root.token, body: { source_storage_name: 'east', destination_storage_name: 'retired' } });
    assert.equal(r.status, 202);
    await s.app.jobs.drain();
    assert.equal((await reloadProject(s.app, p.id)).repository_storage, 'retired');
    assert.equal((await reloadProject(s.app, p.id)).repository_read_only, 0);
  });
});
