import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { MergeRequestDiffsTable } from '../../platform/db/schema.ts';
import { RecordNotFoundError } from '../../platform/errors.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import type { CommitInfo, DiffFile, Repository } from '../../platform/git/repository.ts';
import { MAX_DIFF_FILES, type MergeRequestRow } from './merge-requests.service.ts';

// A merge request's diffs, always computed by git from a version's commits: the version's merge base (its start,
// the target head, when the two branches share no history) against its head. A commit pair never changes, so a
// computed diff is kept under that pair for whoever asks next.

export type DiffVersionRow = Selectable<MergeRequestDiffsTable>;

/** The commit a version's diff starts from: the merge base, or the target head when there is none. */
export const diffFrom = (v: Pick<DiffVersionRow, 'base_commit_sha' | 'start_commit_sha'>) => v.base_commit_sha ?? v.start_commit_sha;

/** The changed files between two commits (the repository's parsed diff), cached by the immutable pair. */
export function diffBetween(deps: ServiceDeps, repo: Repository, from: string, to: string): Promise<readonly DiffFile[]> {
  return deps.caches.define<string, readonly DiffFile[]>('merge-request-diffs', { max: 32, version: () => 0 })
    .get(`${from}..${to}`, async () => Object.freeze(await repo.diff(from, to)), 0);
}

/** A version's changed files; an empty list for a version whose commits are missing. */
export async function versionFiles(deps: ServiceDeps, repo: Repository, v: DiffVersionRow): Promise<readonly DiffFile[]> {
  const from = diffFrom(v);
  if (!from || !v.head_commit_sha) return [];
  return diffBetween(deps, repo, from, v.head_commit_sha);
}

/** The files the reference shows without asking for raw diffs: the first diff_max_files, and whether there were more. */
export function limitedFiles(files: readonly DiffFile[]): { files: readonly DiffFile[]; overflow: boolean } {
  return files.length > MAX_DIFF_FILES ? { files: files.slice(0, MAX_DIFF_FILES), overflow: true } : { files, overflow: false };
}

/** The versions of a merge request, newest first. */
export function versionsQuery(db: Db, mr: MergeRequestRow) {
  return db.selectFrom('merge_request_diffs').selectAll().where('merge_request_id', '=', mr.id).orderBy('id', 'desc');
}

/** One version of the merge request: "404 Not found" otherwise, as the reference's `find` answers. */
export async function findVersion(db: Db, mr: MergeRequestRow, id: number): Promise<DiffVersionRow> {
  const row = fitsIntColumn(id) ? await versionsQuery(db, mr).where('id', '=', id).executeTakeFirst() : undefined;
  if (!row) throw new RecordNotFoundError();
  return row;
}

/** The commits a version adds (merge base to head), newest first. */
export async function versionCommits(repo: Repository, v: DiffVersionRow): Promise<CommitInfo[]> {
  const from = diffFrom(v);
  if (!v.head_commit_sha) return [];
  return repo.log({ ref: from ? `${from}..${v.head_commit_sha}` : v.head_commit_sha, limit: 10_000 });
}
