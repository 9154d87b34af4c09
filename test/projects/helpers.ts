import type { FastifyInstance } from 'fastify';
import { call } from '../support/app.ts';

// Groups and memberships written straight to the tables (the Groups API lives in its own area).

let seq = 0;

export async function makeGroup(app: FastifyInstance, o: { path?: string; visibility?: number; parent?: { id: number; full_path: string; traversal: string } } = {}) {
  const path = o.path ?? `group${process.pid}x${++seq}`;
  const full = o.parent ? `${o.parent.full_path}/${path}` : path;
  const now = Date.now();
  const row = await app.db.insertInto('namespaces').values({
    name: path, path, kind: 'group', parent_id: o.parent?.id ?? null, owner_id: null, visibility_level: o.visibility ?? 20,
    description: '', full_path: full, full_path_lower: full.toLowerCase(), full_name: o.parent ? `${o.parent.full_path} / ${path}` : path,
    traversal: '/', request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer',
    created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const traversal = `${o.parent?.traversal ?? '/'}${row.id}/`;
  await app.db.updateTable('namespaces').set({ traversal }).where('id', '=', row.id).execute();
  return { ...row, traversal };
}

export async function addMember(app: FastifyInstance, sourceType: 'Namespace' | 'Project', sourceId: number, userId: number, level: number) {
  const now = Date.now();
  await app.db.insertInto('members').values({
    source_type: sourceType, source_id: sourceId, user_id: userId, access_level: level, expires_at: null, created_by_id: null, created_at: now, updated_at: now,
  }).execute();
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
