import type { Config } from '../../config/index.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import type { CommitInfo, DiffFile } from '../../platform/git/repository.ts';
import { iso } from '../../http/format.ts';
import { presentCommit, presentDiff } from '../repository/repository.presenter.ts';
import type { DiffVersionRow } from './diffs.service.ts';

// The merge request diff version entities, field order as the reference's.

export function versionEntity(v: DiffVersionRow) {
  return {
    id: v.id,
    head_commit_sha: v.head_commit_sha,
    base_commit_sha: v.base_commit_sha,
    start_commit_sha: v.start_commit_sha,
    created_at: iso(v.created_at),
    merge_request_id: v.merge_request_id,
    state: v.state,
    real_size: v.real_size,
    patch_id_sha: null,
  };
}

export function versionFullEntity(config: Config, project: ProjectRow, v: DiffVersionRow, commits: CommitInfo[], files: readonly DiffFile[], unidiff = false) {
  return {
    ...versionEntity(v),
    commits: commits.map((c) => presentCommit(config, project, c)),
    diffs: files.map((f) => presentDiff(f, unidiff)),
  };
}
