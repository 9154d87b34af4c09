import type { FastifyInstance } from 'fastify';
import { createUser } from '../../src/resources/users/users.service.ts';
import { createPersonalAccessToken } from '../../src/resources/access-tokens/access-tokens.service.ts';
import type { UserRow } from '../../src/http/auth.ts';

let seq = 0;
const next = () => `${process.pid}${++seq}`;

export interface TestUser {
  user: UserRow;
  token: string;
}

/** A user with a personal access token (all scopes but sudo/admin_mode unless asked). */
export async function makeUser(app: FastifyInstance, o: { username?: string; admin?: boolean; scopes?: string[]; password?: string; state?: 'blocked' } = {}): Promise<TestUser> {
  const username = o.username ?? `user${next()}`;
  const user = await createUser(app, { username, name: `User ${username}`, email: `${username}@example.com`, password: o.password ?? 'password123', admin: o.admin });
  const { token } = await createPersonalAccessToken(app, user, { name: 'test', scopes: o.scopes ?? ['api', 'read_user', 'read_repository', 'write_repository', ...(o.admin ? ['sudo'] : [])], expiresAt: null });
  if (o.state) await app.db.updateTable('users').set({ state: o.state }).where('id', '=', user.id).execute();
  return { user, token };
}

export async function makeToken(app: FastifyInstance, user: { id: number }, scopes: string[], extra: { impersonation?: boolean; expiresAt?: string } = {}): Promise<string> {
  const { token } = await createPersonalAccessToken(app, user, { name: 'extra', scopes, expiresAt: extra.expiresAt ?? null, impersonation: extra.impersonation });
  return token;
}
