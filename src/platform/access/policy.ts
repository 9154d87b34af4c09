import { storedSettings } from '../project-rows.ts';
import { AccessLevel, type NamespaceRow, type ProjectRow } from '../membership.ts';
import type { Actor } from './actor.ts';

// What a caller may do with a project or a group, decided in one place. Every ability is a row of a table:
// the role it needs, the project feature it belongs to, and whether an archived project or a read-only
// repository refuses it. Callers ask `projectDenial` / `groupDenial`: null when allowed, otherwise why not,
// so that the HTTP layer answers 404 where the caller cannot even read and 403 where it can read but not act.

/** Feature access levels, as stored: disabled, private (members only), enabled (whoever reads the project), public. */
export const FEATURE_LEVEL = { disabled: 0, private: 10, enabled: 20, public: 30 } as const;
export type FeatureLevelName = keyof typeof FEATURE_LEVEL;

export type ProjectFeature = 'repository' | 'issues' | 'merge_requests' | 'forking' | 'wiki' | 'snippets' | 'builds' | 'pages';

const COLUMN_FEATURES = new Set<ProjectFeature>(['repository', 'issues', 'merge_requests', 'forking']);

/** The role a member needs when a feature is private to members (PRIVATE_FEATURES_MIN_ACCESS_LEVEL in the reference). */
function featureMinimum(feature: ProjectFeature, project: Pick<ProjectRow, 'visibility_level'>): number {
  if (feature === 'merge_requests') return AccessLevel.REPORTER;
  if (feature === 'repository' && project.visibility_level < 10) return AccessLevel.REPORTER;
  return AccessLevel.GUEST;
}

export type PolicyProject = Pick<ProjectRow, 'visibility_level' | 'archived' | 'repository_read_only' | 'settings'
  | 'repository_access_level' | 'issues_access_level' | 'merge_requests_access_level' | 'forking_access_level'>;

/** The stored level of a feature: a column for the filtered ones, a name in `settings` for the others (default enabled). */
export function featureLevel(p: PolicyProject, feature: ProjectFeature): number {
  if (COLUMN_FEATURES.has(feature)) return p[`${feature}_access_level` as 'repository_access_level'];
  const name = storedSettings(p)[`${feature}_access_level`];
  const stored = typeof name === 'string' ? FEATURE_LEVEL[name as FeatureLevelName] : undefined;
  return stored ?? settingFeatureDefault(feature);
}

/** The level of a feature kept in `settings` when none is stored (or an unknown name is). */
export function settingFeatureDefault(feature: ProjectFeature): number {
  return feature === 'pages' ? FEATURE_LEVEL.private : FEATURE_LEVEL.enabled;
}

/** The reference's feature rule: disabled for everyone, private for members from the feature's minimum role (and administrators). */
export function featureAvailable(actor: Actor, p: PolicyProject, feature: ProjectFeature, level: number): boolean {
  const stored = featureLevel(p, feature);
  if (stored >= FEATURE_LEVEL.enabled) return true;
  if (stored >= FEATURE_LEVEL.private) return actor.admin || level >= featureMinimum(feature, p);
  return false;
}

/** Visibility alone: public to all, internal to signed-in users who are not external, private to members; administrators read all. */
export function canReadVisibility(actor: Actor, visibilityLevel: number, level: number): boolean {
  if (actor.admin) return true;
  if (visibilityLevel >= 20) return true;
  if (visibilityLevel >= 10 && actor.user && !actor.user.external) return true;
  return level >= AccessLevel.GUEST;
}

/**
 * min: lowest role (administrators pass); feature: whose access level applies; anyFeature: at least one of these features
 * must be available to the caller (labels and milestones serve issues and merge requests); code: needs the repository feature and,
 * in a private project, Reporter; user: signed in; write: refused when archived; repositoryWrite: refused when read-only.
 */
interface ProjectRule { min?: number; feature?: ProjectFeature; anyFeature?: ProjectFeature[]; code?: boolean; user?: boolean; write?: boolean; repositoryWrite?: boolean }

const G = AccessLevel;
export const PROJECT_ABILITIES = {
  read_project: {},
  download_code: { code: true },
  push_code: { code: true, min: G.DEVELOPER, write: true, repositoryWrite: true },
  read_protected_branch: { code: true, min: G.REPORTER },
  read_issue: { feature: 'issues' },
  create_issue: { feature: 'issues', user: true, write: true },
  admin_issue: { feature: 'issues', min: G.REPORTER, write: true },
  destroy_issue: { feature: 'issues', min: G.OWNER },
  read_label: { anyFeature: ['issues', 'merge_requests'] },
  admin_label: { anyFeature: ['issues', 'merge_requests'], min: G.REPORTER, write: true },
  read_milestone: { anyFeature: ['issues', 'merge_requests'] },
  admin_milestone: { anyFeature: ['issues', 'merge_requests'], min: G.REPORTER, write: true },
  read_iteration: {},
  // Setting an issue's iid, created_at or updated_at by hand (imports): owners and administrators.
  set_issue_iid: { feature: 'issues', min: G.OWNER, write: true },
  set_issue_created_at: { feature: 'issues', min: G.OWNER, write: true },
  set_issue_updated_at: { feature: 'issues', min: G.OWNER, write: true },
  upload_file: { user: true, write: true },
  read_merge_request: { feature: 'merge_requests', code: true },
  create_merge_request: { feature: 'merge_requests', code: true, min: G.DEVELOPER, write: true },
  // Editing any merge request (an author or assignee edits their own: mergeRequestDenial), approving, deleting.
  update_merge_request: { feature: 'merge_requests', code: true, min: G.DEVELOPER, write: true },
  admin_merge_request: { feature: 'merge_requests', code: true, min: G.DEVELOPER, write: true },
  approve_merge_request: { feature: 'merge_requests', code: true, min: G.DEVELOPER, write: true },
  destroy_merge_request: { feature: 'merge_requests', code: true, min: G.OWNER },
  read_wiki: { feature: 'wiki' },
  create_wiki: { feature: 'wiki', min: G.DEVELOPER, write: true },
  admin_wiki: { feature: 'wiki', min: G.MAINTAINER, write: true },
  read_snippet: { feature: 'snippets' },
  create_snippet: { feature: 'snippets', min: G.REPORTER, write: true },
  admin_snippet: { feature: 'snippets', min: G.MAINTAINER, write: true },
  fork_project: { feature: 'forking', code: true, user: true },
  admin_feature_flags_user_lists: { min: G.DEVELOPER },
  admin_operations: { min: G.MAINTAINER },
  // Alerts from monitoring tools and their metric images: both in the reference's Developer block.
  read_alert_management_alert: { min: G.DEVELOPER },
  update_alert_management_alert: { min: G.DEVELOPER, write: true },
  admin_project: { min: G.MAINTAINER },
  // Content by Reporters and up (and administrators) is trusted: no spam check (platform/spam).
  skip_spam_check: { min: G.REPORTER },
  // Project webhooks: listing, creating, changing, testing and removing them (the reference's admin_web_hook).
  admin_web_hook: { min: G.MAINTAINER },
  archive_project: { min: G.MAINTAINER },
  change_namespace: { min: G.OWNER },
  remove_fork_project: { min: G.OWNER },
  remove_project: { min: G.OWNER },
} satisfies Record<string, ProjectRule>;

export type ProjectAbility = keyof typeof PROJECT_ABILITIES;

/** Why an ability is refused: the project stays hidden, the caller lacks the right, or the project's state refuses it. */
export type Denial = 'not_found' | 'forbidden' | 'archived' | 'read_only';

/**
 * Null when the caller may exercise `ability` on the project, else the reason. `level` is the caller's
 * effective membership level (0 when none); administrators count as Owner.
 */
export function projectDenial(actor: Actor, ability: ProjectAbility, p: PolicyProject, level: number): Denial | null {
  if (!canReadVisibility(actor, p.visibility_level, level)) return 'not_found';
  const rule: ProjectRule = PROJECT_ABILITIES[ability];
  const role = actor.admin ? AccessLevel.OWNER : level;
  if (rule.user && !actor.user) return 'forbidden';
  if (rule.feature && !featureAvailable(actor, p, rule.feature, level)) return 'forbidden';
  if (rule.anyFeature && !rule.anyFeature.some((f) => featureAvailable(actor, p, f, level))) return 'forbidden';
  if (rule.code && !featureAvailable(actor, p, 'repository', level)) return 'forbidden';
  if (rule.code && p.visibility_level < 10 && role < AccessLevel.REPORTER) return 'forbidden';
  if (rule.min !== undefined && role < rule.min) return 'forbidden';
  if (rule.write && p.archived) return 'archived';
  if (rule.repositoryWrite && p.repository_read_only) return 'read_only';
  return null;
}

export const canProject = (actor: Actor, ability: ProjectAbility, p: PolicyProject, level: number) => !projectDenial(actor, ability, p, level);

/**
 * Whether the caller's content skips the spam check: administrators always, members with `skip_spam_check` in the
 * project the content belongs to; content outside any project (a personal snippet) is checked for everyone else.
 */
export function skipsSpamCheck(actor: Actor, p: PolicyProject | null, level: number): boolean {
  if (actor.admin) return true;
  return p ? canProject(actor, 'skip_spam_check', p, level) : false;
}

/**
 * Abilities over the installation itself rather than one project or group, and who holds each. Routes declare them
 * (`instance: { ability }`): a caller without the ability is refused with 403 (anonymous callers 401 before that).
 */
export const INSTANCE_ABILITIES = {
  // The spam log: reading it, marking a row as not spam, removing a row or its author (the reference's admin pages).
  admin_spam_log: (actor: Actor) => actor.admin,
} as const;

export type InstanceAbility = keyof typeof INSTANCE_ABILITIES;

export function instanceDenial(actor: Actor, ability: InstanceAbility): Denial | null {
  return INSTANCE_ABILITIES[ability](actor) ? null : 'forbidden';
}

/** A deploy key's link to a project (`deploy_keys_projects`), or null when the key is not enabled there. */
export interface DeployKeyLink { can_push: number }

/**
 * What a deploy key may do with a project's repository over SSH. It acts only for the projects it is enabled on
 * (elsewhere the project stays hidden, public or not); there it reads the code whatever the project's visibility
 * and the repository feature's member restriction (a maintainer enabled it), unless the repository feature is
 * disabled; it pushes where the link allows pushing, and then the archived and read-only rules of `push_code` apply.
 */
export function deployKeyDenial(ability: 'download_code' | 'push_code', p: PolicyProject, link: DeployKeyLink | null): Denial | null {
  if (!link) return 'not_found';
  if (featureLevel(p, 'repository') <= FEATURE_LEVEL.disabled) return 'forbidden';
  if (ability === 'download_code') return null;
  if (!link.can_push) return 'forbidden';
  if (p.archived) return 'archived';
  if (p.repository_read_only) return 'read_only';
  return null;
}

type PolicyGroup = Pick<NamespaceRow, 'visibility_level' | 'project_creation_level' | 'subgroup_creation_level'>;

/** The role each group ability needs, some by the group's own settings; administrators hold them all. */
const CREATION_MIN: Record<string, number> = { noone: Infinity, administrator: Infinity, owner: G.OWNER, maintainer: G.MAINTAINER };
export const GROUP_ABILITIES = {
  read_group: () => 0,
  admin_group: () => G.OWNER,
  create_projects: (g: PolicyGroup) => CREATION_MIN[g.project_creation_level] ?? G.DEVELOPER,
  create_subgroup: (g: PolicyGroup) => (g.subgroup_creation_level === 'owner' ? G.OWNER : G.MAINTAINER),
  read_label: () => 0,
  admin_label: () => G.REPORTER,
  read_milestone: () => 0,
  admin_milestone: () => G.REPORTER,
  read_iteration: () => 0,
  admin_iteration: () => G.REPORTER,
  // Group hooks: listing, creating, changing, testing and removing them (the reference's group admin_web_hook, Owner).
  admin_web_hook: () => G.OWNER,
} satisfies Record<string, (g: PolicyGroup) => number>;

export type GroupAbility = keyof typeof GROUP_ABILITIES;

export function groupDenial(actor: Actor, ability: GroupAbility, g: PolicyGroup, level: number): Denial | null {
  if (!canReadVisibility(actor, g.visibility_level, level)) return 'not_found';
  return actor.admin || level >= GROUP_ABILITIES[ability](g) ? null : 'forbidden';
}

export const canGroup = (actor: Actor, ability: GroupAbility, g: PolicyGroup, level: number) => !groupDenial(actor, ability, g, level);

// ---- notes ---------------------------------------------------------------------------------------------------
// Rules for the notes of a noteable (an issue, a merge request) the caller can already read: whether it may read
// that noteable was decided by the noteable's own ability (and, for an issue, its confidentiality).

export type NoteAction = 'create' | 'read_internal' | 'mark_internal' | 'set_created_at' | 'admin' | 'resolve';

export interface NoteSubject {
  /** The noteable's discussion is locked: only project members may take part. */
  locked: boolean;
  /** The note acted on (for `admin`): its author and whether the server wrote it. */
  note?: { authorId: number | null; system: boolean };
  /** The noteable's author (for `resolve`). */
  noteableAuthorId?: number | null;
}

/**
 * Null when the caller may do `action` on the notes of a noteable in project `p`, else why not. Locked
 * discussions take comments from members only; internal notes are for Reporters and up; a note is edited or
 * deleted by its author or a Maintainer, and a system note by nobody; threads are resolved by the noteable's author
 * or a Developer and up; an archived project takes no notes.
 */
export function noteDenial(actor: Actor, action: NoteAction, p: Pick<PolicyProject, 'archived'>, level: number, s: NoteSubject): Denial | null {
  const role = actor.admin ? AccessLevel.OWNER : level;
  const member = role >= AccessLevel.GUEST;
  switch (action) {
    case 'read_internal':
    case 'mark_internal':
      return role >= AccessLevel.REPORTER ? null : 'forbidden';
    case 'set_created_at':
      return role >= AccessLevel.OWNER ? null : 'forbidden';
    case 'create':
      if (!actor.user || (s.locked && !member)) return 'forbidden';
      return p.archived ? 'archived' : null;
    case 'admin': {
      if (!actor.user || !s.note || s.note.system) return 'forbidden';
      const author = s.note.authorId === actor.user.id && (!s.locked || member);
      if (!author && role < AccessLevel.MAINTAINER) return 'forbidden';
      return p.archived ? 'archived' : null;
    }
    case 'resolve': {
      // A thread is resolved by the noteable's author or a Developer and up (the reference's resolve_note).
      if (!actor.user) return 'forbidden';
      if (s.noteableAuthorId !== actor.user.id && role < AccessLevel.DEVELOPER) return 'forbidden';
      return p.archived ? 'archived' : null;
    }
  }
}
/** What the issue rules read of an issue: its author, its assignees and whether it is confidential. */
export interface PolicyIssue {
  author_id: number | null;
  confidential: number;
  assigneeIds: readonly number[];
}

/**
 * Issue-level abilities on top of the project's: `read_issue` hides a confidential issue (exactly like a missing one)
 * from everyone but its author, its assignees, Reporters and above, and administrators; `update_issue` is the author's
 * or `admin_issue`'s (Reporter+); `destroy_issue` the project row's (Owner, administrators).
 */
export type IssueAbility = 'read_issue' | 'update_issue' | 'destroy_issue';

/** Whether the caller reads a confidential issue (the project's `read_issue` aside). */
export function readsConfidentialIssue(actor: Actor, level: number, issue: PolicyIssue): boolean {
  if (!issue.confidential || actor.admin || level >= AccessLevel.REPORTER) return true;
  const uid = actor.user?.id;
  return uid !== undefined && (issue.author_id === uid || issue.assigneeIds.includes(uid));
}

export function issueDenial(actor: Actor, ability: IssueAbility, p: PolicyProject, level: number, issue: PolicyIssue): Denial | null {
  const read = projectDenial(actor, 'read_issue', p, level);
  if (read) return read;
  if (!readsConfidentialIssue(actor, level, issue)) return 'not_found';
  if (ability === 'read_issue') return null;
  if (ability === 'destroy_issue') return projectDenial(actor, 'destroy_issue', p, level);
  const admin = projectDenial(actor, 'admin_issue', p, level);
  if (!admin) return null;
  if (actor.user && issue.author_id === actor.user.id) return projectDenial(actor, 'create_issue', p, level);
  return admin;
}

export const canIssue = (actor: Actor, ability: IssueAbility, p: PolicyProject, level: number, issue: PolicyIssue) =>
  !issueDenial(actor, ability, p, level, issue);

// ---- merge requests ------------------------------------------------------------------------------------------

/** What the merge request rules read of a merge request: its author and assignees, and whether it is open. */
export interface PolicyMergeRequest {
  author_id: number | null;
  assigneeIds: readonly number[];
  state: string;
}

/**
 * Merge-request-level abilities on top of the project's: `update_merge_request` is `admin_merge_request`'s
 * (Developer+) or the author's or an assignee's who reads the merge request (a fork's contributor edits their own);
 * `approve_merge_request` is refused on a merged or closed one, and to its author unless the project's
 * `merge_requests_author_approval` allows it; `destroy_merge_request` is the project row's (Owner, administrators).
 */
export type MergeRequestAbility = 'read_merge_request' | 'update_merge_request' | 'approve_merge_request' | 'destroy_merge_request';

export function mergeRequestDenial(actor: Actor, ability: MergeRequestAbility, p: PolicyProject, level: number, mr: PolicyMergeRequest): Denial | null {
  const read = projectDenial(actor, 'read_merge_request', p, level);
  if (read) return read;
  if (ability === 'read_merge_request') return null;
  if (ability === 'destroy_merge_request') return projectDenial(actor, 'destroy_merge_request', p, level);
  if (ability === 'approve_merge_request') {
    const approve = projectDenial(actor, 'approve_merge_request', p, level);
    if (approve) return approve;
    if (mr.state !== 'opened') return 'forbidden';
    if (actor.user && mr.author_id === actor.user.id && storedSettings(p).merge_requests_author_approval !== true) return 'forbidden';
    return null;
  }
  const admin = projectDenial(actor, 'admin_merge_request', p, level);
  if (!admin) return null;
  const uid = actor.user?.id;
  if (uid !== undefined && (mr.author_id === uid || mr.assigneeIds.includes(uid))) return p.archived ? 'archived' : null;
  return admin;
}

export const canMergeRequest = (actor: Actor, ability: MergeRequestAbility, p: PolicyProject, level: number, mr: PolicyMergeRequest) =>
  !mergeRequestDenial(actor, ability, p, level, mr);

/** What the collaboration rule reads of a merge request from a fork. */
export interface PolicyCollaboration {
  allow_collaboration: number;
  state: string;
  target: Pick<PolicyProject, 'visibility_level'> & { id: number };
  source: Pick<PolicyProject, 'visibility_level'> & { id: number };
  /** A protection of the source project matches the source branch. */
  sourceBranchProtected: boolean;
  /** The caller may push or merge into the target branch of the target project (`can_update_branch?`). */
  updatesTargetBranch: boolean;
}

/**
 * The reference's `collaborative_push_possible?`: a merge request from a fork, both projects public or internal, no
 * protection of the source project covering the source branch. Whatever its author stored, the merge request's
 * `allow_collaboration` is false otherwise (the entity shows that), and nobody may turn it on.
 */
export function collaborativePushPossible(m: Pick<PolicyCollaboration, 'target' | 'source' | 'sourceBranchProtected'>): boolean {
  return m.target.id !== m.source.id && m.target.visibility_level > 0 && m.source.visibility_level > 0 && !m.sourceBranchProtected;
}

/** The merge request's effective `allow_collaboration`: stored on and possible (the reference's `allow_collaboration`). */
export function collaborationAllowed(m: Pick<PolicyCollaboration, 'allow_collaboration' | 'target' | 'source' | 'sourceBranchProtected'>): boolean {
  return m.allow_collaboration === 1 && collaborativePushPossible(m);
}

/**
 * The reference's `can_allow_collaboration?`: the caller may set `allow_collaboration` only when collaboration is
 * possible and the caller may push code to the source project (`pushesSource`); otherwise the value is ignored.
 */
export function mayAllowCollaboration(m: Pick<PolicyCollaboration, 'target' | 'source' | 'sourceBranchProtected'>, pushesSource: boolean): boolean {
  return pushesSource && collaborativePushPossible(m);
}

/**
 * The reference's collaborative push (`branch_allows_collaboration?`): someone who may update an open merge
 * request's target branch may push to its source branch in the fork when the author allowed collaboration, both
 * projects are public or internal and no protection covers the source branch. Any one such merge request suffices.
 * Over git this is the only way into a project a caller may not push to, and only to such a branch.
 */
export function collaborationAllowsPush(mrs: readonly PolicyCollaboration[]): boolean {
  return mrs.some((m) => m.state === 'opened' && collaborationAllowed(m) && m.updatesTargetBranch);
}
// ---- snippets ------------------------------------------------------------------------------------------------

/** What the snippet rules read of a snippet: its author, visibility and whether it belongs to a project. */
export interface PolicySnippet {
  author_id: number;
  visibility_level: number;
  project_id: number | null;
  /** 1 while its repository moves between shards: no edit, no push. */
  repository_read_only?: number;
}

/**
 * `read_snippet`: see it (and clone it); `update_snippet`: edit it (and push to it); `admin_snippet`: delete it.
 */
export type SnippetAbility = 'read_snippet' | 'update_snippet' | 'admin_snippet';

/**
 * Snippet-level rules. A personal snippet (no project): public to all, internal to signed-in users who are not
 * external, private to its author; only its author (or an administrator) edits or deletes it. A project snippet
 * also needs the project's `read_snippet` (the snippets feature): then public to whoever reads the project,
 * internal as above or to members, private to members and its author; its author edits and deletes it while still
 * allowed to create snippets there, Maintainers (`admin_snippet`) edit and delete any. While its repository moves
 * between shards nobody edits it (`read_only`).
 */
export function snippetDenial(actor: Actor, ability: SnippetAbility, s: PolicySnippet, project: PolicyProject | null, level: number): Denial | null {
  const denial = snippetRoleDenial(actor, ability, s, project, level);
  if (!denial && ability === 'update_snippet' && s.repository_read_only) return 'read_only';
  return denial;
}

function snippetRoleDenial(actor: Actor, ability: SnippetAbility, s: PolicySnippet, project: PolicyProject | null, level: number): Denial | null {
  const uid = actor.user?.id;
  const author = uid !== undefined && s.author_id === uid;
  if (!project) {
    if (!actor.admin && !author && !(s.visibility_level >= 20 || (s.visibility_level >= 10 && actor.user && !actor.user.external))) return 'not_found';
    return ability === 'read_snippet' || author || actor.admin ? null : 'forbidden';
  }
  const read = projectDenial(actor, 'read_snippet', project, level);
  if (read) return read;
  const member = level >= AccessLevel.GUEST;
  const sees = actor.admin || author || member || s.visibility_level >= 20 || (s.visibility_level >= 10 && !!actor.user && !actor.user.external);
  if (!sees) return 'not_found';
  if (ability === 'read_snippet') return null;
  if (!projectDenial(actor, 'admin_snippet', project, level)) return null;
  if (author) return projectDenial(actor, 'create_snippet', project, level);
  return projectDenial(actor, 'admin_snippet', project, level);
}
