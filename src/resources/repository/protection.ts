// Protected branches and tags: which rules match a ref, and whether a caller may push, force-push, delete or
// create under them. Used by the API and by git pushes alike, so both refuse the same things.
import type { Db } from '../../platform/db/index.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import { AccessLevel, groupAccessLevels } from '../../platform/membership.ts';
import { defineMemo } from '../../platform/read-cache.ts';

export interface AccessEntry {
  id: number;
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
  deploy_key_id: number | null;
}

export interface BranchRule {
  id: number;
  name: string;
  allow_force_push: boolean;
  code_owner_approval_required: boolean;
  push: AccessEntry[];
  merge: AccessEntry[];
  unprotect: AccessEntry[];
}

export interface TagRule {
  id: number;
  name: string;
  create: AccessEntry[];
}

export interface Caller {
  userId: number | null;
  /** Effective project level (administrators count as Owner). */
  level: number;
  admin: boolean;
  /** Groups the caller belongs to (directly or through an ancestor), filled lazily. */
  groupIds?: Set<number>;
  /**
   * Set when a deploy key pushes (over SSH; userId is then null). Whether it may push at all was decided by the
   * access policy; a protected branch or tag lets it through only with an entry naming this key.
   */
  deployKeyId?: number;
}

/** A deploy key passes a protected ref only through an entry that names it. */
function deployKeyAllowed(entries: AccessEntry[], caller: Caller): boolean {
  return entries.some((e) => e.deploy_key_id !== null && e.deploy_key_id === caller.deployKeyId);
}

const matchers = defineMemo<string, RegExp>('ref-pattern-matchers', { max: 10_000 });

/** A protected-ref name: "*" stands for any run of characters, "/" included; anchored at both ends. */
export function refMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  let re = matchers.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    matchers.set(pattern, re);
  }
  return re.test(name);
}

export async function loadBranchRules(db: Db, projectId: number): Promise<BranchRule[]> {
  const rules = await db.selectFrom('protected_branches').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  if (rules.length === 0) return [];
  const levels = await db.selectFrom('protected_branch_access_levels').selectAll()
    .where('protected_branch_id', 'in', rules.map((r) => r.id)).orderBy('id').execute();
  return rules.map((r) => {
    const mine = levels.filter((l) => l.protected_branch_id === r.id);
    const pick = (kind: string) => mine.filter((l) => l.kind === kind).map(entry);
    return {
      id: r.id, name: r.name, allow_force_push: !!r.allow_force_push, code_owner_approval_required: !!r.code_owner_approval_required,
      push: pick('push'), merge: pick('merge'), unprotect: pick('unprotect'),
    };
  });
}

// Branch listings read the rules on every page: a read cache (see platform/read-cache.ts), so a rule changed
// through any worker shows at once everywhere. Push decisions and writes always read the database.
export function cachedBranchRules(deps: ServiceDeps, projectId: number): Promise<BranchRule[]> {
  return deps.caches.define<number, BranchRule[]>('branch-rules', { max: 10_000 }).get(projectId, () => loadBranchRules(deps.db, projectId));
}

export async function loadTagRules(db: Db, projectId: number): Promise<TagRule[]> {
  const rules = await db.selectFrom('protected_tags').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  if (rules.length === 0) return [];
  const levels = await db.selectFrom('protected_tag_create_access_levels').selectAll()
    .where('protected_tag_id', 'in', rules.map((r) => r.id)).orderBy('id').execute();
  return rules.map((r) => ({ id: r.id, name: r.name, create: levels.filter((l) => l.protected_tag_id === r.id).map(entry) }));
}

function entry(l: AccessEntry): AccessEntry {
  return { id: l.id, access_level: l.access_level, user_id: l.user_id, group_id: l.group_id, deploy_key_id: l.deploy_key_id };
}

export function matching<T extends { name: string }>(rules: T[], name: string): T[] {
  return rules.filter((r) => refMatches(r.name, name));
}

/** Loads the caller's group memberships once, when a group entry has to be checked. */
async function groupsOf(db: Db, caller: Caller, groupIds: number[]): Promise<Set<number>> {
  if (caller.groupIds) return caller.groupIds;
  if (!caller.userId || groupIds.length === 0) return (caller.groupIds = new Set());
  const groups = await db.selectFrom('namespaces').select(['id', 'traversal']).where('id', 'in', groupIds).execute();
  const levels = await groupAccessLevels(db, caller.userId, groups);
  return (caller.groupIds = new Set([...levels.keys()]));
}

/** Whether any entry lets the caller act. "No one" (0) refuses everybody, administrators included. */
export async function entriesAllow(db: Db, entries: AccessEntry[], caller: Caller): Promise<boolean> {
  if (!caller.userId) return false;
  const groupIds = entries.map((e) => e.group_id).filter((g): g is number => g !== null);
  for (const e of entries) {
    if (e.deploy_key_id !== null) continue; // an entry naming a deploy key lets only that key through (deployKeyAllowed)
    if (e.user_id !== null) {
      if (e.user_id === caller.userId && caller.level >= AccessLevel.DEVELOPER) return true;
      continue;
    }
    if (e.group_id !== null) {
      if (caller.level >= AccessLevel.DEVELOPER && (await groupsOf(db, caller, groupIds)).has(e.group_id)) return true;
      continue;
    }
    const level = e.access_level ?? AccessLevel.MAINTAINER;
    if (level === 0) continue;
    if (level === 60) {
      if (caller.admin) return true;
      continue;
    }
    if (caller.level >= level) return true;
  }
  return false;
}

/** The caller may push to `branch` (Developer+, and every protection that matches lets them). */
export async function canPushBranch(db: Db, rules: BranchRule[], branch: string, caller: Caller): Promise<boolean> {
  if (caller.deployKeyId !== undefined) {
    const m = matching(rules, branch);
    return m.length === 0 || deployKeyAllowed(m.flatMap((r) => r.push), caller);
  }
  if (!caller.userId || caller.level < AccessLevel.DEVELOPER) return false;
  const m = matching(rules, branch);
  if (m.length === 0) return true;
  return entriesAllow(db, m.flatMap((r) => r.push), caller);
}

export function developersCan(rules: BranchRule[], kind: 'push' | 'merge'): boolean {
  return rules.some((r) => r[kind].some((e) => e.access_level === AccessLevel.DEVELOPER));
}

export function forcePushAllowed(rules: BranchRule[]): boolean {
  return rules.length > 0 && rules.every((r) => r.allow_force_push);
}

/** The caller may create a tag matching protected-tag rules (any create entry of any matching rule). */
export async function canCreateTag(db: Db, rules: TagRule[], tag: string, caller: Caller): Promise<boolean> {
  if (caller.deployKeyId !== undefined) {
    const m = matching(rules, tag);
    return m.length === 0 || deployKeyAllowed(m.flatMap((r) => r.create), caller);
  }
  if (!caller.userId || caller.level < AccessLevel.DEVELOPER) return false;
  const m = matching(rules, tag);
  if (m.length === 0) return true;
  return entriesAllow(db, m.flatMap((r) => r.create), caller);
}

export const ACCESS_DESCRIPTIONS: Record<number, string> = {
  0: 'No one',
  30: 'Developers + Maintainers',
  40: 'Maintainers',
  60: 'Admins',
};
