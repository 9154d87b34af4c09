// Test support for repository areas: projects rows with their bare repositories, memberships, and a git
// client with a fixed environment.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { UserRow } from '../../http/auth.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { repoFor } from './repository.common.ts';

let seq = 0;

export async function makeProject(app: FastifyInstance, owner: UserRow, o: { path?: string; visibility?: 0 | 10 | 20; init?: boolean; groupId?: number } = {}): Promise<ProjectRow> {
  const ns = o.groupId
    ? await app.db.selectFrom('namespaces').selectAll().where('id', '=', o.groupId).executeTakeFirstOrThrow()
    : await app.db.selectFrom('namespaces').selectAll().where('owner_id', '=', owner.id).where('kind', '=', 'user').executeTakeFirstOrThrow();
  const path = o.path ?? `proj${process.pid}x${++seq}`;
  const now = app.clock.now();
  const row = await app.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: `${ns.full_path}/${path}`, full_path_lower: `${ns.full_path}/${path}`.toLowerCase(),
    description: null, visibility_level: o.visibility ?? 0, creator_id: owner.id, archived: 0, default_branch: null,
    repository_storage: 'default', repository_read_only: 0, empty_repo: 1, pending_delete: 0,
    created_at: now, updated_at: now, last_activity_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  if (o.init !== false) await repoFor(app.config, row).ensure('main');
  return row;
}

export async function makeGroup(app: FastifyInstance, path: string, visibility = 0): Promise<number> {
  const now = app.clock.now();
  const ns = await app.db.insertInto('namespaces').values({
    name: path, path, kind: 'group', parent_id: null, owner_id: null, visibility_level: visibility, description: '',
    full_path: path, full_path_lower: path.toLowerCase(), full_name: path, traversal: '/', request_access_enabled: 1,
    project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  await app.db.updateTable('namespaces').set({ traversal: `/${ns.id}/` }).where('id', '=', ns.id).execute();
  return ns.id;
}

export async function addMember(app: FastifyInstance, sourceType: 'Project' | 'Namespace', sourceId: number, userId: number, level: number): Promise<void> {
  const now = app.clock.now();
  await app.db.insertInto('members').values({
    source_type: sourceType, source_id: sourceId, user_id: userId, access_level: level, expires_at: null, created_by_id: null,
    created_at: now, updated_at: now,
  }).execute();
}

export async function reloadProject(app: FastifyInstance, id: number): Promise<ProjectRow> {
  return app.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git client with a fixed environment: no system or user config, no prompts. */
export function gitClient(): { home: string; run(args: string[], cwd?: string, input?: string): Promise<GitRun> } {
  const home = mkdtempSync(join(tmpdir(), 'bellows-git-client-'));
  writeFileSync(join(home, '.gitconfig'), '');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    LC_ALL: 'C',
  };
  return {
    home,
    run(args, cwd = home, input) {
      return new Promise((resolve) => {
        const child = spawn('git', ['-c', 'user.name=Test User', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', '-c', 'protocol.version=2', ...args], { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d) => (stdout += d));
        child.stderr!.on('data', (d) => (stderr += d));
        if (input !== undefined) {
          child.stdin!.on('error', () => {});
          child.stdin!.end(input);
        }
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    },
  };
}

export interface RoleUsers {
  owner: TestUserLike;
  maintainer: TestUserLike;
  developer: TestUserLike;
  reporter: TestUserLike;
  guest: TestUserLike;
  stranger: TestUserLike;
  admin: TestUserLike;
}

export interface TestUserLike {
  user: UserRow;
  token: string;
}

/** One user per role on the project (owner is the namespace owner), a non-member and an administrator. */
export async function roleUsers(app: FastifyInstance, project: ProjectRow, owner: TestUserLike, make: (o?: { admin?: boolean }) => Promise<TestUserLike>): Promise<RoleUsers> {
  const [maintainer, developer, reporter, guest, stranger, admin] = await Promise.all([make(), make(), make(), make(), make(), make({ admin: true })]);
  await addMember(app, 'Project', project.id, maintainer.user.id, 40);
  await addMember(app, 'Project', project.id, developer.user.id, 30);
  await addMember(app, 'Project', project.id, reporter.user.id, 20);
  await addMember(app, 'Project', project.id, guest.user.id, 10);
  return { owner, maintainer, developer, reporter, guest, stranger, admin };
}
