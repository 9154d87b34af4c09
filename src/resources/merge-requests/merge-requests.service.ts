import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { attributeChanges, emitEvent, listChange, type Changes } from '../../platform/events.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { MergeRequestsTable, MilestonesTable } from '../../platform/db/schema.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { nextIid } from '../../platform/db/internal-ids.ts';
import { projectAccessLevels, AccessLevel, type ProjectRow } from '../../platform/membership.ts';
import {
  canProject, collaborationAllowed, mayAllowCollaboration, mergeRequestDenial, projectDenial, type MergeRequestAbility,
} from '../../platform/access/policy.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { ForbiddenError, NotFoundError, RecordNotFoundError, RuleError, ValidationError } from '../../platform/errors.ts';
import type { Repository } from '../../platform/git/repository.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { checkSpam } from '../../platform/spam/spam-check.ts';
import { labelsOfTargets, projectAncestorGroupIds, type LabelRow } from '../labels/labels.lookup.ts';
import {
  changeLabels, deleteDependents, textErrors, votesOf, existingUserIds, milestoneAvailable, setNoteableSubscription, timeSpentOf, writeMilestoneEvent, writeStateEvent,
} from '../noteables/noteables.service.ts';
import { usersByIds, type User } from '../users/users.service.ts';
import { userNotesCounts, writeSystemNote } from '../notes/notes.service.ts';
import { mergeRequestNoteable, writeMergeRequestSystemNotes } from '../notes/system-notes.ts';
import { repoFor } from '../repository/repository.common.ts';
import { cachedBranchRules, entriesAllow, matching } from '../repository/protection.ts';
import { mergeabilityFields, type MergeabilityFields } from './mergeability.ts';

// Merge requests: finding one for a caller (the merge-request-level rules of the policy), creating one on the
// repositories (the head ref `refs/merge-requests/<iid>/head` and the first diff version), and what the entities show.

export type MergeRequestRow = Selectable<MergeRequestsTable>;
export const MERGE_REQUEST = 'MergeRequest';
export { TITLE_MAX, DESCRIPTION_MAX } from '../noteables/noteables.service.ts';

/** The project a merge request request runs in (the target project) and the caller's effective level there. */
export interface MergeRequestScope {
  actor: Actor;
  project: ProjectRow;
  level: number;
}

/** The reference's draft prefixes of a title: "Draft:", "[Draft]", "(Draft)", any case. */
const DRAFT_PREFIX = /^\s*(\[draft\]|\(draft\)|draft:)\s*/i;
export const isDraftTitle = (title: string) => DRAFT_PREFIX.test(title);
export const headRef = (iid: number) => `refs/merge-requests/${iid}/head`;

export async function userIdsOf(db: Db, table: 'merge_request_assignees' | 'merge_request_reviewers', ids: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db.selectFrom(table).select(['merge_request_id', 'user_id']).where('merge_request_id', 'in', ids).orderBy('created_at').orderBy('user_id').execute();
  for (const r of rows) out.get(r.merge_request_id)!.push(r.user_id);
  return out;
}

/** Whether the caller may `ability` the merge request; the policy decides, this only reads what it needs. */
export async function mergeRequestDenialFor(db: Db, scope: MergeRequestScope, mr: MergeRequestRow, ability: MergeRequestAbility) {
  const assigneeIds = ability === 'update_merge_request' ? (await userIdsOf(db, 'merge_request_assignees', [mr.id])).get(mr.id)! : [];
  return mergeRequestDenial(scope.actor, ability, scope.project, scope.level, { ...mr, assigneeIds });
}

/** The project's merge request by iid, held to `ability`: "404 Not found" when missing or hidden, 403 when refused. */
export async function findMergeRequest(deps: ServiceDeps, scope: MergeRequestScope, iid: number, ability: MergeRequestAbility = 'read_merge_request'): Promise<MergeRequestRow> {
  if (!fitsIntColumn(iid)) throw new RecordNotFoundError();
  const mr = await deps.db.selectFrom('merge_requests').selectAll().where('target_project_id', '=', scope.project.id).where('iid', '=', iid).executeTakeFirst();
  if (!mr) throw new RecordNotFoundError();
  const denial = await mergeRequestDenialFor(deps.db, scope, mr, ability);
  if (denial === 'not_found') throw new RecordNotFoundError();
  if (denial) throw new ForbiddenError();
  return mr;
}

/** The latest diff version of a merge request (null for one made before it had any). */
export async function latestDiff(db: Db, mr: MergeRequestRow) {
  if (mr.latest_diff_id === null) return null;
  return (await db.selectFrom('merge_request_diffs').selectAll().where('id', '=', mr.latest_diff_id).executeTakeFirst()) ?? null;
}

// ---------------------------------------------------------------------------------------------------------------
// Creating

export interface MergeRequestInput {
  title?: string;
  description?: string | null;
  source_branch?: string;
  target_branch?: string;
  target_project_id?: number;
  assignee_ids?: number[];
  reviewer_ids?: number[];
  labels?: string[];
  add_labels?: string[];
  remove_labels?: string[];
  milestone_id?: number | null;
  remove_source_branch?: boolean;
  squash?: boolean;
  allow_collaboration?: boolean;
  discussion_locked?: boolean | null;
  state_event?: 'close' | 'reopen';
}

function validateText(input: MergeRequestInput, creating: boolean): void {
  const errors = textErrors(input, creating);
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

/** The root of a project's fork network (itself when it is no fork), following `forked_from_project_id`. */
async function forkRoot(db: Db, projectId: number): Promise<number> {
  let id = projectId;
  for (let i = 0; i < 100; i++) {
    const row = await db.selectFrom('projects').select('forked_from_project_id').where('id', '=', id).executeTakeFirst();
    if (!row || row.forked_from_project_id === null) return id;
    id = row.forked_from_project_id;
  }
  return id;
}

/** The caller's effective level in another project (administrators count as Owner). */
export async function levelIn(db: Db, actor: Actor, project: ProjectRow): Promise<number> {
  if (actor.admin) return AccessLevel.OWNER;
  if (!actor.user) return 0;
  return (await projectAccessLevels(db, actor.user.id, [project])).get(project.id)?.effective ?? 0;
}

/** Sets labels, assignees, reviewers and milestone only with the project's `admin_merge_request` (Developer+), as the reference. */
export const metadataAllowed = (scope: MergeRequestScope) => canProject(scope.actor, 'admin_merge_request', scope.project, scope.level);

/**
 * Creates a merge request from the source project (`source` scope: the URL's project) into `target_project_id`
 * (default: the same project). Refusals as the reference: the same branch in the same project (422), a target
 * outside the source's fork network (422), a missing branch (422), an open merge request for the same branches
 * (409). The first diff version is recorded with the row, from git answers asked before its transaction; the head
 * ref follows the commit.
 */
export async function createMergeRequest(deps: ServiceDeps, source: MergeRequestScope, input: MergeRequestInput, repos: { source: Repository; target: (p: ProjectRow) => Repository }): Promise<{ mr: MergeRequestRow; scope: MergeRequestScope }> {
  validateText(input, true);
  const sourceProject = source.project;
  let target: MergeRequestScope = source;
  if (input.target_project_id !== undefined && input.target_project_id !== sourceProject.id) {
    const p = fitsIntColumn(input.target_project_id) ? await liveProjectById(deps, input.target_project_id) : undefined;
    if (!p) throw new NotFoundError('Project');
    const level = await levelIn(deps.db, source.actor, p);
    const denial = projectDenial(source.actor, 'read_merge_request', p, level);
    if (denial === 'not_found') throw new NotFoundError('Project');
    if (denial) throw new ForbiddenError();
    if ((await forkRoot(deps.db, p.id)) !== (await forkRoot(deps.db, sourceProject.id))) {
      throw new RuleError('unprocessable', ['Source project is not a fork of the target project']);
    }
    target = { actor: source.actor, project: p, level };
  }
  const sourceBranch = input.source_branch ?? '';
  const targetBranch = input.target_branch ?? '';
  if (target.project.id === sourceProject.id && sourceBranch === targetBranch) {
    throw new RuleError('unprocessable', ["You can't use same project/branch for source and target"]);
  }
  const targetRepo = repos.target(target.project);
  const forked = target.project.id !== sourceProject.id;
  const allowCollaboration = forked && !!input.allow_collaboration
    && (await mayAllowCollaborationBy(deps, source.actor, { project: sourceProject, level: source.level }, target.project, sourceBranch));
  // Git answers first, outside the transaction: on SQLite it holds the database's write lock, which no git process
  // may keep waiting. Both heads in one read when both branches are in one repository.
  const [sourceHeads, targetHeads] = forked
    ? await Promise.all([repos.source.branchHeads([sourceBranch]), targetRepo.branchHeads([targetBranch])])
    : await targetRepo.branchHeads([sourceBranch, targetBranch]).then((h) => [h, h]);
  const sourceHead = sourceHeads.get(sourceBranch);
  if (!sourceHead) throw new RuleError('unprocessable', [`Source branch "${sourceBranch}" does not exist`]);
  const targetHead = targetHeads.get(targetBranch);
  if (!targetHead) throw new RuleError('unprocessable', [`Target branch "${targetBranch}" does not exist`]);
  // A fork's commits reach the target repository by fetch, under a staging ref until the head ref (named by the iid
  // the transaction takes) is written.
  const staging = forked ? `refs/tmp/merge-requests/${randomUUID()}` : null;
  const head = staging ? await targetRepo.fetchBranchInto(repos.source.path, sourceBranch, staging) : sourceHead;
  const version = await firstVersion(targetRepo, targetHead, head);

  const now = deps.clock.now();
  const groupIds = await projectAncestorGroupIds(deps.db, target.project);
  const meta = metadataAllowed(target);
  const title = input.title!.trim();
  await checkSpam(deps, source.actor, { kind: 'MergeRequest', project: target.project, level: target.level, before: null, change: input });
  const mr = await deps.db.transaction().execute(async (trx) => {
    // The iid first: on PostgreSQL its counter row stays locked until the commit, so a concurrent creation for the
    // same branches waits here and then sees this one's row.
    const iid = await nextIid(trx, 'merge_requests', target.project.id);
    const open = await trx.selectFrom('merge_requests').select('iid').where('target_project_id', '=', target.project.id)
      .where('source_project_id', '=', sourceProject.id).where('source_branch', '=', sourceBranch).where('target_branch', '=', targetBranch)
      .where('state', '=', 'opened').executeTakeFirst();
    if (open) throw new RuleError('conflict', [`Another open merge request already exists for this source branch: !${open.iid}`]);
    const milestoneId = meta && input.milestone_id ? ((await milestoneAvailable(trx, target.project.id, groupIds, input.milestone_id)) ? input.milestone_id : null) : null;
    const row = await trx.insertInto('merge_requests').values({
      target_project_id: target.project.id, iid, target_branch: targetBranch, source_project_id: sourceProject.id, source_branch: sourceBranch,
      title, description: input.description ?? null, draft: isDraftTitle(title) ? 1 : 0, author_id: source.actor.user?.id ?? null,
      milestone_id: milestoneId, sha: head, squash: input.squash ? 1 : 0,
      force_remove_source_branch: input.remove_source_branch === undefined ? null : input.remove_source_branch ? 1 : 0,
      allow_collaboration: allowCollaboration ? 1 : 0, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const diff = await insertDiffVersion(trx, row.id, version, now);
    const after = await trx.updateTable('merge_requests').set({ latest_diff_id: diff }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    await linkClosingIssues(trx, after, now);
    if (meta) {
      const uid = source.actor.user?.id ?? null;
      await changeLabels(trx, target, { type: MERGE_REQUEST, id: row.id }, { labels: input.labels }, false, groupIds, uid, now);
      await writeMilestoneEvent(trx, { type: MERGE_REQUEST, id: row.id }, uid, null, after, now);
      for (const [table, ids] of [['merge_request_assignees', input.assignee_ids], ['merge_request_reviewers', input.reviewer_ids]] as const) {
        const users = await existingUserIds(trx, ids ?? []);
        if (users.length) await trx.insertInto(table).values(users.map((user_id) => ({ merge_request_id: row.id, user_id, created_at: now }))).execute();
      }
    }
    if (source.actor.user) await emitEvent(deps, trx, { type: 'merge_request', action: 'open', projectId: after.target_project_id, mergeRequestId: after.id, actorId: source.actor.user.id, changes: attributeChanges(null, after, MERGE_REQUEST_CHANGE_KEYS) });
    return after;
  }).catch(async (e: unknown) => {
    if (staging) await targetRepo.deleteRef(staging).catch(() => undefined);
    throw e;
  });
  // The head ref once the row is there. It only keeps the head's commits reachable in the target repository (the
  // row holds the SHAs every answer uses, and a push to the source branch writes it again), so a failure here, or a
  // stop before it, leaves a usable merge request: a fork's commits stay under the staging ref then.
  try {
    const ref = headRef(mr.iid);
    // Usually new; one left by a creation whose transaction rolled back is taken over.
    await targetRepo.updateRef(ref, head, null).catch(() => setRef(targetRepo, ref, head));
    if (staging) await targetRepo.deleteRef(staging);
  } catch {
    // Kept as it is: see above.
  }
  return { mr, scope: target };
}

/**
 * The first diff version's git answers: one walk over the two sides gives the merge base and the commits only the
 * source has (the version's base and commit count), then the changed files are counted from that base; both are
 * read through the repository's long-lived object reader (no process per creation), git asked where they cannot
 * tell. The pair's mergeability is not asked for: the answer reads `checking`, and the first read that shows it
 * computes it.
 */
async function firstVersion(repo: Repository, targetHead: string, head: string): Promise<DiffVersion> {
  const walk = await repo.walkDivergenceAndBase(targetHead, head);
  if (walk.base === undefined) return diffVersionOf(repo, { base: await repo.mergeBase(targetHead, head), start: targetHead, head });
  return { base: walk.base, start: targetHead, head, files: await repo.treeDiffCount(walk.base ?? targetHead, head), commits: walk.ahead };
}

/** Points `ref` at `sha` whatever it held (a head ref left by a create that rolled back is taken over). */
export async function setRef(repo: Repository, ref: string, sha: string): Promise<void> {
  const current = await repo.revParse(ref);
  if (current === sha) return;
  await repo.updateRef(ref, sha, current);
}

/** The SHAs of a diff version: the merge base (`base`), the target head compared with (`start`), the source head (`head`). */
export interface DiffVersionShas {
  base: string | null;
  start: string;
  head: string;
}

/** A diff version as git describes it, before it is recorded: its SHAs with its file and commit counts. */
export interface DiffVersion extends DiffVersionShas {
  files: number;
  commits: number;
}

/** Asks git for a diff version's counts (bounded by the merge base: the changed files and the commits it adds). */
export async function diffVersionOf(repo: Repository, shas: DiffVersionShas): Promise<DiffVersion> {
  const from = shas.base ?? shas.start;
  const [files, commits] = await Promise.all([
    repo.changedFileCount(from, shas.head),
    repo.countCommits(`${from}..${shas.head}`),
  ]);
  return { ...shas, files, commits };
}

/**
 * Records a diff version whose counts git gave (`diffVersionOf`, asked before the transaction), with the
 * reference's `real_size` ("1000+" past the file limit). Returns the version's id; the caller points
 * `latest_diff_id` at it.
 */
export async function insertDiffVersion(trx: Db, mergeRequestId: number, v: DiffVersion, now: number): Promise<number> {
  const { files, commits } = v;
  const row = await trx.insertInto('merge_request_diffs').values({
    merge_request_id: mergeRequestId, base_commit_sha: v.base, head_commit_sha: v.head, start_commit_sha: v.start,
    state: files === 0 && commits === 0 ? 'empty' : files > MAX_DIFF_FILES ? 'overflow' : 'collected',
    real_size: files > MAX_DIFF_FILES ? `${MAX_DIFF_FILES}+` : String(files), commits_count: commits, files_count: files,
    created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Asks git for a diff version and records it (for callers already inside their transaction). */
export async function recordDiffVersion(trx: Db, repo: Repository, mergeRequestId: number, shas: DiffVersionShas, now: number): Promise<number> {
  return insertDiffVersion(trx, mergeRequestId, await diffVersionOf(repo, shas), now);
}

/** The reference's default diff file limit: beyond it a version is "overflow" and its size reads "1000+". */
export const MAX_DIFF_FILES = 1000;

// ---------------------------------------------------------------------------------------------------------------
// What the entities show

export interface MergeRequestPresentation {
  base: string;
  users: Map<number, User>;
  assignees: Map<number, number[]>;
  reviewers: Map<number, number[]>;
  labels: Map<number, LabelRow[]>;
  milestones: Map<number, Selectable<MilestonesTable>>;
  projects: Map<number, { id: number; path: string; full_path: string; namespace_id: number }>;
  groupPaths: Map<number, string>;
  notes: Map<number, number>;
  votes: Map<number, { up: number; down: number }>;
  spent: Map<number, number>;
  mergeability: Map<number, MergeabilityFields>;
  diffs: Map<number, { base_commit_sha: string | null; head_commit_sha: string | null; start_commit_sha: string | null; real_size: string | null }>;
  now: number;
  withLabelsDetails: boolean;
  /** Set for a single merge request: whether the caller is subscribed, and whether the caller may merge it. */
  subscribed: Map<number, boolean> | null;
  canMerge: Map<number, boolean> | null;
  /** A fork's merge request's effective `allow_collaboration` (policy.ts's `collaborationAllowed`), by id. */
  collaboration: Map<number, boolean>;
  /** The list's context, for `references.relative`. */
  from: { projectId?: number; groupId?: number };
}

/** Explicit subscriptions win; otherwise the author, the assignees, the reviewers and whoever commented are subscribed. */
export async function isSubscribed(db: Db, userId: number | null, mr: MergeRequestRow): Promise<boolean> {
  if (userId === null) return false;
  const row = await db.selectNoFrom((eb) => [
    eb.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', MERGE_REQUEST).where('subscribable_id', '=', mr.id)
      .where('user_id', '=', userId).limit(1).as('explicit'),
    eb.exists(eb.selectFrom('merge_request_assignees').select('user_id').where('merge_request_id', '=', mr.id).where('user_id', '=', userId)).as('assigned'),
    eb.exists(eb.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', mr.id).where('user_id', '=', userId)).as('reviewing'),
    eb.exists(eb.selectFrom('notes').select('id').where('noteable_type', '=', MERGE_REQUEST).where('noteable_id', '=', mr.id)
      .where('author_id', '=', userId).where('system', '=', 0)).as('noted'),
  ]).executeTakeFirstOrThrow();
  if (row.explicit !== null && row.explicit !== undefined) return !!row.explicit;
  return mr.author_id === userId || !!row.assigned || !!row.reviewing || !!row.noted;
}

/** What a merge request whose check has not run shows: the reference's answer while its check is queued. */
const CHECKING: MergeabilityFields = {
  merge_status: 'checking', detailed_merge_status: 'checking', has_conflicts: false, diverged_commits_count: null, blocking_discussions_resolved: true,
};

async function mergeabilityOf(deps: ServiceDeps, rows: MergeRequestRow[], counts: boolean | undefined, checking: ReadonlySet<number> | undefined) {
  const asked = checking ? rows.filter((r) => !checking.has(r.id)) : rows;
  const out = asked.length ? await mergeabilityFields(deps, asked, { counts }) : new Map<number, MergeabilityFields>();
  for (const r of rows) if (checking?.has(r.id)) out.set(r.id, CHECKING);
  return out;
}

/** Everything the merge request entities need, in a constant number of queries. */
export async function loadMergeRequestPresentation(
  deps: ServiceDeps, actor: Actor, rows: MergeRequestRow[],
  opts: {
    withLabelsDetails?: boolean; single?: boolean; from?: { projectId?: number; groupId?: number }; withDivergedCount?: boolean;
    /**
     * Merge requests whose mergeability is not asked for here (a creation's answer): they read `checking`, as the
     * reference's answer does while its check is queued, and the first read after computes it.
     */
    checking?: ReadonlySet<number>;
  } = {},
): Promise<MergeRequestPresentation> {
  const db = deps.db;
  const ids = rows.map((r) => r.id);
  const pres: MergeRequestPresentation = {
    base: deps.config.externalUrl, users: new Map(), assignees: new Map(), reviewers: new Map(), labels: new Map(), milestones: new Map(),
    projects: new Map(), groupPaths: new Map(), notes: new Map(), votes: new Map(), spent: new Map(), mergeability: new Map(), diffs: new Map(),
    now: deps.clock.now(), withLabelsDetails: !!opts.withLabelsDetails, subscribed: null, canMerge: null, collaboration: new Map(),
    from: opts.from ?? {},
  };
  if (rows.length === 0) return pres;
  const milestoneIds = [...new Set(rows.map((r) => r.milestone_id).filter((x): x is number => x !== null))];
  const projectIds = [...new Set(rows.map((r) => r.target_project_id))];
  const diffIds = rows.map((r) => r.latest_diff_id).filter((x): x is number => x !== null);
  const [assignees, reviewers, labels, milestones, projects, notes, votes, spent, mergeability, diffs] = await Promise.all([
    userIdsOf(db, 'merge_request_assignees', ids),
    userIdsOf(db, 'merge_request_reviewers', ids),
    labelsOfTargets(db, MERGE_REQUEST, ids),
    milestoneIds.length ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : [],
    db.selectFrom('projects').select(['id', 'path', 'full_path', 'namespace_id']).where('id', 'in', projectIds).execute(),
    userNotesCounts(db, MERGE_REQUEST, ids),
    votesOf(db, MERGE_REQUEST, ids),
    timeSpentOf(db, ids, MERGE_REQUEST),
    mergeabilityOf(deps, rows, opts.withDivergedCount, opts.checking),
    diffIds.length ? db.selectFrom('merge_request_diffs').select(['id', 'base_commit_sha', 'head_commit_sha', 'start_commit_sha', 'real_size']).where('id', 'in', diffIds).execute() : [],
  ]);
  Object.assign(pres, { assignees, reviewers, labels, notes, spent, mergeability });
  for (const m of milestones) pres.milestones.set(m.id, m);
  for (const p of projects) pres.projects.set(p.id, p);
  for (const d of diffs) pres.diffs.set(d.id, d);
  pres.votes = votes;
  const groupIds = [...new Set(milestones.map((m) => m.group_id).filter((x): x is number => x !== null))];
  const userIds = new Set<number>();
  for (const r of rows) {
    for (const id of [r.author_id, r.closed_by_id, r.merged_by_id, r.merge_user_id]) if (id !== null) userIds.add(id);
    for (const a of assignees.get(r.id)!) userIds.add(a);
    for (const a of reviewers.get(r.id)!) userIds.add(a);
  }
  const [users, groups] = await Promise.all([
    usersByIds(deps, [...userIds]),
    groupIds.length ? db.selectFrom('namespaces').select(['id', 'full_path']).where('id', 'in', groupIds).execute() : [],
  ]);
  pres.users = users;
  for (const g of groups) pres.groupPaths.set(g.id, g.full_path);
  // Only a fork's merge request whose author allowed collaboration can show it on: its projects decide.
  for (const r of rows) {
    if (r.allow_collaboration === 1 && r.source_project_id !== r.target_project_id) pres.collaboration.set(r.id, await collaborationOn(deps, r));
  }
  if (opts.single) {
    pres.subscribed = new Map();
    pres.canMerge = new Map();
    for (const r of rows) {
      pres.subscribed.set(r.id, await isSubscribed(db, actor.user?.id ?? null, r));
      pres.canMerge.set(r.id, await canMergeBy(deps, actor, r));
    }
  }
  return pres;
}

/**
 * The entity's `user.can_merge` (the reference's `can_merge_to_branch?`): on a protected target branch whoever its
 * merge access levels allow, otherwise whoever may push code to the project.
 */
export async function canMergeBy(deps: ServiceDeps, actor: Actor, mr: MergeRequestRow): Promise<boolean> {
  if (!actor.user) return false;
  const project = await liveProjectById(deps, mr.target_project_id);
  if (!project) return false;
  const level = await levelIn(deps.db, actor, project);
  const rules = matching(await cachedBranchRules(deps, project.id), mr.target_branch);
  if (!rules.length) return canProject(actor, 'push_code', project, level);
  if (projectDenial(actor, 'download_code', project, level) || project.archived || project.repository_read_only) return false;
  return entriesAllow(deps.db, rules.flatMap((r) => r.merge), { userId: actor.user.id, level, admin: actor.admin });
}
export { repoFor };

/** What policy.ts's collaboration rules read of a merge request from `source` (its branch) into `target`. */
async function collaborationFacts(deps: ServiceDeps, source: ProjectRow, target: ProjectRow, sourceBranch: string) {
  const sourceBranchProtected = matching(await cachedBranchRules(deps, source.id), sourceBranch).length > 0;
  return { source, target, sourceBranchProtected };
}

/** The merge request's effective `allow_collaboration` (the reference's `allow_collaboration`): stored and possible. */
async function collaborationOn(deps: ServiceDeps, mr: MergeRequestRow): Promise<boolean> {
  if (mr.allow_collaboration !== 1 || mr.source_project_id === null || mr.source_project_id === mr.target_project_id) return false;
  const [source, target] = await Promise.all([liveProjectById(deps, mr.source_project_id), liveProjectById(deps, mr.target_project_id)]);
  if (!source || !target) return false;
  return collaborationAllowed({ allow_collaboration: 1, ...(await collaborationFacts(deps, source, target, mr.source_branch)) });
}

/**
 * Whether the caller may set `allow_collaboration` on a merge request from `source` (the caller's level there) into
 * `target` (the reference's `can_allow_collaboration?`); the reference ignores the value otherwise.
 */
async function mayAllowCollaborationBy(deps: ServiceDeps, actor: Actor, source: { project: ProjectRow; level: number }, target: ProjectRow, sourceBranch: string): Promise<boolean> {
  if (source.project.id === target.id) return false;
  return mayAllowCollaboration(await collaborationFacts(deps, source.project, target, sourceBranch), canProject(actor, 'push_code', source.project, source.level));
}

// ---------------------------------------------------------------------------------------------------------------
// Changing

/** What one request changed, for the system notes it calls for. */
export interface MergeRequestChange {
  mr: MergeRequestRow;
  before: MergeRequestRow | null;
  actor: Actor;
  addedLabelIds: number[];
  removedLabelIds: number[];
  addedAssigneeIds: number[];
  removedAssigneeIds: number[];
  addedReviewerIds: number[];
  removedReviewerIds: number[];
  at: number;
}

async function replaceUsers(trx: Db, table: 'merge_request_assignees' | 'merge_request_reviewers', mrId: number, wanted: number[], now: number) {
  const current = (await userIdsOf(trx, table, [mrId])).get(mrId)!;
  const next = await existingUserIds(trx, wanted);
  const added = next.filter((id) => !current.includes(id));
  const removed = current.filter((id) => !next.includes(id));
  if (removed.length) await trx.deleteFrom(table).where('merge_request_id', '=', mrId).where('user_id', 'in', removed).execute();
  if (added.length) await trx.insertInto(table).values(added.map((user_id) => ({ merge_request_id: mrId, user_id, created_at: now }))).execute();
  return { added, removed };
}

/**
 * Changes a merge request: text and draft state for whoever may update it, labels, assignees, reviewers, milestone and
 * the lock for `admin_merge_request` (Developer+), the target branch (a new diff version against it), close and
 * reopen; resource events and system notes in the same transaction.
 */
export async function updateMergeRequest(deps: ServiceDeps, scope: MergeRequestScope, mr: MergeRequestRow, input: MergeRequestInput): Promise<MergeRequestRow> {
  validateText(input, false);
  const now = deps.clock.now();
  const uid = scope.actor.user?.id ?? null;
  const meta = metadataAllowed(scope);
  const groupIds = await projectAncestorGroupIds(deps.db, scope.project);
  const targetRepo = repoFor(deps.config, scope.project);
  let newTarget: { branch: string; head: string } | null = null;
  if (input.target_branch !== undefined && input.target_branch !== mr.target_branch) {
    if (mr.state === 'merged') throw new RuleError('unprocessable', ['Target branch cannot be changed on a merged merge request']);
    if (mr.source_project_id === mr.target_project_id && input.target_branch === mr.source_branch) {
      throw new RuleError('unprocessable', ["You can't use same project/branch for source and target"]);
    }
    const head = !input.target_branch.startsWith('-') ? await targetRepo.resolveCommit(`refs/heads/${input.target_branch}`) : null;
    if (!head) throw new RuleError('unprocessable', [`Target branch "${input.target_branch}" does not exist`]);
    newTarget = { branch: input.target_branch, head };
  }
  let allowCollaboration: boolean | undefined;
  if (input.allow_collaboration !== undefined && mr.source_project_id !== null && mr.source_project_id !== mr.target_project_id) {
    const source = await liveProjectById(deps, mr.source_project_id);
    const allowed = !!source && (await mayAllowCollaborationBy(deps, scope.actor, { project: source, level: await levelIn(deps.db, scope.actor, source) }, scope.project, mr.source_branch));
    if (allowed) allowCollaboration = input.allow_collaboration;
  }
  // The new target's diff version from git before the transaction (the head stays `sha`: an update never moves it).
  const retargeted = newTarget && mr.sha
    ? await diffVersionOf(targetRepo, { base: await targetRepo.mergeBase(newTarget.head, mr.sha), start: newTarget.head, head: mr.sha })
    : null;
  await checkSpam(deps, scope.actor, { kind: 'MergeRequest', project: scope.project, level: scope.level, before: mr, change: input });
  return deps.db.transaction().execute(async (trx) => {
    const set: Partial<MergeRequestRow> = {};
    if (input.title !== undefined) {
      set.title = input.title.trim();
      set.draft = isDraftTitle(set.title) ? 1 : 0;
    }
    if (input.description !== undefined) set.description = input.description;
    if (input.squash !== undefined) set.squash = input.squash ? 1 : 0;
    if (input.remove_source_branch !== undefined) set.force_remove_source_branch = input.remove_source_branch ? 1 : 0;
    if (allowCollaboration !== undefined) set.allow_collaboration = allowCollaboration ? 1 : 0;
    if (meta && input.discussion_locked !== undefined) set.discussion_locked = input.discussion_locked === null ? null : input.discussion_locked ? 1 : 0;
    if (meta && input.milestone_id !== undefined) {
      set.milestone_id = input.milestone_id && (await milestoneAvailable(trx, scope.project.id, groupIds, input.milestone_id)) ? input.milestone_id : null;
    }
    if (input.state_event === 'close' && mr.state === 'opened') Object.assign(set, { state: 'closed', closed_at: now, closed_by_id: uid });
    else if (input.state_event === 'reopen' && mr.state === 'closed') {
      const open = await trx.selectFrom('merge_requests').select('iid').where('target_project_id', '=', mr.target_project_id)
        .where('source_project_id', '=', mr.source_project_id).where('source_branch', '=', mr.source_branch)
        .where('target_branch', '=', newTarget?.branch ?? mr.target_branch).where('state', '=', 'opened').executeTakeFirst();
      if (open) throw new RuleError('conflict', [`Another open merge request already exists for this source branch: !${open.iid}`]);
      Object.assign(set, { state: 'opened', closed_at: null, closed_by_id: null });
    }
    if (newTarget) Object.assign(set, { target_branch: newTarget.branch, merge_status: 'unchecked' });
    if ((set.title !== undefined && set.title !== mr.title) || (set.description !== undefined && set.description !== mr.description)) {
      Object.assign(set, { last_edited_at: now, last_edited_by_id: uid });
    }
    set.updated_at = now;
    let after = await trx.updateTable('merge_requests').set(set).where('id', '=', mr.id).returningAll().executeTakeFirstOrThrow();
    if (newTarget && after.sha) {
      // A push that moved the head meanwhile: its version is asked for here instead.
      const diff = retargeted && retargeted.head === after.sha ? await insertDiffVersion(trx, mr.id, retargeted, now)
        : await recordDiffVersion(trx, targetRepo, mr.id, { base: await targetRepo.mergeBase(newTarget.head, after.sha), start: newTarget.head, head: after.sha }, now);
      after = await trx.updateTable('merge_requests').set({ latest_diff_id: diff }).where('id', '=', mr.id).returningAll().executeTakeFirstOrThrow();
    }
    const change: MergeRequestChange = {
      mr: after, before: mr, actor: scope.actor, addedLabelIds: [], removedLabelIds: [], addedAssigneeIds: [], removedAssigneeIds: [],
      addedReviewerIds: [], removedReviewerIds: [], at: now,
    };
    if (meta) Object.assign(change, await changeLabels(trx, scope, { type: MERGE_REQUEST, id: mr.id }, input, true, groupIds, uid, now));
    if (meta && input.assignee_ids !== undefined) {
      const r = await replaceUsers(trx, 'merge_request_assignees', mr.id, input.assignee_ids, now);
      change.addedAssigneeIds = r.added;
      change.removedAssigneeIds = r.removed;
    }
    if (meta && input.reviewer_ids !== undefined) {
      const r = await replaceUsers(trx, 'merge_request_reviewers', mr.id, input.reviewer_ids, now);
      change.addedReviewerIds = r.added;
      change.removedReviewerIds = r.removed;
    }
    await writeStateEvent(trx, { type: MERGE_REQUEST, id: mr.id }, uid, mr, after, now);
    await writeMilestoneEvent(trx, { type: MERGE_REQUEST, id: mr.id }, uid, mr, after, now);
    if (input.description !== undefined) await linkClosingIssues(trx, after, now);
    await writeMergeRequestSystemNotes(trx, change);
    const action = mr.state !== after.state ? (after.state === 'closed' ? 'close' : 'reopen') : 'update';
    if (scope.actor.user) await emitEvent(deps, trx, { type: 'merge_request', action, projectId: after.target_project_id, mergeRequestId: after.id, actorId: scope.actor.user.id, changes: await mergeRequestChanges(trx, change) });
    return after;
  });
}

/** The merge request attributes whose changes the hook payloads carry. */
export const MERGE_REQUEST_CHANGE_KEYS = [
  'title', 'description', 'draft', 'state', 'target_branch', 'milestone_id', 'discussion_locked', 'last_edited_at', 'last_edited_by_id', 'updated_at',
] as const;

/** A merge request change as `changes`: attributes, then labels, assignees and reviewers as ids before and after. */
export async function mergeRequestChanges(trx: Db, c: MergeRequestChange): Promise<Changes> {
  const out = attributeChanges(c.before, c.mr, MERGE_REQUEST_CHANGE_KEYS);
  if (c.addedLabelIds.length || c.removedLabelIds.length) {
    const now = (await trx.selectFrom('label_links').select('label_id').where('target_type', '=', MERGE_REQUEST).where('target_id', '=', c.mr.id).execute()).map((r) => r.label_id);
    out.label_ids = listChange(now, c.addedLabelIds, c.removedLabelIds);
  }
  for (const [key, table, added, removed] of [
    ['assignee_ids', 'merge_request_assignees', c.addedAssigneeIds, c.removedAssigneeIds],
    ['reviewer_ids', 'merge_request_reviewers', c.addedReviewerIds, c.removedReviewerIds],
  ] as const) {
    if (added.length || removed.length) out[key] = listChange((await userIdsOf(trx, table, [c.mr.id])).get(c.mr.id) ?? [], added, removed);
  }
  return out;
}

/** Removes a merge request, everything hung on it by (type, id), and its head ref. */
export async function deleteMergeRequest(deps: ServiceDeps, project: ProjectRow, mr: MergeRequestRow): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await deleteDependents(trx, { type: MERGE_REQUEST, id: mr.id });
    await trx.deleteFrom('merge_requests').where('id', '=', mr.id).execute();
  });
  // The head ref goes after the row: a crash in between leaves a ref the next merge request with that iid never gets.
  const repo = repoFor(deps.config, project);
  const ref = headRef(mr.iid);
  if (await repo.revParse(ref)) await repo.deleteRef(ref).catch(() => undefined);
}

/** Subscribes or unsubscribes the user; false when they already were (the route answers 304). */
export async function setSubscription(deps: ServiceDeps, userId: number, mr: MergeRequestRow, subscribed: boolean): Promise<boolean> {
  return setNoteableSubscription(deps, userId, { type: MERGE_REQUEST, id: mr.id, projectId: mr.target_project_id }, subscribed, (trx) => isSubscribed(trx, userId, mr));
}

/** The author, whoever commented, the assignees and the reviewers, each once, keeping only those who may read it. */
export async function participants(deps: ServiceDeps, mr: MergeRequestRow, project: ProjectRow): Promise<User[]> {
  const [notes, assignees, reviewers] = await Promise.all([
    deps.db.selectFrom('notes').select('author_id').where('noteable_type', '=', MERGE_REQUEST).where('noteable_id', '=', mr.id)
      .where('system', '=', 0).where('internal', '=', 0).orderBy('id').execute(),
    userIdsOf(deps.db, 'merge_request_assignees', [mr.id]),
    userIdsOf(deps.db, 'merge_request_reviewers', [mr.id]),
  ]);
  const ids: number[] = [];
  for (const id of [mr.author_id, ...notes.map((n) => n.author_id), ...assignees.get(mr.id)!, ...reviewers.get(mr.id)!]) {
    if (id !== null && !ids.includes(id)) ids.push(id);
  }
  if (ids.length === 0) return [];
  const byId = await usersByIds(deps, ids);
  const out: User[] = [];
  for (const id of ids) {
    const u = byId.get(id);
    if (!u || u.state === 'blocked') continue;
    const actor: Actor = { user: u, admin: !!u.admin, token: null, via: 'none', sudo: false };
    if (!projectDenial(actor, 'read_merge_request', project, await levelIn(deps.db, actor, project))) out.push(u);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Issues a description closes or mentions

/**
 * The reference's default closing pattern (`gitlab.yml` issue_closing_pattern): "Closes #1", "fixes #2 and #3",
 * "Resolves: #4", "implemented #5", with `group/project#6` for another project. Plain `#N` elsewhere is a mention.
 */
const CLOSING = /\b(?:(?:[Cc]los(?:e[sd]?|ing)|[Ff]ix(?:e[sd]|ing)?|[Rr]esolv(?:e[sd]?|ing)|[Ii]mplement(?:s|ed|ing)?)(?::?)\s+((?:(?:[\w.\-/]+)?#\d+(?:(?:,\s*|,?\s+and\s+|\s+)?))+))/g;
const ISSUE_REF = /(?:^|[^\w&/])([\w.\-]+(?:\/[\w.\-]+)+)?#(\d+)\b/g;

interface IssueRefs { closes: Array<{ path: string | null; iid: number }>; mentions: Array<{ path: string | null; iid: number }> }

export function issueReferences(text: string | null): IssueRefs {
  const out: IssueRefs = { closes: [], mentions: [] };
  if (!text) return out;
  const refsIn = (s: string) => [...s.matchAll(ISSUE_REF)].map((m) => ({ path: m[1] ?? null, iid: Number(m[2]) })).filter((r) => fitsIntColumn(r.iid));
  for (const m of text.matchAll(CLOSING)) out.closes.push(...refsIn(` ${m[1]}`));
  out.mentions = refsIn(text);
  return out;
}

/**
 * Rewrites the issues a merge request's description names (`merge_requests_closing_issues`): `closes` 1 for those
 * after a closing pattern, 0 for the other mentions. Issues in other projects are named by their full path.
 */
export async function linkClosingIssues(trx: Db, mr: MergeRequestRow, now: number): Promise<void> {
  const refs = issueReferences(mr.description);
  const wanted = new Map<string, boolean>();
  for (const r of refs.mentions) wanted.set(`${r.path ?? ''}#${r.iid}`, false);
  for (const r of refs.closes) wanted.set(`${r.path ?? ''}#${r.iid}`, true);
  await trx.deleteFrom('merge_requests_closing_issues').where('merge_request_id', '=', mr.id).execute();
  if (wanted.size === 0) return;
  const paths = [...new Set([...wanted.keys()].map((k) => k.split('#')[0]).filter(Boolean))];
  const projects = paths.length ? await trx.selectFrom('projects').select(['id', 'full_path_lower']).where('full_path_lower', 'in', paths.map((p) => p.toLowerCase())).execute() : [];
  const projectOf = new Map(projects.map((p) => [p.full_path_lower, p.id]));
  const rows: Array<{ issue_id: number; closes: number }> = [];
  for (const [key, closes] of wanted) {
    const [path, iid] = key.split('#');
    const projectId = path ? projectOf.get(path.toLowerCase()) : mr.target_project_id;
    if (projectId === undefined) continue;
    const issue = await trx.selectFrom('issues').select('id').where('project_id', '=', projectId).where('iid', '=', Number(iid)).executeTakeFirst();
    if (issue && !rows.some((r) => r.issue_id === issue.id)) rows.push({ issue_id: issue.id, closes: closes ? 1 : 0 });
  }
  if (rows.length) {
    await trx.insertInto('merge_requests_closing_issues').values(rows.map((r) => ({ ...r, merge_request_id: mr.id, created_at: now, updated_at: now }))).execute();
  }
}

/** The issues a merge request closes (`closes` links), in iid order. */
export async function closingIssues(db: Db, mr: MergeRequestRow) {
  return db.selectFrom('issues').innerJoin('merge_requests_closing_issues as l', 'l.issue_id', 'issues.id').selectAll('issues')
    .where('l.merge_request_id', '=', mr.id).where('l.closes', '=', 1).orderBy('issues.project_id').orderBy('issues.iid').execute();
}

/** Merge requests linked to an issue: those that close it (`closesOnly`), or every one naming it. */
export function mergeRequestsOfIssueQuery(db: Db, issueId: number, closesOnly: boolean) {
  let q = db.selectFrom('merge_requests').innerJoin('merge_requests_closing_issues as l', 'l.merge_request_id', 'merge_requests.id')
    .innerJoin('projects', 'projects.id', 'merge_requests.target_project_id')
    .selectAll('merge_requests').where('l.issue_id', '=', issueId).where('projects.pending_delete', '=', 0);
  if (closesOnly) q = q.where('l.closes', '=', 1);
  return q.orderBy('merge_requests.id');
}

// ---------------------------------------------------------------------------------------------------------------
// Approvals (the reference's free tier: anyone allowed by `approve_merge_request`, once each)

export async function approvalsOf(db: Db, mrId: number) {
  return db.selectFrom('merge_request_approvals').select(['user_id', 'created_at']).where('merge_request_id', '=', mrId).orderBy('id').execute();
}

/** Approves as the caller; false when the caller may not (already approved). A `sha` other than the head is a 409. */
export async function approve(deps: ServiceDeps, scope: MergeRequestScope, mr: MergeRequestRow, sha: string | undefined): Promise<boolean> {
  if (sha !== undefined && sha !== mr.sha) throw new RuleError('conflict', `SHA does not match HEAD of source branch: ${mr.sha}`);
  const uid = scope.actor.user!.id;
  return deps.db.transaction().execute(async (trx) => {
    const had = await trx.selectFrom('merge_request_approvals').select('id').where('merge_request_id', '=', mr.id).where('user_id', '=', uid).executeTakeFirst();
    if (had) return false;
    const now = deps.clock.now();
    await trx.insertInto('merge_request_approvals').values({ merge_request_id: mr.id, user_id: uid, created_at: now, updated_at: now }).execute();
    await trx.updateTable('merge_request_reviewers').set({ state: 'approved' }).where('merge_request_id', '=', mr.id).where('user_id', '=', uid).execute();
    await writeSystemNote(trx, mergeRequestNoteable(mr), uid, 'approved this merge request', now);
    await emitEvent(deps, trx, { type: 'merge_request', action: 'approved', projectId: mr.target_project_id, mergeRequestId: mr.id, actorId: uid });
    return true;
  });
}

/** Withdraws the caller's approval; false when there was none. */
export async function unapprove(deps: ServiceDeps, scope: MergeRequestScope, mr: MergeRequestRow): Promise<boolean> {
  const uid = scope.actor.user!.id;
  return deps.db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('merge_request_approvals').where('merge_request_id', '=', mr.id).where('user_id', '=', uid).executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) return false;
    const now = deps.clock.now();
    await trx.updateTable('merge_request_reviewers').set({ state: 'unreviewed' }).where('merge_request_id', '=', mr.id).where('user_id', '=', uid).execute();
    await writeSystemNote(trx, mergeRequestNoteable(mr), uid, 'unapproved this merge request', now);
    await emitEvent(deps, trx, { type: 'merge_request', action: 'unapproved', projectId: mr.target_project_id, mergeRequestId: mr.id, actorId: uid });
    return true;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Commits of the latest version

/** The commits of the merge request's latest version (base..head), newest first, paged by `skip`/`limit`. */
export async function versionCommits(deps: ServiceDeps, project: ProjectRow, mr: MergeRequestRow, page: { skip: number; limit: number }) {
  const diff = await latestDiff(deps.db, mr);
  if (!diff || !diff.head_commit_sha) return { total: 0, commits: [] };
  const repo = repoFor(deps.config, project);
  const from = diff.base_commit_sha ?? diff.start_commit_sha;
  const range = from ? `${from}..${diff.head_commit_sha}` : diff.head_commit_sha;
  const total = diff.commits_count ?? (await repo.countCommits(range));
  const commits = total && page.skip < total ? await repo.log({ ref: range, skip: page.skip, limit: page.limit }) : [];
  return { total, commits };
}
