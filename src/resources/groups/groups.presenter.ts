import { iso, webUrl } from '../../http/format.ts';
import { visibilityName, type ProjectRow } from '../../platform/membership.ts';
import type { Group, GroupShare } from './groups.service.ts';
import { avatarUrl } from '../../platform/storage/avatars.ts';
import { branchProtectionDefaults } from '../../platform/branch-protection.ts';

// The group entity in the reference's field order (Group, then GroupDetail's additions).

export function groupWebUrl(base: string, g: Pick<Group, 'full_path'>): string {
  return webUrl(base, 'groups', g.full_path);
}

const nullableBool = (v: number | null) => (v === null ? null : !!v);

export function groupEntity(g: Group, base: string) {
  return {
    id: g.id,
    web_url: groupWebUrl(base, g),
    name: g.name,
    path: g.path,
    description: g.description,
    visibility: visibilityName(g.visibility_level),
    share_with_group_lock: !!g.share_with_group_lock,
    require_two_factor_authentication: !!g.require_two_factor_authentication,
    two_factor_grace_period: g.two_factor_grace_period,
    project_creation_level: g.project_creation_level,
    auto_devops_enabled: nullableBool(g.auto_devops_enabled),
    subgroup_creation_level: g.subgroup_creation_level,
    emails_disabled: !g.emails_enabled,
    emails_enabled: !!g.emails_enabled,
    show_diff_preview_in_email: true,
    mentions_disabled: nullableBool(g.mentions_disabled),
    lfs_enabled: !!g.lfs_enabled,
    archived: false,
    math_rendering_limits_enabled: true,
    lock_math_rendering_limits_enabled: false,
    default_branch: g.default_branch,
    default_branch_protection: g.default_branch_protection,
    default_branch_protection_defaults: branchProtectionDefaults(g.default_branch_protection),
    avatar_url: avatarUrl(base, 'group', g.id, g.avatar),
    request_access_enabled: !!g.request_access_enabled,
    full_name: g.full_name,
    full_path: g.full_path,
    created_at: iso(g.created_at),
    parent_id: g.parent_id,
    organization_id: 1,
    shared_runners_setting: 'enabled',
    max_artifacts_size: null,
    marked_for_deletion_on: null,
  };
}

/** A short summary of a project in the group detail (identity fields, namespace and state). */
export function projectSummary(p: ProjectRow, ns: Group, base: string) {
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${ns.full_name} / ${p.name}`,
    path: p.path,
    path_with_namespace: p.full_path,
    created_at: iso(p.created_at),
    default_branch: p.default_branch,
    web_url: webUrl(base, p.full_path),
    avatar_url: avatarUrl(base, 'project', p.id, (p as { avatar?: string | null }).avatar),
    last_activity_at: iso(p.last_activity_at),
    namespace: {
      id: ns.id, name: ns.name, path: ns.path, kind: ns.kind, full_path: ns.full_path, parent_id: ns.parent_id,
      avatar_url: avatarUrl(base, 'group', ns.id, ns.avatar), web_url: groupWebUrl(base, ns),
    },
    visibility: visibilityName(p.visibility_level),
    archived: !!p.archived,
  };
}

export function groupShare(s: GroupShare) {
  return {
    group_id: s.group_id, group_name: s.group_name, group_full_path: s.group_full_path, group_access_level: s.group_access_level,
    expires_at: s.expires_at === null ? null : new Date(s.expires_at).toISOString().slice(0, 10),
  };
}

export function groupDetail(g: Group, base: string, opts: { projects?: ReturnType<typeof projectSummary>[]; shares?: GroupShare[] } = {}) {
  const out: Record<string, unknown> = { ...groupEntity(g, base), shared_with_groups: (opts.shares ?? []).map(groupShare) };
  if (g.parent_id === null) out.prevent_sharing_groups_outside_hierarchy = false;
  if (opts.projects) {
    out.projects = opts.projects;
    out.shared_projects = [];
  }
  return out;
}
