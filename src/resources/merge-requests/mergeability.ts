import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { defineMemo } from '../../platform/read-cache.ts';
import type { Repository } from '../../platform/git/repository.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { settingsOf } from '../projects/projects.service.ts';
import { repoFor } from '../repository/repository.common.ts';
import type { MergeRequestRow } from './merge-requests.service.ts';

// Whether a merge request can be merged, decided in one place: the presenter copies these fields, and the merge
// refuses what they refuse. Git answers with `git merge-tree --write-tree` in the target repository for the pair
// (target branch head, source head); the answer is kept in `merge_request_mergeability` under that pair, and in a
// process memo in front of it. A new head on either side is a new key, so an answer never goes stale and nothing
// has to be invalidated: the next read after a push computes the new pair.

export interface MergeabilityFields {
  /** The reference's public_merge_status: unchecked | checking | can_be_merged | cannot_be_merged | cannot_be_merged_recheck. */
  merge_status: string;
  /** The reference's DetailedMergeStatusService answer: unchecked, checking, mergeable, not_open, draft_status, conflict, ... */
  detailed_merge_status: string;
  has_conflicts: boolean;
  /** Commits on the target branch since the source branched off (null when unknown). */
  diverged_commits_count: number | null;
  /** The reference's `mergeable_discussions_state?`: false while the project requires resolved threads and one is open. */
  blocking_discussions_resolved: boolean;
}

/** What git says about one (target head, source head) pair. */
export interface PairCheck {
  targetSha: string;
  sourceSha: string;
  /** The merge base when a walk found it (null: no common history); undefined when not asked for. */
  mergeBase?: string | null;
  hasConflicts: boolean;
  /** The merged tree (with conflict markers when not clean). */
  tree: string;
  conflicts: string[];
  /**
   * Commits the target has that the source lacks, and the reverse: a walk over both sides, made only when an answer
   * needs it (`diverged_commits_count`, or a merge method that needs a fast-forward); see `withCounts`.
   */
  behind?: number;
  ahead?: number;
}

// Derived from its key alone (the two commit ids of one repository), so it can never be stale.
const pairs = defineMemo<string, PairCheck>('merge-request-mergeability', { max: 50_000 });

/**
 * The pair's answer: the memo, else the table, else `git merge-tree` alone, which also fills both. The divergence
 * counts are walked for only with `counts` (then beside the merge on a cold pair, or alone on a known one).
 */
export async function checkPair(deps: ServiceDeps, projectId: number, repo: Repository, targetSha: string, sourceSha: string, opts: { counts?: boolean } = {}): Promise<PairCheck> {
  const key = `${projectId}:${targetSha}:${sourceSha}`;
  const hit = pairs.get(key);
  if (hit) return opts.counts ? withCounts(deps, projectId, repo, hit) : hit;
  const row = await deps.db.selectFrom('merge_request_mergeability').selectAll().where('project_id', '=', projectId)
    .where('target_sha', '=', targetSha).where('source_sha', '=', sourceSha).executeTakeFirst();
  let check: PairCheck;
  if (row) {
    check = {
      targetSha, sourceSha, mergeBase: row.merge_base_sha ?? undefined, hasConflicts: !!row.has_conflicts, tree: row.tree_sha ?? '',
      conflicts: row.conflict_paths ? (JSON.parse(row.conflict_paths) as string[]) : [],
    };
    if (opts.counts) await withCounts(deps, projectId, repo, check);
  } else {
    // The merge itself, and (only when asked) the walk beside it for the divergence counts and the merge base.
    const [merged, walk] = await Promise.all([repo.mergeTree(targetSha, sourceSha), opts.counts ? countsOf(repo, targetSha, sourceSha) : null]);
    check = { targetSha, sourceSha, hasConflicts: !merged.clean, tree: merged.tree, conflicts: merged.conflicts };
    if (walk) {
      check.behind = walk.behind;
      check.ahead = walk.ahead;
      check.mergeBase = walk.base !== undefined ? walk.base : await repo.mergeBase(targetSha, sourceSha);
    }
    await deps.db.insertInto('merge_request_mergeability').values({
      project_id: projectId, target_sha: targetSha, source_sha: sourceSha, merge_base_sha: check.mergeBase ?? null, has_conflicts: merged.clean ? 0 : 1,
      tree_sha: merged.tree, conflict_paths: merged.conflicts.length ? JSON.stringify(merged.conflicts.slice(0, 1000)) : null,
      checked_at: deps.clock.now(),
    }).onConflict((oc) => oc.columns(['project_id', 'target_sha', 'source_sha']).doNothing()).execute();
  }
  pairs.set(key, check);
  return check;
}

/**
 * The pair's divergence counts, walked for once and kept on the answer; a pair whose row lacks its merge base
 * (answered without the walk) gets it from the same walk, and the row too.
 */
async function withCounts(deps: ServiceDeps, projectId: number, repo: Repository, check: PairCheck): Promise<PairCheck> {
  if (check.behind !== undefined && check.ahead !== undefined) return check;
  const walk = await countsOf(repo, check.targetSha, check.sourceSha);
  if (check.mergeBase !== undefined) {
    check.behind = walk.behind;
    check.ahead = walk.ahead;
    return check;
  }
  const base = walk.base !== undefined ? walk.base : await repo.mergeBase(check.targetSha, check.sourceSha);
  Object.assign(check, { behind: walk.behind, ahead: walk.ahead, mergeBase: base });
  if (base !== null) {
    await deps.db.updateTable('merge_request_mergeability').set({ merge_base_sha: base }).where('project_id', '=', projectId)
      .where('target_sha', '=', check.targetSha).where('source_sha', '=', check.sourceSha).where('merge_base_sha', 'is', null).execute();
  }
  return check;
}

/**
 * The divergence counts and merge base of a pair, walked in this process over the commit-graph (no git process
 * while the graph holds the history). git walks a longer history (more than 2,000 commits, a few ms of this
 * process's time), or one of which more than 200 commits are newer than the graph (each a read through `cat-file`).
 */
const countsOf = (repo: Repository, targetSha: string, sourceSha: string) => repo.walkDivergenceAndBase(targetSha, sourceSha, 2_000, { outsideGraph: 200 });

/** Whether the source can be merged without a merge commit: the target head is an ancestor of the source head (counts needed). */
export const fastForwardPossible = (c: PairCheck) => c.behind === 0;

/** The open threads that block a merge when the project requires every thread resolved, per merge request id. */
export async function unresolvedThreadCounts(db: Db, ids: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (ids.length === 0) return out;
  const rows = await db.selectFrom('notes').select(['noteable_id', (eb) => eb.fn.count<number>('discussion_id').distinct().as('n')])
    .where('noteable_type', '=', 'MergeRequest').where('noteable_id', 'in', ids).where('resolvable', '=', 1).where('resolved_at', 'is', null)
    .where('system', '=', 0).groupBy('noteable_id').execute();
  for (const r of rows) out.set(r.noteable_id, Number(r.n));
  return out;
}

/** What the merge and the entities need to know about one open merge request right now. */
export interface MergeState {
  project: ProjectRow;
  repo: Repository;
  /** The target branch's head, null when the branch is gone. */
  targetSha: string | null;
  /** The source head as the merge request knows it (`sha`, also its head ref), null when unknown. */
  sourceSha: string | null;
  check: PairCheck | null;
  /** The detailed status: mergeable, or the first check that refuses (the reference's order). */
  detailed: string;
  discussionsResolved: boolean;
}

const CONCURRENCY = 4;

async function inBatches<T>(items: T[], fn: (x: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(fn));
}

/**
 * The mergeability of open merge requests, in the reference's order of checks: not_open, draft_status,
 * broken_status (a branch is gone), conflict, need_rebase (merge methods without a merge commit, or semi-linear,
 * when the target moved on), discussions_not_resolved (when the project asks for it), then mergeable. A repository
 * git cannot read answers `unchecked`. No approval rule applies on this tier, so `not_approved` never shows.
 */
export async function mergeStates(deps: ServiceDeps, rows: readonly MergeRequestRow[], opts: { counts?: boolean; targetShas?: ReadonlyMap<number, string> } = {}): Promise<Map<number, MergeState>> {
  const out = new Map<number, MergeState>();
  const open = rows.filter((r) => r.state === 'opened');
  if (open.length === 0) return out;
  const projects = new Map<number, ProjectRow | undefined>();
  for (const id of new Set(open.map((r) => r.target_project_id))) projects.set(id, await liveProjectById(deps, id));
  const needThreads = open.filter((r) => {
    const p = projects.get(r.target_project_id);
    return p && settingsOf(p).only_allow_merge_if_all_discussions_are_resolved;
  });
  const threads = await unresolvedThreadCounts(deps.db, needThreads.map((r) => r.id));
  // The target heads, one git read per project for the page's target branches.
  const heads = new Map<number, Promise<Map<string, string>>>();
  for (const [id, p] of projects) {
    const unknown = open.filter((r) => r.target_project_id === id && !opts.targetShas?.has(r.id));
    if (p && unknown.length) heads.set(id, repoFor(deps.config, p).branchHeads(unknown.map((r) => r.target_branch)));
  }
  for (const h of heads.values()) h.catch(() => undefined);
  await inBatches(open, async (mr) => {
    const project = projects.get(mr.target_project_id);
    if (!project) return;
    const repo = repoFor(deps.config, project);
    const settings = settingsOf(project);
    const ffOnly = settings.merge_method === 'ff' || settings.merge_method === 'rebase_merge';
    const discussionsResolved = !settings.only_allow_merge_if_all_discussions_are_resolved || (threads.get(mr.id) ?? 0) === 0;
    const state: MergeState = { project, repo, targetSha: null, sourceSha: mr.sha, check: null, detailed: 'unchecked', discussionsResolved };
    out.set(mr.id, state);
    try {
      state.targetSha = opts.targetShas?.get(mr.id) ?? (await heads.get(project.id))?.get(mr.target_branch) ?? null;
      if (state.targetSha && state.sourceSha) state.check = await checkPair(deps, project.id, repo, state.targetSha, state.sourceSha, { counts: ffOnly || opts.counts });
    } catch {
      // A repository git cannot read now (moving, timed out): `unchecked`, and the next read asks again.
      return;
    }
    const c = state.check;
    if (mr.draft) state.detailed = 'draft_status';
    else if (!c) state.detailed = 'broken_status';
    else if (c.hasConflicts) state.detailed = 'conflict';
    else if (ffOnly && !fastForwardPossible(c)) state.detailed = 'need_rebase';
    else if (!discussionsResolved) state.detailed = 'discussions_not_resolved';
    else state.detailed = 'mergeable';
  });
  return out;
}

/**
 * The fields for each merge request of a page, keyed by merge request id (one batch for a whole list);
 * `diverged_commits_count` only with `counts` (the entity shows it only when asked).
 */
export async function mergeabilityFields(deps: ServiceDeps, rows: readonly MergeRequestRow[], opts: { counts?: boolean; targetShas?: ReadonlyMap<number, string> } = {}): Promise<Map<number, MergeabilityFields>> {
  const out = new Map<number, MergeabilityFields>();
  const states = await mergeStates(deps, rows, opts);
  for (const mr of rows) {
    const s = states.get(mr.id);
    if (s) {
      const c = s.check;
      const status = !c ? (s.detailed === 'broken_status' ? 'cannot_be_merged' : 'unchecked') : c.hasConflicts ? 'cannot_be_merged' : 'can_be_merged';
      out.set(mr.id, {
        merge_status: status, detailed_merge_status: s.detailed, has_conflicts: !!c?.hasConflicts,
        diverged_commits_count: c?.behind ?? null, blocking_discussions_resolved: s.discussionsResolved,
      });
      continue;
    }
    // Merged, closed or locked: what was last recorded (a merge records can_be_merged).
    const status = mr.merge_status;
    const rechecking = status === 'cannot_be_merged_recheck' || status === 'checking';
    out.set(mr.id, {
      merge_status: rechecking ? 'checking' : status,
      detailed_merge_status: status === 'unchecked' ? 'unchecked' : rechecking ? 'checking' : 'not_open',
      has_conflicts: status === 'cannot_be_merged' || status === 'cannot_be_merged_recheck',
      diverged_commits_count: null,
      blocking_discussions_resolved: true,
    });
  }
  return out;
}
