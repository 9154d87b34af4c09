import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { DB } from '../../platform/db/schema.ts';
import { containsText, isUniqueViolation } from '../../platform/db/dialect.ts';
import { ValidationError, ForbiddenError, ParamError, RuleError, ConflictError, NotFoundError } from '../../platform/errors.ts';
import { AccessLevel, Visibility, projectAccessLevels, visibilityName, type NamespaceRow, type VisibilityName } from '../../platform/membership.ts';
import { memberOfSelfOrAncestor, readableGroups } from '../../platform/access/queries.ts';
import { canReadVisibility } from '../../platform/access/policy.ts';
import type { Actor } from '../../http/auth.ts';
import { pathProblem } from '../users/users.service.ts';
import { checkAvatar, removeAvatar, withAvatar } from '../../platform/storage/avatars.ts';
import { removeProjectUploads } from '../../platform/storage/uploads.ts';
import { deleteProjectRows, removeProjectRepositories } from '../projects/projects.service.ts';
import { transferLabelsOfProjectsIn } from '../labels/labels.service.ts';
import type { UploadedFile } from '../../platform/storage/uploads.ts';
import { applicationSettings } from '../../platform/application-settings.ts';

export type Group = NamespaceRow;

export const PROJECT_CREATION_LEVELS = ['noone', 'owner', 'maintainer', 'developer', 'administrator'] as const;
export const SUBGROUP_CREATION_LEVELS = ['owner', 'maintainer'] as const;

export interface GroupSettingsInput {
  name?: string;
  path?: string;
  description?: string;
  visibility?: VisibilityName;
  share_with_group_lock?: boolean;
  require_two_factor_authentication?: boolean;
  two_factor_grace_period?: number;
  project_creation_level?: (typeof PROJECT_CREATION_LEVELS)[number];
  auto_devops_enabled?: boolean;
  subgroup_creation_level?: (typeof SUBGROUP_CREATION_LEVELS)[number];
  emails_disabled?: boolean;
  emails_enabled?: boolean;
  mentions_disabled?: boolean;
  lfs_enabled?: boolean;
  request_access_enabled?: boolean;
  default_branch_protection?: number;
  default_branch?: string;
  /** A new avatar (a file part), or null to remove it. */
  avatar?: UploadedFile | null;
}

// Letters (any script), digits, emoji, '_', '.', '-', space and parentheses; starts with a letter, digit, emoji or '_'.
const NAME_RE = /^[\p{L}\p{N}_\p{Extended_Pictographic}][\p{L}\p{N}\p{M}_.\- ()\p{Extended_Pictographic}\u200d\ufe0f]*$/u;
const NAME_TEXT = "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'.";

type Errors = Record<string, string[]>;
const addError = (errors: Errors, k: string, m: string) => (errors[k] ??= []).push(m);

function checkName(errors: Errors, name: string | undefined) {
  if (name === undefined) return;
  if (name.trim() === '') return addError(errors, 'name', "can't be blank");
  if (name.length > 255) addError(errors, 'name', 'is too long (maximum is 255 characters)');
  if (!NAME_RE.test(name)) addError(errors, 'name', NAME_TEXT);
}

function checkPath(errors: Errors, path: string | undefined, nested: boolean) {
  if (path === undefined) return;
  if (path === '') return addError(errors, 'path', "can't be blank");
  if (path.length > 255) addError(errors, 'path', 'is too long (maximum is 255 characters)');
  const p = pathProblem(path, nested ? 'nested' : 'top');
  if (p) addError(errors, 'path', p);
}

/** Whether `full` is already the path of a namespace or a project (case-insensitive). */
async function routeTaken(db: Kysely<DB>, full: string, exceptNamespaceId?: number): Promise<boolean> {
  const lower = full.toLowerCase();
  const ns = await db.selectFrom('namespaces').select('id').where('full_path_lower', '=', lower).executeTakeFirst();
  if (ns && ns.id !== exceptNamespaceId) return true;
  const p = await db.selectFrom('projects').select('id').where('full_path_lower', '=', lower).executeTakeFirst();
  return !!p;
}

function settingsValues(input: GroupSettingsInput): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  if (input.description !== undefined) set.description = input.description;
  if (input.visibility !== undefined) set.visibility_level = Visibility[input.visibility];
  const flag = (k: keyof GroupSettingsInput, col: string = k) => {
    if (input[k] !== undefined) set[col] = input[k] ? 1 : 0;
  };
  flag('share_with_group_lock');
  flag('require_two_factor_authentication');
  flag('auto_devops_enabled');
  flag('mentions_disabled');
  flag('lfs_enabled');
  flag('request_access_enabled');
  // emails_disabled is the deprecated inverse of emails_enabled; the latter wins when both are given.
  if (input.emails_disabled !== undefined) set.emails_enabled = input.emails_disabled ? 0 : 1;
  flag('emails_enabled');
  if (input.two_factor_grace_period !== undefined) set.two_factor_grace_period = input.two_factor_grace_period;
  if (input.project_creation_level !== undefined) set.project_creation_level = input.project_creation_level;
  if (input.subgroup_creation_level !== undefined) set.subgroup_creation_level = input.subgroup_creation_level;
  if (input.default_branch_protection !== undefined) set.default_branch_protection = input.default_branch_protection;
  if (input.default_branch !== undefined) set.default_branch = input.default_branch || null;
  return set;
}

function visibilityAboveParent(errors: Errors, level: number, parent: Group | null) {
  if (parent && level > parent.visibility_level) {
    addError(errors, 'visibility_level', `${visibilityName(level)} is not allowed since the parent group has a ${visibilityName(parent.visibility_level)} visibility.`);
  }
}

export async function createGroup(deps: ServiceDeps, creatorId: number, parent: Group | null, input: GroupSettingsInput & { name: string; path: string }): Promise<Group> {
  const errors: Errors = {};
  checkName(errors, input.name);
  checkPath(errors, input.path, parent !== null);
  // New groups are private unless asked otherwise (the reference's default_group_visibility).
  const visibility = input.visibility ? Visibility[input.visibility] : Visibility.private;
  visibilityAboveParent(errors, visibility, parent);
  const fullPath = parent ? `${parent.full_path}/${input.path}` : input.path;
  if (!errors.path && (await routeTaken(deps.db, fullPath))) addError(errors, 'path', 'has already been taken');
  if (Object.keys(errors).length) throw new ValidationError(errors);
  checkAvatar(input.avatar);

  const now = deps.clock.now();
  const { default_branch_protection: defaultProtection } = await applicationSettings(deps);
  return withAvatar(deps.config.dataDir, 'group', input.avatar ?? undefined, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('namespaces').values({
      name: input.name, path: input.path, kind: 'group', parent_id: parent?.id ?? null, owner_id: null,
      visibility_level: visibility, description: input.description ?? '',
      full_path: fullPath, full_path_lower: fullPath.toLowerCase(),
      full_name: parent ? `${parent.full_name} / ${input.name}` : input.name, traversal: '/',
      request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer',
      // A new group takes the instance's default branch protection unless given its own.
      default_branch_protection: defaultProtection,
      created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    await trx.updateTable('namespaces').set({ ...settingsValues({ ...input, visibility: undefined }), traversal: `${parent?.traversal ?? '/'}${row.id}/` })
      .where('id', '=', row.id).execute();
    await trx.insertInto('members').values({
      source_type: 'Namespace', source_id: row.id, user_id: creatorId, access_level: AccessLevel.OWNER,
      expires_at: null, created_by_id: creatorId, created_at: now, updated_at: now,
    }).execute();
    await applyAvatar(trx, row.id);
    return trx.selectFrom('namespaces').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  })).catch((e) => {
    // Another request took the path between the check above and this insert.
    if (isUniqueViolation(e)) throw new ValidationError({ path: ['has already been taken'] });
    throw e;
  });
}

export async function updateGroup(deps: ServiceDeps, group: Group, input: GroupSettingsInput): Promise<Group> {
  const errors: Errors = {};
  checkName(errors, input.name);
  checkPath(errors, input.path, group.parent_id !== null);
  const parent = group.parent_id ? await deps.db.selectFrom('namespaces').selectAll().where('id', '=', group.parent_id).executeTakeFirst() ?? null : null;
  if (input.visibility !== undefined) {
    const level = Visibility[input.visibility];
    visibilityAboveParent(errors, level, parent);
    const higherProject = await deps.db.selectFrom('projects').select('id').where('namespace_id', '=', group.id)
      .where('pending_delete', '=', 0).where('visibility_level', '>', level).executeTakeFirst();
    if (higherProject) addError(errors, 'visibility_level', `${input.visibility} is not allowed since this group contains projects with higher visibility.`);
    const higherChild = await deps.db.selectFrom('namespaces').select('id').where('parent_id', '=', group.id).where('visibility_level', '>', level).executeTakeFirst();
    if (higherChild) addError(errors, 'visibility_level', `${input.visibility} is not allowed since there are sub-groups with higher visibility.`);
  }
  if (input.path !== undefined && input.path !== group.path && !errors.path) {
    const full = parent ? `${parent.full_path}/${input.path}` : input.path;
    if (await routeTaken(deps.db, full, group.id)) addError(errors, 'path', 'has already been taken');
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  checkAvatar(input.avatar);

  const set: Record<string, unknown> = { ...settingsValues(input), updated_at: deps.clock.now() };
  if (input.name !== undefined) set.name = input.name;
  if (input.path !== undefined) set.path = input.path;
  return withAvatar(deps.config.dataDir, 'group', input.avatar, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('namespaces').set(set).where('id', '=', group.id).execute();
    await applyAvatar(trx, group.id);
    if ((input.name !== undefined && input.name !== group.name) || (input.path !== undefined && input.path !== group.path)) {
      await refreshSubtree(trx, group.id);
    }
    return trx.selectFrom('namespaces').selectAll().where('id', '=', group.id).executeTakeFirstOrThrow();
  }));
}

/** Why a transfer is refused, in the reference's words ("Transfer failed: ..."). */
export function transferFailure(reason: string): RuleError {
  return new RuleError('bad_request', `Transfer failed: ${reason}`);
}

/**
 * Moves a group under another group (or to the top level) with everything below it. A group more
 * visible than its new parent, and everything below it, takes the parent's visibility.
 */
export async function transferGroup(deps: ServiceDeps, group: Group, target: Group | null): Promise<Group> {
  if ((target?.id ?? null) === group.parent_id) {
    throw transferFailure(target ? 'Group is already associated to the parent group.' : 'Group is already a root group.');
  }
  if (target && target.traversal.startsWith(group.traversal)) throw transferFailure('Cannot transfer group to one of its subgroup.');
  const full = target ? `${target.full_path}/${group.path}` : group.path;
  if (await routeTaken(deps.db, full, group.id)) throw transferFailure('The parent group already has a subgroup or a project with the same path.');
  return deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('namespaces').set({ parent_id: target?.id ?? null, updated_at: deps.clock.now() }).where('id', '=', group.id).execute();
    await refreshSubtree(trx, group.id);
    const moved = await trx.selectFrom('namespaces').select('traversal').where('id', '=', group.id).executeTakeFirstOrThrow();
    const ids = await subtreeIds(trx, moved);
    // The projects below keep their labels: those of the groups left behind are re-created in each project.
    await transferLabelsOfProjectsIn(trx, deps.clock.now(), ids);
    if (target && group.visibility_level > target.visibility_level) {
      await trx.updateTable('namespaces').set({ visibility_level: target.visibility_level }).where('id', 'in', ids).where('visibility_level', '>', target.visibility_level).execute();
      await trx.updateTable('projects').set({ visibility_level: target.visibility_level }).where('namespace_id', 'in', ids).where('visibility_level', '>', target.visibility_level).execute();
    }
    return trx.selectFrom('namespaces').selectAll().where('id', '=', group.id).executeTakeFirstOrThrow();
  });
}

/**
 * Recomputes traversal, full_path and full_name of a group from its parent, then of every descendant
 * group (parents before children), then the full_path of every project in that subtree.
 */
export async function refreshSubtree(trx: Transaction<DB> | Kysely<DB>, groupId: number): Promise<void> {
  const root = await trx.selectFrom('namespaces').selectAll().where('id', '=', groupId).executeTakeFirstOrThrow();
  const parent = root.parent_id ? await trx.selectFrom('namespaces').selectAll().where('id', '=', root.parent_id).executeTakeFirstOrThrow() : null;
  const oldPrefix = root.traversal;
  const descendants = await trx.selectFrom('namespaces').select(['id', 'parent_id', 'name', 'path', 'traversal'])
    .where('traversal', 'like', `${oldPrefix}%`).where('id', '!=', root.id).execute();
  descendants.sort((a, b) => a.traversal.length - b.traversal.length);
  const computed = new Map<number, { traversal: string; full_path: string; full_name: string }>();
  const place = (id: number, name: string, path: string, up: { traversal: string; full_path: string; full_name: string } | null) => {
    const v = {
      traversal: `${up?.traversal ?? '/'}${id}/`,
      full_path: up ? `${up.full_path}/${path}` : path,
      full_name: up ? `${up.full_name} / ${name}` : name,
    };
    computed.set(id, v);
    return v;
  };
  place(root.id, root.name, root.path, parent);
  for (const d of descendants) place(d.id, d.name, d.path, computed.get(d.parent_id!)!);
  for (const [id, v] of computed) {
    await trx.updateTable('namespaces').set({ ...v, full_path_lower: v.full_path.toLowerCase() }).where('id', '=', id).execute();
  }
  const projects = await trx.selectFrom('projects').select(['id', 'path', 'namespace_id']).where('namespace_id', 'in', [...computed.keys()]).execute();
  for (const p of projects) {
    const full = `${computed.get(p.namespace_id)!.full_path}/${p.path}`;
    await trx.updateTable('projects').set({ full_path: full, full_path_lower: full.toLowerCase() }).where('id', '=', p.id).execute();
  }
}

/** Ids of the group and every group below it. */
export async function subtreeIds(db: Kysely<DB>, group: Pick<Group, 'traversal'>): Promise<number[]> {
  const rows = await db.selectFrom('namespaces').select('id').where('traversal', 'like', `${group.traversal}%`).execute();
  return rows.map((r) => r.id);
}

export const DESTROY_GROUP_JOB = 'destroy_group';

/**
 * `DELETE /groups/:id` (answered 202): in one transaction the group, its subgroups and their projects are marked
 * pending deletion, which hides them from every read at once, and the job that removes them is queued; a crash
 * either leaves both or neither.
 */
export async function scheduleGroupDeletion(deps: ServiceDeps, group: Group): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const ids = await subtreeIds(trx, group);
    await trx.updateTable('namespaces').set({ pending_delete: 1 }).where('id', 'in', ids).execute();
    await trx.updateTable('projects').set({ pending_delete: 1, marked_for_deletion_at: now, updated_at: now })
      .where('namespace_id', 'in', ids).where('pending_delete', '=', 0).execute();
    await deps.jobs.enqueue(trx, DESTROY_GROUP_JOB, { group_id: group.id }, { uniqueKey: `${DESTROY_GROUP_JOB}:${group.id}` });
  });
}

/**
 * The deletion job: removes a group marked pending deletion with its subgroups and their projects, as the
 * reference's `GroupDestroyWorker`. The files go first (each project's repository, avatar and uploads; the
 * groups' avatars), while the rows still name them, then the rows in one transaction. A run killed on the way is
 * run again and starts over: what is already gone is skipped, what is left (a repository, or the `+deleted`
 * leftover of one cut short, which the removal takes too) is removed; once the rows are gone there is nothing to do.
 */
export async function destroyGroup(deps: ServiceDeps, groupId: number): Promise<void> {
  const group = await deps.db.selectFrom('namespaces').select(['id', 'traversal']).where('id', '=', groupId)
    .where('kind', '=', 'group').where('pending_delete', '=', 1).executeTakeFirst();
  if (!group) return;
  const ids = await subtreeIds(deps.db, group);
  const projects = await deps.db.selectFrom('projects').select(['id', 'repository_storage', 'forked_from_project_id']).where('namespace_id', 'in', ids).execute();
  for (const p of projects) {
    await removeProjectRepositories(deps, p);
    await removeAvatar(deps.config.dataDir, 'project', p.id);
    await removeProjectUploads(deps.config.dataDir, p.id);
  }
  for (const id of ids) await removeAvatar(deps.config.dataDir, 'group', id);
  await deps.db.transaction().execute(async (trx) => {
    // Anything created below the group since (nothing can be: it is hidden) would be in the subtree read here.
    const rows = await trx.selectFrom('namespaces').select(['id', 'traversal']).where('traversal', 'like', `${group.traversal}%`).execute();
    const all = rows.map((r) => r.id);
    const live = await trx.selectFrom('projects').select(['id', 'forked_from_project_id']).where('namespace_id', 'in', all).execute();
    await deleteProjectRows(trx, live);
    const bots = await trx.selectFrom('resource_bots').select('user_id').where('source_type', '=', 'Namespace').where('source_id', 'in', all).execute();
    await trx.deleteFrom('members').where('source_type', '=', 'Namespace').where('source_id', 'in', all).execute();
    if (bots.length) await trx.deleteFrom('users').where('id', 'in', bots.map((b) => b.user_id)).execute();
    await trx.deleteFrom('project_group_links').where('group_id', 'in', all).execute();
    await trx.deleteFrom('group_group_links').where((eb) => eb.or([eb('shared_group_id', 'in', all), eb('shared_with_group_id', 'in', all)])).execute();
    await trx.deleteFrom('group_custom_attributes').where('group_id', 'in', all).execute();
    // Children first, so that no row ever points at a removed parent.
    rows.sort((a, b) => b.traversal.length - a.traversal.length);
    for (const r of rows) await trx.deleteFrom('namespaces').where('id', '=', r.id).execute();
  });
}

export function assertCanCreateTopLevel(actor: Actor): void {
  if (!actor.admin && !actor.user?.can_create_group) throw new ForbiddenError();
}

export type GroupListInput = {
  skip_groups?: string[]; all_available?: boolean; search?: string; owned?: boolean; order_by?: 'name' | 'path' | 'id' | 'similarity';
  sort?: 'asc' | 'desc'; min_access_level?: number; top_level_only?: boolean; pagination?: string; cursor?: string;
  page?: number; per_page?: number;
};

/** An integer list given as an array, a comma-separated string, or both. */
function intList(raw: string[] | undefined, name: string): number[] {
  const out: number[] = [];
  for (const part of (raw ?? []).flatMap((v) => String(v).split(','))) {
    const t = part.trim();
    if (t === '') continue;
    if (!/^\d+$/.test(t)) throw ParamError.of(name, 'invalid');
    out.push(Number(t));
  }
  return out;
}

/** The group list query shared by GET /groups and GET /groups/:id/subgroups. */
export function groupListQuery(deps: ServiceDeps, actor: Actor, i: GroupListInput, parent: Group | null, descendants = false) {
  const now = deps.clock.now();
  let q = deps.db.selectFrom('namespaces').selectAll().where('kind', '=', 'group');
  if (parent && descendants) q = q.where('traversal', 'like', `${parent.traversal}%`).where('id', '!=', parent.id);
  else if (parent) q = q.where('parent_id', '=', parent.id);
  if (i.owned || i.min_access_level !== undefined) {
    // These replace the visible set: only groups the user holds at that level.
    if (!actor.user) return q.where(({ lit }) => lit(false));
    if (i.owned) {
      q = q.where(({ exists, selectFrom }) => exists(selectFrom('members as m').select('m.id')
        .whereRef('m.source_id', '=', 'namespaces.id').where('m.source_type', '=', 'Namespace')
        .where('m.user_id', '=', actor.user!.id).where('m.access_level', '=', AccessLevel.OWNER)
        .where((eb) => eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', now)]))));
    }
    if (i.min_access_level !== undefined) q = q.where(memberOfSelfOrAncestor(actor.user.id, now, i.min_access_level));
  } else if (parent) {
    q = q.where(readableGroups(actor, now));
  } else if (actor.user) {
    // Signed-in users list the groups they belong to; all_available adds every group they may see
    // (the default for administrators).
    const allAvailable = i.all_available ?? actor.admin;
    if (allAvailable) q = q.where(readableGroups(actor, now));
    else q = q.where(memberOfSelfOrAncestor(actor.user.id, now));
  } else {
    q = q.where('visibility_level', '>=', Visibility.public);
  }
  if (i.search) {
    const s = i.search.toLowerCase();
    // Terms shorter than three characters match whole names only, as the reference's fuzzy search.
    q = s.length >= 3
      ? q.where((eb) => eb.or([containsText('namespaces.name', s), containsText('namespaces.path', s)]))
      : q.where((eb) => eb.or([eb(eb.fn('lower', ['name']), '=', s), eb(eb.fn('lower', ['path']), '=', s)]));
  }
  const skip = intList(i.skip_groups, 'skip_groups');
  if (skip.length) q = q.where('id', 'not in', skip);
  if (i.top_level_only) q = q.where('parent_id', 'is', null);
  return q;
}

export function orderedGroups<Q extends { orderBy: (...a: any[]) => Q }>(q: Q, i: GroupListInput): Q {
  // Similarity ranking is approximated by name order.
  const by = i.order_by === 'similarity' ? 'name' : i.order_by ?? 'name';
  let out = q.orderBy(by, i.sort ?? 'asc');
  // The reference breaks ties by id ascending whatever the direction.
  if (by !== 'id') out = out.orderBy('id', 'asc');
  return out;
}

export function encodeGroupCursor(g: Group): string {
  return Buffer.from(JSON.stringify({ name: g.name, id: g.id })).toString('base64url');
}

function decodeGroupCursor(s: string): { name: string; id: number } {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (typeof v?.name === 'string' && Number.isInteger(v?.id)) return v;
  } catch {
    /* reported below */
  }
  throw ParamError.of('cursor', 'invalid');
}

/** One keyset page of a group list ordered by name: the rows after the cursor, plus one to tell whether more follow. */
export async function groupKeysetPage(q: ReturnType<typeof groupListQuery>, cursor: string | undefined, perPage: number): Promise<Group[]> {
  let kq = q;
  if (cursor) {
    const c = decodeGroupCursor(cursor);
    kq = kq.where((eb) => eb.or([eb('name', '>', c.name), eb.and([eb('name', '=', c.name), eb('id', '>', c.id)])]));
  }
  return kq.orderBy('name', 'asc').orderBy('id', 'asc').limit(perPage + 1).execute();
}

/** The first hundred live projects of the group that the caller may see, for the group's detail. */
export async function visibleGroupProjects(deps: ServiceDeps, actor: Actor, g: Group) {
  const db = deps.db;
  const rows = await db.selectFrom('projects').selectAll().where('namespace_id', '=', g.id).where('pending_delete', '=', 0)
    .orderBy('id', 'asc').limit(100).execute();
  const levels = actor.user ? await projectAccessLevels(db, actor.user.id, rows, deps.clock.now()) : new Map();
  return rows.filter((p) => canReadVisibility(actor, p.visibility_level, levels.get(p.id)?.effective ?? 0));
}

// ---------------------------------------------------------------------------------------------
// Sharing a group with another group: the other group's members reach this group (and what is below it) at the
// lower of the share's level and their own (platform/membership.ts).

export interface GroupShare { group_id: number; group_name: string; group_full_path: string; group_access_level: number; expires_at: number | null }

/** The groups each of these groups is shared with, in the order the shares were made. */
export async function sharedWithGroups(deps: ServiceDeps, groupIds: number[]): Promise<Map<number, GroupShare[]>> {
  const out = new Map<number, GroupShare[]>(groupIds.map((id) => [id, []]));
  if (groupIds.length === 0) return out;
  const rows = await deps.db.selectFrom('group_group_links as l').innerJoin('namespaces as w', 'w.id', 'l.shared_with_group_id')
    .select(['l.shared_group_id', 'l.shared_with_group_id', 'l.group_access', 'l.expires_at', 'w.name', 'w.full_path'])
    .where('l.shared_group_id', 'in', groupIds).orderBy('l.id').execute();
  for (const r of rows) {
    out.get(r.shared_group_id)!.push({ group_id: r.shared_with_group_id, group_name: r.name, group_full_path: r.full_path, group_access_level: r.group_access, expires_at: r.expires_at });
  }
  return out;
}

export async function shareGroup(deps: ServiceDeps, group: Group, target: Group, input: { group_access: number; expires_at?: string }): Promise<void> {
  if (target.id === group.id) throw new ValidationError({ shared_with_group: ['cannot be the group itself'] });
  const now = deps.clock.now();
  const expires = input.expires_at ? Date.parse(`${input.expires_at}T00:00:00Z`) : null;
  if (expires !== null && expires <= now) throw new ValidationError({ expires_at: ['cannot be a date in the past'] });
  await deps.db.insertInto('group_group_links').values({
    shared_group_id: group.id, shared_with_group_id: target.id, group_access: input.group_access, expires_at: expires, created_at: now, updated_at: now,
  }).execute().catch((e) => {
    if (isUniqueViolation(e)) throw new ConflictError('Group already shared with this group');
    throw e;
  });
}

export async function unshareGroup(deps: ServiceDeps, group: Group, sharedWithId: number): Promise<void> {
  const r = await deps.db.deleteFrom('group_group_links').where('shared_group_id', '=', group.id).where('shared_with_group_id', '=', sharedWithId).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw new NotFoundError('Group Link');
}
