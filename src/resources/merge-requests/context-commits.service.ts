import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { isUniqueViolation } from '../../platform/db/dialect.ts';
import { RuleError } from '../../platform/errors.ts';
import type { CommitInfo } from '../../platform/git/commit.ts';
import type { Repository } from '../../platform/git/repository.ts';
import { setRef, type MergeRequestRow } from './merge-requests.service.ts';

// A merge request's context commits: commits of the target project's repository added to the merge request to
// review it in context. Each is kept by its own ref (`refs/merge-requests/<iid>/context/<sha>`), so garbage
// collection keeps it however the branches move; the rows keep their order.

/** The reference's CONTEXT_COMMITS_POST_LIMIT. */
export const CONTEXT_COMMITS_LIMIT = 20;
const INVALID = "One or more context commits' sha is not valid.";

export const contextRef = (iid: number, sha: string) => `refs/merge-requests/${iid}/context/${sha}`;

/** The stored context commits, in the order they were added (for pagination). */
export function contextCommitsQuery(db: Db, mr: MergeRequestRow) {
  return db.selectFrom('merge_request_context_commits').selectAll().where('merge_request_id', '=', mr.id).orderBy('relative_order').orderBy('id');
}

/** The commits of these rows, read from the repository (their refs keep them), in the rows' order. */
export async function contextCommitsOf(repo: Repository, shas: string[]): Promise<CommitInfo[]> {
  const found = await repo.getCommits(shas);
  return shas.map((s) => found.get(s)).filter((c): c is CommitInfo => !!c);
}

/** SHAs as given: a full sha or a prefix of hexadecimal digits; anything else names no commit. */
const looksLikeSha = (s: string) => /^[0-9a-f]{4,64}$/i.test(s);

/** The commits the SHAs name in the repository, each once; fewer than asked for is the reference's 400. */
async function resolveAll(repo: Repository, shas: string[]): Promise<CommitInfo[]> {
  if (shas.some((s) => !looksLikeSha(s))) throw new RuleError('bad_request', INVALID);
  const found = await repo.getCommits(shas.map((s) => s.toLowerCase()));
  const unique = new Map([...found.values()].map((c) => [c.id, c]));
  if (unique.size < shas.length) throw new RuleError('bad_request', INVALID);
  return shas.map((s) => found.get(s.toLowerCase())!);
}

/**
 * Adds context commits (the caller's right to update the merge request was checked): refused when one of them is
 * already a context commit (listing the stored full SHAs, as the reference) or any SHA names no commit of the
 * target repository. Returns the added commits in the order given.
 */
export async function addContextCommits(deps: ServiceDeps, repo: Repository, mr: MergeRequestRow, shas: string[]): Promise<CommitInfo[]> {
  const existing = await contextCommitsQuery(deps.db, mr).execute();
  const duplicates = existing.filter((e) => shas.some((s) => e.sha.startsWith(s.toLowerCase()))).map((e) => e.sha);
  if (duplicates.length) throw duplicateError(duplicates);
  const commits = await resolveAll(repo, shas);
  // The refs first: a row never names a commit nothing keeps (a ref left by a failed insert only keeps a commit).
  for (const c of commits) await setRef(repo, contextRef(mr.iid, c.id), c.id);
  const now = deps.clock.now();
  try {
    await deps.db.transaction().execute(async (trx) => {
      const last = await trx.selectFrom('merge_request_context_commits').select((eb) => eb.fn.max('relative_order').as('n'))
        .where('merge_request_id', '=', mr.id).executeTakeFirst();
      const start = last?.n === null || last?.n === undefined ? 0 : Number(last.n) + 1;
      await trx.insertInto('merge_request_context_commits')
        .values(commits.map((c, i) => ({ merge_request_id: mr.id, sha: c.id, relative_order: start + i, created_at: now }))).execute();
    });
  } catch (e) {
    // Added meanwhile by another request.
    if (isUniqueViolation(e)) throw duplicateError(commits.map((c) => c.id));
    throw e;
  }
  return commits;
}

const duplicateError = (shas: string[]) => new RuleError('bad_request', `Context commits: [${shas.map((s) => JSON.stringify(s)).join(', ')}] are already created`);

/** Removes context commits (SHAs that are not context commits are ignored; each must name a commit) and their refs. */
export async function removeContextCommits(deps: ServiceDeps, repo: Repository, mr: MergeRequestRow, shas: string[]): Promise<void> {
  const commits = await resolveAll(repo, shas);
  const ids = [...new Set(commits.map((c) => c.id))];
  const removed = await deps.db.deleteFrom('merge_request_context_commits').where('merge_request_id', '=', mr.id).where('sha', 'in', ids)
    .returning('sha').execute();
  for (const r of removed) {
    try {
      await repo.deleteRef(contextRef(mr.iid, r.sha), r.sha);
    } catch {
      // already gone
    }
  }
}
