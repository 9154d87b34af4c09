import type { ServiceDeps } from '../../platform/deps.ts';
import type { MergeRequestRow } from './merge-requests.service.ts';

// What the merge request entities say about whether a merge request can be merged. The one place these fields are
// decided: the presenter only copies them. Until mergeability is computed with git (`git merge-tree` per target and
// source head, the merge_request_mergeability table), the stored `merge_status` speaks.

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

/** The fields for each merge request of a page, keyed by merge request id (one batch for a whole list). */
export async function mergeabilityFields(_deps: ServiceDeps, rows: readonly MergeRequestRow[]): Promise<Map<number, MergeabilityFields>> {
  const out = new Map<number, MergeabilityFields>();
  for (const mr of rows) {
    const status = mr.merge_status;
    const rechecking = status === 'cannot_be_merged_recheck' || status === 'checking';
    let detailed: string;
    if (status === 'unchecked') detailed = 'unchecked';
    else if (rechecking) detailed = 'checking';
    else if (mr.state !== 'opened') detailed = 'not_open';
    else if (mr.draft) detailed = 'draft_status';
    else if (status === 'cannot_be_merged') detailed = 'conflict';
    else detailed = 'mergeable';
    out.set(mr.id, {
      merge_status: rechecking ? 'checking' : status,
      detailed_merge_status: detailed,
      has_conflicts: status === 'cannot_be_merged' || status === 'cannot_be_merged_recheck',
      diverged_commits_count: null,
      blocking_discussions_resolved: true,
    });
  }
  return out;
}
