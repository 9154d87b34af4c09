import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { call } from '../support/app.ts';
import type { TestUser } from '../support/factories.ts';
import { addMember, makeProject, userNamespace } from '../support/fixtures.ts';
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
  return makeProject(app, { namespace: ns, path, visibility });
}

/** A membership row inserted directly. */
export async function addMemberRow(app: FastifyInstance, sourceType: 'Namespace' | 'Project', sourceId: number, userId: number, level: number, expiresAt: number | null = null): Promise<void> {
  await addMember(app, { type: sourceType, id: sourceId }, userId, level, expiresAt);
}

export { userNamespace };

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
