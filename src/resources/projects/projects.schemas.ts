import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';
import { NamespaceBasic } from '../namespaces/namespaces.schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';

// Response shapes of projects.presenter.ts and the small bodies of projects.routes.ts, same field order.
// Optional fields are the ones the presenter leaves out for some callers (role, code access, options).

const S = Type.String;
const B = Type.Boolean;
const I = Type.Integer;
const Opt = Type.Optional;

export const CustomAttribute = Entity({ key: S(), value: S() }, { description: 'CustomAttribute' });

const simpleFields = {
  id: I(), description: Nullable(S()), name: S(), name_with_namespace: S(), path: S(), path_with_namespace: S(),
  created_at: Iso(), default_branch: Opt(S()), tag_list: Type.Array(S()), topics: Type.Array(S()), ssh_url_to_repo: S(),
  http_url_to_repo: S(), web_url: S(), avatar_url: Nullable(S()), star_count: I(), last_activity_at: Iso(),
  namespace: Nullable(NamespaceBasic), custom_attributes: Opt(Type.Array(CustomAttribute)),
};
/** The simple form (`simple=true`, and a fork's source). */
export const ProjectSimple = Entity(simpleFields, { description: 'BasicProjectDetails' });

const ProjectAccess = Nullable(Entity({ access_level: I(), notification_level: I() }));

export const ProjectStatistics = Entity({
  commit_count: I(), storage_size: I(), repository_size: I(), wiki_size: I(), lfs_objects_size: I(), job_artifacts_size: I(),
  pipeline_artifacts_size: I(), packages_size: I(), snippets_size: I(), uploads_size: I(),
});

export const ProjectGroupLink = Entity({
  group_id: I(), group_name: S(), group_full_path: S(), group_access_level: I(), expires_at: Nullable(IsoDay()),
});

/** The full form (ProjectWithAccess). */
export const Project = Entity({
  id: I(), description: Nullable(S()), name: S(), name_with_namespace: S(), path: S(), path_with_namespace: S(),
  created_at: Iso(), default_branch: Opt(S()), tag_list: Type.Array(S()), topics: Type.Array(S()), ssh_url_to_repo: S(),
  http_url_to_repo: S(), web_url: S(), readme_url: Opt(Nullable(S())), forks_count: Opt(I()), avatar_url: Nullable(S()),
  star_count: I(), last_activity_at: Iso(), namespace: Nullable(NamespaceBasic),
  custom_attributes: Opt(Type.Array(CustomAttribute)), repository_storage: Opt(S()), forked_from_project: Opt(ProjectSimple),
  container_registry_image_prefix: Opt(S()),
  _links: Entity({
    self: S(), issues: Opt(S()), merge_requests: Opt(S()), repo_branches: S(), labels: S(), events: S(), members: S(),
    cluster_agents: S(),
  }),
  packages_enabled: B(), empty_repo: B(), archived: B(), visibility: S(), owner: Opt(UserBasic),
  resolve_outdated_diff_discussions: B(),
  container_expiration_policy: Entity({
    cadence: S(), enabled: B(), keep_n: I(), older_than: S(), name_regex: S(), name_regex_keep: Nullable(S()), next_run_at: Iso(),
  }),
  issues_enabled: B(), merge_requests_enabled: B(), wiki_enabled: B(), jobs_enabled: B(), snippets_enabled: B(),
  container_registry_enabled: B(), service_desk_enabled: B(), can_create_merge_request_in: B(), issues_access_level: S(),
  repository_access_level: S(), merge_requests_access_level: S(), forking_access_level: S(), wiki_access_level: S(),
  builds_access_level: S(), snippets_access_level: S(), pages_access_level: S(), analytics_access_level: S(),
  container_registry_access_level: S(), security_and_compliance_access_level: S(), requirements_access_level: S(),
  emails_disabled: B(), emails_enabled: B(), shared_runners_enabled: B(), lfs_enabled: B(), creator_id: Nullable(I()),
  mr_default_target_self: Opt(B()), import_url: Opt(Nullable(S())), import_type: Opt(Nullable(S())), import_status: S(),
  import_error: Opt(Nullable(S())), open_issues_count: Opt(I()), description_html: S(), updated_at: Iso(),
  ci_default_git_depth: Opt(I()), ci_forward_deployment_enabled: Opt(B()), ci_forward_deployment_rollback_allowed: Opt(B()),
  ci_job_token_scope_enabled: Opt(B()), ci_separated_caches: Opt(B()), ci_allow_fork_pipelines_to_run_in_parent_project: Opt(B()),
  keep_latest_artifact: Opt(B()), restrict_user_defined_variables: Opt(B()), runners_token: Opt(Nullable(S())),
  runner_token_expiration_interval: Opt(Nullable(I())), group_runners_enabled: Opt(B()), auto_cancel_pending_pipelines: Opt(S()),
  build_timeout: Opt(I()), auto_devops_enabled: Opt(B()), auto_devops_deploy_strategy: Opt(S()), ci_config_path: Opt(Nullable(S())),
  public_jobs: B(), shared_with_groups: Type.Array(ProjectGroupLink), only_allow_merge_if_pipeline_succeeds: B(),
  allow_merge_on_skipped_pipeline: Nullable(B()), request_access_enabled: B(), only_allow_merge_if_all_discussions_are_resolved: B(),
  remove_source_branch_after_merge: B(), printing_merge_request_link_enabled: B(), merge_method: S(), squash_option: S(),
  enforce_auth_checks_on_uploads: B(), suggestion_commit_message: Nullable(S()), merge_commit_template: Nullable(S()),
  squash_commit_template: Nullable(S()), issue_branch_template: Nullable(S()), statistics: Opt(ProjectStatistics),
  autoclose_referenced_issues: B(), external_authorization_classification_label: S(), requirements_enabled: B(),
  security_and_compliance_enabled: B(), compliance_frameworks: Type.Array(S()), marked_for_deletion_at: Nullable(IsoDay()),
  marked_for_deletion_on: Nullable(IsoDay()),
  permissions: Entity({ project_access: ProjectAccess, group_access: ProjectAccess }),
}, { description: 'ProjectWithAccess' });

/** A project in either form (`simple=true` or not). */
export const AnyProject = Type.Union([Project, ProjectSimple]);

export const Starrer = Entity({ starred_since: Iso(), user: UserBasic }, { description: 'ProjectStarrer' });

export const ProjectShare = Entity({
  id: I(), project_id: I(), group_id: I(), group_access: I(), expires_at: Nullable(IsoDay()),
}, { description: 'ProjectGroupLink' });

export const Topic = Entity({
  id: I(), name: S(), title: S(), description: Nullable(S()), total_projects_count: I(), avatar_url: Nullable(S()),
}, { description: 'Topic' });

/** A group as GET /projects/:id/groups lists it (the reference's PublicGroupDetails). */
export const PublicGroupDetails = Entity({
  id: I(), web_url: S(), name: S(), avatar_url: Nullable(S()), full_name: S(), full_path: S(),
}, { description: 'PublicGroupDetails' });
