import type { Generated } from 'kysely';

// Conventions shared by both dialects: datetimes are integer milliseconds since the epoch (UTC),
// booleans are integers 0/1, so every query and comparison reads the same on SQLite and PostgreSQL.

export interface UsersTable {
  id: Generated<number>;
  username: string;
  name: string;
  email: string;
  public_email: string | null;
  password_digest: string | null;
  state: string; // active | blocked
  admin: number;
  user_type: string; // human | project_bot | group_bot
  bio: string;
  location: string;
  website_url: string;
  organization: string;
  job_title: string;
  private_profile: number;
  can_create_group: number;
  projects_limit: number;
  external: number;
  note: string | null;
  created_at: number;
  updated_at: number;
  last_activity_on: number | null;
  current_sign_in_at: number | null;
  confirmed_at: number | null;
}

export interface NamespacesTable {
  id: Generated<number>;
  name: string;
  path: string;
  kind: string; // user | group
  parent_id: number | null;
  owner_id: number | null;
  visibility_level: number; // 0 private, 10 internal, 20 public
  description: string;
  full_path: string;
  full_path_lower: string;
  full_name: string;
  traversal: string; // "/1/4/9/": the ids from the root down to this namespace
  request_access_enabled: number;
  project_creation_level: string;
  subgroup_creation_level: string;
  created_at: number;
  updated_at: number;
}

export interface MembersTable {
  id: Generated<number>;
  source_type: string; // Namespace | Project
  source_id: number;
  user_id: number;
  access_level: number;
  expires_at: number | null;
  created_by_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  description: string | null;
  token_digest: string;
  scopes: string; // space separated
  impersonation: number;
  revoked: number;
  expires_at: number | null; // ms of 00:00 UTC of the expiry date; the token is expired from that day on
  last_used_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ProjectsTable {
  id: Generated<number>;
  namespace_id: number;
  name: string;
  path: string;
  full_path: string;
  full_path_lower: string;
  description: string | null;
  visibility_level: number;
  creator_id: number | null;
  archived: number;
  default_branch: string | null;
  repository_storage: string;
  repository_read_only: number;
  empty_repo: number;
  pending_delete: number;
  created_at: number;
  updated_at: number;
  last_activity_at: number;
}

export interface SessionsTable {
  id: Generated<number>;
  user_id: number;
  digest: string;
  csrf_digest: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
}

export interface FeatureGatesTable {
  id: Generated<number>;
  feature_key: string;
  key: string; // boolean | percentage_of_time | percentage_of_actors | actors
  value: string;
  created_at: number;
  updated_at: number;
}

export interface ProtectedBranchesTable {
  id: Generated<number>;
  project_id: number;
  name: string; // a branch name or a wildcard such as "release/*"
  allow_force_push: number;
  code_owner_approval_required: number;
  created_at: number;
  updated_at: number;
}

export interface ProtectedBranchAccessLevelsTable {
  id: Generated<number>;
  protected_branch_id: number;
  kind: string; // push | merge | unprotect
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
  deploy_key_id: number | null;
  created_at: number;
}

export interface ProtectedTagsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface ProtectedTagCreateAccessLevelsTable {
  id: Generated<number>;
  protected_tag_id: number;
  access_level: number | null;
  user_id: number | null;
  group_id: number | null;
  deploy_key_id: number | null;
  created_at: number;
}

export interface DB {
  users: UsersTable;
  namespaces: NamespacesTable;
  members: MembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  projects: ProjectsTable;
  sessions: SessionsTable;
  feature_gates: FeatureGatesTable;
  protected_branches: ProtectedBranchesTable;
  protected_branch_access_levels: ProtectedBranchAccessLevelsTable;
  protected_tags: ProtectedTagsTable;
  protected_tag_create_access_levels: ProtectedTagCreateAccessLevelsTable;
}
