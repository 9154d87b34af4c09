import type { FastifyInstance } from 'fastify';

// Plain rows for groups, projects and memberships, for tests of areas that only need them to exist.

let seq = 0;

export async function insertGroup(app: FastifyInstance, o: { path?: string; parent?: { id: number; full_path: string; traversal: string }; visibility?: number } = {}) {
  const path = o.path ?? `g${process.pid}x${++seq}`;
  const full = o.parent ? `${o.parent.full_path}/${path}` : path;
  const now = app.clock.now();
  const row = await app.db.insertInto('namespaces').values({
    name: path, path, kind: 'group', parent_id: o.parent?.id ?? null, owner_id: null, visibility_level: o.visibility ?? 0,
    description: '', full_path: full, full_path_lower: full.toLowerCase(), full_name: full, traversal: '/',
    request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const traversal = `${o.parent?.traversal ?? '/'}${row.id}/`;
  await app.db.updateTable('namespaces').set({ traversal }).where('id', '=', row.id).execute();
  return { ...row, traversal };
}

export async function insertProject(app: FastifyInstance, ns: { id: number; full_path: string }, o: { path?: string; visibility?: number } = {}) {
  const path = o.path ?? `p${process.pid}x${++seq}`;
  const full = `${ns.full_path}/${path}`;
  const now = app.clock.now();
  return app.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: full, full_path_lower: full.toLowerCase(), description: null,
    visibility_level: o.visibility ?? 0, creator_id: null, archived: 0, default_branch: null, repository_storage: 'default',
    repository_read_only: 0, empty_repo: 1, pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function addMember(app: FastifyInstance, source: { type: 'Namespace' | 'Project'; id: number }, userId: number, level: number) {
  const now = app.clock.now();
  await app.db.insertInto('members').values({
    source_type: source.type, source_id: source.id, user_id: userId, access_level: level, expires_at: null, created_by_id: null, created_at: now, updated_at: now,
  }).execute();
}
