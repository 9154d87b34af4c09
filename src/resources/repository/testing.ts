// Test support for repository areas: the shared fixtures in the shapes these tests use, and a git client with a
// fixed environment.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { UserRow } from '../../http/auth.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import * as fixtures from '../../../test/support/fixtures.ts';

export async function makeProject(app: FastifyInstance, owner: UserRow, o: { path?: string; visibility?: 0 | 10 | 20; init?: boolean; groupId?: number } = {}): Promise<ProjectRow> {
  const namespace = o.groupId ? await app.db.selectFrom('namespaces').select(['id', 'full_path']).where('id', '=', o.groupId).executeTakeFirstOrThrow() : undefined;
  return fixtures.makeProject(app, { namespace, owner, path: o.path, visibility: o.visibility ?? 0, creatorId: owner.id, repository: o.init !== false });
}

export async function makeGroup(app: FastifyInstance, path: string, visibility = 0): Promise<number> {
  return (await fixtures.makeGroup(app, { path, visibility })).id;
}

export async function addMember(app: FastifyInstance, sourceType: 'Project' | 'Namespace', sourceId: number, userId: number, level: number): Promise<void> {
  await fixtures.addMember(app, { type: sourceType, id: sourceId }, userId, level);
}

export const reloadProject = fixtures.reloadProject;

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git client with a fixed environment: no system or user config, no prompts (`extraEnv`: GIT_SSH_COMMAND). */
export function gitClient(extraEnv: Record<string, string> = {}): { home: string; run(args: string[], cwd?: string, input?: string): Promise<GitRun> } {
  const home = mkdtempSync(join(tmpdir(), 'bellows-git-client-'));
  writeFileSync(join(home, '.gitconfig'), '');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    LC_ALL: 'C',
    ...extraEnv,
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
