// A project's bare repository: refs with their commits (cached per repository, invalidated explicitly on every
// ref change), history, trees, blobs, and commits written through plumbing with a compare-and-swap ref update.
import { runGit, GitError, type GitRunOptions } from './command.ts';
import { isFullSha, isSafeRevision, SHA1_ZERO } from './refs.ts';
import { RefExistsError, RefMovedError, RepositoryExistsError } from './errors.ts';
import { Repository, invalidateRefCache, type Branch, type DiffFile, type Tag } from './repository.ts';
import { LOG_FORMAT as COMMIT_LOG_FORMAT, parseLog as parsePlatformLog, type CommitInfo } from './commit.ts';

export type { CommitInfo } from './commit.ts';

export interface RefEntry {
  /** Short name: "main", "feature/x", "v1.0". */
  name: string;
  lower: string;
  /** The object the ref points at (a tag object for annotated tags). */
  target: string;
  commit: CommitInfo;
  /** Annotated tags only. */
  tag?: { message: string; taggerName: string; taggerEmail: string; date: string } | null;
}

export interface RefSnapshot {
  /** Sorted by name (byte order, as git sorts). */
  list: RefEntry[];
  byName: Map<string, RefEntry>;
  /** Filled on first need: branch names merged into the named target. */
  merged: Map<string, Promise<Set<string>>>;
  /** Results of recent filters over this snapshot (search text -> entries), dropped with it. */
  filtered?: Map<string, RefEntry[]>;
}

// The log format and parsing are the platform's, so history, branches and tags parse one way; the API shows
// datetimes with milliseconds and the commit's own offset.
const LOG_FORMAT = `--format=${COMMIT_LOG_FORMAT}`;
const withMillis = (d: string) => d.replace(/^(.{19})(?=[+-]|Z)/, '$1.000');

function parseLog(out: Buffer): CommitInfo[] {
  return parsePlatformLog(out).map(fromPlatform);
}

// ---- ref cache ----------------------------------------------------------------------------------
// The branch and tag lists come from the platform Repository's ref cache, so one invalidation (ours after API
// writes and pushes, or the platform's after its own writes) serves every reader. The indexed snapshot built
// from a cached list is kept beside that list and lives exactly as long as it.

const snapshots = new WeakMap<readonly unknown[], RefSnapshot>();
let refReads = 0;

/** How many ref snapshots were built from git output (tests and the benchmark use it to prove cache hits). */
export function refReadCount(): number {
  return refReads;
}

/** Forgets the cached refs of a repository; call after anything that moves a ref. */
export function invalidateRefs(path: string): void {
  invalidateRefCache(path);
}

function fromPlatform(c: CommitInfo): CommitInfo {
  return {
    ...c,
    created_at: withMillis(c.created_at),
    authored_date: withMillis(c.authored_date),
    committed_date: withMillis(c.committed_date),
  };
}

function snapshotOf<T extends { name: string }>(list: readonly T[], toEntry: (x: T) => RefEntry | null): RefSnapshot {
  let snap = snapshots.get(list);
  if (!snap) {
    refReads++;
    const entries: RefEntry[] = [];
    for (const x of list) {
      const e = toEntry(x);
      if (e) entries.push(e);
    }
    // Byte order, as git sorts refnames.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    snap = { list: entries, byName: new Map(entries.map((r) => [r.name, r])), merged: new Map() };
    snapshots.set(list, snap);
  }
  return snap;
}

const branchEntry = (b: Branch): RefEntry => ({ name: b.name, lower: b.name.toLowerCase(), target: b.sha, commit: fromPlatform(b.commit) });
const tagEntry = (t: Tag): RefEntry | null => t.commit
  ? {
    name: t.name, lower: t.name.toLowerCase(), target: t.target, commit: fromPlatform(t.commit),
    tag: t.annotated ? { message: t.message ?? '', taggerName: t.tagger?.name ?? '', taggerEmail: t.tagger?.email ?? '', date: withMillis(t.tagger?.date ?? '') } : null,
  }
  : null;

const EMPTY: RefSnapshot = { list: [], byName: new Map(), merged: new Map() };

// ---- writers ----

const writeLocks = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier writer of the same repository in this process has finished. Writers in other
 * processes are kept apart by the compare-and-swap ref updates; this only avoids needless retries here.
 */
export function serialised<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const prev = writeLocks.get(path) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  writeLocks.set(path, tail);
  void tail.then(() => {
    if (writeLocks.get(path) === tail) writeLocks.delete(path);
  });
  return run;
}

// ---- identities and actions --------------------------------------------------------------------

export interface TreeEntry {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

/** A changed file as the compare API shows it (the platform's DiffFile without its size flag). */
export type DiffEntry = Omit<DiffFile, 'too_large'>;

/** A repository path inside the tree, as the API takes it: relative, normalised, no "." or ".." parts, no NUL. */
export function normalisePath(p: string): string | null {
  if (typeof p !== 'string') return null;
  const parts = p.split('/').filter((x) => x !== '');
  if (parts.length === 0) return null;
  for (const x of parts) if (x === '.' || x === '..' || x === '.git' || x.includes('\0') || /[\n\r]/.test(x)) return null;
  return parts.join('/');
}

export class ProjectRepository {
  constructor(readonly path: string) {}

  /** A repository cut short while being made (HEAD but no object store) counts as missing: it reads as empty. */
  exists(): boolean {
    return Repository.exists(this.path);
  }

  /** Creates the bare repository if it is missing (a project whose repository is not on disk reads as empty). */
  async ensure(defaultBranch = 'main'): Promise<void> {
    if (this.exists()) return;
    // Two requests may bring the same repository into being at once; the loser finds it made.
    await Repository.init(this.path, { defaultBranch }).catch((e) => {
      if (!(e instanceof RepositoryExistsError)) throw e;
    });
  }

  git(args: string[], opts: GitRunOptions = {}) {
    return runGit(args, { ...opts, gitDir: this.path });
  }

  // ---- refs ----

  platform(): Repository {
    return new Repository(this.path);
  }

  async branches(): Promise<RefSnapshot> {
    if (!this.exists()) return EMPTY;
    return snapshotOf(await this.platform().listBranches(), branchEntry);
  }

  async tags(): Promise<RefSnapshot> {
    if (!this.exists()) return EMPTY;
    return snapshotOf(await this.platform().listTags(), tagEntry);
  }

  /** Names of branches merged into `target` (one git call per snapshot and target). */
  async mergedInto(target: string): Promise<Set<string>> {
    const snap = await this.branches();
    const head = snap.byName.get(target);
    if (!head) return new Set();
    let p = snap.merged.get(target);
    if (!p) {
      p = this.git(['for-each-ref', '--format=%(refname)', `--merged=${head.commit.id}`, 'refs/heads/']).then(({ stdout }) =>
        new Set(stdout.toString('utf8').split('\n').filter(Boolean).map((r) => r.slice('refs/heads/'.length))));
      snap.merged.set(target, p);
      p.catch(() => snap.merged.delete(target));
    }
    return p;
  }

  async headBranch(): Promise<string | null> {
    if (!this.exists()) return null;
    const r = await this.git(['symbolic-ref', '--quiet', 'HEAD'], { okExitCodes: [1] });
    const ref = r.stdout.toString().trim();
    return r.code === 0 && ref.startsWith('refs/heads/') ? ref.slice(11) : null;
  }

  async setHead(branch: string): Promise<void> {
    await this.git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
    // HEAD is part of what fetches are told (ls-refs).
    invalidateRefs(this.path);
  }

  /** A revision the caller named (branch, tag or full/short sha) to a commit sha; null when it names nothing. */
  async resolveCommit(rev: string): Promise<string | null> {
    if (!this.exists() || !isSafeRevision(rev) || rev.includes('..')) return null;
    const r = await this.git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], { okExitCodes: [1, 128] });
    const sha = r.stdout.toString().trim();
    return r.code === 0 && isFullSha(sha) ? sha : null;
  }

  async commit(sha: string): Promise<CommitInfo | null> {
    const list = await this.log({ ref: sha, limit: 1, noWalk: true });
    return list[0] ?? null;
  }

  async log(o: { ref: string; path?: string; since?: number; until?: number; skip?: number; limit: number; noWalk?: boolean; firstParent?: boolean; all?: boolean }): Promise<CommitInfo[]> {
    if (!this.exists()) return [];
    const args = ['log', LOG_FORMAT, `--max-count=${o.limit}`];
    if (o.noWalk) args.push('--no-walk');
    if (o.skip) args.push(`--skip=${o.skip}`);
    if (o.since !== undefined) args.push(`--since=@${Math.floor(o.since / 1000)}`);
    if (o.until !== undefined) args.push(`--until=@${Math.floor(o.until / 1000)}`);
    if (o.firstParent) args.push('--first-parent');
    if (o.all) args.push('--all');
    else args.push('--end-of-options', o.ref);
    args.push('--');
    if (o.path) args.push(o.path);
    const { stdout } = await this.git(args);
    return parseLog(stdout);
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const r = await this.git(['merge-base', '--is-ancestor', ancestor, descendant], { okExitCodes: [1] });
    return r.code === 0;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const r = await this.git(['merge-base', a, b], { okExitCodes: [1] });
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /**
   * Compare-and-swap: `expected` null means the ref must not exist yet. Throws RefExistsError or RefMovedError
   * only when the ref is found where the caller did not expect it (or a ref in its way exists); any other
   * failure (a timeout, a broken object store) stays a GitError.
   */
  async updateRef(ref: string, newSha: string, expected: string | null): Promise<void> {
    try {
      await this.git(['update-ref', '--no-deref', '--end-of-options', ref, newSha, expected ?? SHA1_ZERO]);
    } catch (e) {
      throw await this.refConflict(e, ref, expected);
    } finally {
      invalidateRefs(this.path);
    }
  }

  async deleteRef(ref: string, expected: string): Promise<void> {
    try {
      await this.git(['update-ref', '--no-deref', '-d', '--end-of-options', ref, expected]);
    } catch (e) {
      throw await this.refConflict(e, ref, expected);
    } finally {
      invalidateRefs(this.path);
    }
  }

  /** The domain error for a failed ref update when the ref's current state explains it, else the failure itself. */
  private async refConflict(e: unknown, ref: string, expected: string | null): Promise<unknown> {
    if (!(e instanceof GitError) || e.reason !== 'exit') return e;
    // A ref in the way ("refs/heads/a/b" exists, so "refs/heads/a" cannot; or the reverse).
    if (expected === null && /' exists; cannot create '/.test(e.stderr)) return new RefExistsError(ref);
    const r = await this.git(['rev-parse', '--verify', '--quiet', '--end-of-options', ref], { okExitCodes: [1] }).catch(() => null);
    if (!r) return e;
    const actual = r.code === 0 ? r.stdout.toString().trim() : null;
    if (actual === expected) return e;
    return expected === null ? new RefExistsError(ref) : new RefMovedError(ref, expected, actual);
  }

  // ---- trees and blobs ----

  async tree(commit: string, path: string | null, recursive: boolean): Promise<TreeEntry[] | null> {
    const spec = path ? `${commit}:${path}` : `${commit}^{tree}`;
    const t = await this.git(['cat-file', '-t', spec], { okExitCodes: [128] });
    if (t.code !== 0 || t.stdout.toString().trim() !== 'tree') return null;
    const args = ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), '--end-of-options', spec];
    const { stdout } = await this.git(args);
    const out: TreeEntry[] = [];
    for (const line of stdout.toString('utf8').split('\0')) {
      if (!line) continue;
      const tab = line.indexOf('\t');
      const [mode, type, id] = line.slice(0, tab).split(' ');
      const rel = line.slice(tab + 1);
      const full = path ? `${path}/${rel}` : rel;
      out.push({ id, name: rel.split('/').pop()!, type: type as TreeEntry['type'], path: full, mode });
    }
    return out;
  }

  /** The blob at `path` in `commit`: its sha, mode and content, or null. */
  async blob(commit: string, path: string): Promise<{ id: string; mode: string; size: number; content: Buffer } | null> {
    const r = await this.git(['ls-tree', '-z', '--end-of-options', commit, '--', path], { okExitCodes: [128] });
    if (r.code !== 0) return null;
    const line = r.stdout.toString('utf8').split('\0').find((l) => l && l.slice(l.indexOf('\t') + 1) === path);
    if (!line) return null;
    const [mode, type, id] = line.slice(0, line.indexOf('\t')).split(' ');
    if (type !== 'blob') return null;
    const content = (await this.git(['cat-file', 'blob', id])).stdout;
    return { id, mode, size: content.length, content };
  }

  /** The last commit reachable from `commit` that touched `path`. */
  async lastCommitFor(commit: string, path: string): Promise<string | null> {
    const { stdout } = await this.git(['log', '--format=%H', '--max-count=1', '--end-of-options', commit, '--', path]);
    return stdout.toString().trim() || null;
  }

  // ---- diffs ----

  async diff(from: string, to: string): Promise<DiffEntry[]> {
    const { stdout } = await this.git(['diff', '--no-color', '--no-ext-diff', '-M', '--full-index', '--raw', '-p', '-z', '--end-of-options', from, to, '--'], { maxBuffer: 32 * 1024 * 1024 });
    return parseRawPatch(stdout.toString('utf8'));
  }
}

/**
 * Parses `git diff --raw -p -z`: first the raw records (":a_mode b_mode a b status\0path\0[path\0]"), then the
 * patch text, split on "diff --git" headers in the same order.
 */
function parseRawPatch(text: string): DiffEntry[] {
  const entries: DiffEntry[] = [];
  let i = 0;
  while (text[i] === ':') {
    const end = text.indexOf('\0', i);
    const [aMode, bMode, , , status] = text.slice(i + 1, end).split(' ');
    i = end + 1;
    const p1End = text.indexOf('\0', i);
    const p1 = text.slice(i, p1End);
    i = p1End + 1;
    let p2 = p1;
    if (status.startsWith('R') || status.startsWith('C')) {
      const p2End = text.indexOf('\0', i);
      p2 = text.slice(i, p2End);
      i = p2End + 1;
    }
    entries.push({
      old_path: p1, new_path: p2, a_mode: aMode, b_mode: bMode,
      new_file: status === 'A', renamed_file: status.startsWith('R'), deleted_file: status === 'D', diff: '',
    });
  }
  const patch = text.slice(i).replace(/^\0/, '').replace(/^\n/, '');
  const chunks = patch.split(/^diff --git .*\n/m).slice(1);
  chunks.forEach((c, k) => {
    if (!entries[k]) return;
    const at = c.search(/^(@@|Binary files)/m);
    entries[k].diff = at >= 0 ? c.slice(at) : '';
  });
  return entries;
}
