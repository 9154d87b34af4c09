import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';
import { NamespaceBasic } from '../namespaces/namespaces.schemas.ts';

// Response shapes of groups.presenter.ts, same field order.

const AccessLevels = Type.Array(Entity({ access_level: Type.Integer() }));

export const BranchProtectionDefaults = Entity({
  allowed_to_push: AccessLevels, allow_force_push: Type.Boolean(), allowed_to_merge: AccessLevels,
  developer_can_initial_push: Type.Optional(Type.Boolean()),
});

const groupFields = {
  id: Type.Integer(), web_url: Type.String(), name: Type.String(), path: Type.String(), description: Type.String(),
  visibility: Type.String(), share_with_group_lock: Type.Boolean(), require_two_factor_authentication: Type.Boolean(),
  two_factor_grace_period: Type.Integer(), project_creation_level: Type.String(), auto_devops_enabled: Nullable(Type.Boolean()),
  subgroup_creation_level: Type.String(), emails_disabled: Type.Boolean(), emails_enabled: Type.Boolean(),
  show_diff_preview_in_email: Type.Boolean(), mentions_disabled: Nullable(Type.Boolean()), lfs_enabled: Type.Boolean(),
  archived: Type.Boolean(), math_rendering_limits_enabled: Type.Boolean(), lock_math_rendering_limits_enabled: Type.Boolean(),
  default_branch: Nullable(Type.String()), default_branch_protection: Type.Integer(),
  default_branch_protection_defaults: BranchProtectionDefaults, avatar_url: Nullable(Type.String()),
  request_access_enabled: Type.Boolean(), full_name: Type.String(), full_path: Type.String(), created_at: Iso(),
  parent_id: Nullable(Type.Integer()), organization_id: Type.Integer(), shared_runners_setting: Type.String(),
  max_artifacts_size: Nullable(Type.Integer()), marked_for_deletion_on: Nullable(Type.String()),
};
export const Group = Entity(groupFields, { description: 'Group' });

/** A project as the group detail lists it. */
export const GroupProject = Entity({
  id: Type.Integer(), description: Nullable(Type.String()), name: Type.String(), name_with_namespace: Type.String(),
  path: Type.String(), path_with_namespace: Type.String(), created_at: Iso(), default_branch: Nullable(Type.String()),
  web_url: Type.String(), avatar_url: Nullable(Type.String()), last_activity_at: Iso(),
  namespace: NamespaceBasic,
  visibility: Type.String(), archived: Type.Boolean(),
});

export const GroupDetail = Entity({
  ...groupFields,
  shared_with_groups: Type.Array(Entity({
    group_id: Type.Integer(), group_name: Type.String(), group_full_path: Type.String(), group_access_level: Type.Integer(),
    expires_at: Nullable(IsoDay()),
  })),
  /** Top-level groups only. */
  prevent_sharing_groups_outside_hierarchy: Type.Optional(Type.Boolean()),
  /** With `with_projects`. */
  projects: Type.Optional(Type.Array(GroupProject)),
  shared_projects: Type.Optional(Type.Array(Type.Unknown())),
}, { description: 'GroupDetail' });
