import { storedSettings } from '../../platform/project-rows.ts';
import { emitEvent } from '../../platform/events.ts';
import { branchProtectionDefaults, protectsDefaultBranch } from '../../platform/branch-protection.ts';
import { createProtectedBranch } from '../repository/protected.service.ts';
import { checkAvatar, removeAvatar, withAvatar } from '../../platform/storage/avatars.ts';
import { removeProjectUploads, type UploadedFile } from '../../platform/storage/uploads.ts';
import type { Selectable, Transaction } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { DB, NamespacesTable, ProjectsTable } from '../../platform/db/schema.ts';
import type { Actor } from '../../http/auth.ts';
import type { ProjectContext } from '../../http/access.ts';
import { canGroup, canReadVisibility, FEATURE_LEVEL, type FeatureLevelName } from '../../platform/access/policy.ts';
import { digest, newSecret } from '../../platform/crypto/tokens.ts';
import { isValidRefName } from '../../platform/git/refs.ts';
import {
  ConflictError, NotFoundError, RuleError, ValidationError,
} from '../../platform/errors.ts';
import { AccessLevel, Visibility, groupAccessLevels, groupOfProject, visibilityName, type VisibilityName } from '../../platform/membership.ts';
import { transferProjectLabels } from '../labels/labels.service.ts';
import { transferProjectMilestones } from '../milestones/milestones.service.ts';
import { pathProblem } from '../users/users.service.ts';
import { containsText, isUniqueViolation } from '../../platform/db/dialect.ts';
import { readableGroups } from '../../platform/access/queries.ts';
import { applicationSettings } from '../../platform/application-settings.ts';
import { importUrlProblem, scheduleImport, scheduledImportColumns } from './projects.import.ts';
import {
  commitReadme, copyRepository, initRepository, pickStorage, placeRepository, readRepositoryFacts, removeRepository, repositoryPath, setHead,
  snippetRepositoryPath, stagingPath, repositoryExists, PROJECT_REPOSITORY_KINDS, type RepositoryFacts,
} from './repository.ts';

export type Project = Selectable<ProjectsTable>;
/** A project as its creation answers it: with the runner registration token, which is stored only as a digest. */
export type CreatedProject = Project & { runners_token: string };

/** A new runner registration token and the digest that is stored. */
function newRunnersToken(): { token: string; digest: string } {
  const token = newSecret('GR1348941', 15);
  return { token, digest: digest(token) };
}
export type Namespace = Selectable<NamespacesTable>;

/** Feature levels as stored (integers) and as shown (strings). */
export { FEATURE_LEVEL, type FeatureLevelName } from '../../platform/access/policy.ts';
export function featureLevelName(v: number): FeatureLevelName {
  return v >= 30 ? 'public' : v >= 20 ? 'enabled' : v >= 10 ? 'private' : 'disabled';
}

/** Features whose level is a column (they are filtered on); the others live in `settings`. */
export const COLUMN_FEATURES = ['issues', 'repository', 'merge_requests', 'forking'] as const;
export const SETTING_FEATURES = [
  'wiki', 'builds', 'snippets', 'pages', 'analytics', 'container_registry', 'security_and_compliance', 'requirements',
] as const;

/** Settings stored in the JSON column, with the reference's defaults for a new project. */
export const SETTING_DEFAULTS = {
  wiki_access_level: 'enabled',
  builds_access_level: 'enabled',
  snippets_access_level: 'enabled',
  pages_access_level: 'private',
  analytics_access_level: 'enabled',
  container_registry_access_level: 'enabled',
  security_and_compliance_access_level: 'private',
  requirements_access_level: 'enabled',
  packages_enabled: true,
  service_desk_enabled: false,
  resolve_outdated_diff_discussions: false,
  emails_disabled: false,
  shared_runners_enabled: true,
  group_runners_enabled: true,
  lfs_enabled: true,
  ci_default_git_depth: 20,
  ci_forward_deployment_enabled: true,
  ci_forward_deployment_rollback_allowed: true,
  ci_allow_fork_pipelines_to_run_in_parent_project: true,
  ci_job_token_scope_enabled: false,
  ci_separated_caches: true,
  public_jobs: true,
  build_timeout: 3600,
  auto_cancel_pending_pipelines: 'enabled',
  ci_config_path: null as string | null,
  only_allow_merge_if_pipeline_succeeds: false,
  allow_merge_on_skipped_pipeline: null as boolean | null,
  restrict_user_defined_variables: false,
  request_access_enabled: true,
  only_allow_merge_if_all_discussions_are_resolved: false,
  remove_source_branch_after_merge: true,
  printing_merge_request_link_enabled: true,
  merge_method: 'merge',
  squash_option: 'default_off',
  enforce_auth_checks_on_uploads: true,
  suggestion_commit_message: null as string | null,
  merge_commit_template: null as string | null,
  squash_commit_template: null as string | null,
  issue_branch_template: null as string | null,
  auto_devops_enabled: false,
  auto_devops_deploy_strategy: 'continuous',
  autoclose_referenced_issues: true,
  /** Authors may approve their own merge requests (the reference's approval setting; read by the access policy). */
  merge_requests_author_approval: false,
  keep_latest_artifact: true,
  runner_token_expiration_interval: null as number | null,
  external_authorization_classification_label: '',
  mr_default_target_self: false,
  container_expiration_policy_enabled: false,
};
export type ProjectSettings = typeof SETTING_DEFAULTS;

/** The project's settings with defaults for anything not stored. */
export function settingsOf(p: Pick<Project, 'settings'>): ProjectSettings {
  return { ...SETTING_DEFAULTS, ...storedSettings(p) } as ProjectSettings;
}

// ---------------------------------------------------------------------------------------------
// Input shared by create, edit and fork.

export interface ProjectAttributes {
  name?: string;
  path?: string;
  description?: string | null;
  default_branch?: string;
  visibility?: VisibilityName;
  topics?: string[] | string;
  tag_list?: string[] | string;
  import_url?: string;
  issues_enabled?: boolean;
  merge_requests_enabled?: boolean;
  wiki_enabled?: boolean;
  jobs_enabled?: boolean;
  snippets_enabled?: boolean;
  container_registry_enabled?: boolean;
  /** A new avatar (a file part), or null to remove it. */
  avatar?: UploadedFile | null;
  [key: string]: unknown;
}

const BOOL_FEATURE_ALIASES: Record<string, string> = {
  issues_enabled: 'issues', merge_requests_enabled: 'merge_requests', wiki_enabled: 'wiki', jobs_enabled: 'builds',
  snippets_enabled: 'snippets', container_registry_enabled: 'container_registry',
};

/** Every settings key a client may set (create and edit). */
export const SETTING_PARAMS = Object.keys(SETTING_DEFAULTS).filter((k) => !k.endsWith('_access_level') && k !== 'container_expiration_policy_enabled');

const NAME_RE = /^[\p{L}\p{N}\p{Emoji_Presentation}_][\p{L}\p{N}\p{Emoji_Presentation}_.+\- ]*$/u;
const NAME_TEXT = "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'.";

/** "My Project" -> "my-project": the path a project gets when only a name is given. */
export function pathFromName(name: string): string {
  return name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-').replace(/-{2,}/g, '-').replace(/^[-.]+|[-.]+$/g, '').replace(/\.(git|atom)$/, '') || 'project';
}

/** Comma-separated or array topics, trimmed, without empties and case-insensitive duplicates. */
export function normalizeTopics(v: string[] | string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const list = (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(','));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of list) {
    const t = raw.trim();
    if (!t || seen.has(t.toLowerCase())) continue;
    seen.add(t.toLowerCase());
    out.push(t);
  }
  return out;
}

/** Splits attributes into column values and settings, checking each; throws ValidationError. */
function featureColumns(attrs: ProjectAttributes, errors: Record<string, string[]>): { columns: Record<string, number>; settings: Record<string, unknown> } {
  // NUL cannot be stored (PostgreSQL text refuses it), so any text attribute holding one is invalid.
  for (const [k, v] of Object.entries(attrs)) {
    const texts = Array.isArray(v) ? v : [v];
    if (texts.some((x) => typeof x === 'string' && x.includes('\0'))) (errors[k] ??= []).push('is invalid');
  }
  const columns: Record<string, number> = {};
  const settings: Record<string, unknown> = {};
  const setLevel = (feature: string, name: string) => {
    const level = FEATURE_LEVEL[name as FeatureLevelName];
    if (level === undefined || (name === 'public' && feature !== 'pages')) {
      (errors[`${feature}_access_level`] ??= []).push('is not included in the list');
      return;
    }
    if ((COLUMN_FEATURES as readonly string[]).includes(feature)) columns[`${feature}_access_level`] = level;
    else settings[`${feature}_access_level`] = name;
  };
  for (const [param, feature] of Object.entries(BOOL_FEATURE_ALIASES)) {
    if (attrs[param] !== undefined) setLevel(feature, attrs[param] ? 'enabled' : 'disabled');
  }
  for (const feature of [...COLUMN_FEATURES, ...SETTING_FEATURES]) {
    const v = attrs[`${feature}_access_level`];
    if (v !== undefined) setLevel(feature, String(v));
  }
  for (const k of SETTING_PARAMS) if (attrs[k] !== undefined) settings[k] = attrs[k];
  if (attrs.emails_enabled !== undefined) settings.emails_disabled = !attrs.emails_enabled;
  if (attrs.public_builds !== undefined && attrs.public_jobs === undefined) settings.public_jobs = attrs.public_builds;
  if (settings.merge_method !== undefined && !['merge', 'rebase_merge', 'ff'].includes(String(settings.merge_method))) {
    (errors.merge_method ??= []).push('is not included in the list');
  }
  if (settings.squash_option !== undefined && !['never', 'always', 'default_on', 'default_off'].includes(String(settings.squash_option))) {
    (errors.squash_option ??= []).push('is not included in the list');
  }
  if (settings.build_timeout !== undefined && (Number(settings.build_timeout) < 600 || Number(settings.build_timeout) > 2_592_000)) {
    (errors.build_timeout ??= []).push('needs to be between 10 minutes and 1 month');
  }
  return { columns, settings };
}

// ---------------------------------------------------------------------------------------------
// Namespaces

export async function namespaceById(deps: ServiceDeps, id: number): Promise<Namespace | undefined> {
  return deps.db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A namespace by id or full path, as `namespace_id` / `namespace` parameters give it. */
export async function findNamespace(deps: ServiceDeps, idOrPath: string | number): Promise<Namespace | undefined> {
  const v = String(idOrPath);
  // A group pending deletion is gone for everything that names it.
  const q = deps.db.selectFrom('namespaces').selectAll().where('pending_delete', '=', 0);
  return /^\d+$/.test(v) ? q.where('id', '=', Number(v)).executeTakeFirst() : q.where('full_path_lower', '=', v.toLowerCase()).executeTakeFirst();
}

export async function personalNamespace(deps: ServiceDeps, userId: number): Promise<Namespace | undefined> {
  return deps.db.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirst();
}

/** Whether the user may create projects in the namespace (its owner, or a group role per the group's setting). */
export async function canCreateIn(deps: ServiceDeps, actor: Actor, ns: Namespace): Promise<boolean> {
  if (!actor.user) return false;
  if (actor.admin) return true;
  if (ns.kind === 'user') return ns.owner_id === actor.user.id;
  return canGroup(actor, 'create_projects', ns, (await groupAccessLevels(deps.db, actor.user.id, [ns], deps.clock.now())).get(ns.id) ?? 0);
}

async function canReadNamespace(deps: ServiceDeps, actor: Actor, ns: Namespace): Promise<boolean> {
  if (ns.kind === 'user') return true;
  const level = actor.user ? (await groupAccessLevels(deps.db, actor.user.id, [ns], deps.clock.now())).get(ns.id) ?? 0 : 0;
  return canReadVisibility(actor, ns.visibility_level, level);
}

// ---------------------------------------------------------------------------------------------
// Topics

type Trx = Transaction<DB>;

/** Replaces the project's topics, creating missing topics and keeping the per-topic project counts. */
async function setTopics(trx: Trx, projectId: number, names: string[], now: number): Promise<void> {
  const old = await trx.selectFrom('project_topics').select('topic_id').where('project_id', '=', projectId).execute();
  const lower = names.map((n) => n.toLowerCase());
  const existing = lower.length ? await trx.selectFrom('topics').select(['id', 'name_lower']).where('name_lower', 'in', lower).execute() : [];
  const idByLower = new Map(existing.map((t) => [t.name_lower, t.id]));
  for (const n of names) {
    if (idByLower.has(n.toLowerCase())) continue;
    const row = await trx.insertInto('topics').values({
      name: n, name_lower: n.toLowerCase(), title: n, description: null, total_projects_count: 0, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    idByLower.set(n.toLowerCase(), row.id);
  }
  const newIds = new Set(lower.map((l) => idByLower.get(l)!));
  const oldIds = new Set(old.map((o) => o.topic_id));
  const removed = [...oldIds].filter((id) => !newIds.has(id));
  const added = [...newIds].filter((id) => !oldIds.has(id));
  if (removed.length) {
    await trx.deleteFrom('project_topics').where('project_id', '=', projectId).where('topic_id', 'in', removed).execute();
    await trx.updateTable('topics').set((eb) => ({ total_projects_count: eb('total_projects_count', '-', 1) })).where('id', 'in', removed).execute();
  }
  if (added.length) {
    await trx.insertInto('project_topics').values(added.map((topic_id) => ({ project_id: projectId, topic_id }))).execute();
    await trx.updateTable('topics').set((eb) => ({ total_projects_count: eb('total_projects_count', '+', 1) })).where('id', 'in', added).execute();
  }
}

// ---------------------------------------------------------------------------------------------
// Paths and redirects

async function pathTaken(db: ServiceDeps['db'] | Trx, nsId: number, fullPathLower: string, name: string, exceptId?: number): Promise<{ path: boolean; name: boolean }> {
  const rows = await db.selectFrom('projects').select(['id', 'full_path_lower', 'name'])
    .where((eb) => eb.or([eb('full_path_lower', '=', fullPathLower), eb.and([eb('namespace_id', '=', nsId), eb('name', '=', name)])]))
    .execute();
  const others = rows.filter((r) => r.id !== exceptId);
  // A group (or user namespace) at the same full path blocks the project path too.
  const ns = await db.selectFrom('namespaces').select('id').where('full_path_lower', '=', fullPathLower).executeTakeFirst();
  return { path: others.some((r) => r.full_path_lower === fullPathLower) || !!ns, name: others.some((r) => r.name === name) };
}

/** The old path keeps reaching the project; a new owner of a path takes it over from any redirect. */
async function moveRoute(trx: Trx, project: Project, newFullPath: string, now: number): Promise<void> {
  await trx.deleteFrom('redirect_routes').where('path_lower', '=', newFullPath.toLowerCase()).execute();
  if (project.full_path_lower !== newFullPath.toLowerCase()) {
    await trx.insertInto('redirect_routes').values({
      source_type: 'Project', source_id: project.id, path: project.full_path, path_lower: project.full_path_lower, created_at: now,
    }).execute();
  }
}

// ---------------------------------------------------------------------------------------------
// Repository facts

/**
 * Reads the repository once and records what the project rows keep about it: empty_repo, the README on
 * the default branch, languages and statistics. Call after anything that changes the repository.
 */
export async function refreshRepositoryFacts(deps: ServiceDeps, project: Pick<Project, 'id' | 'repository_storage' | 'default_branch'>): Promise<void> {
  const path = repositoryPath(deps.config, project.repository_storage, project.id);
  const facts = await readRepositoryFacts(path, project.default_branch);
  await deps.db.transaction().execute((trx) => writeRepositoryFacts(trx, project.id, facts, deps.clock.now()));
  if (!facts.empty && facts.commitCount > 0) await protectDefaultBranchOnce(deps, project.id);
}

/**
 * Once a project's default branch first holds commits (its first push or commit, or its creation with a README),
 * protects it as the default branch protection of its group (or, in a personal namespace, of the instance) says,
 * through the protected-branches rules; never again after that, so a branch unprotected later stays so. A stop
 * between the rule and the mark is repaired by the next ref change (the rule then exists already).
 */
export async function protectDefaultBranchOnce(deps: ServiceDeps, projectId: number): Promise<void> {
  const p = await deps.db.selectFrom('projects as p').innerJoin('namespaces as n', 'n.id', 'p.namespace_id')
    .select(['p.id', 'p.default_branch', 'p.empty_repo', 'p.default_branch_protection_applied', 'n.kind', 'n.default_branch_protection'])
    .where('p.id', '=', projectId).executeTakeFirst();
  if (!p || p.default_branch_protection_applied || p.empty_repo || !p.default_branch) return;
  const level = p.kind === 'group' ? p.default_branch_protection : (await applicationSettings(deps)).default_branch_protection;
  if (protectsDefaultBranch(level)) {
    const d = branchProtectionDefaults(level);
    await createProtectedBranch(deps, p.id, {
      name: p.default_branch, allow_force_push: d.allow_force_push, code_owner_approval_required: false,
      push: d.allowed_to_push, merge: d.allowed_to_merge, unprotect: [{ access_level: AccessLevel.MAINTAINER }],
    }).catch((e) => {
      if (!(e instanceof ConflictError)) throw e;
    });
  }
  await deps.db.updateTable('projects').set({ default_branch_protection_applied: 1 }).where('id', '=', p.id).execute();
}

async function writeRepositoryFacts(trx: Transaction<DB>, projectId: number, facts: RepositoryFacts, now: number): Promise<void> {
  await trx.updateTable('projects').set({ empty_repo: facts.empty ? 1 : 0, readme_path: facts.readmePath }).where('id', '=', projectId).execute();
  await trx.deleteFrom('project_languages').where('project_id', '=', projectId).execute();
  if (facts.languages.length) {
    await trx.insertInto('project_languages').values(facts.languages.map((l) => ({ project_id: projectId, name: l.name, name_lower: l.name.toLowerCase(), share: l.share }))).execute();
  }
  const stats = { commit_count: facts.commitCount, repository_size: facts.size, storage_size: facts.size, updated_at: now };
  const r = await trx.updateTable('project_statistics').set(stats).where('project_id', '=', projectId).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) await trx.insertInto('project_statistics').values({ project_id: projectId, ...stats }).execute();
}

/** Activity (pushes, issues, ...) moves last_activity_at. */
export async function touchActivity(deps: ServiceDeps, projectId: number): Promise<void> {
  await deps.db.updateTable('projects').set({ last_activity_at: deps.clock.now() }).where('id', '=', projectId).execute();
}

export function projectRepositoryPath(deps: ServiceDeps, project: Pick<Project, 'id' | 'repository_storage'>): string {
  return repositoryPath(deps.config, project.repository_storage, project.id);
}

/**
 * Removes every repository a project owns: its code and wiki (PROJECT_REPOSITORY_KINDS) and its snippets'. Run
 * while the rows still name them (deleteProjectRows removes the rows); run again after a stop, it finishes the work.
 */
export async function removeProjectRepositories(deps: ServiceDeps, project: Pick<Project, 'id' | 'repository_storage'>): Promise<void> {
  for (const kind of PROJECT_REPOSITORY_KINDS) await removeRepository(repositoryPath(deps.config, project.repository_storage, project.id, kind));
  const snippets = await deps.db.selectFrom('snippets').select(['id', 'repository_storage']).where('project_id', '=', project.id).execute();
  for (const s of snippets) await removeRepository(snippetRepositoryPath(deps.config, s.repository_storage, s.id));
}

// ---------------------------------------------------------------------------------------------
// Create

export interface CreateInput extends ProjectAttributes {
  namespace_id?: string | number;
  initialize_with_readme?: boolean;
}

function checkVisibilityAgainstNamespace(vis: number, ns: Namespace, errors: Record<string, string[]>): void {
  if (ns.kind === 'group' && vis > ns.visibility_level) {
    (errors.visibility_level ??= []).push(`${visibilityName(vis)} is not allowed in a ${visibilityName(ns.visibility_level)} group.`);
  }
}

/**
 * Creates a project with its bare repository on a shard chosen by weight. The owner of a personal
 * namespace becomes the project's Owner member; in a group the group's memberships apply.
 */
export async function createProject(deps: ServiceDeps, actor: Actor, input: CreateInput, opts: { owner?: { id: number; name: string; email: string } } = {}): Promise<CreatedProject> {
  const user = actor.user!;
  const owner = opts.owner ?? { id: user.id, name: user.name, email: user.email };
  let ns: Namespace | undefined;
  if (input.namespace_id !== undefined && input.namespace_id !== null && input.namespace_id !== '') {
    ns = await findNamespace(deps, input.namespace_id as string | number);
    if (!ns || !(await canReadNamespace(deps, actor, ns))) throw new NotFoundError('Namespace');
  } else {
    ns = await personalNamespace(deps, owner.id);
    if (!ns) throw new NotFoundError('Namespace');
  }
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!opts.owner && !(await canCreateIn(deps, actor, ns))) add('namespace', 'is not valid');
  checkAvatar(input.avatar);

  const name = (input.name ?? input.path ?? '').trim();
  const path = input.path ?? pathFromName(name);
  if (!name) add('name', "can't be blank");
  else if (!NAME_RE.test(name)) add('name', NAME_TEXT);
  if (name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  const pp = pathProblem(path, 'nested');
  if (pp) add('path', pp);
  const vis = input.visibility ? Visibility[input.visibility] : Visibility.private;
  checkVisibilityAgainstNamespace(vis, ns, errors);
  const defaultBranch = input.default_branch ?? 'main';
  // The column holds 255 characters; a longer name is refused like any other unusable one.
  if (!isValidRefName(defaultBranch) || defaultBranch.length > 255) add('default_branch', 'is invalid');
  const { columns, settings } = featureColumns(input, errors);
  const topics = normalizeTopics(input.topics ?? input.tag_list) ?? [];
  if (topics.some((t) => t.length > 255)) add('topics', 'is too long (maximum is 255 characters)');
  const importUrl = input.import_url ? String(input.import_url) : null;
  if (importUrl) {
    const problem = await importUrlProblem(deps, importUrl);
    if (problem) add('import_url', `is blocked: ${problem}`);
  }
  const fullPath = `${ns.full_path}/${path}`;
  if (!errors.path && !errors.name) {
    const taken = await pathTaken(deps.db, ns.id, fullPath.toLowerCase(), name);
    if (taken.name) add('name', 'has already been taken');
    if (taken.path) add('path', 'has already been taken');
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const now = deps.clock.now();
  const shard = pickStorage(deps.config);
  const runners = newRunnersToken();
  const project = await withAvatar(deps.config.dataDir, 'project', input.avatar ?? undefined, (applyAvatar) => withStagedRepository(deps, shard, async (staged) => {
    await initRepository(staged, defaultBranch);
    if (input.initialize_with_readme && !importUrl) {
      await commitReadme(staged, defaultBranch, `# ${name}\n\n${input.description ?? ''}\n`, { name: user.name, email: user.email }, now);
    }
    return defaultBranch;
  }, async (trx) => {
    const row = await trx.insertInto('projects').values({
      namespace_id: ns.id, name, path, full_path: fullPath, full_path_lower: fullPath.toLowerCase(),
      description: input.description ?? null, visibility_level: vis, creator_id: user.id, archived: 0,
      default_branch: defaultBranch, repository_storage: shard, repository_read_only: 0, empty_repo: 1, pending_delete: 0,
      created_at: now, updated_at: now, last_activity_at: now, forked_from_project_id: null,
      // Imported from a URL: the job queued below fills the repository (projects.import.ts).
      ...(importUrl ? scheduledImportColumns(importUrl) : { import_url: null, import_type: null, import_status: 'none', import_error: null }),
      readme_path: null, marked_for_deletion_at: null, runners_token_digest: runners.digest,
      settings: JSON.stringify(settings), ...columns,
    }).returningAll().executeTakeFirstOrThrow();
    await trx.deleteFrom('redirect_routes').where('path_lower', '=', row.full_path_lower).execute();
    if (ns.kind === 'user') {
      await trx.insertInto('members').values({
        source_type: 'Project', source_id: row.id, user_id: ns.owner_id ?? owner.id, access_level: AccessLevel.OWNER,
        expires_at: null, created_by_id: user.id, created_at: now, updated_at: now,
      }).execute();
    }
    if (topics.length) await setTopics(trx, row.id, topics, now);
    await applyAvatar(trx, row.id);
    if (importUrl) await scheduleImport(deps, trx, row.id, importUrl);
    return row;
  }));
  await protectDefaultBranchOnce(deps, project.id);
  return { ...(await reload(deps, project.id)), runners_token: runners.token };
}

/**
 * Creates a project (or fork) whole or not at all, even across a kill: its repository is made on a staging path of
 * the shard first, then the row is inserted and, in the same transaction, the repository moves to the row's path
 * with one rename before the commit. A stop before the commit leaves no row (the staged or moved repository is
 * removed or replaced later, see Storage.sweep and Storage.place).
 */
async function withStagedRepository(
  deps: ServiceDeps, shard: string, build: (staged: string) => Promise<string | null>, insert: (trx: Transaction<DB>) => Promise<Project>,
  wikiFrom?: string,
): Promise<Project> {
  const staged = stagingPath(deps.config, shard);
  // A fork's wiki is copied the same way, when the source has one, and placed in the same transaction.
  const stagedWiki = wikiFrom && repositoryExists(wikiFrom) ? stagingPath(deps.config, shard) : null;
  const placed: string[] = [];
  try {
    const branch = await build(staged);
    if (stagedWiki) await copyRepository(wikiFrom!, stagedWiki, 'main');
    const facts = await readRepositoryFacts(staged, branch);
    return await deps.db.transaction().execute(async (trx) => {
      const row = await insert(trx);
      await writeRepositoryFacts(trx, row.id, facts, deps.clock.now());
      placed.push(repositoryPath(deps.config, shard, row.id));
      await placeRepository(deps.config, staged, placed[0]);
      if (stagedWiki) {
        placed.push(repositoryPath(deps.config, shard, row.id, 'wiki'));
        await placeRepository(deps.config, stagedWiki, placed[1]);
      }
      return row;
    });
  } catch (e) {
    await removeRepository(staged).catch(() => {});
    if (stagedWiki) await removeRepository(stagedWiki).catch(() => {});
    for (const p of placed) await removeRepository(p).catch(() => {});
    throw e;
  }
}

export async function reload(deps: ServiceDeps, id: number): Promise<Project> {
  return deps.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

// ---------------------------------------------------------------------------------------------
// Edit

export async function updateProject(deps: ServiceDeps, ctx: ProjectContext, input: ProjectAttributes, actorId: number | null = null): Promise<Project> {
  const p = ctx.project;
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  const set: Record<string, unknown> = {};
  const ns = (await namespaceById(deps, p.namespace_id))!;
  const name = input.name !== undefined ? input.name.trim() : p.name;
  const path = input.path ?? p.path;
  if (input.name !== undefined) {
    if (!name) add('name', "can't be blank");
    else if (!NAME_RE.test(name)) add('name', NAME_TEXT);
    set.name = name;
  }
  if (input.path !== undefined && input.path !== p.path) {
    const pp = pathProblem(path, 'nested');
    if (pp) add('path', pp);
    set.path = path;
  }
  const fullPath = `${ns.full_path}/${path}`;
  if ((set.name !== undefined && name !== p.name) || (set.path !== undefined)) {
    if (!errors.name && !errors.path) {
      const taken = await pathTaken(deps.db, ns.id, fullPath.toLowerCase(), name, p.id);
      if (taken.name && name !== p.name) add('name', 'has already been taken');
      if (taken.path && path !== p.path) add('path', 'has already been taken');
    }
  }
  if (input.description !== undefined) set.description = input.description;
  if (input.visibility !== undefined) {
    const vis = Visibility[input.visibility];
    checkVisibilityAgainstNamespace(vis, ns, errors);
    set.visibility_level = vis;
  }
  if (input.default_branch !== undefined && input.default_branch !== p.default_branch) {
    if (!isValidRefName(input.default_branch) || input.default_branch.length > 255) add('default_branch', 'is invalid');
    set.default_branch = input.default_branch;
  }
  const { columns, settings } = featureColumns(input, errors);
  Object.assign(set, columns);
  const topics = normalizeTopics(input.topics ?? input.tag_list);
  if (topics?.some((t) => t.length > 255)) add('topics', 'is too long (maximum is 255 characters)');
  if (Object.keys(errors).length) throw new ValidationError(errors);
  checkAvatar(input.avatar);
  if (Object.keys(settings).length) set.settings = JSON.stringify({ ...JSON.parse(p.settings || '{}'), ...settings });
  const now = deps.clock.now();
  set.updated_at = now;
  if (set.path !== undefined) {
    set.full_path = fullPath;
    set.full_path_lower = fullPath.toLowerCase();
  }
  await withAvatar(deps.config.dataDir, 'project', input.avatar, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    if (set.path !== undefined) await moveRoute(trx, p, fullPath, now);
    await trx.updateTable('projects').set(set).where('id', '=', p.id).execute();
    if (topics) await setTopics(trx, p.id, topics, now);
    await applyAvatar(trx, p.id);
    if (set.path !== undefined && fullPath !== p.full_path && actorId !== null) {
      await emitEvent(deps, trx, { type: 'project', action: 'rename', projectId: p.id, actorId, oldPathWithNamespace: p.full_path });
    }
  }));
  if (set.default_branch !== undefined) {
    await setHead(projectRepositoryPath(deps, p), String(set.default_branch));
    await refreshRepositoryFacts(deps, { ...p, default_branch: String(set.default_branch) });
  }
  return reload(deps, p.id);
}

// ---------------------------------------------------------------------------------------------
// Delete, archive, star

/** Marks the project for deletion, removes its repository, then its rows (the answer is 202). */
export async function deleteProject(deps: ServiceDeps, p: Project): Promise<void> {
  const now = deps.clock.now();
  await deps.db.updateTable('projects').set({ pending_delete: 1, marked_for_deletion_at: now, updated_at: now }).where('id', '=', p.id).execute();
  await removeProjectRepositories(deps, p);
  await deps.db.transaction().execute((trx) => deleteProjectRows(trx, [p]));
  await removeAvatar(deps.config.dataDir, 'project', p.id);
  await removeProjectUploads(deps.config.dataDir, p.id);
}

/**
 * Removes the rows of these projects and everything that hangs off them (inside the caller's transaction); their
 * repositories and files are the caller's to remove once it committed.
 */
export async function deleteProjectRows(trx: Transaction<DB>, projects: Array<Pick<Project, 'id' | 'forked_from_project_id'>>): Promise<void> {
  if (projects.length === 0) return;
  const ids = projects.map((p) => p.id);
  const topics = await trx.selectFrom('project_topics').select('topic_id').where('project_id', 'in', ids).execute();
  const perTopic = new Map<number, number>();
  for (const t of topics) perTopic.set(t.topic_id, (perTopic.get(t.topic_id) ?? 0) + 1);
  for (const [topicId, n] of perTopic) {
    await trx.updateTable('topics').set((eb) => ({ total_projects_count: eb('total_projects_count', '-', n) })).where('id', '=', topicId).execute();
  }
  for (const table of ['project_topics', 'users_star_projects', 'project_group_links', 'project_custom_attributes', 'project_statistics', 'project_languages', 'project_uploads'] as const) {
    await trx.deleteFrom(table).where('project_id', 'in', ids).execute();
  }
  const snippetIds = (await trx.selectFrom('snippets').select('id').where('project_id', 'in', ids).execute()).map((r) => r.id);
  if (snippetIds.length) {
    const noteIds = trx.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', 'in', snippetIds);
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute();
    await trx.deleteFrom('notes').where('noteable_type', '=', 'Snippet').where('noteable_id', 'in', snippetIds).execute();
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Snippet').where('awardable_id', 'in', snippetIds).execute();
    await trx.deleteFrom('snippets').where('id', 'in', snippetIds).execute();
  }
  await trx.deleteFrom('redirect_routes').where('source_type', '=', 'Project').where('source_id', 'in', ids).execute();
  await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', 'in', ids).execute();
  await trx.updateTable('projects').set({ forked_from_project_id: null }).where('forked_from_project_id', 'in', ids).execute();
  const gone = new Set(ids);
  for (const p of projects) {
    if (p.forked_from_project_id && !gone.has(p.forked_from_project_id)) {
      await trx.updateTable('projects').set((eb) => ({ forks_count: eb('forks_count', '-', 1) })).where('id', '=', p.forked_from_project_id).execute();
    }
  }
  await trx.deleteFrom('projects').where('id', 'in', ids).execute();
}

export async function setArchived(deps: ServiceDeps, p: Project, archived: boolean): Promise<Project> {
  if (!!p.archived !== archived) {
    await deps.db.updateTable('projects').set({ archived: archived ? 1 : 0, updated_at: deps.clock.now() }).where('id', '=', p.id).execute();
  }
  return reload(deps, p.id);
}

/** Stars or unstars; false when nothing changed (the route answers 304). */
export async function setStar(deps: ServiceDeps, p: Project, userId: number, starred: boolean): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const have = await trx.selectFrom('users_star_projects').select('id').where('user_id', '=', userId).where('project_id', '=', p.id).executeTakeFirst();
    if (!!have === starred) return false;
    if (starred) {
      await trx.insertInto('users_star_projects').values({ project_id: p.id, user_id: userId, created_at: deps.clock.now() }).execute();
    } else {
      await trx.deleteFrom('users_star_projects').where('id', '=', have!.id).execute();
    }
    await trx.updateTable('projects').set((eb) => ({ star_count: eb('star_count', starred ? '+' : '-', 1) })).where('id', '=', p.id).execute();
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// Transfer and fork

export async function transferProject(deps: ServiceDeps, actor: Actor, p: Project, target: string | number): Promise<Project> {
  const ns = await findNamespace(deps, target);
  if (!ns || !(await canReadNamespace(deps, actor, ns))) throw new NotFoundError('Namespace');
  const fail = (text: string) => new RuleError('bad_request', `Failed to transfer project {:namespace=>["${text}"]}`);
  if (ns.id === p.namespace_id) throw fail('Project is already in this namespace.');
  if (!(await canCreateIn(deps, actor, ns))) throw fail('You don\u0027t have permission to transfer this project to that namespace.');
  const fullPath = `${ns.full_path}/${p.path}`;
  const taken = await pathTaken(deps.db, ns.id, fullPath.toLowerCase(), p.name, p.id);
  if (taken.path || taken.name) throw fail('Project with same name or path in target namespace already exists');
  const now = deps.clock.now();
  const set: Record<string, unknown> = { namespace_id: ns.id, full_path: fullPath, full_path_lower: fullPath.toLowerCase(), updated_at: now };
  // A project may not be more visible than the group it moves into.
  if (ns.kind === 'group' && p.visibility_level > ns.visibility_level) set.visibility_level = ns.visibility_level;
  await deps.db.transaction().execute(async (trx) => {
    const oldGroup = await groupOfProject(trx, p);
    await moveRoute(trx, p, fullPath, now);
    await trx.updateTable('projects').set(set).where('id', '=', p.id).execute();
    // What the project's issues and merge requests carry from the groups it left is re-created in it.
    if (oldGroup) {
      const moved = { id: p.id, namespace_id: ns.id };
      await transferProjectLabels(trx, now, moved);
      await transferProjectMilestones(trx, now, moved, oldGroup);
    }
    if (actor.user) await emitEvent(deps, trx, { type: 'project', action: 'transfer', projectId: p.id, actorId: actor.user.id, oldPathWithNamespace: p.full_path });
  });
  return reload(deps, p.id);
}

export interface ForkInput {
  namespace_id?: string | number;
  namespace_path?: string;
  namespace?: string;
  name?: string;
  path?: string;
  description?: string;
  visibility?: VisibilityName;
  mr_default_target_self?: boolean;
}

export async function forkProject(deps: ServiceDeps, actor: Actor, ctx: ProjectContext, input: ForkInput): Promise<CreatedProject> {
  const src = ctx.project;
  const user = actor.user!;
  const target = input.namespace_id ?? input.namespace_path ?? input.namespace;
  let ns: Namespace | undefined;
  if (target !== undefined && target !== '') {
    ns = await findNamespace(deps, target);
    if (!ns || !(await canReadNamespace(deps, actor, ns))) throw new NotFoundError('Target Namespace');
  } else {
    ns = await personalNamespace(deps, user.id);
    if (!ns) throw new NotFoundError('Target Namespace');
  }
  if (!(await canCreateIn(deps, actor, ns))) throw new NotFoundError('Target Namespace');
  const name = input.name ?? src.name;
  const path = input.path ?? (input.name !== undefined ? pathFromName(input.name) : src.path);
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!NAME_RE.test(name)) add('name', NAME_TEXT);
  const pp = pathProblem(path, 'nested');
  if (pp) add('path', pp);
  // A fork is never more visible than its source or the target group.
  let vis = input.visibility ? Visibility[input.visibility] : src.visibility_level;
  if (vis > src.visibility_level) vis = src.visibility_level;
  if (ns.kind === 'group' && vis > ns.visibility_level) vis = ns.visibility_level;
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const fullPath = `${ns.full_path}/${path}`;
  const taken = await pathTaken(deps.db, ns.id, fullPath.toLowerCase(), name);
  if (taken.name || taken.path) {
    const conflict: Record<string, string[]> = {};
    if (taken.name) conflict.name = ['has already been taken'];
    if (taken.path) conflict.path = ['has already been taken'];
    throw new RuleError('conflict', conflict);
  }
  const now = deps.clock.now();
  const shard = pickStorage(deps.config);
  const settings = settingsOf(src);
  const runners = newRunnersToken();
  const fork = await withStagedRepository(deps, shard, async (staged) => {
    await copyRepository(projectRepositoryPath(deps, src), staged, src.default_branch ?? 'main');
    return src.default_branch;
  }, async (trx) => {
    const row = await trx.insertInto('projects').values({
      namespace_id: ns.id, name, path, full_path: fullPath, full_path_lower: fullPath.toLowerCase(),
      description: input.description ?? src.description, visibility_level: vis, creator_id: user.id, archived: 0,
      default_branch: src.default_branch, repository_storage: shard, repository_read_only: 0, empty_repo: src.empty_repo,
      pending_delete: 0, created_at: now, updated_at: now, last_activity_at: now, forked_from_project_id: src.id,
      issues_access_level: src.issues_access_level, merge_requests_access_level: src.merge_requests_access_level,
      repository_access_level: src.repository_access_level, forking_access_level: src.forking_access_level,
      import_url: null, import_type: null, import_status: 'finished', import_error: null, readme_path: src.readme_path,
      marked_for_deletion_at: null, runners_token_digest: runners.digest,
      settings: JSON.stringify({ ...JSON.parse(src.settings || '{}'), mr_default_target_self: input.mr_default_target_self ?? settings.mr_default_target_self }),
    }).returningAll().executeTakeFirstOrThrow();
    await trx.deleteFrom('redirect_routes').where('path_lower', '=', row.full_path_lower).execute();
    if (ns.kind === 'user') {
      await trx.insertInto('members').values({
        source_type: 'Project', source_id: row.id, user_id: ns.owner_id ?? user.id, access_level: AccessLevel.OWNER,
        expires_at: null, created_by_id: user.id, created_at: now, updated_at: now,
      }).execute();
    }
    const topics = await trx.selectFrom('project_topics').innerJoin('topics', 'topics.id', 'project_topics.topic_id')
      .select('topics.name').where('project_topics.project_id', '=', src.id).execute();
    if (topics.length) await setTopics(trx, row.id, topics.map((t) => t.name), now);
    await trx.updateTable('projects').set((eb) => ({ forks_count: eb('forks_count', '+', 1) })).where('id', '=', src.id).execute();
    return row;
  }, repositoryPath(deps.config, src.repository_storage, src.id, 'wiki'));
  await protectDefaultBranchOnce(deps, fork.id);
  return { ...(await reload(deps, fork.id)), runners_token: runners.token };
}

/** Removes the fork relation; false when there is none (the route answers 304). */
export async function unlinkFork(deps: ServiceDeps, p: Project): Promise<boolean> {
  if (p.forked_from_project_id === null) return false;
  await deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('projects').set({ forked_from_project_id: null, updated_at: deps.clock.now() }).where('id', '=', p.id).execute();
    await trx.updateTable('projects').set((eb) => ({ forks_count: eb('forks_count', '-', 1) })).where('id', '=', p.forked_from_project_id!).execute();
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Share with a group

export async function shareProject(deps: ServiceDeps, actor: Actor, p: Project, input: { group_id: number; group_access: number; expires_at?: string }): Promise<Selectable<DB['project_group_links']>> {
  const group = await deps.db.selectFrom('namespaces').selectAll().where('id', '=', input.group_id).where('kind', '=', 'group')
    .where('pending_delete', '=', 0).executeTakeFirst();
  if (!group || !(await canReadNamespace(deps, actor, group))) throw new NotFoundError('Group');
  if (group.id === p.namespace_id) throw new RuleError('bad_request', { group_id: ['cannot be the group the project belongs to'] });
  const have = await deps.db.selectFrom('project_group_links').select('id').where('project_id', '=', p.id).where('group_id', '=', group.id).executeTakeFirst();
  if (have) throw new ConflictError('Group already shared with this group');
  const now = deps.clock.now();
  const expires = input.expires_at ? Date.parse(`${input.expires_at}T00:00:00Z`) : null;
  if (expires !== null && expires <= now) throw new ValidationError({ expires_at: ['cannot be a date in the past'] });
  return deps.db.insertInto('project_group_links').values({
    project_id: p.id, group_id: group.id, group_access: input.group_access, expires_at: expires, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function unshareProject(deps: ServiceDeps, p: Project, groupId: number): Promise<void> {
  const r = await deps.db.deleteFrom('project_group_links').where('project_id', '=', p.id).where('group_id', '=', groupId).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw new NotFoundError('Group Link');
}

// ---------------------------------------------------------------------------------------------
// Custom attributes (of projects and of groups: one set of rules, one table per owner kind)

const ATTRIBUTE_TABLES = {
  project: { table: 'project_custom_attributes', owner: 'project_id' },
  group: { table: 'group_custom_attributes', owner: 'group_id' },
} as const;
export type AttributeOwner = { kind: keyof typeof ATTRIBUTE_TABLES; id: number };

export async function customAttributes(deps: ServiceDeps, o: AttributeOwner): Promise<Array<{ key: string; value: string }>> {
  const t = ATTRIBUTE_TABLES[o.kind];
  return (deps.db as any).selectFrom(t.table).select(['key', 'value']).where(t.owner, '=', o.id).orderBy('key').execute();
}

export async function customAttributeOr404(deps: ServiceDeps, o: AttributeOwner, key: string): Promise<{ key: string; value: string }> {
  const t = ATTRIBUTE_TABLES[o.kind];
  const row = await (deps.db as any).selectFrom(t.table).select(['key', 'value']).where(t.owner, '=', o.id).where('key', '=', key).executeTakeFirst();
  if (!row) throw new NotFoundError('Custom Attribute');
  return row;
}

export async function deleteCustomAttribute(deps: ServiceDeps, o: AttributeOwner, key: string): Promise<void> {
  const t = ATTRIBUTE_TABLES[o.kind];
  const r = await (deps.db as any).deleteFrom(t.table).where(t.owner, '=', o.id).where('key', '=', key).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw new NotFoundError('Custom Attribute');
}

export async function setCustomAttribute(deps: ServiceDeps, o: AttributeOwner, key: string, value: string): Promise<{ key: string; value: string }> {
  const t = ATTRIBUTE_TABLES[o.kind];
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx: any) => {
    const r = await trx.updateTable(t.table).set({ value, updated_at: now }).where(t.owner, '=', o.id).where('key', '=', key).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) await trx.insertInto(t.table).values({ [t.owner]: o.id, key, value, created_at: now, updated_at: now }).execute();
  });
  return { key, value };
}

export function starrersQuery(deps: ServiceDeps, actor: Actor, projectId: number, search: string | undefined) {
  let q = deps.db.selectFrom('users_star_projects as s').innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u').select(['s.created_at as starred_since', 's.id as star_id'])
    .where('s.project_id', '=', projectId);
  if (!actor.admin) q = q.where((eb) => eb.or([eb('u.private_profile', '=', 0), eb('u.id', '=', actor.user?.id ?? -1)]));
  if (search) {
    const term = String(search);
    q = q.where((eb) => eb.or([containsText('u.username', term), containsText('u.name', term)]));
  }
  return q.orderBy('s.id', 'desc');
}

/** Topics, most used first. */
export function topicsQuery(deps: ServiceDeps, f: { search?: string; withoutProjects?: boolean }) {
  let q = deps.db.selectFrom('topics').selectAll();
  if (f.search) q = q.where(containsText('name_lower', String(f.search)));
  if (f.withoutProjects) q = q.where('total_projects_count', '=', 0);
  return q.orderBy('total_projects_count', 'desc').orderBy('id', 'asc');
}

// ---------------------------------------------------------------------------------------------
// A project's groups and users, its languages

/**
 * GET /projects/:id/groups: the project's group and its ancestors, and with `with_shared` the groups it is shared
 * with (at `shared_min_access_level` or above), as far as the caller may read them; by name.
 */
export function projectGroupsQuery(deps: ServiceDeps, actor: Actor, ns: Namespace, p: Project, f: { search?: string; skip_groups?: number[]; with_shared?: boolean; shared_min_access_level?: number }) {
  const own = ns.kind === 'group' ? ns.traversal.split('/').filter(Boolean).map(Number) : [];
  let q = deps.db.selectFrom('namespaces').selectAll().where('kind', '=', 'group').where((eb) => eb.or([
    eb('id', 'in', own.length ? own : [0]),
    ...(f.with_shared ? [eb('id', 'in', deps.db.selectFrom('project_group_links').select('group_id').where('project_id', '=', p.id)
      .where('group_access', '>=', f.shared_min_access_level ?? 0))] : []),
  ])).where(readableGroups(actor, deps.clock.now()));
  if (f.search) q = q.where((eb) => eb.or([containsText('namespaces.name', f.search!), containsText('namespaces.path', f.search!)]));
  if (f.skip_groups?.length) q = q.where('id', 'not in', f.skip_groups);
  return q.orderBy('name', 'asc').orderBy('id', 'asc');
}

/** GET /projects/:id/users: the users with a membership of the project, of one of its groups, or of a group it is shared with. */
export function projectUsersQuery(deps: ServiceDeps, ns: Namespace, p: Project, f: { search?: string; skip_users?: number[] }) {
  const now = deps.clock.now();
  const groups = ns.kind === 'group' ? ns.traversal.split('/').filter(Boolean).map(Number) : [];
  const db = deps.db;
  let q = db.selectFrom('users').selectAll().where('user_type', '=', 'human').where('id', 'in', db.selectFrom('members as m').select('m.user_id')
    .where((eb) => eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', now)]))
    .where((eb) => eb.or([
      eb.and([eb('m.source_type', '=', 'Project'), eb('m.source_id', '=', p.id)]),
      eb.and([eb('m.source_type', '=', 'Namespace'), eb('m.source_id', 'in', groups.length ? groups : [0])]),
      eb.and([eb('m.source_type', '=', 'Namespace'), eb('m.source_id', 'in', db.selectFrom('project_group_links').select('group_id').where('project_id', '=', p.id))]),
    ])));
  if (f.search) q = q.where((eb) => eb.or([containsText('users.username', f.search!), containsText('users.name', f.search!)]));
  if (f.skip_users?.length) q = q.where('id', 'not in', f.skip_users);
  return q.orderBy('id', 'asc');
}

/** The share of each language in the default branch, largest first, as the reference answers it. */
export async function projectLanguages(deps: ServiceDeps, projectId: number): Promise<Record<string, number>> {
  const rows = await deps.db.selectFrom('project_languages').select(['name', 'share']).where('project_id', '=', projectId).orderBy('share', 'desc').orderBy('name').execute();
  return Object.fromEntries(rows.map((r) => [r.name, Math.round(Number(r.share) * 100) / 100]));
}

// ---------------------------------------------------------------------------------------------
// Topics (administrators)

export async function topicOr404(deps: ServiceDeps, id: number): Promise<Selectable<DB['topics']>> {
  const t = await deps.db.selectFrom('topics').selectAll().where('id', '=', id).executeTakeFirst();
  if (!t) throw new NotFoundError('Topic');
  return t;
}

export interface TopicInput { name?: string; title?: string; description?: string; avatar?: UploadedFile | null }

async function checkTopic(deps: ServiceDeps, input: TopicInput, exceptId?: number): Promise<void> {
  const errors: Record<string, string[]> = {};
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (!name) (errors.name ??= []).push("can't be blank");
    else if (name.length > 255) (errors.name ??= []).push('is too long (maximum is 255 characters)');
    else {
      const taken = await deps.db.selectFrom('topics').select('id').where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
      if (taken && taken.id !== exceptId) (errors.name ??= []).push('has already been taken');
    }
  }
  if (input.title !== undefined && !input.title.trim()) (errors.title ??= []).push("can't be blank");
  if (input.title !== undefined && input.title.length > 255) (errors.title ??= []).push('is too long (maximum is 255 characters)');
  if (input.description !== undefined && input.description.length > 1024) (errors.description ??= []).push('is too long (maximum is 1024 characters)');
  if (Object.keys(errors).length) throw new ValidationError(errors);
  checkAvatar(input.avatar);
}

export async function createTopic(deps: ServiceDeps, input: TopicInput & { name: string; title: string }): Promise<Selectable<DB['topics']>> {
  await checkTopic(deps, input);
  const now = deps.clock.now();
  const name = input.name.trim();
  return withAvatar(deps.config.dataDir, 'topic', input.avatar ?? undefined, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('topics').values({
      name, name_lower: name.toLowerCase(), title: input.title, description: input.description ?? null, total_projects_count: 0, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow();
    await applyAvatar(trx, row.id);
    return trx.selectFrom('topics').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  })).catch((e) => {
    if (isUniqueViolation(e)) throw new ValidationError({ name: ['has already been taken'] });
    throw e;
  });
}

export async function updateTopic(deps: ServiceDeps, t: Selectable<DB['topics']>, input: TopicInput): Promise<Selectable<DB['topics']>> {
  await checkTopic(deps, input, t.id);
  const set: Record<string, unknown> = { updated_at: deps.clock.now() };
  if (input.name !== undefined) Object.assign(set, { name: input.name.trim(), name_lower: input.name.trim().toLowerCase() });
  if (input.title !== undefined) set.title = input.title;
  if (input.description !== undefined) set.description = input.description;
  return withAvatar(deps.config.dataDir, 'topic', input.avatar, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('topics').set(set).where('id', '=', t.id).execute();
    await applyAvatar(trx, t.id);
    return trx.selectFrom('topics').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
  }));
}

/** Removes a topic from every project that carries it, then the topic and its avatar. */
export async function deleteTopic(deps: ServiceDeps, t: Selectable<DB['topics']>): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('project_topics').where('topic_id', '=', t.id).execute();
    await trx.deleteFrom('topics').where('id', '=', t.id).execute();
  });
  await removeAvatar(deps.config.dataDir, 'topic', t.id);
}
