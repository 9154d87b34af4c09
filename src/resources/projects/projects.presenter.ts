import { withoutCredentials } from '../../platform/outbound-url.ts';
import { avatarUrl } from '../../platform/storage/avatars.ts';
import { escapeHtml, renderMarkdown } from '../../platform/markdown.ts';
import type { Selectable } from 'kysely';
import { openIssueCounts } from '../issues/issues.service.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { DB } from '../../platform/db/schema.ts';
import type { Actor } from '../../http/auth.ts';
import { iso, isoDate, sshUrlToRepo, webUrl } from '../../http/format.ts';
import { AccessLevel, projectAccessLevels, visibilityName, type ProjectAccess } from '../../platform/membership.ts';
import { userBasic } from '../users/users.presenter.ts';
import { FEATURE_LEVEL, featureLevelName, settingsOf, type CreatedProject, type Namespace, type Project } from './projects.service.ts';
import { canProject, canReadVisibility, featureAvailable } from '../../platform/access/policy.ts';
import { defineMemo } from '../../platform/read-cache.ts';

// Project entities in the reference's field order. Everything a page needs is loaded in one batch
// (a constant number of queries whatever the page size), then each row is rendered from memory.

type NsRow = Pick<Namespace, 'id' | 'name' | 'path' | 'kind' | 'full_path' | 'full_name' | 'parent_id' | 'owner_id'> & { avatar?: string | null; owner_avatar?: string | null };
type Stats = Selectable<DB['project_statistics']>;
type OwnerRow = Pick<Selectable<DB['users']>, 'id' | 'username' | 'name' | 'state' | 'avatar'>;

export interface PresentOptions {
  full: boolean;
  /** The caller's access to the rows when already known (the single-project lookup, the listing). */
  access?: Map<number, ProjectAccess> | Promise<Map<number, ProjectAccess>>;
  statistics?: boolean;
  customAttributes?: boolean;
}

export interface Presentation {
  base: string;
  ssh: { sshHost: string; sshPort: number };
  actor: Actor;
  opts: PresentOptions;
  namespaces: Map<number, NsRow>;
  topics: Map<number, string[]>;
  access: Map<number, ProjectAccess>;
  owners: Map<number, OwnerRow>;
  shared: Map<number, Array<{ group_id: number; group_name: string; group_full_path: string; group_access_level: number; expires_at: string | null }>>;
  forkedFrom: Map<number, Project>;
  stats: Map<number, Stats>;
  custom: Map<number, Array<{ key: string; value: string }>>;
  /** Open issues per project (full form): all of them, and those not confidential. */
  openIssues: Map<number, { all: number; public: number }>;
}

const NO_ACCESS: ProjectAccess = { project: null, group: null, effective: 0 };

type NsWithOwner = NsRow & { owner_username: string | null; owner_name: string | null; owner_state: string | null; owner_avatar: string | null };

// Namespaces (with a personal namespace's owner) and topics are shared by many projects of a page and across
// pages: they are read caches (see platform/read-cache.ts), like the caller's authorisation (renames, transfers,
// topic and user changes are all state-changing requests).

function namespacesWithOwners(deps: ServiceDeps, ids: number[]): Promise<Map<number, NsWithOwner>> {
  return deps.caches.define<number, NsWithOwner>('namespaces', { max: 50_000 }).getMany(ids, async (missing) => {
    const rows = await deps.db.selectFrom('namespaces as n').leftJoin('users as u', 'u.id', 'n.owner_id')
      .select(['n.id', 'n.name', 'n.path', 'n.kind', 'n.full_path', 'n.full_name', 'n.parent_id', 'n.owner_id', 'n.avatar',
        'u.username as owner_username', 'u.name as owner_name', 'u.state as owner_state', 'u.avatar as owner_avatar'])
      .where('n.id', 'in', missing).execute();
    return new Map(rows.map((r) => [r.id, r]));
  });
}

/** Each project's topic names in name order (an empty list when it has none). */
function topicsOf(deps: ServiceDeps, ids: number[]): Promise<Map<number, string[]>> {
  return deps.caches.define<number, string[]>('topics', { max: 50_000 }).getMany(ids, async (missing) => {
    const rows = await deps.db.selectFrom('project_topics').innerJoin('topics', 'topics.id', 'project_topics.topic_id')
      .select(['project_topics.project_id', 'topics.name']).where('project_topics.project_id', 'in', missing).execute();
    const out = new Map<number, string[]>(missing.map((id) => [id, []]));
    for (const t of rows) out.get(t.project_id)!.push(t.name);
    for (const list of out.values()) list.sort();
    return out;
  });
}

/** Loads what the rows' entities need in a constant number of queries. */
export async function loadPresentation(deps: ServiceDeps, actor: Actor, rows: Project[], opts: PresentOptions): Promise<Presentation> {
  const db = deps.db;
  const ids = rows.map((r) => r.id);
  const forkIds = [...new Set(rows.map((r) => r.forked_from_project_id).filter((x): x is number => x !== null))];
  const pres: Presentation = {
    base: deps.config.externalUrl, ssh: deps.config, actor, opts, namespaces: new Map(), topics: new Map(), access: new Map(), owners: new Map(),
    shared: new Map(), forkedFrom: new Map(), stats: new Map(), custom: new Map(), openIssues: new Map(),
  };
  if (rows.length === 0) return pres;
  const now = deps.clock.now();
  const needAccess = !!actor.user && (opts.full || opts.statistics || rows.some((r) => r.repository_access_level < FEATURE_LEVEL.enabled));
  const forkRows = opts.full && forkIds.length ? await db.selectFrom('projects').selectAll().where('id', 'in', forkIds).where('pending_delete', '=', 0).execute() : [];
  const nsIds = [...new Set([...rows, ...forkRows].map((r) => r.namespace_id))];
  const allIds = [...ids, ...forkRows.map((r) => r.id)];
  const [namespaces, topics, access, shared, stats, custom, openIssues] = await Promise.all([
    // The owner of a personal namespace comes along (the full form shows it), saving a query.
    namespacesWithOwners(deps, nsIds),
    topicsOf(deps, allIds),
    !needAccess ? Promise.resolve(new Map<number, ProjectAccess>())
      : opts.access && forkRows.length === 0 ? opts.access
        : projectAccessLevels(db, actor.user!.id, [...rows, ...forkRows], now),
    opts.full
      ? db.selectFrom('project_group_links as l').innerJoin('namespaces as g', 'g.id', 'l.group_id')
        .select(['l.project_id', 'l.group_id', 'l.group_access', 'l.expires_at', 'g.name', 'g.full_path'])
        .where('l.project_id', 'in', ids).orderBy('l.id').execute()
      : Promise.resolve([]),
    opts.statistics ? db.selectFrom('project_statistics').selectAll().where('project_id', 'in', ids).execute() : Promise.resolve([]),
    opts.customAttributes ? db.selectFrom('project_custom_attributes').select(['project_id', 'key', 'value']).where('project_id', 'in', ids).orderBy('key').execute() : Promise.resolve([]),
    opts.full ? openIssueCounts(db, ids) : Promise.resolve(new Map<number, { all: number; public: number }>()),
  ]);
  pres.openIssues = openIssues;
  for (const n of namespaces.values()) pres.namespaces.set(n.id, n);
  pres.topics = topics;
  pres.access = access;
  for (const s of shared) {
    const list = pres.shared.get(s.project_id) ?? [];
    list.push({ group_id: s.group_id, group_name: s.name, group_full_path: s.full_path, group_access_level: s.group_access, expires_at: isoDate(s.expires_at) });
    pres.shared.set(s.project_id, list);
  }
  for (const s of stats) pres.stats.set(s.project_id, s);
  for (const c of custom) {
    const list = pres.custom.get(c.project_id) ?? [];
    list.push({ key: c.key, value: c.value });
    pres.custom.set(c.project_id, list);
  }
  for (const n of namespaces.values()) {
    if (n.kind === 'user' && n.owner_id !== null && n.owner_username !== null) {
      pres.owners.set(n.owner_id, { id: n.owner_id, username: n.owner_username, name: n.owner_name!, state: n.owner_state!, avatar: n.owner_avatar });
    }
  }
  // A fork's source is shown only when the caller can read it.
  for (const f of forkRows) {
    const level = access.get(f.id)?.effective ?? 0;
    if (canReadVisibility(actor, f.visibility_level, level)) pres.forkedFrom.set(f.id, f);
  }
  return pres;
}

function levelOf(pres: Presentation, p: Project): number {
  if (pres.actor.admin) return AccessLevel.OWNER;
  return pres.access.get(p.id)?.effective ?? 0;
}

function namespaceEntity(ns: NsRow | undefined, base: string) {
  if (!ns) return null;
  return {
    id: ns.id, name: ns.name, path: ns.path, kind: ns.kind, full_path: ns.full_path, parent_id: ns.parent_id,
    // A personal namespace shows its owner's avatar, a group its own.
    avatar_url: ns.kind === 'user' ? avatarUrl(base, 'user', ns.owner_id ?? 0, ns.owner_avatar) : avatarUrl(base, 'group', ns.id, ns.avatar),
    web_url: ns.kind === 'user' ? webUrl(base, ns.full_path) : webUrl(base, 'groups', ns.full_path),
  };
}

const hosts = defineMemo<string, { hostname: string; host: string }>('url-hosts', { max: 100 });
export function hostOf(base: string) {
  let h = hosts.get(base);
  if (!h) {
    const u = new URL(base);
    h = { hostname: u.hostname, host: u.host };
    hosts.set(base, h);
  }
  return h;
}

// Entities are single object literals: a key whose condition fails holds undefined, which JSON leaves out,
// so the wire has no such key while every entity keeps one shape (much cheaper to build and serialise).

/**
 * The fields every form of a project opens with (BasicProjectDetails as the spec lists it); `between` holds the
 * full form's fields that the reference places after `web_url`.
 */
function projectHead(p: Project, pres: Presentation, readCode: boolean, between: Record<string, unknown> = {}): Record<string, unknown> {
  const base = pres.base;
  const ns = pres.namespaces.get(p.namespace_id);
  const topics = pres.topics.get(p.id) ?? [];
  const web = webUrl(base, p.full_path);
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: ns ? `${ns.full_name} / ${p.name}` : p.name,
    path: p.path,
    path_with_namespace: p.full_path,
    created_at: iso(p.created_at),
    default_branch: readCode ? p.default_branch ?? 'main' : undefined,
    tag_list: topics,
    topics,
    ssh_url_to_repo: sshUrlToRepo(pres.ssh, p.full_path),
    http_url_to_repo: `${web}.git`,
    web_url: web,
    ...between,
    avatar_url: avatarUrl(base, 'project', p.id, p.avatar),
    star_count: p.star_count,
    last_activity_at: iso(p.last_activity_at),
    namespace: namespaceEntity(ns, base),
    custom_attributes: pres.opts.customAttributes ? pres.custom.get(p.id) ?? [] : undefined,
  };
}

/** The simple form (BasicProjectDetails as the spec lists it). */
export function simpleProject(p: Project, pres: Presentation): Record<string, unknown> {
  return projectHead(p, pres, canProject(pres.actor, 'download_code', p, levelOf(pres, p)));
}

function statisticsEntity(s: Stats | undefined) {
  return {
    commit_count: s?.commit_count ?? 0,
    storage_size: s?.storage_size ?? 0,
    repository_size: s?.repository_size ?? 0,
    wiki_size: s?.wiki_size ?? 0,
    lfs_objects_size: s?.lfs_objects_size ?? 0,
    job_artifacts_size: s?.job_artifacts_size ?? 0,
    pipeline_artifacts_size: s?.pipeline_artifacts_size ?? 0,
    packages_size: s?.packages_size ?? 0,
    snippets_size: s?.snippets_size ?? 0,
    uploads_size: s?.uploads_size ?? 0,
  };
}

const access = (level: number | null) => (level === null ? null : { access_level: level, notification_level: 3 });

/** The full form (ProjectWithAccess): the simple fields, then details that depend on the caller's role. */
export function fullProject(p: Project, pres: Presentation): Record<string, unknown> {
  const base = pres.base;
  const admin = pres.actor.admin;
  const level = levelOf(pres, p);
  const acc = pres.access.get(p.id) ?? NO_ACCESS;
  const s = settingsOf(p);
  const ns = pres.namespaces.get(p.namespace_id);
  const readCode = canProject(pres.actor, 'download_code', p, level);
  const issues = featureAvailable(pres.actor, p, 'issues', level);
  const mrs = featureAvailable(pres.actor, p, 'merge_requests', level);
  const m = admin || level >= AccessLevel.MAINTAINER;
  const web = webUrl(base, p.full_path);
  const api = `${base}/api/v4/projects/${p.id}`;
  const registry = s.container_registry_access_level !== 'disabled';
  const source = p.forked_from_project_id !== null ? pres.forkedFrom.get(p.forked_from_project_id) : undefined;
  const owner = ns?.kind === 'user' && ns.owner_id !== null ? pres.owners.get(ns.owner_id) : undefined;
  return {
    ...projectHead(p, pres, readCode, {
      readme_url: readCode ? (p.readme_path ? `${web}/-/blob/${p.default_branch ?? 'main'}/${p.readme_path}` : null) : undefined,
      forks_count: readCode ? p.forks_count : undefined,
    }),
    repository_storage: admin ? p.repository_storage : undefined,
    forked_from_project: source ? simpleProject(source, pres) : undefined,
    container_registry_image_prefix: registry ? `${hostOf(base).host}/${p.full_path_lower}` : undefined,
    _links: {
      self: api,
      issues: issues ? `${api}/issues` : undefined,
      merge_requests: mrs ? `${api}/merge_requests` : undefined,
      repo_branches: `${api}/repository/branches`,
      labels: `${api}/labels`,
      events: `${api}/events`,
      members: `${api}/members`,
      cluster_agents: `${api}/cluster_agents`,
    },
    packages_enabled: s.packages_enabled,
    empty_repo: !!p.empty_repo,
    archived: !!p.archived,
    visibility: visibilityName(p.visibility_level),
    owner: owner ? userBasic(owner as any, base) : undefined,
    resolve_outdated_diff_discussions: s.resolve_outdated_diff_discussions,
    container_expiration_policy: {
      cadence: '1d', enabled: s.container_expiration_policy_enabled, keep_n: 10, older_than: '90d', name_regex: '.*',
      name_regex_keep: null, next_run_at: iso(p.created_at + 86_400_000),
    },
    issues_enabled: p.issues_access_level > 0,
    merge_requests_enabled: p.merge_requests_access_level > 0,
    wiki_enabled: s.wiki_access_level !== 'disabled',
    jobs_enabled: s.builds_access_level !== 'disabled',
    snippets_enabled: s.snippets_access_level !== 'disabled',
    container_registry_enabled: registry,
    service_desk_enabled: s.service_desk_enabled,
    can_create_merge_request_in: mrs && (admin || level >= AccessLevel.DEVELOPER),
    issues_access_level: featureLevelName(p.issues_access_level),
    repository_access_level: featureLevelName(p.repository_access_level),
    merge_requests_access_level: featureLevelName(p.merge_requests_access_level),
    forking_access_level: featureLevelName(p.forking_access_level),
    wiki_access_level: s.wiki_access_level,
    builds_access_level: s.builds_access_level,
    snippets_access_level: s.snippets_access_level,
    pages_access_level: s.pages_access_level,
    analytics_access_level: s.analytics_access_level,
    container_registry_access_level: s.container_registry_access_level,
    security_and_compliance_access_level: s.security_and_compliance_access_level,
    requirements_access_level: s.requirements_access_level,
    emails_disabled: s.emails_disabled,
    emails_enabled: !s.emails_disabled,
    shared_runners_enabled: s.shared_runners_enabled,
    lfs_enabled: s.lfs_enabled,
    creator_id: p.creator_id,
    mr_default_target_self: p.forked_from_project_id !== null ? s.mr_default_target_self : undefined,
    import_url: m ? withoutCredentials(p.import_url) : undefined,
    import_type: m ? p.import_type : undefined,
    import_status: p.import_status,
    import_error: admin ? p.import_error : undefined,
    // Confidential issues count for Reporters and above only (the reference's OpenIssuesCountService).
    open_issues_count: issues ? (level >= AccessLevel.REPORTER ? pres.openIssues.get(p.id)?.all : pres.openIssues.get(p.id)?.public) ?? 0 : undefined,
    description_html: descriptionHtml(p.description),
    updated_at: iso(p.updated_at),
    ci_default_git_depth: m ? s.ci_default_git_depth : undefined,
    ci_forward_deployment_enabled: m ? s.ci_forward_deployment_enabled : undefined,
    ci_forward_deployment_rollback_allowed: m ? s.ci_forward_deployment_rollback_allowed : undefined,
    ci_job_token_scope_enabled: m ? s.ci_job_token_scope_enabled : undefined,
    ci_separated_caches: m ? s.ci_separated_caches : undefined,
    ci_allow_fork_pipelines_to_run_in_parent_project: m ? s.ci_allow_fork_pipelines_to_run_in_parent_project : undefined,
    keep_latest_artifact: m ? s.keep_latest_artifact : undefined,
    restrict_user_defined_variables: m ? s.restrict_user_defined_variables : undefined,
    // Stored only as a digest: the token is known in the answer that creates the project, and null after.
    runners_token: m ? (p as Partial<CreatedProject>).runners_token ?? null : undefined,
    runner_token_expiration_interval: m ? s.runner_token_expiration_interval : undefined,
    group_runners_enabled: m ? s.group_runners_enabled : undefined,
    auto_cancel_pending_pipelines: m ? s.auto_cancel_pending_pipelines : undefined,
    build_timeout: m ? s.build_timeout : undefined,
    auto_devops_enabled: m ? s.auto_devops_enabled : undefined,
    auto_devops_deploy_strategy: m ? s.auto_devops_deploy_strategy : undefined,
    ci_config_path: readCode ? s.ci_config_path : undefined,
    public_jobs: s.public_jobs,
    shared_with_groups: pres.shared.get(p.id) ?? [],
    only_allow_merge_if_pipeline_succeeds: s.only_allow_merge_if_pipeline_succeeds,
    allow_merge_on_skipped_pipeline: s.allow_merge_on_skipped_pipeline,
    request_access_enabled: s.request_access_enabled,
    only_allow_merge_if_all_discussions_are_resolved: s.only_allow_merge_if_all_discussions_are_resolved,
    remove_source_branch_after_merge: s.remove_source_branch_after_merge,
    printing_merge_request_link_enabled: s.printing_merge_request_link_enabled,
    merge_method: s.merge_method,
    squash_option: s.squash_option,
    enforce_auth_checks_on_uploads: s.enforce_auth_checks_on_uploads,
    suggestion_commit_message: s.suggestion_commit_message,
    merge_commit_template: s.merge_commit_template,
    squash_commit_template: s.squash_commit_template,
    issue_branch_template: s.issue_branch_template,
    statistics: pres.opts.statistics && (admin || level >= AccessLevel.REPORTER) ? statisticsEntity(pres.stats.get(p.id)) : undefined,
    autoclose_referenced_issues: s.autoclose_referenced_issues,
    external_authorization_classification_label: s.external_authorization_classification_label,
    requirements_enabled: s.requirements_access_level !== 'disabled',
    security_and_compliance_enabled: s.security_and_compliance_access_level !== 'disabled',
    compliance_frameworks: [],
    marked_for_deletion_at: isoDate(p.marked_for_deletion_at),
    marked_for_deletion_on: isoDate(p.marked_for_deletion_at),
    permissions: { project_access: access(acc.project), group_access: access(acc.group) },
  };
}


/** The description as HTML, rendered by the one Markdown renderer (raw HTML escaped, safe links only). */
export function descriptionHtml(d: string | null): string {
  return d ? renderMarkdown(d) : '';
}

/** A one-line text as HTML (label descriptions): escaped, without paragraphs; null stays null. */
export function singleLineHtml(d: string | null): string | null {
  return d === null ? null : escapeHtml(d);
}

export function presentOne(p: Project, pres: Presentation): Record<string, unknown> {
  return pres.opts.full ? fullProject(p, pres) : simpleProject(p, pres);
}

/** A starrer: when the user starred the project, and the user. */
export function starrer(r: Record<string, any>, base: string): Record<string, unknown> {
  return { starred_since: iso(r.starred_since), user: userBasic(r as any, base) };
}

export function topicEntity(t: Selectable<DB['topics']>, base: string): Record<string, unknown> {
  return { id: t.id, name: t.name, title: t.title, description: t.description, total_projects_count: t.total_projects_count, avatar_url: avatarUrl(base, 'topic', t.id, t.avatar) };
}

/** A project's share with a group; the expiry is a date. */
export function projectShare(link: Selectable<DB['project_group_links']>): Record<string, unknown> {
  return {
    id: link.id, project_id: link.project_id, group_id: link.group_id, group_access: link.group_access,
    expires_at: link.expires_at === null ? null : new Date(link.expires_at).toISOString().slice(0, 10),
  };
}

export function publicGroupDetails(g: Pick<Namespace, 'id' | 'name' | 'full_name' | 'full_path' | 'avatar'>, base: string): Record<string, unknown> {
  return { id: g.id, web_url: webUrl(base, 'groups', g.full_path), name: g.name, avatar_url: avatarUrl(base, 'group', g.id, g.avatar), full_name: g.full_name, full_path: g.full_path };
}
