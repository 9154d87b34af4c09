// Repository wire shapes: rows, refs and commits in, the reference's JSON out. Pure: no database, no git.
import { ACCESS_DESCRIPTIONS, type AccessEntry, type BranchRule, type TagRule } from './protection.ts';

/** Display names of the users, groups and deploy keys that access entries name, by id. */
export interface AccessEntryNames {
  users: Map<number, string>;
  groups: Map<number, string>;
  keys: Map<number, string>;
}

function description(e: AccessEntry, n: AccessEntryNames): string {
  if (e.deploy_key_id !== null) return n.keys.get(e.deploy_key_id) ?? 'Deploy key';
  if (e.user_id !== null) return n.users.get(e.user_id) ?? 'User';
  if (e.group_id !== null) return n.groups.get(e.group_id) ?? 'Group';
  return ACCESS_DESCRIPTIONS[e.access_level ?? 40] ?? String(e.access_level);
}

// Entries for users, groups and deploy keys carry the Maintainer level, as the reference's column default.
const levelOf = (e: AccessEntry) => e.access_level ?? 40;

export function protectedBranchEntity(r: BranchRule, names: AccessEntryNames) {
  const entry = (e: AccessEntry) => ({
    id: e.id,
    access_level: levelOf(e),
    access_level_description: description(e, names),
    deploy_key_id: e.deploy_key_id,
    user_id: e.user_id,
    group_id: e.group_id,
  });
  return {
    id: r.id,
    name: r.name,
    push_access_levels: r.push.map(entry),
    merge_access_levels: r.merge.map(entry),
    allow_force_push: r.allow_force_push,
    unprotect_access_levels: r.unprotect.map(entry),
    code_owner_approval_required: r.code_owner_approval_required,
  };
}

export function protectedTagEntity(r: TagRule, names: AccessEntryNames) {
  return {
    name: r.name,
    create_access_levels: r.create.map((e) => ({
      id: e.id,
      access_level: levelOf(e),
      access_level_description: description(e, names),
      ...(e.deploy_key_id !== null ? { deploy_key_id: e.deploy_key_id } : {}),
      ...(e.user_id !== null ? { user_id: e.user_id } : {}),
      ...(e.group_id !== null ? { group_id: e.group_id } : {}),
    })),
  };
}
