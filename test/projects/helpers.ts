import type { FastifyInstance } from 'fastify';
import { call } from '../support/app.ts';
import * as fixtures from '../support/fixtures.ts';

// Groups and memberships come from the shared fixtures (the Groups API lives in its own area).

export async function makeGroup(app: FastifyInstance, o: { path?: string; visibility?: number; parent?: { id: number; full_path: string; traversal: string } } = {}) {
  return fixtures.makeGroup(app, o);
}

export async function addMember(app: FastifyInstance, sourceType: 'Namespace' | 'Project', sourceId: number, userId: number, level: number) {
  await fixtures.addMember(app, { type: sourceType, id: sourceId }, userId, level);
}

export async function createProject(app: FastifyInstance, token: string, body: Record<string, unknown>) {
  const r = await call(app, 'POST', '/projects', { token, body });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body as { id: number; path_with_namespace: string; [k: string]: any };
}

export async function enableFeature(app: FastifyInstance, name: string) {
  const now = Date.now();
  await app.db.insertInto('feature_gates').values({ feature_key: name, key: 'boolean', value: 'true', created_at: now, updated_at: now }).execute();
}
