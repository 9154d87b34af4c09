// What clients do with single commits and blobs besides reading them: their diff and the refs holding them, cherry-pick
// and revert (through the one commit writer), merge bases, blame, signatures, contributors, blobs by id and archives.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import type { UserRow } from '../../http/auth.ts';
import { CommitChangeError, NotFoundError, RuleError } from '../../platform/errors.ts';
import { InvalidInputError, RefMovedError } from '../../platform/git/errors.ts';
import { EMPTY_TREE_SHA1 } from '../../platform/git/refs.ts';
import { serialised } from '../../platform/git/commit-writer.ts';
import type { ArchiveFormat, CommitInfo, Repository } from '../../platform/git/repository.ts';
import { signatureKeyId } from '../../platform/crypto/gpg-keys.ts';
import { checkGpgSignature } from '../../platform/crypto/gpg-verify.ts';
import { canPushBranch, loadBranchRules, type Caller } from './protection.ts';
import { afterRefsChanged, defaultBranchOf } from './repository.common.ts';
import { READ_ONLY_TEXT, resolveRef } from './repository.service.ts';
import type { CommitDiffLine, Noteable } from '../notes/notes.service.ts';

/** A commit the caller names (sha, branch or tag), or 404 Commit Not Found. */
export async function findCommit(repo: Repository, project: ProjectRow, rev: string): Promise<CommitInfo> {
  const sha = await resolveRef(repo, project, rev);
  const commit = sha ? await repo.commit(sha) : null;
  if (!commit) throw new NotFoundError('Commit');
  return commit;
}

/** The commit's changes against its first parent (a root commit against the empty tree). */
export function commitDiff(repo: Repository, commit: CommitInfo) {
  return repo.compareDiff(commit.parent_ids[0] ?? EMPTY_TREE_SHA1, commit.id);
}

// ---- comments ----

/** A commit as the noteable of its comments: no row of its own (id 0), named by project and sha. */
export function commitNoteable(project: ProjectRow, commit: CommitInfo): Noteable {
  return { type: 'Commit', id: 0, iid: 0, projectId: project.id, locked: false, commitId: commit.id };
}

/**
 * The line of the commit's diff a comment names, as the reference finds it: in the file whose new path is `path`,
 * the line of type `line_type` ('new': added, 'old': removed) whose position on the new side is `line`. None (a
 * line the diff does not show) makes the comment a plain one on the commit, as there.
 */
export async function commitDiffLine(repo: Repository, commit: CommitInfo, at: CommitDiffLine): Promise<CommitDiffLine | null> {
  const file = (await commitDiff(repo, commit)).find((d) => d.new_path === at.path);
  if (!file) return null;
  let newPos = 0;
  for (const text of file.diff.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) { newPos = Number(hunk[1]); continue; }
    const type = text[0] === '+' ? 'new' : text[0] === '-' ? 'old' : text[0] === ' ' ? null : undefined;
    if (type === undefined) continue;
    if (type === at.line_type && newPos === at.line) return at;
    if (type !== 'old') newPos++;
  }
  return null;
}

// ---- cherry-pick and revert ----

export type ChangeMode = 'cherry-pick' | 'revert';

export interface ChangeRequest {
  sha: string;
  branch: string;
  dryRun: boolean;
  /** Cherry-pick only: replaces the generated message. */
  message?: string;
}

function refusal(mode: ChangeMode): string {
  const verb = mode === 'cherry-pick' ? 'cherry-pick' : 'revert';
  return `Sorry, we cannot ${verb} this commit automatically. This commit may already have been ${verb}ed, or a more recent commit may have updated some of its content.`;
}

/**
 * Applies a commit's change (cherry-pick) or its inverse (revert) on top of `branch` as one new commit. A change
 * that conflicts or changes nothing is refused with the reference's sentence and error code; `dryRun` stops before
 * anything is written. Returns the new commit's sha, or null for a dry run that would succeed.
 */
export async function changeCommit(
  deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, user: UserRow, mode: ChangeMode, req: ChangeRequest,
): Promise<string | null> {
  if (project.repository_read_only) throw new RuleError('bad_request', READ_ONLY_TEXT);
  const rules = await loadBranchRules(deps.db, project.id);
  if (!(await canPushBranch(deps.db, rules, req.branch, caller))) {
    throw new RuleError('forbidden', '403 Forbidden - You are not allowed to push into this branch');
  }
  const commit = await findCommit(repo, project, req.sha);
  const original = await repo.getCommit(commit.id);
  if (!original) throw new NotFoundError('Commit');
  const now = new Date(deps.clock.now());
  const committer = { name: user.name, email: user.email, date: now };
  // A cherry-pick keeps the original author; a revert is the caller's own change.
  const author = mode === 'cherry-pick' ? { name: original.author_name, email: original.author_email, date: original.authored_date } : committer;
  const message = mode === 'cherry-pick'
    ? (req.message ?? `${original.message}\n\n(cherry picked from commit ${original.id})`)
    : `Revert "${original.title.trim()}"\n\nThis reverts commit ${original.id}`;
  return serialised(repo.path, async () => {
    for (let attempt = 0; ; attempt++) {
      const head = (await repo.branches()).byName.get(req.branch)?.commit.id;
      if (!head) throw new NotFoundError('Branch');
      const [tree, headTree] = await Promise.all([repo.applyChangeTree(original.id, head, mode), repo.treeOf(head)]);
      if (tree === null) throw new CommitChangeError(refusal(mode), 'conflict', req.dryRun);
      if (tree === headTree) throw new CommitChangeError(refusal(mode), 'empty', req.dryRun);
      if (req.dryRun) return null;
      try {
        const { sha } = await repo.createTreeCommit({ branch: req.branch, tree, parent: head, message, author, committer });
        await afterRefsChanged(deps, project, repo, [`refs/heads/${req.branch}`]);
        return sha;
      } catch (e) {
        if (e instanceof RefMovedError && attempt < 4) continue;
        if (e instanceof RefMovedError) throw new RuleError('bad_request', 'The branch changed while the commit was written; try again.');
        throw e;
      }
    }
  });
}

// ---- merge base ----

export async function mergeBase(repo: Repository, project: ProjectRow, refs: string[]): Promise<CommitInfo> {
  if (refs.length < 2) throw new RuleError('bad_request', 'Provide at least 2 refs');
  const shas = await Promise.all(refs.map((r) => resolveRef(repo, project, r)));
  const unknown = refs.filter((_, i) => !shas[i]);
  if (unknown.length > 0) throw new RuleError('bad_request', `Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}`);
  const base = await repo.mergeBaseOf(shas as string[]);
  const commit = base ? await repo.commit(base) : null;
  if (!commit) throw new NotFoundError('Merge Base');
  return commit;
}

// ---- blame ----

/** Blame of a file at a resolved commit (the route has found the file); `range` as the reference checks it. */
export async function blame(repo: Repository, commit: string, path: string, range?: { start: number; end: number }) {
  if (range && range.start > range.end) throw new RuleError('bad_request', 'range[start] must be less than or equal to range[end]');
  let groups;
  try {
    groups = await repo.blame(commit, path, range);
  } catch (e) {
    if (e instanceof InvalidInputError) throw new RuleError('bad_request', 'range[start] is outside of the file');
    throw e;
  }
  if (!groups) throw new NotFoundError('File');
  const commits = await repo.getCommits([...new Set(groups.map((g) => g.commit))]);
  return groups.map((g) => ({ commit: commits.get(g.commit)!, lines: g.lines }));
}

// ---- signature ----

export interface SignatureView {
  type: 'PGP' | 'SSH' | 'X509';
  keyId: string | null;
  key: { id: number; user_name: string | null; user_email: string | null } | null;
  /** The reference's verification_status. */
  status: string;
}

/**
 * The signature a commit carries and its verification as the reference reports it: a GPG signature by a key of
 * this instance is checked against that key, then the committer's e-mail against the key's user ids that are
 * confirmed e-mails of its owner (verified, same_user_different_email, other_user; unverified for a bad signature,
 * unverified_key when no user id of the key is a confirmed e-mail of its owner, unknown_key for a key not here).
 */
export async function commitSignature(deps: ServiceDeps, repo: Repository, commit: CommitInfo): Promise<SignatureView> {
  const sig = await repo.commitSignature(commit.id);
  if (!sig) throw new NotFoundError('Signature');
  if (sig.signature.startsWith('-----BEGIN SSH SIGNATURE-----')) return { type: 'SSH', keyId: null, key: null, status: 'unknown_key' };
  if (!sig.signature.startsWith('-----BEGIN PGP SIGNATURE-----')) return { type: 'X509', keyId: null, key: null, status: 'unverified' };
  const keyId = signatureKeyId(sig.signature.trim());
  const row = keyId
    ? await deps.db.selectFrom('gpg_keys').innerJoin('users', 'users.id', 'gpg_keys.user_id')
      .select(['gpg_keys.id as id', 'gpg_keys.key as key', 'users.id as user_id', 'users.email as email', 'users.confirmed_at as confirmed_at'])
      .where('gpg_keys.primary_keyid', '=', keyId).executeTakeFirst()
    : undefined;
  if (!row) return { type: 'PGP', keyId, key: null, status: 'unknown_key' };
  const [check, extra] = await Promise.all([
    checkGpgSignature(row.key, sig.signature, sig.payload),
    deps.db.selectFrom('emails').select(['email', 'confirmed_at']).where('user_id', '=', row.user_id).execute(),
  ]);
  const all = [{ email: row.email, confirmed_at: row.confirmed_at }, ...extra];
  const confirmed = new Set(all.filter((e) => e.confirmed_at !== null).map((e) => e.email.toLowerCase()));
  const owned = new Set(all.map((e) => e.email.toLowerCase()));
  const verifiedUids = check.uids.filter((u) => confirmed.has(u.email.toLowerCase()));
  const shown = verifiedUids[0] ?? check.uids[0] ?? null;
  const committer = commit.committer_email.toLowerCase();
  const status = verifiedUids.length === 0 ? 'unverified_key'
    : !check.valid ? 'unverified'
      : verifiedUids.some((u) => u.email.toLowerCase() === committer) ? 'verified'
        : owned.has(committer) ? 'same_user_different_email' : 'other_user';
  return { type: 'PGP', keyId, key: { id: row.id, user_name: shown?.name ?? null, user_email: shown?.email ?? null }, status };
}

// ---- contributors ----

export interface Contributor {
  name: string;
  email: string;
  commits: number;
  additions: number;
  deletions: number;
}

/**
 * Authors of the newest 2000 commits of `ref` (the default branch), merges left out, one entry per e-mail with the
 * newest name it used. Line counts are not kept: additions and deletions are 0, as the reference shows them.
 */
export async function contributors(repo: Repository, project: ProjectRow, ref: string | undefined, orderBy: 'name' | 'email' | 'commits', sort: 'asc' | 'desc'): Promise<Contributor[]> {
  const name = ref ?? (await defaultBranchOf(project, repo));
  if (!name) return [];
  const sha = await resolveRef(repo, project, name);
  if (!sha) return [];
  const byEmail = new Map<string, Contributor>();
  for (const a of await repo.commitAuthors(sha)) {
    let c = byEmail.get(a.email);
    if (!c) byEmail.set(a.email, (c = { name: a.name, email: a.email, commits: 0, additions: 0, deletions: 0 }));
    if (!c.name) c.name = a.name;
    c.commits++;
  }
  const dir = sort === 'desc' ? -1 : 1;
  return [...byEmail.values()].sort((a, b) => {
    const x = a[orderBy];
    const y = b[orderBy];
    return dir * (x < y ? -1 : x > y ? 1 : 0);
  });
}

// ---- archives ----

/** The format an archive request names (the URL suffix or `format`): the reference's aliases, tar.gz otherwise. */
export function archiveFormat(format: string | undefined): ArchiveFormat {
  switch ((format ?? 'tar.gz').toLowerCase()) {
    case 'tar.bz2': case 'tbz': case 'tbz2': case 'tb2': case 'bz2': return 'tar.bz2';
    case 'tar': return 'tar';
    case 'zip': return 'zip';
    default: return 'tar.gz';
  }
}

/**
 * What an archive download is: the commit, and the name of both the file and its top directory
 * ("<project path>-<ref with / as ->-<sha>[-<path with / as ->]").
 */
export async function archiveOf(repo: Repository, project: ProjectRow, sha: string | undefined, path: string | undefined) {
  const ref = sha ?? (await defaultBranchOf(project, repo));
  const commit = ref ? await resolveRef(repo, project, ref) : null;
  if (!ref || !commit) throw new NotFoundError('File');
  if (path !== undefined && !(await repo.pathExists(commit, path))) throw new NotFoundError('File');
  const segments = [project.path, ref.replaceAll('/', '-'), commit];
  if (path !== undefined) segments.push(path.replaceAll('/', '-'));
  return { commit, prefix: segments.join('-') };
}

export const ARCHIVE_EXTENSION: Record<ArchiveFormat, string> = { 'tar': 'tar', 'tar.gz': 'tar.gz', 'tar.bz2': 'tar.bz2', 'zip': 'zip' };
