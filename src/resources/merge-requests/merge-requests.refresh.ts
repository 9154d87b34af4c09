import type { ServiceDeps } from '../../platform/deps.ts';
import { attributeChanges, emitEvent } from '../../platform/events.ts';
import type { Db } from '../../platform/db/index.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { writeSystemNote } from '../notes/notes.service.ts';
import { addedCommitsBody, mergeRequestNoteable } from '../notes/system-notes.ts';
import { repoFor } from '../repository/repository.common.ts';
import { markOutdatedDiffNotes } from './positions.ts';
import { diffVersionOf, headRef, insertDiffVersion, MERGE_REQUEST_CHANGE_KEYS, setRef, type MergeRequestRow } from './merge-requests.service.ts';

// A push (or any ref move: the commits API, branch deletion) reaches the open merge requests whose source branch
// moved: each gets its head ref and `sha` moved, a new diff version, the "added N commits" system note, and its
// mergeability reset. Open merge requests whose target branch moved have their mergeability reset too.

/** How many of the pushed commits the note lists (the reference's `add_commits` shows them all; a huge push is cut). */
const LISTED_COMMITS = 100;

/** The stored `merge_status` values other than `unchecked` (the reference's public merge statuses). */
const CHECKED_STATUSES = ['can_be_merged', 'cannot_be_merged', 'cannot_be_merged_recheck', 'checking'];

/**
 * Brings the open merge requests of `project`'s moved branches up to date. `changedRefs`: the full refs that moved,
 * or undefined when unknown (every open merge request of the project's branches is checked). `userId`: the pusher,
 * who writes the notes (the merge request's author when unknown).
 */
export async function refreshMergeRequests(deps: ServiceDeps, project: ProjectRow, changedRefs: string[] | undefined, userId: number | null = null): Promise<void> {
  const branches = changedRefs?.filter((r) => r.startsWith('refs/heads/')).map((r) => r.slice('refs/heads/'.length));
  if (branches && branches.length === 0) return;
  let q = deps.db.selectFrom('merge_requests').selectAll().where('source_project_id', '=', project.id).where('state', '=', 'opened');
  if (branches) q = q.where('source_branch', 'in', branches);
  const sourced = await q.orderBy('id').execute();
  for (const mr of sourced) await refreshSource(deps, project, mr, userId);
  // The target side: a moved target branch makes every stored mergeability answer stale. The rows are found by
  // their status in `merge_requests_target_branch_status`, so a branch whose open merge requests all say unchecked
  // already (however many) costs a few index probes.
  let t = deps.db.updateTable('merge_requests').set({ merge_status: 'unchecked' })
    .where('target_project_id', '=', project.id).where('state', '=', 'opened').where('merge_status', 'in', CHECKED_STATUSES);
  if (branches) t = t.where('target_branch', 'in', branches);
  await t.execute();
}

async function refreshSource(deps: ServiceDeps, source: ProjectRow, mr: MergeRequestRow, userId: number | null): Promise<void> {
  const target = mr.target_project_id === source.id ? source : await liveProjectById(deps, mr.target_project_id);
  if (!target) return;
  const sourceRepo = repoFor(deps.config, source);
  const targetRepo = repoFor(deps.config, target);
  const branchHead = await sourceRepo.resolveCommit(`refs/heads/${mr.source_branch}`);
  // A deleted source branch leaves the merge request as it was (the reference shows it as missing its branch).
  if (!branchHead || branchHead === mr.sha) return;
  const ref = headRef(mr.iid);
  const head = target.id === source.id ? branchHead : await targetRepo.fetchBranchInto(sourceRepo.path, mr.source_branch, ref);
  if (head === mr.sha) return;
  if (target.id === source.id) await setRef(targetRepo, ref, head);
  const targetHead = await targetRepo.resolveCommit(`refs/heads/${mr.target_branch}`);
  const base = targetHead ? await targetRepo.mergeBase(targetHead, head) : null;
  const old = mr.sha;
  // The new commits: after the old head on a fast-forward, else (a force push) everything the version adds.
  const range = old && (await targetRepo.isAncestor(old, head)) ? `${old}..${head}` : base ? `${base}..${head}` : head;
  const [added, addedCount, version] = await Promise.all([
    targetRepo.log({ ref: range, limit: LISTED_COMMITS }), targetRepo.countCommits(range),
    diffVersionOf(targetRepo, { base, start: targetHead ?? head, head }),
  ]);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // Another refresh may have got here first: only the row still at the old head moves.
    const current = await trx.selectFrom('merge_requests').select(['sha', 'latest_diff_id']).where('id', '=', mr.id).executeTakeFirst();
    if (!current || current.sha !== old) return;
    const diffId = await insertDiffVersion(trx, mr.id, version, now);
    const after = await trx.updateTable('merge_requests').set({ sha: head, latest_diff_id: diffId, merge_status: 'unchecked', updated_at: now })
      .where('id', '=', mr.id).returningAll().executeTakeFirstOrThrow();
    const compare = old ? `/${target.full_path}/-/merge_requests/${mr.iid}/diffs?diff_id=${diffId}&start_sha=${old}` : null;
    const body = addedCommitsBody(added.map((c) => ({ short_id: c.short_id, title: c.title })), compare, addedCount);
    await writeSystemNote(trx, mergeRequestNoteable(after), userId ?? mr.author_id, body, now);
    await afterNewVersion(deps, trx, after, { previousDiffId: current.latest_diff_id, diffId });
    const actorId = userId ?? mr.author_id;
    if (actorId !== null) await emitEvent(deps, trx, { type: 'merge_request', action: 'update', projectId: after.target_project_id, mergeRequestId: after.id, actorId, changes: attributeChanges(mr, after, MERGE_REQUEST_CHANGE_KEYS), ...(old ? { oldrev: old } : {}) });
  });
}

/**
 * Runs inside the transaction that recorded a new diff version of a merge request (a push to its source branch):
 * the place where what depends on the diff follows it (diff threads whose lines changed become outdated).
 */
export async function afterNewVersion(deps: ServiceDeps, trx: Db, mr: MergeRequestRow, versions: { previousDiffId: number | null; diffId: number }): Promise<void> {
  if (versions.previousDiffId === null) return;
  const rows = await trx.selectFrom('merge_request_diffs').selectAll().where('id', 'in', [versions.previousDiffId, versions.diffId]).execute();
  const previous = rows.find((r) => r.id === versions.previousDiffId);
  const latest = rows.find((r) => r.id === versions.diffId);
  if (previous && latest) await markOutdatedDiffNotes(deps, trx, mr, previous, latest);
}
