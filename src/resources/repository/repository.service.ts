// Content without a clone: trees, files, commits (written through plumbing on the bare repository), compare, tags.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import type { UserRow } from '../../http/auth.ts';
import { NotFoundError, RuleError } from '../../platform/errors.ts';
import {
  FileExistsError, FileNotFoundError, RefExistsError, RefMovedError, StaleFileError, StartRefMissingError,
} from '../../platform/git/errors.ts';
import {
  normalisePath, type CommitInfo, type DiffEntry, type Identity, type Repository, type RefEntry,
} from '../../platform/git/repository.ts';
import { serialised, type CommitAction } from '../../platform/git/commit-writer.ts';
import { isValidBranchName, isValidTagName } from '../../platform/git/refs.ts';
import { canCreateTag, canPushBranch, loadBranchRules, loadTagRules, matching, type Caller } from './protection.ts';
import { afterRefsChanged, assertRefLength, defaultBranchOf, emitRefEvents } from './repository.common.ts';
import { SHA1_ZERO } from '../../platform/git/refs.ts';

export const READ_ONLY_TEXT = 'The repository is temporarily read-only. Please try again later.';

/** A file path from the URL or body: relative and normalised, or a 400 in the reference's words. */
export function filePath(p: string, param = 'file_path'): string {
  const n = normalisePath(p);
  if (!n) throw new RuleError('bad_request', { [param]: ['is invalid'] } as any);
  return n;
}

export async function resolveRef(repo: Repository, project: ProjectRow, ref: string | undefined): Promise<string | null> {
  const name = ref ?? (await defaultBranchOf(project, repo));
  if (!name) return null;
  const snap = await repo.branches();
  return snap.byName.get(name)?.commit.id ?? (await repo.resolveCommit(name));
}

// ---- writes ----

export interface CommitRequest {
  branch: string;
  start_branch?: string;
  start_sha?: string;
  commit_message: string;
  author_email?: string;
  author_name?: string;
  actions: CommitAction[];
}

/**
 * Applies actions as one commit on `branch`, creating the branch from start_branch / start_sha (or the empty
 * repository) when it does not exist. A concurrent writer moving the branch meanwhile makes the commit rebuild on
 * the new head; the actions are checked again against it.
 */
export async function commitFiles(deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, user: UserRow, req: CommitRequest): Promise<string> {
  if (project.repository_read_only) throw new RuleError('bad_request', READ_ONLY_TEXT);
  if (!isValidBranchName(req.branch)) throw new RuleError('bad_request', 'Branch name is invalid');
  const rules = await loadBranchRules(deps.db, project.id);
  if (!(await canPushBranch(deps.db, rules, req.branch, caller))) throw new RuleError('forbidden', '403 Forbidden - You are not allowed to push into this branch');
  if (req.start_branch && req.start_sha) throw new RuleError('bad_request', 'start_branch, start_sha are mutually exclusive');
  const date = new Date(deps.clock.now());
  const author = { name: req.author_name ?? user.name, email: req.author_email ?? user.email, date };
  const committer = { name: user.name, email: user.email, date };
  return serialised(repo.path, () => commitLoop(deps, project, repo, req, author, committer, user.id));
}

async function commitLoop(deps: ServiceDeps, project: ProjectRow, repo: Repository, req: CommitRequest, author: Identity, committer: Identity, userId: number): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const snap = await repo.branches();
    const current = snap.byName.get(req.branch)?.commit.id ?? null;
    let start = current;
    if (!current) {
      if (req.start_sha) {
        start = await repo.resolveCommit(req.start_sha);
        if (!start) throw new RuleError('bad_request', `Invalid start_sha: ${req.start_sha}`);
      } else if (req.start_branch) {
        start = snap.byName.get(req.start_branch)?.commit.id ?? null;
        if (!start) throw new RuleError('bad_request', `Invalid reference name: ${req.start_branch}`);
      } else if (snap.list.length > 0) {
        throw new RuleError('bad_request', 'You can only create or edit files when you are on a branch');
      }
    }
    try {
      await repo.ensure(req.branch);
      const { sha } = await repo.createCommit({
        branch: req.branch, ...(!current && start ? { startSha: start } : {}), expectedOldSha: current,
        message: req.commit_message, author, committer, actions: req.actions,
      });
      await afterRefsChanged(deps, project, repo, [`refs/heads/${req.branch}`]);
      await emitRefEvents(deps, project, null, userId, [{ ref: `refs/heads/${req.branch}`, before: current ?? SHA1_ZERO, after: sha }]);
      return sha;
    } catch (e) {
      if (e instanceof StaleFileError) throw new RuleError('bad_request', 'You are attempting to update a file that has changed since you started editing it.');
      if (e instanceof FileExistsError) throw new RuleError('bad_request', 'A file with this name already exists');
      if (e instanceof FileNotFoundError) throw new RuleError('bad_request', "A file with this name doesn't exist");
      // A branch that appeared meanwhile in an empty repository (StartRefMissingError) is a move like any other.
      const moved = e instanceof RefMovedError || e instanceof RefExistsError || e instanceof StartRefMissingError;
      if (moved && attempt < 4) continue;
      if (moved) throw new RuleError('bad_request', 'The branch changed while the commit was written; try again.');
      throw e;
    }
  }
}

// ---- reads ----

export async function fileAt(repo: Repository, commit: string, path: string) {
  const blob = await repo.blob(commit, path);
  if (!blob) throw new NotFoundError('File');
  return blob;
}

/** A file at a commit, with the last commit that changed it. */
export async function fileWithLastCommit(repo: Repository, commit: string, path: string) {
  const blob = await fileAt(repo, commit, path);
  const last = await repo.lastCommitFor(commit, path);
  return { blob, last };
}

export async function commitStats(repo: Repository, c: CommitInfo) {
  const from = c.parent_ids[0] ?? '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  const { stdout } = await repo.git(['diff', '--numstat', '-z', '--no-renames', from, c.id]);
  let additions = 0;
  let deletions = 0;
  for (const rec of stdout.toString('utf8').split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t/.exec(rec);
    if (!m) continue;
    additions += m[1] === '-' ? 0 : Number(m[1]);
    deletions += m[2] === '-' ? 0 : Number(m[2]);
  }
  return { additions, deletions, total: additions + deletions };
}

/** What a comparison found: the commits from the base to `to`, oldest first, and the diffs. */
export interface Comparison {
  commits: CommitInfo[];
  diffs: DiffEntry[];
  sameRef: boolean;
}

export async function compare(project: ProjectRow, repo: Repository, from: string, to: string, straight: boolean): Promise<Comparison> {
  const [a, b] = await Promise.all([resolveRef(repo, project, from), resolveRef(repo, project, to)]);
  if (!a || !b) throw new NotFoundError('Ref');
  const base = straight ? a : (await repo.mergeBase(a, b)) ?? a;
  const { stdout } = await repo.git(['rev-list', '--reverse', '--max-count=1000', `${base}..${b}`]);
  const shas = stdout.toString().split('\n').filter(Boolean);
  const commits: CommitInfo[] = shas.length ? (await repo.history({ ref: `${base}..${b}`, limit: 1000 })).reverse() : [];
  const diffs = a === b ? [] : await repo.compareDiff(base, b);
  return { commits, diffs, sameRef: a === b };
}

// ---- tags ----

export async function createTag(deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, user: UserRow, name: string, ref: string, message: string | undefined): Promise<RefEntry> {
  if (project.repository_read_only) throw new RuleError('bad_request', READ_ONLY_TEXT);
  if (!isValidTagName(name)) throw new RuleError('bad_request', 'Tag name invalid');
  const tags = await repo.tags();
  if (tags.byName.has(name)) throw new RuleError('bad_request', `Tag ${name} already exists`);
  const rules = await loadTagRules(deps.db, project.id);
  if (!(await canCreateTag(deps.db, rules, name, caller))) throw new RuleError('forbidden', '403 Forbidden');
  assertRefLength(ref);
  const target = await resolveRef(repo, project, ref);
  if (!target) throw new RuleError('bad_request', `Target ${ref} is invalid`);
  try {
    await repo.createTag(name, target, message?.trim() ? message : undefined, { name: user.name, email: user.email, date: new Date(deps.clock.now()) });
  } catch (e) {
    if (e instanceof RefExistsError) throw new RuleError('bad_request', `Tag ${name} already exists`);
    throw e;
  }
  await afterRefsChanged(deps, project, repo, [`refs/tags/${name}`]);
  const created = (await repo.tags()).byName.get(name);
  if (!created) throw new RuleError('bad_request', `Target ${ref} is invalid`);
  await emitRefEvents(deps, project, null, caller.userId, [{ ref: `refs/tags/${name}`, before: SHA1_ZERO, after: created.target }]);
  return created;
}

export async function deleteTag(deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, name: string): Promise<void> {
  if (project.repository_read_only) throw new RuleError('bad_request', READ_ONLY_TEXT);
  const tags = await repo.tags();
  const tag = tags.byName.get(name);
  if (!tag) throw new RuleError('not_found', 'No such tag');
  const rules = await loadTagRules(deps.db, project.id);
  if (matching(rules, name).length > 0 && caller.level < 40) {
    throw new RuleError('forbidden', 'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.');
  }
  try {
    await repo.deleteRef(`refs/tags/${name}`, tag.target);
  } catch (e) {
    if (e instanceof RefMovedError) throw new RuleError('bad_request', 'Failed to remove tag');
    throw e;
  }
  await afterRefsChanged(deps, project, repo, [`refs/tags/${name}`]);
  await emitRefEvents(deps, project, null, caller.userId, [{ ref: `refs/tags/${name}`, before: tag.target, after: SHA1_ZERO }]);
}
