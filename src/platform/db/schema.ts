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
  state: string; // active | blocked | banned | deactivated
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
  /** The stored avatar's file name (0012). */
  avatar: Generated<string | null>;
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
  // Group settings (0002_groups); defaults apply to user namespaces too.
  share_with_group_lock: Generated<number>;
  require_two_factor_authentication: Generated<number>;
  two_factor_grace_period: Generated<number>;
  auto_devops_enabled: Generated<number | null>;
  emails_enabled: Generated<number>;
  mentions_disabled: Generated<number | null>;
  lfs_enabled: Generated<number>;
  default_branch_protection: Generated<number>;
  default_branch: Generated<string | null>;
  /** The stored avatar's file name (0012). */
  avatar: Generated<string | null>;
  /** 1 while a deletion job is queued for the group or one above it (0017): hidden from every read. */
  pending_delete: Generated<number>;
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
  star_count: Generated<number>;
  forks_count: Generated<number>;
  forked_from_project_id: number | null;
  /** Feature levels: 0 disabled, 10 private (members only), 20 enabled. */
  issues_access_level: Generated<number>;
  merge_requests_access_level: Generated<number>;
  repository_access_level: Generated<number>;
  forking_access_level: Generated<number>;
  import_url: string | null;
  import_type: string | null;
  import_status: Generated<string>;
  import_error: string | null;
  /** Path of the README on the default branch, recorded when the repository changes. */
  readme_path: string | null;
  marked_for_deletion_at: number | null;
  /** SHA-256 of the runner registration token; the token itself is shown once, when the project is made. */
  runners_token_digest: string | null;
  /** JSON object of settings that are stored and returned but never filtered on. */
  settings: Generated<string>;
  /** Moved by a database trigger on every update of the row (row caches compare it). */
  row_version: Generated<number>;
  /** The stored avatar's file name (0012). */
  avatar: Generated<string | null>;
  /** 1 once the default branch protection was applied to the first default branch (0012). */
  default_branch_protection_applied: Generated<number>;
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

export interface BroadcastMessagesTable {
  id: Generated<number>;
  message: string;
  starts_at: number;
  ends_at: number;
  font: string | null;
  target_access_levels: string; // comma separated levels; empty: every level
  target_path: string | null;
  broadcast_type: string; // banner | notification
  dismissable: number | null;
  created_at: number;
  updated_at: number;
}

export interface NotificationSettingsTable {
  id: Generated<number>;
  user_id: number;
  source_type: string; // Global | Namespace | Project
  source_id: number; // 0 for the global setting
  level: string;
  events: string; // JSON object of event name to boolean
  notification_email: string | null;
  created_at: number;
  updated_at: number;
}

export interface DeployKeysTable {
  id: Generated<number>;
  user_id: number | null; // who created it
  title: string;
  key: string; // the sanitised key text
  key_type: string; // algorithm name of the blob, e.g. ssh-ed25519
  key_bits: number;
  key_blob: string; // base64 of the decoded key blob
  fingerprint: string; // MD5, colon hex
  fingerprint_sha256: string; // base64 without padding, no "SHA256:" prefix
  public: number;
  expires_at: number | null;
  last_used_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface SshKeysTable {
  id: Generated<number>;
  user_id: number;
  title: string;
  key: string; // the sanitised key text
  key_type: string;
  key_bits: number;
  key_blob: string; // base64 of the decoded key blob
  fingerprint: string; // MD5, colon hex
  fingerprint_sha256: string; // base64 without padding, no "SHA256:" prefix
  usage_type: string; // auth | signing | auth_and_signing
  expires_at: number | null;
  last_used_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface GpgKeysTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  fingerprint: string; // 40 upper-case hex digits
  primary_keyid: string; // 16 upper-case hex digits
  created_at: number;
  updated_at: number;
}

export interface EmailsTable {
  id: Generated<number>;
  user_id: number;
  email: string;
  email_lower: string;
  confirmed_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface UserStatusesTable {
  user_id: number;
  emoji: string;
  message: string | null;
  availability: string; // not_set | busy
  clear_status_at: number | null;
}

export interface UserCustomAttributesTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

export interface DeployKeysProjectsTable {
  id: Generated<number>;
  deploy_key_id: number;
  project_id: number;
  can_push: number;
  created_at: number;
  updated_at: number;
}

export interface ErrorTrackingSettingsTable {
  id: Generated<number>;
  project_id: number;
  enabled: number;
  integrated: number;
  project_name: string | null;
  api_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface ErrorTrackingClientKeysTable {
  id: Generated<number>;
  project_id: number;
  active: number;
  public_key: string;
  created_at: number;
  updated_at: number;
}

export interface FeatureFlagUserListsTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  name: string;
  user_xids: string;
  created_at: number;
  updated_at: number;
}

/** The last iid handed out per (usage, owner): never reused, even after the newest record is deleted. */
export interface InternalIdsTable {
  usage: string; // issues | milestones | feature_flag_user_lists | ...
  owner_id: number; // the project or group the iids are counted in
  last_value: number;
}

/** One row (id 1): the read epoch, moved by triggers (migration 0036, platform/read-epoch.ts). */
export interface ReadEpochTable {
  id: number;
  value: number | string;
}

export interface ResourceBotsTable {
  user_id: number;
  source_type: string; // Namespace | Project
  source_id: number;
  access_level: number;
  created_at: number;
}

export interface OAuthApplicationsTable {
  id: Generated<number>;
  owner_id: number | null; // null for applications registered through the admin API
  name: string;
  uid: string;
  secret_digest: string;
  redirect_uri: string; // one URI per line
  scopes: string; // space separated
  confidential: number;
  created_at: number;
  updated_at: number;
}

export interface OAuthGrantsTable {
  id: Generated<number>;
  application_id: number;
  user_id: number;
  code_digest: string;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: number;
  created_at: number;
  revoked_at: number | null; // set when the code is redeemed
}

export interface OAuthAccessTokensTable {
  id: Generated<number>;
  application_id: number | null;
  user_id: number;
  grant_id: number | null;
  token_digest: string;
  refresh_token_digest: string | null;
  scopes: string;
  expires_at: number | null;
  created_at: number;
  revoked_at: number | null;
}

export interface SignInThrottlesTable {
  id: Generated<number>;
  key: string;
  failures: number;
  last_failure_at: number;
}

export interface TopicsTable {
  id: Generated<number>;
  name: string;
  name_lower: string;
  title: string;
  description: string | null;
  total_projects_count: Generated<number>;
  created_at: number;
  updated_at: number;
  /** The stored avatar's file name (0012). */
  avatar: Generated<string | null>;
}

export interface ProjectTopicsTable {
  project_id: number;
  topic_id: number;
}

export interface UsersStarProjectsTable {
  id: Generated<number>;
  project_id: number;
  user_id: number;
  created_at: number;
}

export interface ProjectGroupLinksTable {
  id: Generated<number>;
  project_id: number;
  group_id: number;
  group_access: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface GroupGroupLinksTable {
  id: Generated<number>;
  /** The group shared (whose projects the other group's members reach). */
  shared_group_id: number;
  shared_with_group_id: number;
  group_access: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface GroupCustomAttributesTable {
  id: Generated<number>;
  group_id: number;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

export interface ProjectUploadsTable {
  id: Generated<number>;
  project_id: number;
  secret: string;
  filename: string;
  size: number;
  uploaded_by_id: number | null;
  created_at: number;
}

export interface AlertIntegrationsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  type: string; // http | prometheus
  active: Generated<number>;
  endpoint_identifier: string;
  /** SHA-256 of the token; the token itself is shown once. */
  token_digest: string;
  created_at: number;
  updated_at: number;
}

export interface AlertManagementAlertsTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  integration_id: number | null;
  issue_id: number | null;
  title: string;
  description: string | null;
  severity: string; // critical | high | medium | low | info | unknown
  status: string; // triggered | acknowledged | resolved | ignored
  started_at: number;
  ended_at: number | null;
  events: Generated<number>;
  monitoring_tool: string | null;
  service: string | null;
  /** JSON array of strings. */
  hosts: string;
  /** SHA-1 of the sender's fingerprint. */
  fingerprint: string | null;
  environment_name: string | null;
  /** The notification as received (JSON). */
  payload: string;
  created_at: number;
  updated_at: number;
}

export interface AlertManagementAlertAssigneesTable {
  alert_id: number;
  user_id: number;
}

export interface AlertMetricImagesTable {
  id: Generated<number>;
  alert_id: number;
  project_id: number;
  filename: string;
  content_type: string;
  size: number;
  url: string | null;
  url_text: string | null;
  created_at: number;
  updated_at: number;
}

export interface ProjectCustomAttributesTable {
  id: Generated<number>;
  project_id: number;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

export interface RedirectRoutesTable {
  id: Generated<number>;
  source_type: string; // Project
  source_id: number;
  path: string;
  path_lower: string;
  created_at: number;
}

export interface ProjectStatisticsTable {
  project_id: number;
  commit_count: Generated<number>;
  storage_size: Generated<number>;
  repository_size: Generated<number>;
  wiki_size: Generated<number>;
  lfs_objects_size: Generated<number>;
  job_artifacts_size: Generated<number>;
  pipeline_artifacts_size: Generated<number>;
  packages_size: Generated<number>;
  snippets_size: Generated<number>;
  uploads_size: Generated<number>;
  updated_at: number;
}

export interface ProjectLanguagesTable {
  project_id: number;
  name: string;
  name_lower: string;
  share: number;
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

// Planning (0011_planning). Polymorphic targets are (`*_type`, `*_id`) with the reference's class names as types.
// Dates without a time are epoch ms of 00:00 UTC of the day.

export interface LabelsTable {
  id: Generated<number>;
  title: string;
  color: string;
  description: string | null;
  project_id: number | null;
  group_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface LabelPrioritiesTable {
  project_id: number;
  label_id: number;
  priority: number;
}

export interface MilestonesTable {
  id: Generated<number>;
  iid: number;
  project_id: number | null;
  group_id: number | null;
  title: string;
  description: string | null;
  state: Generated<string>; // active | closed
  start_date: number | null;
  due_date: number | null;
  created_at: number;
  updated_at: number;
}

export interface IterationCadencesTable {
  id: Generated<number>;
  group_id: number;
  title: string;
  description: string | null;
  automatic: Generated<number>;
  start_date: number | null;
  duration_in_weeks: number | null;
  iterations_in_advance: number | null;
  roll_over: Generated<number>;
  last_run_date: number | null;
  created_at: number;
  updated_at: number;
}

export interface IterationsTable {
  id: Generated<number>;
  iid: number;
  group_id: number;
  cadence_id: number;
  sequence: number;
  title: string | null;
  description: string | null;
  start_date: number;
  due_date: number;
  created_at: number;
  updated_at: number;
}

export interface IssuesTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  title: string;
  description: string | null;
  state: Generated<string>; // opened | closed
  issue_type: Generated<string>;
  author_id: number | null;
  closed_by_id: number | null;
  closed_at: number | null;
  milestone_id: number | null;
  iteration_id: number | null;
  confidential: Generated<number>;
  discussion_locked: number | null;
  due_date: number | null;
  weight: number | null;
  time_estimate: Generated<number>;
  relative_position: number | null;
  moved_to_id: number | null;
  duplicated_to_id: number | null;
  last_edited_at: number | null;
  last_edited_by_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface IssueAssigneesTable {
  issue_id: number;
  user_id: number;
}

export interface LabelLinksTable {
  label_id: number;
  target_type: string;
  target_id: number;
  created_at: number;
}

export interface IdentitiesTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  extern_uid: string;
  /** extern_uid in lower case: an uid is unique per provider regardless of case, as the reference's. */
  extern_uid_lower: string;
  created_at: number;
  updated_at: number;
}

export interface NotesTable {
  id: Generated<number>;
  noteable_type: string;
  noteable_id: number;
  project_id: number | null;
  author_id: number | null;
  body: string;
  type: string | null; // null | DiscussionNote | DiffNote
  system: Generated<number>;
  internal: Generated<number>;
  discussion_id: string;
  position: string | null;
  commit_id: string | null;
  resolvable: Generated<number>;
  resolved_at: number | null;
  resolved_by_id: number | null;
  created_at: number;
  updated_at: number;
  /** A diff note's first position, where a later version moved it, its line code, and whether a push outdated it (0018). */
  original_position: string | null;
  change_position: string | null;
  line_code: string | null;
  outdated: Generated<number>;
}

/** A suggestion of a merge-request diff note (0024): the lines it replaces as written, and whether a commit applied it. */
export interface SuggestionsTable {
  id: Generated<number>;
  note_id: number;
  relative_order: number;
  lines_above: number;
  lines_below: number;
  from_content: string;
  to_content: string;
  applied: Generated<number>;
  commit_id: string | null;
  created_at: number;
  updated_at: number;
}

/** A commit of the target project added to a merge request for context (0024), in the order it was added. */
export interface MergeRequestContextCommitsTable {
  id: Generated<number>;
  merge_request_id: number;
  sha: string;
  relative_order: number;
  created_at: number;
}

export interface SnippetsTable {
  id: Generated<number>;
  title: string;
  description: string | null;
  author_id: number;
  /** Null for a personal snippet. */
  project_id: number | null;
  visibility_level: number;
  file_name: string | null;
  repository_storage: string;
  /** 1 while the repository moves between shards (no API write, no push). */
  repository_read_only: Generated<number>;
  user_agent: string | null;
  ip_address: string | null;
  created_at: number;
  updated_at: number;
}

export interface AwardEmojiTable {
  id: Generated<number>;
  name: string;
  user_id: number;
  awardable_type: string;
  awardable_id: number;
  created_at: number;
  updated_at: number;
}

export interface SubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  subscribable_type: string;
  subscribable_id: number;
  project_id: number | null;
  subscribed: number;
  created_at: number;
  updated_at: number;
}

export interface TimelogsTable {
  id: Generated<number>;
  target_type: string;
  target_id: number;
  project_id: number | null;
  user_id: number | null;
  time_spent: number;
  spent_at: number;
  summary: string | null;
  created_at: number;
}

export interface ResourceLabelEventsTable {
  id: Generated<number>;
  target_type: string;
  target_id: number;
  label_id: number | null;
  user_id: number | null;
  action: string; // add | remove
  created_at: number;
}

export interface ResourceStateEventsTable {
  id: Generated<number>;
  target_type: string;
  target_id: number;
  user_id: number | null;
  state: string;
  created_at: number;
  /** The merge request whose merge closed the issue. */
  source_merge_request_id?: number | null;
}

export interface ResourceMilestoneEventsTable {
  id: Generated<number>;
  target_type: string;
  target_id: number;
  milestone_id: number | null;
  user_id: number | null;
  action: string; // add | remove
  /** The issue's state when the milestone changed (opened | closed). */
  state: string | null;
  created_at: number;
}

/** A unit of background work (platform/jobs). */
export interface JobsTable {
  id: Generated<number>;
  kind: string;
  args: string; // JSON
  state: string; // queued | running | succeeded | dead | discarded
  attempts: Generated<number>;
  max_attempts: number;
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  unique_key: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

/** A move of a project's repository between storage shards (resources/storage-moves). */
export interface SnippetRepositoryStorageMovesTable {
  id: Generated<number>;
  snippet_id: number;
  /** initial | scheduled | started | replicated | finished | failed | cleanup_failed */
  state: string;
  source_storage_name: string;
  destination_storage_name: string;
  error_message: string | null;
  created_at: number;
  updated_at: number;
}

export interface ProjectRepositoryStorageMovesTable {
  id: Generated<number>;
  project_id: number;
  /** initial | scheduled | started | replicated | finished | failed | cleanup_failed */
  state: string;
  source_storage_name: string;
  destination_storage_name: string;
  /** Why the move failed, at most 256 characters. */
  error_message: string | null;
  created_at: number;
  updated_at: number;
}

/** A merge request (0018); it lives in its target project. */
export interface MergeRequestsTable {
  id: Generated<number>;
  target_project_id: number;
  iid: number;
  target_branch: string;
  source_project_id: number | null;
  source_branch: string;
  title: string;
  description: string | null;
  state: Generated<string>; // opened | closed | merged | locked
  draft: Generated<number>;
  author_id: number | null;
  milestone_id: number | null;
  /** The source head, also `refs/merge-requests/<iid>/head` in the target repository. */
  sha: string | null;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  rebase_commit_sha: string | null;
  in_progress_merge_commit_sha: string | null;
  squash: Generated<number>;
  force_remove_source_branch: number | null;
  allow_collaboration: Generated<number>;
  discussion_locked: number | null;
  /** unchecked | checking | can_be_merged | cannot_be_merged | cannot_be_merged_recheck */
  merge_status: Generated<string>;
  merge_error: string | null;
  merge_user_id: number | null;
  merge_when_pipeline_succeeds: Generated<number>;
  merge_commit_message: string | null;
  squash_commit_message: string | null;
  /** JSON object of the merge's parameters. */
  merge_params: string | null;
  merge_jid: string | null;
  rebase_jid: string | null;
  rebase_in_progress: Generated<number>;
  merged_by_id: number | null;
  merged_at: number | null;
  closed_by_id: number | null;
  closed_at: number | null;
  time_estimate: Generated<number>;
  latest_diff_id: number | null;
  last_edited_at: number | null;
  last_edited_by_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface MergeRequestAssigneesTable {
  merge_request_id: number;
  user_id: number;
  created_at: number;
}

export interface MergeRequestReviewersTable {
  merge_request_id: number;
  user_id: number;
  state: Generated<string>; // unreviewed | reviewed | requested_changes | approved
  created_at: number;
}

/** One version of a merge request's diff: the commits it is computed from. */
export interface MergeRequestDiffsTable {
  id: Generated<number>;
  merge_request_id: number;
  base_commit_sha: string | null;
  head_commit_sha: string | null;
  start_commit_sha: string | null;
  state: Generated<string>; // collected | empty | overflow | without_files
  real_size: string | null;
  commits_count: number | null;
  files_count: number | null;
  created_at: number;
  updated_at: number;
}

export interface MergeRequestApprovalsTable {
  id: Generated<number>;
  merge_request_id: number;
  user_id: number;
  created_at: number;
  updated_at: number;
}

/** `git merge-tree`'s answer in the target repository for one (target head, source head) pair. */
export interface MergeRequestMergeabilityTable {
  project_id: number;
  target_sha: string;
  source_sha: string;
  merge_base_sha: string | null;
  has_conflicts: number;
  tree_sha: string | null;
  conflict_paths: string | null; // JSON array
  checked_at: number;
}

/** An issue a merge request's description names: `closes` 1 for a closing pattern, 0 for a mention. */
export interface MergeRequestsClosingIssuesTable {
  id: Generated<number>;
  merge_request_id: number;
  issue_id: number;
  closes: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** A setting an administrator changed (platform/application-settings.ts); its value as JSON. */
export interface ApplicationSettingsTable {
  name: string;
  value: string;
  updated_at: number;
}

/** The URL (credentials included) a project being imported fetches from; removed once the import ended. */
export interface ProjectImportDataTable {
  project_id: number;
  url: string;
  created_at: number;
}

/** A request throttle's count for one key in one fixed window (window_start: epoch seconds). */
export interface RateLimitCountersTable {
  key: string;
  window_start: number;
  count: number;
}

/** A running server process: the storage shards it serves (sorted names, comma-separated) and when it was last seen. */
/** Secrets the server makes for itself (0027), e.g. the key of signed unsubscribe links. */
export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: number;
}

export interface MachinesTable {
  id: string;
  hostname: string;
  pid: number;
  shards: string;
  started_at: number;
  seen_at: number;
}

/** Content a spam check flagged (platform/spam.ts); `recaptcha_verified` once a CAPTCHA retry used it. */
export interface SpamLogsTable {
  id: Generated<number>;
  user_id: number | null;
  source_ip: string | null;
  user_agent: string | null;
  via_api: Generated<number>;
  noteable_type: string;
  title: string | null;
  description: string | null;
  submitted_as_ham: Generated<number>;
  recaptcha_verified: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** A project webhook (0026): booleans 0/1, the token and custom header values never shown. */
export interface WebHooksTable {
  id: Generated<number>;
  /** A project hook's project; null for a group hook. */
  project_id: number | null;
  /** A group hook's group (it takes the events of the group's projects and its subgroups'); null for a project hook. */
  group_id: number | null;
  url: string;
  token: string | null;
  name: string | null;
  description: string | null;
  push_events_branch_filter: string | null;
  branch_filter_strategy: Generated<string>; // wildcard | regex | all_branches
  custom_headers: Generated<string>; // JSON object
  recent_failures: Generated<number>;
  disabled_until: number | null;
  created_at: number;
  updated_at: number;
  push_events: Generated<number>;
  tag_push_events: Generated<number>;
  merge_requests_events: Generated<number>;
  repository_update_events: Generated<number>;
  enable_ssl_verification: Generated<number>;
  issues_events: Generated<number>;
  confidential_issues_events: Generated<number>;
  note_events: Generated<number>;
  confidential_note_events: Generated<number>;
  pipeline_events: Generated<number>;
  wiki_page_events: Generated<number>;
  deployment_events: Generated<number>;
  feature_flag_events: Generated<number>;
  job_events: Generated<number>;
  releases_events: Generated<number>;
  milestone_events: Generated<number>;
  emoji_events: Generated<number>;
  resource_access_token_events: Generated<number>;
  // Group hooks only; no source in Bellows yet.
  subgroup_events: Generated<number>;
  member_events: Generated<number>;
  project_events: Generated<number>;
  vulnerability_events: Generated<number>;
}

export interface DB {
  users: UsersTable;
  namespaces: NamespacesTable;
  members: MembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  projects: ProjectsTable;
  sessions: SessionsTable;
  feature_gates: FeatureGatesTable;
  broadcast_messages: BroadcastMessagesTable;
  notification_settings: NotificationSettingsTable;
  deploy_keys: DeployKeysTable;
  deploy_keys_projects: DeployKeysProjectsTable;
  web_hooks: WebHooksTable;
  error_tracking_settings: ErrorTrackingSettingsTable;
  error_tracking_client_keys: ErrorTrackingClientKeysTable;
  feature_flag_user_lists: FeatureFlagUserListsTable;
  internal_ids: InternalIdsTable;
  read_epoch: ReadEpochTable;
  resource_bots: ResourceBotsTable;
  oauth_applications: OAuthApplicationsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  sign_in_throttles: SignInThrottlesTable;
  topics: TopicsTable;
  project_topics: ProjectTopicsTable;
  users_star_projects: UsersStarProjectsTable;
  project_group_links: ProjectGroupLinksTable;
  project_custom_attributes: ProjectCustomAttributesTable;
  group_group_links: GroupGroupLinksTable;
  group_custom_attributes: GroupCustomAttributesTable;
  project_uploads: ProjectUploadsTable;
  ssh_keys: SshKeysTable;
  gpg_keys: GpgKeysTable;
  emails: EmailsTable;
  user_statuses: UserStatusesTable;
  user_custom_attributes: UserCustomAttributesTable;
  redirect_routes: RedirectRoutesTable;
  project_statistics: ProjectStatisticsTable;
  project_languages: ProjectLanguagesTable;
  protected_branches: ProtectedBranchesTable;
  protected_branch_access_levels: ProtectedBranchAccessLevelsTable;
  protected_tags: ProtectedTagsTable;
  protected_tag_create_access_levels: ProtectedTagCreateAccessLevelsTable;
  labels: LabelsTable;
  label_priorities: LabelPrioritiesTable;
  milestones: MilestonesTable;
  iteration_cadences: IterationCadencesTable;
  iterations: IterationsTable;
  issues: IssuesTable;
  issue_assignees: IssueAssigneesTable;
  label_links: LabelLinksTable;
  notes: NotesTable;
  suggestions: SuggestionsTable;
  merge_request_context_commits: MergeRequestContextCommitsTable;
  identities: IdentitiesTable;
  award_emoji: AwardEmojiTable;
  snippets: SnippetsTable;
  subscriptions: SubscriptionsTable;
  timelogs: TimelogsTable;
  resource_label_events: ResourceLabelEventsTable;
  resource_state_events: ResourceStateEventsTable;
  resource_milestone_events: ResourceMilestoneEventsTable;
  jobs: JobsTable;
  project_repository_storage_moves: ProjectRepositoryStorageMovesTable;
  snippet_repository_storage_moves: SnippetRepositoryStorageMovesTable;
  alert_integrations: AlertIntegrationsTable;
  alert_management_alerts: AlertManagementAlertsTable;
  alert_management_alert_assignees: AlertManagementAlertAssigneesTable;
  alert_metric_images: AlertMetricImagesTable;
  merge_requests: MergeRequestsTable;
  merge_request_assignees: MergeRequestAssigneesTable;
  merge_request_reviewers: MergeRequestReviewersTable;
  merge_request_diffs: MergeRequestDiffsTable;
  merge_request_approvals: MergeRequestApprovalsTable;
  merge_request_mergeability: MergeRequestMergeabilityTable;
  merge_requests_closing_issues: MergeRequestsClosingIssuesTable;
  application_settings: ApplicationSettingsTable;
  project_import_data: ProjectImportDataTable;
  rate_limit_counters: RateLimitCountersTable;
  machines: MachinesTable;
  server_secrets: ServerSecretsTable;
  spam_logs: SpamLogsTable;
}
