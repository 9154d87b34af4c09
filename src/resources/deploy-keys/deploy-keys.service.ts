import type { Insertable, Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { DeployKeysProjectsTable, DeployKeysTable, ProjectsTable } from '../../platform/db/schema.ts';
import { fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { AccessLevel, projectAccessLevels } from '../../platform/membership.ts';
import { NotFoundError, ParamError, RecordNotFoundError, ValidationError } from '../../platform/errors.ts';
import { parseSshPublicKey, sanitizeSshPublicKey, type KeyTechnology } from '../../platform/crypto/ssh-keys.ts';

export type DeployKeyRow = Selectable<DeployKeysTable>;
export type DeployKeyLinkRow = Selectable<DeployKeysProjectsTable>;

export interface LinkedKey {
  key: DeployKeyRow;
  link: DeployKeyLinkRow;
}

/** Who is asking: a user id (null when anonymous) and whether they hold administrator rights. */
export interface Caller {
  userId: number | null;
  admin: boolean;
}

export const TITLE_MAX = 255;
export const KEY_MAX = 5000;
export const RSA_MIN_BITS = 2048;
const ALLOWED_TECHNOLOGIES: KeyTechnology[] = ['rsa', 'ecdsa', 'ed25519', 'ecdsa_sk', 'ed25519_sk'];
const FORBIDDEN_TYPE = 'type is forbidden. Must be RSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK';

export interface NewKeyInput {
  key: string;
  title: string;
  expiresAt: number | null;
}

/** The columns every SSH key (deploy key or user key) stores. */
export interface KeyFields {
  title: string;
  key: string;
  key_type: string;
  key_bits: number;
  key_blob: string;
  fingerprint: string;
  fingerprint_sha256: string;
  expires_at: number | null;
}

/**
 * Validates a new SSH key, deploy key or user key: the reference's Key model rules, with the fingerprint unique
 * across both kinds. Errors are keyed by attribute, with `prefix` ("deploy_key.") when the key is created through
 * a project link, as the reference reports them.
 */
export async function validateNewKey(deps: ServiceDeps, input: NewKeyInput, prefix = ''): Promise<KeyFields> {
  const now = deps.clock.now();
  const errors: Record<string, string[]> = {};
  const add = (attr: string, text: string) => (errors[prefix + attr] ??= []).push(text);
  const title = input.title;
  if (!title.trim()) add('title', "can't be blank");
  if (title.length > TITLE_MAX) add('title', `is too long (maximum is ${TITLE_MAX} characters)`);
  const text = sanitizeSshPublicKey(input.key);
  const parsed = parseSshPublicKey(text);
  if (!text.trim()) add('key', "can't be blank");
  if (parsed && !ALLOWED_TECHNOLOGIES.includes(parsed.technology)) add('key', FORBIDDEN_TYPE);
  else if (parsed?.technology === 'rsa' && parsed.bits < RSA_MIN_BITS) add('key', `must be at least ${RSA_MIN_BITS} bits`);
  if (text.length > KEY_MAX) add('key', `is too long (maximum is ${KEY_MAX} characters)`);
  if (!parsed) add('key', 'is invalid');
  if (parsed) {
    const taken = await deps.db.selectFrom('deploy_keys').select('id').where('fingerprint_sha256', '=', parsed.fingerprintSha256).executeTakeFirst()
      ?? await deps.db.selectFrom('ssh_keys').select('id').where('fingerprint_sha256', '=', parsed.fingerprintSha256).executeTakeFirst();
    if (taken) add('fingerprint_sha256', 'has already been taken');
  } else {
    add('fingerprint_sha256', 'cannot be generated');
  }
  if (input.expiresAt !== null && input.expiresAt <= now) add('key', 'has expired');
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return {
    title,
    key: text.trim(),
    key_type: parsed!.type,
    key_bits: parsed!.bits,
    key_blob: parsed!.blob.toString('base64'),
    fingerprint: parsed!.fingerprintMd5,
    fingerprint_sha256: parsed!.fingerprintSha256,
    expires_at: input.expiresAt,
  };
}

/** A new deploy key's row. */
async function buildKeyRow(deps: ServiceDeps, userId: number | null, input: NewKeyInput, opts: { prefix: string; public: boolean }): Promise<Insertable<DeployKeysTable>> {
  const fields = await validateNewKey(deps, input, opts.prefix);
  const now = deps.clock.now();
  return { ...fields, user_id: userId, public: opts.public ? 1 : 0, last_used_at: null, created_at: now, updated_at: now };
}

/** A key with the same fingerprint appeared between our look-up and our insert. */
class KeyAppeared extends Error {}

/** Runs `fn` again when a concurrent request won a unique index first; the second pass sees its row. */
async function retryOnConflict<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt < 2 && (isUniqueViolation(err) || err instanceof KeyAppeared)) continue;
      if (err instanceof KeyAppeared) throw err.cause;
      throw err;
    }
  }
}

/** Keys the caller may attach to another project: public ones, and those of projects the caller belongs to. */
async function accessibleKeyIds(db: Db, caller: Caller, keys: DeployKeyRow[]): Promise<Set<number>> {
  const out = new Set<number>();
  if (caller.admin) {
    for (const k of keys) out.add(k.id);
    return out;
  }
  for (const k of keys) if (k.public) out.add(k.id);
  const rest = keys.filter((k) => !out.has(k.id));
  if (!caller.userId || rest.length === 0) return out;
  const links = await db.selectFrom('deploy_keys_projects')
    .innerJoin('projects', 'projects.id', 'deploy_keys_projects.project_id')
    .select(['deploy_keys_projects.deploy_key_id', 'projects.id', 'projects.namespace_id'])
    .where('deploy_keys_projects.deploy_key_id', 'in', rest.map((k) => k.id))
    .where('projects.pending_delete', '=', 0)
    .execute();
  const levels = await projectAccessLevels(db, caller.userId, links.map((l) => ({ id: l.id, namespace_id: l.namespace_id })));
  for (const l of links) if ((levels.get(l.id)?.effective ?? 0) >= AccessLevel.GUEST) out.add(l.deploy_key_id);
  return out;
}

export async function linkedKey(db: Db, projectId: number, keyId: number): Promise<LinkedKey | null> {
  if (!fitsIntColumn(keyId)) return null;
  const link = await db.selectFrom('deploy_keys_projects').selectAll().where('project_id', '=', projectId).where('deploy_key_id', '=', keyId).executeTakeFirst();
  if (!link) return null;
  const key = await db.selectFrom('deploy_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
  return { key, link };
}

/** The project's keys with their links, in the order they were attached. */
/** Every key of the instance, or only the public ones, for the administrators' list. */
export function instanceKeysQuery(db: Db, publicOnly: boolean) {
  let q = db.selectFrom('deploy_keys').selectAll();
  if (publicOnly) q = q.where('public', '=', 1);
  return q.orderBy('id', 'asc');
}

/** The keys used by any of the projects. */
export function keysOfProjectsQuery(db: Db, projectIds: number[]) {
  return db.selectFrom('deploy_keys').selectAll()
    .where('id', 'in', db.selectFrom('deploy_keys_projects').select('deploy_key_id').where('project_id', 'in', projectIds))
    .orderBy('id', 'asc');
}

export function projectKeysQuery(db: Db, projectId: number) {
  return db.selectFrom('deploy_keys_projects').selectAll().where('project_id', '=', projectId).orderBy('id', 'asc');
}

export async function keysByIds(db: Db, ids: number[]): Promise<Map<number, DeployKeyRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('deploy_keys').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function getProjectKeyOr404(db: Db, projectId: number, keyId: number): Promise<LinkedKey> {
  const found = await linkedKey(db, projectId, keyId);
  if (!found) throw new RecordNotFoundError();
  return found;
}

/**
 * Adds a key to a project. The same key (by fingerprint) already on the project comes back unchanged;
 * a key that exists elsewhere is attached only when the caller may reach it; otherwise a new key is made.
 */
export async function addProjectKey(deps: ServiceDeps, caller: Caller, projectId: number, input: NewKeyInput & { canPush: boolean }): Promise<LinkedKey> {
  return retryOnConflict(async () => {
    const parsed = parseSshPublicKey(sanitizeSshPublicKey(input.key));
    let existing: DeployKeyRow | undefined;
    if (parsed) {
      existing = await deps.db.selectFrom('deploy_keys').selectAll().where('fingerprint_sha256', '=', parsed.fingerprintSha256).executeTakeFirst();
      if (existing) {
        const here = await linkedKey(deps.db, projectId, existing.id);
        if (here) return here;
        if ((await accessibleKeyIds(deps.db, caller, [existing])).has(existing.id)) {
          return { key: existing, link: await attach(deps, existing.id, projectId, input.canPush) };
        }
      }
    }
    let row: Insertable<DeployKeysTable>;
    try {
      row = await buildKeyRow(deps, caller.userId, input, { prefix: 'deploy_key.', public: false });
    } catch (err) {
      // Created by a concurrent request since the look-up above: decide again with it in place.
      if (parsed && !existing && err instanceof ValidationError && (err.errors['deploy_key.fingerprint_sha256'] as string[] | undefined)?.includes('has already been taken')) {
        throw new KeyAppeared('deploy key appeared', { cause: err });
      }
      throw err;
    }
    return deps.db.transaction().execute(async (trx) => {
      const key = await trx.insertInto('deploy_keys').values(row).returningAll().executeTakeFirstOrThrow();
      const now = deps.clock.now();
      const link = await trx.insertInto('deploy_keys_projects')
        .values({ deploy_key_id: key.id, project_id: projectId, can_push: input.canPush ? 1 : 0, created_at: now, updated_at: now })
        .returningAll().executeTakeFirstOrThrow();
      return { key, link };
    });
  });
}

/** An instance-wide (public) key, which any project maintainer may enable. */
export async function createPublicKey(deps: ServiceDeps, caller: Caller, input: NewKeyInput): Promise<DeployKeyRow> {
  return retryOnConflict(async () => {
    const row = await buildKeyRow(deps, caller.userId, input, { prefix: '', public: true });
    return deps.db.insertInto('deploy_keys').values(row).returningAll().executeTakeFirstOrThrow();
  });
}

async function attach(deps: ServiceDeps, keyId: number, projectId: number, canPush: boolean): Promise<DeployKeyLinkRow> {
  const now = deps.clock.now();
  return deps.db.insertInto('deploy_keys_projects')
    .values({ deploy_key_id: keyId, project_id: projectId, can_push: canPush ? 1 : 0, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

/** Enables an existing key on a project (idempotent); 404 "Deploy key" when the caller cannot reach it. */
export async function enableKey(deps: ServiceDeps, caller: Caller, projectId: number, keyId: number): Promise<DeployKeyRow> {
  const key = fitsIntColumn(keyId) ? await deps.db.selectFrom('deploy_keys').selectAll().where('id', '=', keyId).executeTakeFirst() : undefined;
  if (!key || !(await accessibleKeyIds(deps.db, caller, [key])).has(key.id)) throw new NotFoundError('Deploy key');
  await retryOnConflict(async () => {
    if (!(await linkedKey(deps.db, projectId, key.id))) await attach(deps, key.id, projectId, false);
  });
  return key;
}

/**
 * Updates a key's link (`can_push`) and its title. The title is shared by every project using the key,
 * so a maintainer may change it only on a private key used by this project alone; otherwise it is kept.
 */
export async function updateProjectKey(deps: ServiceDeps, caller: Caller, found: LinkedKey, input: { title?: string; canPush?: boolean }): Promise<LinkedKey> {
  if (input.title === undefined && input.canPush === undefined) throw ParamError.of('title, can_push', 'at_least_one');
  const now = deps.clock.now();
  let title: string | undefined;
  if (input.title !== undefined) {
    const uses = await deps.db.selectFrom('deploy_keys_projects').select((eb) => eb.fn.countAll<number>().as('n')).where('deploy_key_id', '=', found.key.id).executeTakeFirstOrThrow();
    if (caller.admin || (!found.key.public && Number(uses.n) <= 1)) title = input.title;
  }
  if (title !== undefined) {
    const errors: string[] = [];
    if (!title.trim()) errors.push("can't be blank");
    if (title.length > TITLE_MAX) errors.push(`is too long (maximum is ${TITLE_MAX} characters)`);
    if (errors.length) throw new ValidationError({ 'deploy_key.title': errors });
  }
  return deps.db.transaction().execute(async (trx) => {
    const key = title !== undefined
      ? await trx.updateTable('deploy_keys').set({ title, updated_at: now }).where('id', '=', found.key.id).returningAll().executeTakeFirstOrThrow()
      : found.key;
    const link = await trx.updateTable('deploy_keys_projects')
      .set({ ...(input.canPush !== undefined ? { can_push: input.canPush ? 1 : 0 } : {}), updated_at: now })
      .where('id', '=', found.link.id).returningAll().executeTakeFirstOrThrow();
    return { key, link };
  });
}

/** Detaches a key from a project; a private key no other project uses is removed with it. */
export async function removeProjectKey(deps: ServiceDeps, found: LinkedKey): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('deploy_keys_projects').where('id', '=', found.link.id).execute();
    if (found.key.public) return;
    const other = await trx.selectFrom('deploy_keys_projects').select('id').where('deploy_key_id', '=', found.key.id).executeTakeFirst();
    if (!other) await trx.deleteFrom('deploy_keys').where('id', '=', found.key.id).execute();
  });
}

export type ProjectSummaryRow = Pick<Selectable<ProjectsTable>, 'id' | 'description' | 'name' | 'path' | 'full_path' | 'created_at'> & { namespace_full_name: string };

/** For the instance list: each key's projects, split by write access, in the order they were attached. */
export async function projectsOfKeys(db: Db, keyIds: number[]): Promise<Map<number, { write: ProjectSummaryRow[]; readonly: ProjectSummaryRow[] }>> {
  const out = new Map<number, { write: ProjectSummaryRow[]; readonly: ProjectSummaryRow[] }>();
  for (const id of keyIds) out.set(id, { write: [], readonly: [] });
  if (keyIds.length === 0) return out;
  const rows = await db.selectFrom('deploy_keys_projects')
    .innerJoin('projects', 'projects.id', 'deploy_keys_projects.project_id')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select([
      'deploy_keys_projects.deploy_key_id', 'deploy_keys_projects.can_push',
      'projects.id', 'projects.description', 'projects.name', 'projects.path', 'projects.full_path', 'projects.created_at',
      'namespaces.full_name as namespace_full_name',
    ])
    .where('deploy_keys_projects.deploy_key_id', 'in', keyIds)
    .where('projects.pending_delete', '=', 0)
    .orderBy('deploy_keys_projects.id', 'asc')
    .execute();
  for (const r of rows) {
    const entry = out.get(r.deploy_key_id)!;
    const { deploy_key_id: _k, can_push, ...project } = r;
    (can_push ? entry.write : entry.readonly).push(project);
  }
  return out;
}

/** Deploy keys attached to a project, for access checks elsewhere (protected tags and branches, git access). */
export async function deployKeysOfProject(deps: { db: Db }, projectId: number): Promise<Array<{ id: number; title: string; can_push: boolean }>> {
  const rows = await deps.db.selectFrom('deploy_keys_projects')
    .innerJoin('deploy_keys', 'deploy_keys.id', 'deploy_keys_projects.deploy_key_id')
    .select(['deploy_keys.id', 'deploy_keys.title', 'deploy_keys_projects.can_push'])
    .where('deploy_keys_projects.project_id', '=', projectId)
    .orderBy('deploy_keys_projects.id', 'asc')
    .execute();
  return rows.map((r) => ({ id: r.id, title: r.title, can_push: !!r.can_push }));
}

/** The project summaries (ProjectIdentity) of these projects, by id; other areas show their projects this way too. */
export async function projectSummariesByIds(db: Db, ids: number[]): Promise<Map<number, ProjectSummaryRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('projects')
    .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
    .select(['projects.id', 'projects.description', 'projects.name', 'projects.path', 'projects.full_path', 'projects.created_at', 'namespaces.full_name as namespace_full_name'])
    .where('projects.id', 'in', [...new Set(ids)])
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}
