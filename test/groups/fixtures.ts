import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { call } from '../support/app.ts';
import type { TestUser } from '../support/factories.ts';
import { createUser } from '../../src/resources/users/users.service.ts';
import { createPersonalAccessToken } from '../../src/resources/access-tokens/access-tokens.service.ts';

/** Creates a group through the API as `token`; fails the test unless it answers 201. */
export async function mkGroup(app: FastifyInstance, token: string, body: Record<string, unknown>): Promise<any> {
  const r = await call(app, 'POST', '/groups', { token, body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** A project row inserted directly (the projects area owns its API). */
export async function mkProject(app: FastifyInstance, ns: { id: number; full_path: string }, path: string, visibility = 0): Promise<{ id: number; full_path: string }> {
  const now = app.clock.now();
  const full = `${ns.full_path}/${path}`;
  return app.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: full, full_path_lower: full.toLowerCase(), description: null,
    visibility_level: visibility, creator_id: null, archived: 0, default_branch: null, repository_storage: 'default',
    repository_read_only: 0, empty_repo: 1, pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now,
  }).returning(['id', 'full_path']).executeTakeFirstOrThrow();
}

/** A membership row inserted directly. */
export async function addMemberRow(app: FastifyInstance, sourceType: 'Namespace' | 'Project', sourceId: number, userId: number, level: number, expiresAt: number | null = null): Promise<void> {
  const now = app.clock.now();
  await app.db.insertInto('members').values({
    source_type: sourceType, source_id: sourceId, user_id: userId, access_level: level, expires_at: expiresAt,
    created_by_id: null, created_at: now, updated_at: now,
  }).execute();
}

export async function userNamespace(app: FastifyInstance, userId: number): Promise<{ id: number; full_path: string }> {
  return app.db.selectFrom('namespaces').select(['id', 'full_path']).where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirstOrThrow();
}

let seq = 0;

/**
 * A user with an `api` token, like the shared factory's but without a password: hashing one costs
 * more than everything else these tests do, and no test here signs in with it.
 */
export async function quickUser(app: FastifyInstance, o: { admin?: boolean; username?: string } = {}): Promise<TestUser> {
  const username = o.username ?? `g${process.pid}x${++seq}`;
  const user = await createUser(app, { username, name: `User ${username}`, email: `${username}@example.com`, password: null, admin: o.admin });
  const { token } = await createPersonalAccessToken(app, user, { name: 'test', scopes: ['api', 'read_user', ...(o.admin ? ['sudo'] : [])], expiresAt: null });
  return { user, token };
}
