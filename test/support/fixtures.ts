import type { FastifyInstance } from 'fastify';
import { createUser } from '../../src/resources/users/users.service.ts';
import { createPersonalAccessToken } from '../../src/resources/access-tokens/access-tokens.service.ts';
import type { TestUser } from './factories.ts';
import type { ProjectRow } from '../../src/platform/membership.ts';
import { repoFor } from '../../src/resources/repository/repository.common.ts';

// The one set of test fixtures: users, groups, projects and memberships, written straight to the database so that
// every area can be tested on its own, and the role cast of the role × status tables.

export { makeUser, makeToken, type TestUser } from './factories.ts';

let seq = 0;
const next = () => `${process.pid}x${++seq}`;

/** A user with an `api` token and no password (hashing one per user would slow role matrices down). */
export async function quickUser(app: FastifyInstance, o: { admin?: boolean; scopes?: string[] } = {}): Promise<TestUser> {
  const username = `u${next()}`;
  const user = await createUser(app, { username, name: `User ${username}`, email: `${username}@example.com`, admin: o.admin });
  const { token } = await createPersonalAccessToken(app, user, { name: 'test', scopes: o.scopes ?? ['api'], expiresAt: null });
  return { user, token };
}

export const Role = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type RoleName = keyof typeof Role;

export async function makeGroup(app: FastifyInstance, o: { path?: string; visibility?: number; parent?: { id: number; traversal: string; full_path: string; full_name?: string } } = {}) {
  const path = o.path ?? `group${next()}`;
  const now = app.clock.now();
  const fullPath = o.parent ? `${o.parent.full_path}/${path}` : path;
  const fullName = o.parent ? `${o.parent.full_name ?? o.parent.full_path} / ${path}` : path;
  const ns = await app.db.insertInto('namespaces').values({
    name: path, path, kind: 'group', parent_id: o.parent?.id ?? null, owner_id: null, visibility_level: o.visibility ?? 20,
    description: '', full_path: fullPath, full_path_lower: fullPath.toLowerCase(), full_name: fullName, traversal: '/',
    request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const traversal = `${o.parent?.traversal ?? '/'}${ns.id}/`;
  await app.db.updateTable('namespaces').set({ traversal }).where('id', '=', ns.id).execute();
  return { ...ns, traversal };
}

/** A user's personal namespace. */
export async function userNamespace(app: FastifyInstance, userId: number): Promise<{ id: number; full_path: string }> {
  return app.db.selectFrom('namespaces').select(['id', 'full_path']).where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirstOrThrow();
}

/**
 * A project in a group or in a user's personal namespace (`visibility` 0 private, 10 internal, 20 public);
 * `repository: true` also makes its bare repository with an unborn `main`.
 */
export async function makeProject(app: FastifyInstance, o: { namespace?: { id: number; full_path: string }; owner?: { id: number }; path?: string; visibility?: number; description?: string | null; creatorId?: number | null; repository?: boolean; protectOnFirstCommit?: boolean } = {}): Promise<ProjectRow> {
  let ns = o.namespace;
  if (!ns) {
    const owner = o.owner ?? (await quickUser(app)).user;
    ns = await userNamespace(app, owner.id);
  }
  const path = o.path ?? `project${next()}`;
  const now = app.clock.now();
  const fullPath = `${ns.full_path}/${path}`;
  const row = await app.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: fullPath, full_path_lower: fullPath.toLowerCase(),
    description: o.description === undefined ? null : o.description, visibility_level: o.visibility ?? 0, creator_id: o.creatorId ?? null, archived: 0,
    default_branch: null, repository_storage: 'default', repository_read_only: 0, empty_repo: 1, pending_delete: 0,
    created_at: now, updated_at: now, last_activity_at: now,
    // A fixture project stands for an existing one: its default branch protection counts as settled (nothing is
    // protected) unless the test asks for the first-commit rule of a new project.
    default_branch_protection_applied: o.protectOnFirstCommit ? 0 : 1,
  }).returningAll().executeTakeFirstOrThrow();
  if (o.repository) await repoFor(app.config, row).ensure('main');
  return row;
}

export async function reloadProject(app: FastifyInstance, id: number): Promise<ProjectRow> {
  return app.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function addMember(app: FastifyInstance, source: { type: 'Project' | 'Namespace'; id: number }, userId: number, level: number, expiresAt: number | null = null) {
  const now = app.clock.now();
  await app.db.insertInto('members').values({
    source_type: source.type, source_id: source.id, user_id: userId, access_level: level, expires_at: expiresAt, created_by_id: null, created_at: now, updated_at: now,
  }).execute();
}

export interface RoleCast {
  anonymous: null;
  nonMember: TestUser;
  guest: TestUser;
  reporter: TestUser;
  developer: TestUser;
  maintainer: TestUser;
  owner: TestUser;
  admin: TestUser;
}

/** One user per role on the project, plus a non-member and an administrator. */
export async function castRoles(app: FastifyInstance, project: { id: number }): Promise<RoleCast> {
  const cast: Record<string, TestUser | null> = { anonymous: null, nonMember: await quickUser(app), admin: await quickUser(app, { admin: true }) };
  for (const [name, level] of Object.entries(Role)) {
    const u = await quickUser(app);
    await addMember(app, { type: 'Project', id: project.id }, u.user.id, level);
    cast[name] = u;
  }
  return cast as unknown as RoleCast;
}
