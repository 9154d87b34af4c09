// Protected branches and protected tags: the rules and their access-level entries, stored and read.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { ConflictError, RecordNotFoundError, RuleError } from '../../platform/errors.ts';
import { loadBranchRules, loadTagRules, type AccessEntry, type BranchRule, type TagRule } from './protection.ts';
import type { AccessEntryNames } from './repository.presenter.ts';

export const ACCESS_LEVEL_VALUES = [0, 30, 40, 60] as const;

/** One requested entry: exactly one of the subjects. */
export interface EntryInput {
  access_level?: number;
  user_id?: number;
  group_id?: number;
  deploy_key_id?: number;
}

async function deployKeyTitles(db: Db, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('deploy_keys').select(['id', 'title']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.title]));
}

/** Display names of the users, groups and deploy keys that access entries name. */
export async function accessEntryNames(db: Db, entries: AccessEntry[]): Promise<AccessEntryNames> {
  const userIds = [...new Set(entries.map((e) => e.user_id).filter((x): x is number => x !== null))];
  const groupIds = [...new Set(entries.map((e) => e.group_id).filter((x): x is number => x !== null))];
  const keyIds = [...new Set(entries.map((e) => e.deploy_key_id).filter((x): x is number => x !== null))];
  const [users, groups, keys] = await Promise.all([
    userIds.length ? db.selectFrom('users').select(['id', 'name']).where('id', 'in', userIds).execute() : [],
    groupIds.length ? db.selectFrom('namespaces').select(['id', 'full_name']).where('id', 'in', groupIds).execute() : [],
    deployKeyTitles(db, keyIds),
  ]);
  return {
    users: new Map(users.map((u) => [u.id, u.name])),
    groups: new Map(groups.map((g) => [g.id, g.full_name])),
    keys,
  };
}

/** The names every entry of these protected branches refers to. */
export function branchEntryNames(db: Db, rules: BranchRule[]): Promise<AccessEntryNames> {
  return accessEntryNames(db, rules.flatMap((r) => [...r.push, ...r.merge, ...r.unprotect]));
}

/** The names every entry of these protected tags refers to. */
export function tagEntryNames(db: Db, rules: TagRule[]): Promise<AccessEntryNames> {
  return accessEntryNames(db, rules.flatMap((r) => r.create));
}

/** When the protected branch last changed, for If-Unmodified-Since. */
export async function protectedBranchUpdatedAt(db: Db, id: number): Promise<number | undefined> {
  const row = await db.selectFrom('protected_branches').select('updated_at').where('id', '=', id).executeTakeFirst();
  return row?.updated_at;
}

/** Checks that every user, group and deploy key named exists; the reference answers 422 with full messages. */
async function validateEntries(db: Db, projectId: number, label: string, entries: EntryInput[]): Promise<void> {
  const problems: string[] = [];
  for (const e of entries) {
    const subjects = ['access_level', 'user_id', 'group_id', 'deploy_key_id'].filter((k) => (e as any)[k] !== undefined && (e as any)[k] !== null);
    if (subjects.length !== 1) {
      problems.push(`${label} access levels must name exactly one of access_level, user_id, group_id, deploy_key_id`);
      continue;
    }
    if (e.access_level !== undefined && !(ACCESS_LEVEL_VALUES as readonly number[]).includes(e.access_level)) {
      problems.push(`${label} access levels access level is not included in the list`);
    }
    if (e.user_id !== undefined) {
      const u = await db.selectFrom('users').select('id').where('id', '=', e.user_id).executeTakeFirst();
      if (!u) problems.push(`${label} access levels user does not exist`);
    }
    if (e.group_id !== undefined) {
      const g = await db.selectFrom('namespaces').select('id').where('id', '=', e.group_id).where('kind', '=', 'group').executeTakeFirst();
      if (!g) problems.push(`${label} access levels group does not exist`);
    }
    if (e.deploy_key_id !== undefined) {
      const k = await deployKeyTitles(db, [e.deploy_key_id]);
      if (!k.has(e.deploy_key_id)) problems.push(`${label} access levels deploy key does not exist`);
      else {
        const link = await db.selectFrom('deploy_keys_projects').select('id')
          .where('project_id', '=', projectId).where('deploy_key_id', '=', e.deploy_key_id).executeTakeFirst();
        if (!link) problems.push(`${label} access levels deploy key is not enabled for this project`);
      }
    }
  }
  if (problems.length) throw new RuleError('unprocessable', problems);
}

/** `X_access_level` (when given) plus `allowed_to_X`; neither given means the default level alone. */
export function entriesFrom(level: number | undefined, allowed: EntryInput[] | undefined, fallback: number): EntryInput[] {
  const out: EntryInput[] = [];
  if (level !== undefined) out.push({ access_level: level });
  for (const a of allowed ?? []) out.push(a);
  if (out.length === 0) out.push({ access_level: fallback });
  return out;
}

const row = (e: EntryInput) => ({
  access_level: e.access_level ?? null,
  user_id: e.user_id ?? null,
  group_id: e.group_id ?? null,
  deploy_key_id: e.deploy_key_id ?? null,
});

export async function createProtectedBranch(deps: ServiceDeps, projectId: number, input: {
  name: string; allow_force_push: boolean; code_owner_approval_required: boolean;
  push: EntryInput[]; merge: EntryInput[]; unprotect: EntryInput[];
}): Promise<BranchRule> {
  const { db } = deps;
  const existing = await db.selectFrom('protected_branches').select('id').where('project_id', '=', projectId).where('name', '=', input.name).executeTakeFirst();
  if (existing) throw new ConflictError(`Protected branch '${input.name}' already exists`);
  await validateEntries(db, projectId, 'Push', input.push);
  await validateEntries(db, projectId, 'Merge', input.merge);
  await validateEntries(db, projectId, 'Unprotect', input.unprotect);
  const now = deps.clock.now();
  try {
    await db.transaction().execute(async (trx) => {
      const created = await trx.insertInto('protected_branches').values({
        project_id: projectId, name: input.name, allow_force_push: input.allow_force_push ? 1 : 0,
        code_owner_approval_required: input.code_owner_approval_required ? 1 : 0, created_at: now, updated_at: now,
      }).returning('id').executeTakeFirstOrThrow();
      const values = [
        ...input.push.map((e) => ({ ...row(e), kind: 'push' })),
        ...input.merge.map((e) => ({ ...row(e), kind: 'merge' })),
        ...input.unprotect.map((e) => ({ ...row(e), kind: 'unprotect' })),
      ].map((v) => ({ ...v, protected_branch_id: created.id, created_at: now }));
      await trx.insertInto('protected_branch_access_levels').values(values).execute();
    });
  } catch (e) {
    // A concurrent create of the same name lost the race on the unique index.
    if (/unique|duplicate/i.test(String((e as Error).message))) throw new ConflictError(`Protected branch '${input.name}' already exists`);
    throw e;
  }
  const rules = await loadBranchRules(db, projectId);
  return rules.find((r) => r.name === input.name)!;
}

export async function findProtectedBranch(db: Db, projectId: number, name: string): Promise<BranchRule> {
  const rule = (await loadBranchRules(db, projectId)).find((r) => r.name === name);
  if (!rule) throw new RecordNotFoundError();
  return rule;
}

export async function deleteProtectedBranch(db: Db, id: number, projectId: number): Promise<void> {
  await db.deleteFrom('protected_branch_access_levels').where('protected_branch_id', '=', id).execute();
  await db.deleteFrom('protected_branches').where('id', '=', id).execute();
}

export async function createProtectedTag(deps: ServiceDeps, projectId: number, name: string, create: EntryInput[]): Promise<TagRule> {
  const { db } = deps;
  const existing = await db.selectFrom('protected_tags').select('id').where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  if (existing) throw new RuleError('unprocessable', ['Name has already been taken']);
  await validateEntries(db, projectId, 'Create', create);
  const now = deps.clock.now();
  try {
    await db.transaction().execute(async (trx) => {
      const created = await trx.insertInto('protected_tags').values({ project_id: projectId, name, created_at: now, updated_at: now })
        .returning('id').executeTakeFirstOrThrow();
      await trx.insertInto('protected_tag_create_access_levels')
        .values(create.map((e) => ({ ...row(e), protected_tag_id: created.id, created_at: now }))).execute();
    });
  } catch (e) {
    if (/unique|duplicate/i.test(String((e as Error).message))) throw new RuleError('unprocessable', ['Name has already been taken']);
    throw e;
  }
  return (await loadTagRules(db, projectId)).find((r) => r.name === name)!;
}

export async function findProtectedTag(db: Db, projectId: number, name: string): Promise<TagRule & { updated_at: number }> {
  const r = await db.selectFrom('protected_tags').select(['id', 'updated_at']).where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
  if (!r) throw new RecordNotFoundError();
  const rule = (await loadTagRules(db, projectId)).find((x) => x.id === r.id)!;
  return { ...rule, updated_at: r.updated_at };
}

export async function deleteProtectedTag(db: Db, id: number): Promise<void> {
  await db.deleteFrom('protected_tag_create_access_levels').where('protected_tag_id', '=', id).execute();
  await db.deleteFrom('protected_tags').where('id', '=', id).execute();
}

