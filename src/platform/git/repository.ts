// A project's bare repository on disk and everything the API reads from or writes to it: refs (read through the ref
// cache, invalidated on every ref change), history, trees, blobs and diffs. Writes never use a working tree: commits
// are built with plumbing in a private index, and refs move only by compare-and-swap.
import { existsSync } from 'node:fs';
import { appendFile, constants as fsConstants, copyFile, link, lstat, mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { EMPTY_SNAPSHOT, branchEntry, derivedFromSnapshot, forgetDerived, cachedRefs, invalidateRefCache, peekRefCache, snapshotOf, tagEntry, withMillisDates, type RefSnapshot } from './ref-cache.ts';
import { runGit, spawnGit, assertSafeArg, GitError, UnsafeArgumentError, type GitRunOptions } from './command.ts';
import {
  COMMIT_FIELDS,
  LOG_FORMAT,
  parseLog,
  parseTrailers,
  refCommitAtoms,
  splitRecords,
  toCommitInfo,
  type CommitInfo,
} from './commit.ts';
import { EMPTY_TREE_SHA1, isSafeRevision, isValidBranchName, isValidRefName, isValidTagName, isFullSha, zeroShaLike } from './refs.ts';
import {
  InvalidInputError,
  InvalidPathError,
  InvalidRefNameError,
  RefExistsError,
  RefMovedError,
  RefNotFoundError,
  RepositoryExistsError,
  RepositoryNotFoundError,
} from './errors.ts';
import { languageShares } from './languages.ts';
import { sessionFor, endSessionsOf } from './sessions.ts';
import { changedPathCount, commitsFrom, walkDivergence, type CommitNode, type CommitReader, type RawObject } from './object-walk.ts';
import { CommitGraph } from './commit-graph.ts';
import {
  MODE_EXEC, MODE_FILE, checkIdentity, normalizeRepoPath, writeCommit, writeCommitObject, writeTreeCommit,
  type CommitObjectOptions, type CreateCommitOptions, type CreateCommitResult, type TreeCommitOptions,
} from './commit-writer.ts';

export type { CommitInfo } from './commit.ts';
export { derivedFromSnapshot, invalidateRefCache, refReadCount, type RefEntry, type RefSnapshot } from './ref-cache.ts';

export interface Branch {
  name: string;
  /** The commit the branch points at (same as commit.id). */
  sha: string;
  commit: CommitInfo;
}

export interface Identity {
  name: string;
  email: string;
  /** A Date, or any date git understands (keeps its UTC offset, e.g. "2024-05-01T10:00:00+02:00"). Default: now. */
  date?: Date | string;
}

export interface Tag {
  name: string;
  /** What refs/tags/<name> holds: the tag object for annotated tags, else the commit. */
  target: string;
  /** The object the tag finally points at (normally a commit). */
  sha: string;
  annotated: boolean;
  /** The annotation without its signature; null for lightweight tags. */
  message: string | null;
  tagger: { name: string; email: string; date: string } | null;
  /** Null when the tag points at something other than a commit. */
  commit: CommitInfo | null;
}

export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  id: string;
  /** Full path from the repository root. */
  path: string;
  name: string;
  /** Blob size in bytes; null for trees and submodules. */
  size: number | null;
}

export interface BlobContent {
  content: Buffer;
  size: number;
  id: string;
  mode: string;
}

export interface LogOptions {
  /** A branch, tag, sha or `a..b` range; default HEAD. */
  ref?: string;
  path?: string;
  since?: Date | string;
  until?: Date | string;
  skip?: number;
  limit?: number;
  firstParent?: boolean;
  order?: 'default' | 'topo';
}

export interface DiffFile {
  old_path: string;
  new_path: string;
  a_mode: string;
  b_mode: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  /** Unified diff from the first hunk header (no file header), or git's "Binary files … differ" line. */
  diff: string;
  too_large: boolean;
}

/** A changed file as the compare API shows it (DiffFile without its size flag). */
export type DiffEntry = Omit<DiffFile, 'too_large'>;

export const ARCHIVE_FORMATS = ['tar', 'tar.gz', 'tar.bz2', 'zip'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------------------

const BRANCH_FORMAT = `%(refname:strip=2)%00%(objecttype)%00${refCommitAtoms(false)}`;
const TAG_HEAD = [
  'refname:strip=2', 'objectname', 'objecttype', '*objecttype',
  'taggername', 'taggeremail:trim', 'taggerdate:iso-strict', 'contents', 'contents:signature',
];
const TAG_FORMAT = TAG_HEAD.map((a) => `%(${a})%00`).join('') + refCommitAtoms(false) + refCommitAtoms(true);

// Revisions that name nothing produce these (LANG=C keeps the texts stable).
const UNKNOWN_REVISION = /unknown revision|bad revision|bad object|ambiguous argument|does not have any commits|Not a valid object name|invalid object name/i;

/**
 * What every repository of the server holds in its config: pushes are fsck-checked (a corrupt or malicious object
 * never lands), push options are not advertised (nothing reads them), partial clones may filter, and a fetch may
 * only want what a ref advertises. Appended as text: one write, no git process per setting.
 */
const SERVER_CONFIG = [
  '[receive]', '\tfsckObjects = true', '\tadvertisePushOptions = false',
  '[uploadpack]', '\tallowFilter = true', '\tallowAnySHA1InWant = false', '',
].join('\n');

function assertRevision(rev: string, allowRange = false): string {
  if (!isSafeRevision(rev) || (!allowRange && rev.includes('..'))) throw new InvalidRefNameError(String(rev));
  return rev;
}

function isoDate(date: Date | string, field: string): string {
  const d = date instanceof Date ? date : new Date(date);
  if (Number.isNaN(d.getTime())) throw new InvalidInputError(field);
  return d.toISOString();
}

/** A repository path inside the tree, as the API takes it: relative, normalised, no "." or ".." parts, no NUL. */
export function normalisePath(p: string): string | null {
  if (typeof p !== 'string') return null;
  const parts = p.split('/').filter((x) => x !== '');
  if (parts.length === 0) return null;
  for (const x of parts) if (x === '.' || x === '..' || x === '.git' || x.includes('\0') || /[\n\r]/.test(x)) return null;
  return parts.join('/');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The ref transaction of each repository under way in this worker: the next waits for it. */
const refTransactions = new Map<string, Promise<void>>();

/** The largest packed-refs file a branch lookup reads itself (beyond it, one git process reads it faster). */
const PACKED_REFS_READ_MAX = 1024 * 1024;

export class Repository {
  readonly path: string;

  constructor(path: string, private readonly options: { timeoutMs?: number } = {}) {
    if (typeof path !== 'string' || !isAbsolute(path)) throw new InvalidPathError(String(path));
    this.path = resolve(assertSafeArg(path, 'repository path'));
  }

  async git(args: string[], opts: Omit<GitRunOptions, 'gitDir' | 'cwd'> = {}) {
    try {
      return await runGit(args, { timeoutMs: this.options.timeoutMs, ...opts, gitDir: this.path });
    } catch (e) {
      if (e instanceof GitError && e.reason === 'spawn' && !existsSync(this.path)) {
        throw new RepositoryNotFoundError(this.path);
      }
      throw e;
    }
  }

  // ----- lifecycle ---------------------------------------------------------------------------------------------

  /**
   * Creates an empty bare repository whose HEAD names the default branch, with the server's settings. Refuses an
   * existing repository; a directory left half-made (a stop between mkdir and init) is initialised in place.
   */
  static async init(path: string, opts: { defaultBranch?: string } = {}): Promise<Repository> {
    const defaultBranch = opts.defaultBranch ?? 'main';
    if (!isValidBranchName(defaultBranch)) throw new InvalidRefNameError(defaultBranch);
    const repo = new Repository(path);
    if (Repository.exists(repo.path)) throw new RepositoryExistsError(repo.path);
    await mkdir(repo.path, { recursive: true });
    try {
      await runGit(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`, '--end-of-options', repo.path]);
      await appendFile(join(repo.path, 'config'), SERVER_CONFIG);
    } catch (e) {
      await rm(repo.path, { recursive: true, force: true });
      throw e;
    }
    invalidateRefCache(repo.path);
    return repo;
  }

  /** A repository cut short while being made (HEAD but no object store) counts as missing: it reads as empty. */
  static exists(path: string): boolean {
    return existsSync(join(path, 'objects')) && existsSync(join(path, 'HEAD'));
  }

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

  /**
   * Copies a repository (fork or storage move): a fresh repository fetches the source's refs and their objects
   * through the pack protocol. Unlike a local clone this never hard-links or copies files out of the source
   * directory, and it leaves no remote configuration behind. HEAD follows the source's default branch.
   */
  static async copyFrom(
    source: string,
    dest: string,
    opts: { refs?: 'all' | 'branches-and-tags'; timeoutMs?: number; linkObjects?: boolean } = {},
  ): Promise<Repository> {
    const src = new Repository(source);
    if (!Repository.exists(src.path)) throw new RepositoryNotFoundError(src.path);
    const repo = await Repository.init(dest, { defaultBranch: (await src.defaultBranch()) ?? 'main' });
    const specs =
      opts.refs === 'branches-and-tags' ? ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'] : ['+refs/*:refs/*'];
    try {
      // The source's object files first (hard links on one filesystem, else copies): the fetch below then finds
      // every object it wants already present, checks that the new refs' history is complete, and only writes the
      // refs; whatever a concurrent repack took away before it was linked is sent through the pack protocol.
      if (opts.linkObjects) await linkObjectFiles(join(src.path, 'objects'), join(repo.path, 'objects'));
      await repo.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--end-of-options', src.path, ...specs], {
        timeoutMs: opts.timeoutMs ?? 30 * 60_000,
      });
    } catch (e) {
      await rm(repo.path, { recursive: true, force: true });
      throw e;
    }
    invalidateRefCache(repo.path);
    return repo;
  }

  /**
   * Mirrors a remote repository's branches and tags into this one (a project import): the remote's default branch
   * is read first, then its refs fetched. `env` carries how to connect (the outbound guard's pinning: the checked
   * address, the credentials header); the URL itself must carry no credentials. Answers the remote's default branch
   * (null for an empty remote or one whose HEAD names no branch).
   */
  async mirrorFrom(url: string, opts: { env: Record<string, string>; timeoutMs?: number; signal?: AbortSignal }): Promise<string | null> {
    assertSafeArg(url, 'remote URL');
    if (url.length > 2048) throw new UnsafeArgumentError(url.slice(0, 64), 'remote URL');
    const run = { env: opts.env, timeoutMs: opts.timeoutMs ?? 30 * 60_000, signal: opts.signal, maxBuffer: 16 * 1024 * 1024 };
    const head = await this.git(['ls-remote', '--symref', '--end-of-options', url, 'HEAD'], run);
    const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(head.stdout.toString());
    await this.git(['fetch', '--quiet', '--no-tags', '--prune', '--no-write-fetch-head', '--end-of-options', url,
      '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'], run);
    invalidateRefCache(this.path);
    return m && isValidBranchName(m[1]) ? m[1] : null;
  }

  /**
   * Removes the repository at `path` when there is one, and whatever an earlier removal of it that was cut short
   * left beside it (`<path>+<pid>-<ms>+deleted`), so that a removal run again after a kill leaves nothing.
   */
  static async purge(path: string): Promise<void> {
    if (Repository.exists(path)) await new Repository(path).remove();
    const prefix = `${basename(path)}+`;
    const names = await readdir(dirname(path)).catch(() => [] as string[]);
    for (const n of names) {
      if (n.startsWith(prefix) && n.endsWith('+deleted')) await rm(join(dirname(path), n), { recursive: true, force: true });
    }
  }

  /** Deletes the repository. Only a directory that looks like a bare repository is removed. */
  async remove(): Promise<void> {
    if (!Repository.exists(this.path)) throw new RepositoryNotFoundError(this.path);
    // Renamed first so readers see it vanish at once rather than half-deleted.
    const trash = `${this.path}+${process.pid}-${Date.now()}+deleted`;
    endSessionsOf(this.path);
    await rename(this.path, trash);
    invalidateRefCache(this.path);
    await rm(trash, { recursive: true, force: true });
  }

  /** Drops the cached branch and tag lists; call after anything outside this class changed refs. */
  invalidate(): void {
    invalidateRefCache(this.path);
  }

  async defaultBranch(): Promise<string | null> {
    if (!this.exists()) return null;
    const r = await this.git(['symbolic-ref', '--quiet', 'HEAD'], { okExitCodes: [1] });
    const ref = r.stdout.toString().trim();
    return r.code === 0 && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
  }

  async setDefaultBranch(name: string): Promise<void> {
    if (!isValidBranchName(name)) throw new InvalidRefNameError(name);
    await this.git(['symbolic-ref', 'HEAD', `refs/heads/${name}`]);
    // HEAD is part of what fetches are told (ls-refs).
    invalidateRefCache(this.path);
  }

  // ----- refs --------------------------------------------------------------------------------------------------

  /** Every branch with its head commit, sorted by name. One git call, then served from the ref cache. */
  listBranches(): Promise<readonly Branch[]> {
    return cachedRefs(this.path, 'branches', async () => {
      const { stdout } = await this.git(['for-each-ref', `--format=${BRANCH_FORMAT}`, 'refs/heads/']);
      const branches = splitRecords(stdout, 2 + COMMIT_FIELDS)
        .filter((r) => r[1] === 'commit')
        .map((r): Branch => {
          const commit = toCommitInfo(r, 2);
          return { name: r[0], sha: commit.id, commit };
        });
      return deepFreeze(branches);
    });
  }

  async getBranch(name: string): Promise<Branch | null> {
    return (await this.listBranches()).find((b) => b.name === name) ?? null;
  }

  /** Every tag with its annotation and target commit, sorted by name. One git call, then cached. */
  listTags(): Promise<readonly Tag[]> {
    return cachedRefs(this.path, 'tags', async () => {
      const { stdout } = await this.git(['for-each-ref', `--format=${TAG_FORMAT}`, 'refs/tags/']);
      const head = TAG_HEAD.length;
      const tags = splitRecords(stdout, head + 2 * COMMIT_FIELDS).map((r): Tag => {
        const [name, target, type, peeledType, taggerName, taggerEmail, taggerDate, contents, signature] = r;
        const annotated = type === 'tag';
        const commitAt = annotated ? head + COMMIT_FIELDS : head;
        const isCommit = (annotated ? peeledType : type) === 'commit';
        return {
          name,
          target,
          sha: annotated ? r[commitAt] : target,
          annotated,
          message: annotated ? (signature && contents.endsWith(signature) ? contents.slice(0, -signature.length) : contents) : null,
          tagger: annotated && taggerName ? { name: taggerName, email: taggerEmail, date: taggerDate } : null,
          commit: isCommit ? toCommitInfo(r, commitAt) : null,
        };
      });
      return deepFreeze(tags);
    });
  }

  async getTag(name: string): Promise<Tag | null> {
    return (await this.listTags()).find((t) => t.name === name) ?? null;
  }

  /** The branches indexed by name, built once per cached list. */
  async branches(): Promise<RefSnapshot> {
    return this.exists() ? snapshotOf(await this.listBranches(), branchEntry) : EMPTY_SNAPSHOT;
  }

  /**
   * The head commits of the named branches (missing ones left out): from the cached branch list when one is held,
   * else one `cat-file --batch-check` looking just those refs up, so a read after a ref change neither lists nor
   * parses every branch of the repository.
   */
  async branchHeads(names: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const wanted = [...new Set(names)].filter((n) => isValidBranchName(n));
    if (wanted.length === 0 || !this.exists()) return out;
    const cached = peekRefCache<Promise<readonly Branch[]>>(this.path, 'branches');
    if (cached || wanted.length > 100) {
      const snap = cached ? snapshotOf(await cached, branchEntry) : await this.branches();
      for (const n of wanted) {
        const e = snap.byName.get(n);
        if (e) out.set(n, e.commit.id);
      }
      return out;
    }
    // The ref files first (no process: a merge or a mergeability answer after a ref change reads one branch);
    // git for what they cannot tell.
    const unread: string[] = [];
    const files = await Promise.all(wanted.map((n) => this.branchFromFiles(n)));
    wanted.forEach((n, i) => {
      const sha = files[i];
      if (sha === undefined) unread.push(n);
      else if (sha !== null) out.set(n, sha);
    });
    if (unread.length === 0) return out;
    const found = await this.resolveCommits(unread.map((n) => `refs/heads/${n}`));
    for (const n of unread) {
      const sha = found.get(`refs/heads/${n}`);
      if (sha) out.set(n, sha);
    }
    return out;
  }

  /**
   * A branch's commit read from the repository's ref files as git keeps them: the loose ref `refs/heads/<name>`,
   * else its line in `packed-refs` (git replaces both by renaming a finished lock file, so a read sees the old value
   * or the new one). A branch holds commits only (git refuses anything else under refs/heads/), so no peeling is
   * needed. null: the branch does not exist; undefined: the files cannot tell (a symbolic ref, a large or unreadable
   * packed-refs), so git is asked.
   */
  private async branchFromFiles(name: string): Promise<string | null | undefined> {
    // A name git's ref rules would refuse (a `..`, an empty part, a leading or trailing slash) never becomes a path
    // here: git itself answers for it.
    if (!name || name.includes('..') || name.includes('//') || name.startsWith('/') || name.endsWith('/') || name.includes('\\') || name.includes('\0')) return undefined;
    const ref = `refs/heads/${name}`;
    try {
      const loose = (await readFile(join(this.path, ref), 'latin1')).trim();
      return isFullSha(loose) ? loose : undefined;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
    }
    let packed: string;
    try {
      const file = join(this.path, 'packed-refs');
      if ((await lstat(file)).size > PACKED_REFS_READ_MAX) return undefined;
      packed = await readFile(file, 'latin1');
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
    }
    // One line per ref, `<sha> <name>`; names are unique and hold no spaces.
    const at = `\n${packed}\n`.indexOf(` ${ref}\n`) - 1;
    if (at < 0) return null;
    const sha = packed.slice(at - 40, at);
    return isFullSha(sha) && (at === 40 || packed[at - 41] === '\n') ? sha : undefined;
  }

  async tags(): Promise<RefSnapshot> {
    return this.exists() ? snapshotOf(await this.listTags(), tagEntry) : EMPTY_SNAPSHOT;
  }

  /** Names of branches merged into the branch `target` (one git call per snapshot and target). */
  async mergedBranches(target: string): Promise<Set<string>> {
    const snap = await this.branches();
    const head = snap.byName.get(target);
    if (!head) return new Set();
    const key = `merged\0${target}`;
    let made: Promise<Set<string>> | undefined;
    const p = derivedFromSnapshot(snap, key, () => (made = this.git(['for-each-ref', '--format=%(refname)', `--merged=${head.commit.id}`, 'refs/heads/']).then(({ stdout }) =>
      new Set(stdout.toString('utf8').split('\n').filter(Boolean).map((r) => r.slice('refs/heads/'.length))))));
    made?.catch(() => forgetDerived(snap, key));
    return p;
  }

  /** A revision the caller named (branch, tag or full/short sha) to a commit sha; null when it names nothing. */
  async resolveCommit(rev: string): Promise<string | null> {
    if (!this.exists() || !isSafeRevision(rev) || rev.includes('..')) return null;
    const sha = await this.revParse(`${rev}^{commit}`, [1, 128]);
    return sha && isFullSha(sha) ? sha : null;
  }

  /** The commit a branch, tag, sha or `rev~n` names, or null. */
  async resolveRef(ref: string): Promise<string | null> {
    return this.revParse(`${assertRevision(ref)}^{commit}`);
  }

  async revParse(rev: string, okExitCodes = [1]): Promise<string | null> {
    const r = await this.git(['rev-parse', '--verify', '--quiet', '--end-of-options', rev], { okExitCodes });
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /** One `git update-ref` process for the compare-and-swap, without retries. */
  private async updateRefOnce(ref: string, next: string, expected: string | null): Promise<void> {
    await this.git(['update-ref', '--no-deref', '--end-of-options', ref, next, expected ?? zeroShaLike(next)]);
  }

  /**
   * Runs one ref update, retried a few times while another writer holds the ref's lock file; a refusal becomes the
   * domain error `refConflict` gives. The ref cache is dropped after every attempt, whatever its outcome.
   */
  private async retryingRefLock(ref: string, expected: string | null, update: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await update();
      } catch (e) {
        const err = await this.refConflict(e, ref, expected);
        if (err !== e || attempt >= 4 || !(e instanceof GitError) || !/lock/i.test(e.stderr)) throw err;
        await sleep(10 * (attempt + 1));
      } finally {
        invalidateRefCache(this.path);
      }
    }
  }

  /** The domain error for a failed ref update when the ref's current state explains it, else the failure itself. */
  private async refConflict(e: unknown, ref: string, expected: string | null): Promise<unknown> {
    if (!(e instanceof GitError) || e.reason !== 'exit') return e;
    // A ref in the way ("refs/heads/a/b" exists, so "refs/heads/a" cannot; or the reverse).
    if (expected === null && /' exists; cannot create '/.test(e.stderr)) return new RefExistsError(ref);
    let actual: string | null;
    try {
      actual = await this.revParse(ref);
    } catch {
      return e;
    }
    if (actual === expected) return e;
    return expected === null ? new RefExistsError(ref) : new RefMovedError(ref, expected, actual);
  }

  async createBranch(name: string, ref: string): Promise<Branch> {
    if (!isValidBranchName(name)) throw new InvalidRefNameError(name);
    const sha = await this.resolveRef(ref);
    if (!sha) throw new RefNotFoundError(ref);
    const full = `refs/heads/${name}`;
    await this.updateRef(full, sha, null);
    const commit = (await this.getCommit(sha))!;
    return { name, sha, commit };
  }

  /** Deletes a full ref name by compare-and-swap; returns the sha it pointed at. */
  async deleteRef(fullRef: string, expectedOld?: string): Promise<string> {
    if (!fullRef.startsWith('refs/') || !isValidRefName(fullRef, { allowOneLevel: false })) {
      throw new InvalidRefNameError(fullRef);
    }
    if (expectedOld !== undefined && !isFullSha(expectedOld)) throw new InvalidInputError('expected sha', expectedOld);
    const old = expectedOld ?? (await this.revParse(fullRef));
    if (!old) throw new RefNotFoundError(fullRef);
    try {
      await this.git(['update-ref', '--no-deref', '-d', '--end-of-options', fullRef, old]);
    } catch (e) {
      throw await this.refConflict(e, fullRef, old);
    } finally {
      invalidateRefCache(this.path);
    }
    return old;
  }

  deleteBranch(name: string, expectedOld?: string): Promise<string> {
    if (!isValidBranchName(name)) throw new InvalidRefNameError(name);
    return this.deleteRef(`refs/heads/${name}`, expectedOld);
  }

  /** A lightweight tag, or an annotated one when a message is given (then a tagger is required). */
  async createTag(name: string, ref: string, message?: string, tagger?: Identity): Promise<Tag> {
    if (!isValidTagName(name)) throw new InvalidRefNameError(name);
    const sha = await this.resolveRef(ref);
    if (!sha) throw new RefNotFoundError(ref);
    let target = sha;
    if (message) {
      const who = checkIdentity(tagger!, 'tagger');
      const when = who.date === undefined ? new Date() : new Date(who.date);
      if (Number.isNaN(when.getTime())) throw new InvalidInputError('tagger date');
      const body =
        `object ${sha}\ntype commit\ntag ${name}\n` +
        `tagger ${who.name} <${who.email}> ${Math.floor(when.getTime() / 1000)} +0000\n\n` +
        (message.endsWith('\n') ? message : `${message}\n`);
      // mktag checks the object like fsck does before writing it.
      target = (await this.git(['mktag'], { input: body })).stdout.toString().trim();
    }
    const full = `refs/tags/${name}`;
    await this.updateRef(full, target, null);
    return (await this.getTag(name))!;
  }

  deleteTag(name: string, expectedOld?: string): Promise<string> {
    if (!isValidTagName(name)) throw new InvalidRefNameError(name);
    return this.deleteRef(`refs/tags/${name}`, expectedOld);
  }

  /** Names of branches whose heads are reachable from `target` (the API's `merged`). One git call. */
  async mergedBranchNames(target: string): Promise<Set<string>> {
    const sha = await this.resolveRef(target);
    if (!sha) throw new RefNotFoundError(target);
    const { stdout } = await this.git(['for-each-ref', `--merged=${sha}`, '--format=%(refname:strip=2)', 'refs/heads/']);
    return new Set(stdout.toString().split('\n').filter(Boolean));
  }

  /**
   * Which of the candidate commits are ancestors of (or equal to) `target`, in one `rev-list` walk for all of
   * them: whatever the walk prints is reachable from a candidate but not from the target, so unmerged.
   */
  async mergedInto(target: string, candidates: readonly string[]): Promise<Set<string>> {
    assertRevision(target);
    const unique = [...new Set(candidates)];
    for (const c of unique) if (!isFullSha(c)) throw new InvalidInputError('commit sha', c);
    const targetSha = await this.resolveRef(target);
    if (!targetSha) throw new RefNotFoundError(target);
    const others = unique.filter((c) => c !== targetSha);
    if (others.length === 0) return new Set(unique);
    const existing = new Set(await this.existingCommits(others));
    if (existing.size === 0) return new Set(unique.filter((c) => c === targetSha));
    const { stdout } = await this.git(['rev-list', '--stdin'], {
      input: [`^${targetSha}`, ...existing].join('\n') + '\n',
    });
    const unmerged = new Set(stdout.toString().split('\n'));
    return new Set(unique.filter((c) => c === targetSha || (existing.has(c) && !unmerged.has(c))));
  }

  // ----- commits -----------------------------------------------------------------------------------------------

  /** Resolves revisions to commit ids in one `cat-file --batch-check`; unknown or non-commit names are absent. */
  private async resolveCommits(revs: readonly string[]): Promise<Map<string, string>> {
    const { stdout } = await this.git(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      input: revs.map((r) => `${r}^{commit}\n`).join(''),
    });
    const lines = stdout.toString().split('\n');
    const found = new Map<string, string>();
    revs.forEach((rev, i) => {
      const [oid, type] = (lines[i] ?? '').split(' ');
      if (type === 'commit') found.set(rev, oid);
    });
    return found;
  }

  private async existingCommits(shas: readonly string[]): Promise<string[]> {
    const found = await this.resolveCommits(shas);
    return shas.filter((s) => found.get(s) === s);
  }

  /** Commits for many revisions in two git calls; the map is keyed by the requested revision. */
  async getCommits(revs: readonly string[]): Promise<Map<string, CommitInfo>> {
    const unique = [...new Set(revs)].map((r) => assertRevision(r));
    if (unique.length === 0) return new Map();
    const ids = await this.resolveCommits(unique);
    if (ids.size === 0) return new Map();
    const { stdout } = await this.git(['log', '--no-walk=unsorted', '--stdin', `--format=${LOG_FORMAT}`], {
      input: [...new Set(ids.values())].join('\n') + '\n',
    });
    const byId = new Map(parseLog(stdout).map((c) => [c.id, c]));
    const result = new Map<string, CommitInfo>();
    for (const [rev, oid] of ids) {
      const c = byId.get(oid);
      if (c) result.set(rev, c);
    }
    return result;
  }

  async getCommit(rev: string): Promise<CommitInfo | null> {
    return (await this.getCommits([rev])).get(rev) ?? null;
  }

  /** History from a ref (or range), newest first, optionally limited to a path. */
  async log(o: LogOptions = {}): Promise<CommitInfo[]> {
    const args = ['log', `--format=${LOG_FORMAT}`];
    if (o.skip) args.push(`--skip=${Math.max(0, Math.trunc(o.skip))}`);
    if (o.limit !== undefined) args.push(`--max-count=${Math.max(0, Math.trunc(o.limit))}`);
    if (o.since !== undefined) args.push(`--since=${isoDate(o.since, 'since')}`);
    if (o.until !== undefined) args.push(`--until=${isoDate(o.until, 'until')}`);
    if (o.firstParent) args.push('--first-parent');
    if (o.order === 'topo') args.push('--topo-order');
    const ref = assertRevision(o.ref ?? 'HEAD', true);
    args.push('--end-of-options', ref);
    if (o.path !== undefined) {
      const p = normalizeRepoPath(o.path);
      if (p) args.push('--', p);
    }
    try {
      return parseLog((await this.git(args)).stdout);
    } catch (e) {
      if (e instanceof GitError && UNKNOWN_REVISION.test(e.stderr)) throw new RefNotFoundError(ref);
      throw e;
    }
  }

  async countCommits(ref: string, opts: { path?: string } = {}): Promise<number> {
    const args = ['rev-list', '--count', '--end-of-options', assertRevision(ref, true)];
    if (opts.path !== undefined && normalizeRepoPath(opts.path)) args.push('--', normalizeRepoPath(opts.path));
    try {
      return Number((await this.git(args)).stdout.toString().trim());
    } catch (e) {
      if (e instanceof GitError && UNKNOWN_REVISION.test(e.stderr)) throw new RefNotFoundError(ref);
      throw e;
    }
  }

  /**
   * Copies a branch of another repository (a fork) into `ref` here by the pack protocol, nothing shared between the
   * two directories; returns the commit fetched. The ref is forced: it follows the source branch wherever it went.
   */
  async fetchBranchInto(sourcePath: string, branch: string, ref: string): Promise<string> {
    if (!isValidBranchName(branch)) throw new InvalidRefNameError(branch);
    if (!ref.startsWith('refs/') || !isValidRefName(ref, { allowOneLevel: false })) throw new InvalidRefNameError(ref);
    const src = new Repository(sourcePath);
    if (!Repository.exists(src.path)) throw new RepositoryNotFoundError(src.path);
    try {
      await this.git(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--end-of-options', src.path, `+refs/heads/${branch}:${ref}`], { timeoutMs: 10 * 60_000 });
    } catch (e) {
      if (e instanceof GitError && /couldn't find remote ref/i.test(e.stderr)) throw new RefNotFoundError(branch);
      throw e;
    } finally {
      invalidateRefCache(this.path);
    }
    const sha = await this.revParse(ref);
    if (!sha) throw new RefNotFoundError(ref);
    return sha;
  }

  /** How many files differ between two commits (renames count once). */
  async changedFileCount(from: string, to: string): Promise<number> {
    const { stdout } = await this.git(['diff', '--no-ext-diff', '-M', '--name-only', '-z', '--end-of-options', assertRevision(from), assertRevision(to), '--'], { maxBuffer: 32 * 1024 * 1024 });
    return stdout.toString('utf8').split('\0').filter(Boolean).length;
  }

  async mergeBase(a: string, b: string): Promise<string | null> {
    const r = await this.git(['merge-base', '--end-of-options', assertRevision(a), assertRevision(b)], {
      okExitCodes: [1],
    });
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  /** The best common ancestor of the first commit and the others (`git merge-base`), or null. */
  async mergeBaseOf(commits: string[]): Promise<string | null> {
    if (commits.length < 2 || commits.length > 100) throw new InvalidInputError('commits', 'two to a hundred');
    const r = await this.git(['merge-base', '--end-of-options', ...commits.map((c) => assertRevision(c))], { okExitCodes: [1] });
    return r.code === 0 ? r.stdout.toString().trim() : null;
  }

  async commit(sha: string): Promise<CommitInfo | null> {
    const list = await this.history({ ref: sha, limit: 1, noWalk: true });
    return list[0] ?? null;
  }

  /** History in the API's shape (datetimes with milliseconds); `since`/`until` in epoch milliseconds. */
  async history(o: { ref: string; path?: string; since?: number; until?: number; skip?: number; limit: number; noWalk?: boolean; firstParent?: boolean; all?: boolean }): Promise<CommitInfo[]> {
    if (!this.exists()) return [];
    const args = ['log', `--format=${LOG_FORMAT}`, `--max-count=${o.limit}`];
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
    return parseLog(stdout).map(withMillisDates);
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    const r = await this.git(['merge-base', '--is-ancestor', ancestor, descendant], { okExitCodes: [1] });
    return r.code === 0;
  }

  /** Trailers of a message (key → last value), parsed by git as for stored commits. */
  trailers(message: string): Promise<Record<string, string>> {
    return parseTrailers(message);
  }

  /**
   * Commits file changes to a branch without a working tree: a private index is loaded from the parent, edited,
   * written as a tree, and the branch moves by compare-and-swap from the parent it was built on, so a concurrent
   * writer makes this fail with RefMovedError instead of losing a commit.
   */
  createCommit(o: CreateCommitOptions): Promise<CreateCommitResult> {
    return writeCommit(this, o);
  }

  /** The last commit reachable from `commit` that touched `path`. */
  async lastCommitFor(commit: string, path: string): Promise<string | null> {
    const { stdout } = await this.git(['log', '--format=%H', '--max-count=1', '--end-of-options', commit, '--', path]);
    return stdout.toString().trim() || null;
  }

  // ----- trees and blobs ---------------------------------------------------------------------------------------

  async tree(commit: string, path: string | null, recursive: boolean): Promise<Omit<TreeEntry, 'size'>[] | null> {
    const spec = path ? `${commit}:${path}` : `${commit}^{tree}`;
    const t = await this.git(['cat-file', '-t', spec], { okExitCodes: [128] });
    if (t.code !== 0 || t.stdout.toString().trim() !== 'tree') return null;
    const args = ['ls-tree', '-z', ...(recursive ? ['-r', '-t'] : []), '--end-of-options', spec];
    const { stdout } = await this.git(args);
    const out: Omit<TreeEntry, 'size'>[] = [];
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


  /** Entries of the directory at `path` (recursive: everything below it, directories included), or null. */
  async readTree(ref: string, path = '', opts: { recursive?: boolean } = {}): Promise<TreeEntry[] | null> {
    const dir = normalizeRepoPath(path);
    const args = ['ls-tree', '-z', '-l', ...(opts.recursive ? ['-r', '-t'] : []), '--end-of-options', `${assertRevision(ref)}:${dir}`];
    const r = await this.git(args, { okExitCodes: [128] });
    if (r.code !== 0) {
      if (/Not a valid object name|not a tree object/i.test(r.stderr)) return null;
      throw new GitError(`git ls-tree failed: ${r.stderr.trim()}`, args, r.code, r.stderr);
    }
    const prefix = dir ? `${dir}/` : '';
    const entries: TreeEntry[] = [];
    for (const rec of r.stdout.toString('utf8').split('\0')) {
      const m = /^(\d+) (blob|tree|commit) ([0-9a-f]+) +(-|\d+)\t(.*)$/s.exec(rec);
      if (!m) continue;
      const full = prefix + m[5];
      entries.push({
        mode: m[1],
        type: m[2] as TreeEntry['type'],
        id: m[3],
        path: full,
        name: full.slice(full.lastIndexOf('/') + 1),
        size: m[4] === '-' ? null : Number(m[4]),
      });
    }
    return entries;
  }

  /** The blob at `path`, with its id and mode; null when the ref or path is missing or is not a file. */
  async readBlob(ref: string, path: string, opts: { maxBytes?: number } = {}): Promise<BlobContent | null> {
    const p = normalizeRepoPath(path);
    if (!p) return null;
    const r = await this.git(['ls-tree', '-z', '-l', '--full-tree', '--end-of-options', assertRevision(ref), '--', p], {
      okExitCodes: [128],
    });
    if (r.code !== 0) return null;
    const m = r.stdout
      .toString('utf8')
      .split('\0')
      .map((rec) => /^(\d+) (\w+) ([0-9a-f]+) +(-|\d+)\t(.*)$/s.exec(rec))
      .find((x) => x && x[5] === p);
    if (!m || m[2] !== 'blob') return null;
    const size = Number(m[4]);
    if (opts.maxBytes !== undefined && size > opts.maxBytes) throw new InvalidInputError('blob', `${size} bytes is over the limit`);
    const { stdout } = await this.git(['cat-file', 'blob', m[3]], { maxBuffer: size + 1 });
    return { content: stdout, size, id: m[3], mode: m[1] };
  }

  async blobExists(ref: string, path: string): Promise<boolean> {
    const p = normalizeRepoPath(path);
    if (!p) return false;
    const r = await this.git(['cat-file', '-t', `${assertRevision(ref)}:${p}`], { okExitCodes: [128] });
    return r.code === 0 && r.stdout.toString().trim() === 'blob';
  }

  /** Streams a blob by id (raw file downloads) without buffering it. */
  blobStream(id: string): Readable {
    if (!isFullSha(id)) throw new InvalidInputError('blob id', id);
    return spawnGit(['cat-file', 'blob', id], { gitDir: this.path, stdio: ['ignore', 'pipe', 'ignore'], timeoutMs: 10 * 60_000 })
      .stdout!;
  }

  // ----- comparisons and search ------------------------------------------------------------------------------

  /**
   * Changed files between two commits, each with its patch, in one `git diff --find-renames --raw -p -z` call. A
   * patch over `maxPatchBytes` (the reference's diff_max_patch_bytes, 200 KiB) is `too_large` and left out; output
   * past `maxBytes` is cut off, and the files whose patches were cut read as too large too.
   */
  async diff(from: string, to: string, opts: { maxPatchBytes?: number; maxBytes?: number } = {}): Promise<DiffFile[]> {
    const r = await this.git([
      'diff', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames', '--full-index', '--raw', '-p', '-z',
      '--end-of-options', assertRevision(from), assertRevision(to), '--',
    ], { maxBuffer: opts.maxBytes ?? 64 * 1024 * 1024, truncate: true });
    const limit = opts.maxPatchBytes ?? 200 * 1024;
    const entries = parseRawPatch(r.stdout.toString('utf8'), !!r.truncated);
    return entries.map((e) => {
      const tooLarge = e.diff === null || Buffer.byteLength(e.diff) > limit;
      // A side the file is missing on has mode 0, as the reference shows it.
      const mode = (m: string) => (/^0+$/.test(m) ? '0' : m);
      return { ...e, a_mode: mode(e.a_mode), b_mode: mode(e.b_mode), diff: tooLarge ? '' : e.diff!, too_large: tooLarge };
    });
  }

  /** The plain `git diff` between two commits (renames found, full blob ids), cut at `maxBytes`. */
  async rawDiff(from: string, to: string, maxBytes = 64 * 1024 * 1024): Promise<Buffer> {
    const r = await this.git([
      'diff', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames', '--end-of-options', assertRevision(from), assertRevision(to), '--',
    ], { maxBuffer: maxBytes, truncate: true });
    return r.stdout;
  }

  /** Matching lines at a ref. Patterns go after -e, so a leading "-" in a search term is just text. */
  async grep(
    ref: string,
    pattern: string,
    opts: { ignoreCase?: boolean; fixed?: boolean; limit?: number; path?: string } = {},
  ): Promise<GrepMatch[]> {
    if (typeof pattern !== 'string' || pattern === '' || /[\0\n]/.test(pattern)) throw new InvalidInputError('pattern');
    const rev = assertRevision(ref);
    const args = ['grep', '-z', '-n', '-I', '--no-color', opts.fixed ? '-F' : '-E'];
    if (opts.ignoreCase) args.push('-i');
    args.push('-e', pattern, rev, '--');
    if (opts.path !== undefined && normalizeRepoPath(opts.path)) args.push(normalizeRepoPath(opts.path));
    const r = await this.git(args, { okExitCodes: [1], maxBuffer: 8 * 1024 * 1024, truncate: true });
    const out = r.stdout.toString('utf8');
    const limit = opts.limit ?? 1000;
    const matches: GrepMatch[] = [];
    // Records are "<rev>:<path>\0<line>\0<text>\n"; the path may hold any byte but NUL.
    for (let at = 0; matches.length < limit; ) {
      const a = out.indexOf('\0', at);
      const b = a === -1 ? -1 : out.indexOf('\0', a + 1);
      const c = b === -1 ? -1 : out.indexOf('\n', b + 1);
      if (c === -1) break;
      matches.push({ path: out.slice(at + rev.length + 1, a), line: Number(out.slice(a + 1, b)), text: out.slice(b + 1, c) });
      at = c + 1;
    }
    return matches;
  }

  /**
   * Search: the files at `ref` whose path contains `term` (case-insensitive; every file for `*`), at most `limit`.
   * The ref is checked as a revision and passed after --end-of-options.
   */
  async searchPaths(ref: string, term: string, limit: number): Promise<string[]> {
    const rev = assertRevision(ref);
    const r = await this.git(['ls-tree', '-r', '-z', '--name-only', '--full-tree', '--end-of-options', rev], { maxBuffer: 16 * 1024 * 1024, truncate: true });
    const needle = term.toLowerCase();
    const out: string[] = [];
    for (const path of r.stdout.toString('utf8').split('\0')) {
      if (out.length >= limit) break;
      if (path && (term === '*' || path.toLowerCase().includes(needle))) out.push(path);
    }
    return out;
  }

  /**
   * Search: the lines at `ref` holding `term` (literal, case-insensitive, text files only) with `context` lines
   * either side, one block per run of lines as git groups them, at most `limit` blocks of the files `accept`
   * keeps (every file without it); `paths` narrows the files (literal paths after "--"). git is stopped as soon
   * as `limit` blocks are read, so the cost follows the page asked for, not the repository. The term goes after
   * -e, so no term can become an option.
   */
  async searchContent(
    ref: string, term: string, o: { context: number; limit: number; paths?: readonly string[]; accept?: (path: string) => boolean },
  ): Promise<Array<{ path: string; startline: number; data: string }>> {
    if (typeof term !== 'string' || term === '' || /[\0\n]/.test(term)) throw new InvalidInputError('pattern');
    const rev = assertRevision(ref);
    const args = ['grep', '-z', '-n', '-I', '-i', '-F', '--no-color', `-C${Math.max(0, Math.trunc(o.context))}`, '-e', term, rev, '--'];
    if (o.paths) {
      if (o.paths.length === 0) return [];
      // The fixed environment makes every pathspec literal (GIT_LITERAL_PATHSPECS): each is the file's path itself.
      for (const p of o.paths) {
        if (typeof p !== 'string' || p === '' || p.includes('\0')) throw new InvalidInputError('path');
        args.push(p);
      }
    }
    const limit = Math.max(0, Math.trunc(o.limit));
    if (limit === 0) return [];
    const prefix = `${rev}:`;
    const blocks: Array<{ path: string; startline: number; data: string }> = [];
    let current: { path: string; startline: number; data: string } | null = null;
    const close = () => {
      if (current && (!o.accept || o.accept(current.path))) blocks.push(current);
      current = null;
    };
    const feed = (line: string) => {
      if (line === '--') return close();
      if (!line.startsWith(prefix)) return;
      // "<rev>:<path>\0<line>\0<text>"; the path may hold any byte but NUL.
      const a = line.indexOf('\0');
      const b = a === -1 ? -1 : line.indexOf('\0', a + 1);
      if (b === -1) return;
      const path = line.slice(prefix.length, a);
      if (current && current.path !== path) close();
      if (!current) current = { path, startline: Number(line.slice(a + 1, b)), data: '' };
      current.data += `${line.slice(b + 1)}\n`;
    };
    // Lines are parsed as git writes them; a line cut between two pieces waits for the rest.
    const decoder = new StringDecoder('utf8');
    let rest = '';
    const enough = (chunk: Buffer) => {
      const lines = (rest + decoder.write(chunk)).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        feed(line);
        if (blocks.length >= limit) return true;
      }
      return false;
    };
    const r = await this.git(args, { okExitCodes: [1], maxBuffer: 8 * 1024 * 1024, truncate: true, enough });
    if (blocks.length < limit && !r.truncated) {
      const tail = rest + decoder.end();
      if (tail) feed(tail);
      close();
    }
    return blocks.slice(0, limit);
  }

  /**
   * The entries of a tree that `ls-tree -r` lists, in git's order (the order `grep` walks it too): path, object id
   * and size; a submodule has no content here (size null).
   */
  async treeFiles(tree: string): Promise<Array<{ path: string; id: string; size: number | null }>> {
    if (!isFullSha(tree)) throw new InvalidInputError('tree', tree);
    const r = await this.git(['ls-tree', '-r', '-z', '-l', '--full-tree', '--end-of-options', tree], { maxBuffer: 256 * 1024 * 1024 });
    const out: Array<{ path: string; id: string; size: number | null }> = [];
    for (const rec of r.stdout.toString('utf8').split('\0')) {
      const m = /^(\d+) (blob|commit) ([0-9a-f]+) +(-|\d+)\t(.*)$/s.exec(rec);
      if (m) out.push({ path: m[5]!, id: m[3]!, size: m[2] === 'blob' ? Number(m[4]) : null });
    }
    return out;
  }

  /**
   * The contents of blobs by id, handed to `each` in the order given (`each(i, content)` for `blobs[i]`), read by
   * `cat-file --batch` in runs of about `batchBytes` (the sizes say where a run ends), so memory stays bounded
   * whatever the total.
   */
  async eachBlob(
    blobs: ReadonlyArray<{ id: string; size: number }>, each: (index: number, content: Buffer) => void,
    o: { batchBytes?: number; signal?: AbortSignal } = {},
  ): Promise<void> {
    const batchBytes = o.batchBytes ?? 16 * 1024 * 1024;
    for (let start = 0; start < blobs.length; ) {
      let end = start;
      let bytes = 0;
      while (end < blobs.length && (end === start || bytes + blobs[end]!.size <= batchBytes)) {
        if (!isFullSha(blobs[end]!.id)) throw new InvalidInputError('blob id', blobs[end]!.id);
        bytes += blobs[end]!.size + 64;
        end++;
      }
      const input = blobs.slice(start, end).map((b) => `${b.id}\n`).join('');
      const { stdout } = await this.git(['cat-file', '--batch'], { input, maxBuffer: bytes + 1024, signal: o.signal, timeoutMs: 10 * 60_000 });
      // Each answer is "<id> <type> <size>\n<content>\n", or "<id> missing\n".
      let at = 0;
      for (let i = start; i < end; i++) {
        const nl = stdout.indexOf(10, at);
        if (nl === -1) throw new GitError('git cat-file --batch: answer cut short', ['cat-file', '--batch'], null, '');
        const head = stdout.toString('latin1', at, nl).split(' ');
        if (head.length !== 3) throw new GitError(`git cat-file --batch: ${head.join(' ')}`, ['cat-file', '--batch'], null, '');
        const size = Number(head[2]);
        each(i, stdout.subarray(nl + 1, nl + 1 + size));
        at = nl + 1 + size + 1;
      }
      start = end;
    }
  }

  /** Search: commits reachable from `ref` whose message contains `term` (literal, case-insensitive), newest first. */
  async searchMessages(ref: string, term: string, o: { limit: number }): Promise<CommitInfo[]> {
    if (!this.exists()) return [];
    if (typeof term !== 'string' || term === '' || /[\0\n]/.test(term)) throw new InvalidInputError('pattern');
    const rev = assertRevision(ref);
    const args = ['log', `--format=${LOG_FORMAT}`, `--max-count=${Math.max(0, Math.trunc(o.limit))}`, '-i', '-F', `--grep=${term}`, '--end-of-options', rev, '--'];
    const { stdout } = await this.git(args, { maxBuffer: 16 * 1024 * 1024 });
    return parseLog(stdout).map(withMillisDates);
  }

  /** Changed files with their patches in one git call, as the compare API shows them. */
  async compareDiff(from: string, to: string): Promise<DiffEntry[]> {
    const { stdout } = await this.git(['diff', '--no-color', '--no-ext-diff', '-M', '--full-index', '--raw', '-p', '-z', '--end-of-options', from, to, '--'], { maxBuffer: 32 * 1024 * 1024 });
    return parseRawPatch(stdout.toString('utf8'), false).map((e) => ({ ...e, diff: e.diff ?? '' }));
  }

  // ----- objects by id, archives, blame, signatures, contributors ---------------------------------------------

  /** A blob named by its id (full, or abbreviated to 4+ digits): its full id and size; null unless it is a blob. */
  async blobInfo(id: string): Promise<{ id: string; size: number } | null> {
    if (!this.exists() || typeof id !== 'string' || !/^[0-9a-f]{4,64}$/i.test(id)) return null;
    const { stdout } = await this.git(['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], { input: `${id}\n` });
    const [oid, type, size] = stdout.toString('utf8').trim().split(' ');
    return type === 'blob' && isFullSha(oid) ? { id: oid, size: Number(size) } : null;
  }

  /** The content of a blob by full id, refused over `maxBytes`. */
  async blobContent(id: string, maxBytes = 64 * 1024 * 1024): Promise<Buffer> {
    if (!isFullSha(id)) throw new InvalidInputError('blob id', id);
    return (await this.git(['cat-file', 'blob', id], { maxBuffer: maxBytes })).stdout;
  }

  /** Whether `path` names a file or directory in `commit`. */
  async pathExists(commit: string, path: string): Promise<boolean> {
    const p = normalizeRepoPath(path);
    if (!p) return true;
    const r = await this.git(['cat-file', '-t', `${assertRevision(commit)}:${p}`], { okExitCodes: [128] });
    return r.code === 0 && /^(blob|tree)$/.test(r.stdout.toString().trim());
  }

  /**
   * Streams `git archive` of `commit` (only `path` below it when given), every member under `prefix/`; tar.gz and
   * tar.bz2 are compressed by gzip -n and bzip2 as git's archive filters. Check the path first: once streaming, a
   * failure can only cut the download short.
   */
  archive(commit: string, format: ArchiveFormat, prefix: string, path?: string): Readable {
    if (!isFullSha(commit)) throw new InvalidInputError('commit', commit);
    if (!ARCHIVE_FORMATS.includes(format)) throw new InvalidInputError('format', String(format));
    if (typeof prefix !== 'string' || prefix.length > 1024 || /[\0\n]/.test(prefix)) throw new InvalidInputError('prefix');
    const p = path === undefined ? '' : normalizeRepoPath(path);
    const args = ['-c', 'tar.tar.bz2.command=bzip2 -c', 'archive', `--format=${format}`, `--prefix=${prefix}/`, commit];
    if (p) args.push('--', p);
    const child = spawnGit(args, { gitDir: this.path, stdio: ['ignore', 'pipe', 'ignore'], timeoutMs: 30 * 60_000 });
    return child.stdout!;
  }

  // ----- git transports ------------------------------------------------------------------------------------------

  /**
   * The ref advertisement of `upload-pack` or `receive-pack` as a stateless client reads it first (smart HTTP's
   * info/refs, and the start of a push over SSH). `env` carries GIT_PROTOCOL.
   */
  async advertisement(service: 'upload-pack' | 'receive-pack', env: Record<string, string> = {}): Promise<Buffer> {
    return (await runGit([service, '--stateless-rpc', '--advertise-refs', this.path], { env, timeoutMs: 60_000 })).stdout;
  }

  /**
   * A git service process answering one client through its pipes (stdin: the client's request, stdout: the answer).
   * `upload-pack` runs stateless for smart HTTP and as a whole conversation over SSH; `receive-pack` always runs
   * stateless, after the server has read and allowed the command list, with the server's own hooks (`hooksDir`) and
   * fsck on receive; `upload-archive` serves `git archive --remote`. `stderr` pipes git's messages (SSH shows them
   * on the client's terminal). The process is killed after `timeoutMs` (30 minutes by default).
   */
  serve(service: 'upload-pack' | 'receive-pack' | 'upload-archive', o: { stateless?: boolean; env?: Record<string, string>; hooksDir?: string; stderr?: boolean; timeoutMs?: number } = {}): ChildProcess {
    let args: string[];
    if (service === 'receive-pack') {
      if (!o.hooksDir || !isAbsolute(o.hooksDir)) throw new InvalidInputError('hooksDir');
      args = ['-c', `core.hooksPath=${o.hooksDir}`, '-c', 'receive.fsckObjects=true', 'receive-pack', '--stateless-rpc', this.path];
    } else if (service === 'upload-pack') {
      args = o.stateless ? ['upload-pack', '--stateless-rpc', this.path] : ['upload-pack', this.path];
    } else {
      args = ['upload-archive', this.path];
    }
    return spawnGit(args, { env: o.env, timeoutMs: o.timeoutMs ?? 30 * 60_000, stdio: ['pipe', 'pipe', o.stderr ? 'pipe' : 'ignore'] });
  }

  /**
   * Who wrote each line of `path` at `commit`, as runs of consecutive lines from the same commit. `range` limits it
   * to lines start..end (1-based; an end past the last line stops there). Null when the file is not there.
   */
  async blame(commit: string, path: string, range?: { start: number; end: number }): Promise<Array<{ commit: string; lines: string[] }> | null> {
    const p = normalizeRepoPath(path);
    if (!p) return null;
    const rev = assertRevision(commit);
    const run = (lines?: string) =>
      // blame takes no --end-of-options; the revision was checked not to look like an option.
      this.git(['blame', '--porcelain', ...(lines ? ['-L', lines] : []), rev, '--', p], { okExitCodes: [128] });
    let r = await run(range ? `${range.start},${range.end}` : undefined);
    const short = /has only (\d+) lines?/.exec(r.stderr);
    if (r.code !== 0 && short && range) {
      const last = Number(short[1]);
      if (range.start > last) throw new InvalidInputError('range', 'outside of the file');
      r = await run(`${range.start},${last}`);
    }
    if (r.code !== 0) {
      if (/no such path|no such ref|bad revision|not a valid object|There is no path/i.test(r.stderr)) return null;
      throw new GitError(`git blame failed: ${r.stderr.trim()}`, ['blame'], r.code, r.stderr);
    }
    const groups: Array<{ commit: string; lines: string[] }> = [];
    let current = '';
    for (const line of r.stdout.toString('utf8').split('\n')) {
      if (line.startsWith('\t')) {
        const last = groups[groups.length - 1];
        if (last && last.commit === current) last.lines.push(line.slice(1));
        else groups.push({ commit: current, lines: [line.slice(1)] });
      } else if (/^[0-9a-f]{40}(?:[0-9a-f]{24})? \d+ \d+/.test(line)) {
        current = line.slice(0, line.indexOf(' '));
      }
    }
    return groups;
  }

  /** The signature a commit carries (`gpgsig` header) and the signed payload (the commit without it), or null. */
  async commitSignature(sha: string): Promise<{ signature: string; payload: string } | null> {
    if (!isFullSha(sha)) throw new InvalidInputError('commit sha', sha);
    const raw = (await this.git(['cat-file', 'commit', sha])).stdout.toString('utf8');
    const end = raw.indexOf('\n\n');
    const head = (end === -1 ? raw : raw.slice(0, end)).split('\n');
    const kept: string[] = [];
    const sig: string[] = [];
    let inSig = false;
    for (const line of head) {
      if (line.startsWith('gpgsig ') || line.startsWith('gpgsig-sha256 ')) {
        inSig = true;
        sig.push(line.slice(line.indexOf(' ') + 1));
      } else if (inSig && line.startsWith(' ')) {
        sig.push(line.slice(1));
      } else {
        inSig = false;
        kept.push(line);
      }
    }
    if (sig.length === 0) return null;
    return { signature: sig.join('\n') + '\n', payload: kept.join('\n') + (end === -1 ? '' : raw.slice(end)) };
  }

  /** Branches and tags whose history holds `sha`, branches first, each sorted by name. */
  async refsContaining(sha: string, type: 'branch' | 'tag' | 'all' = 'all'): Promise<Array<{ type: 'branch' | 'tag'; name: string }>> {
    if (!isFullSha(sha)) throw new InvalidInputError('commit sha', sha);
    const spaces = type === 'branch' ? ['refs/heads/'] : type === 'tag' ? ['refs/tags/'] : ['refs/heads/', 'refs/tags/'];
    const { stdout } = await this.git(['for-each-ref', `--contains=${sha}`, '--format=%(refname)', ...spaces]);
    const refs = stdout.toString('utf8').split('\n').filter(Boolean);
    const named = (prefix: string, kind: 'branch' | 'tag') =>
      refs.filter((r) => r.startsWith(prefix)).map((r) => ({ type: kind, name: r.slice(prefix.length) }));
    return [...named('refs/heads/', 'branch'), ...named('refs/tags/', 'tag')];
  }

  /** Author names and e-mails of the newest `limit` commits reachable from `ref`, merges left out, newest first. */
  async commitAuthors(ref: string, limit = 2000): Promise<Array<{ name: string; email: string }>> {
    if (!this.exists()) return [];
    const args = ['log', '--no-merges', `--max-count=${limit}`, '--format=%an%x00%ae%x00', '--end-of-options', assertRevision(ref), '--'];
    const r = await this.git(args, { okExitCodes: [128] });
    if (r.code !== 0) return [];
    const parts = r.stdout.toString('utf8').split('\0');
    const out: Array<{ name: string; email: string }> = [];
    for (let i = 0; i + 1 < parts.length; i += 2) out.push({ name: parts[i].replace(/^\n/, ''), email: parts[i + 1] });
    return out;
  }

  /**
   * The tree that applying `commit`'s change (cherry-pick) or its inverse (revert) on top of `onto` gives, by a
   * three-way merge with the commit's first parent (or the commit itself, for a revert) as the base; null when the
   * change does not apply cleanly. Two throwaway commits give `merge-tree` that base.
   */
  async applyChangeTree(commit: string, onto: string, mode: 'cherry-pick' | 'revert'): Promise<string | null> {
    if (!isFullSha(commit) || !isFullSha(onto)) throw new InvalidInputError('commit sha');
    const trees = await this.resolveObjects([`${commit}^{tree}`, `${onto}^{tree}`, `${commit}^1^{tree}`]);
    const [changed, ours] = [trees[0], trees[1]];
    if (!changed || !ours) throw new RefNotFoundError(changed ? onto : commit);
    const parent = trees[2] ?? EMPTY_TREE_SHA1;
    const [base, theirs] = mode === 'cherry-pick' ? [parent, changed] : [changed, parent];
    const env = { GIT_AUTHOR_NAME: 'Bellows', GIT_AUTHOR_EMAIL: 'bellows@localhost', GIT_AUTHOR_DATE: '@0 +0000', GIT_COMMITTER_NAME: 'Bellows', GIT_COMMITTER_EMAIL: 'bellows@localhost', GIT_COMMITTER_DATE: '@0 +0000' };
    const make = async (tree: string, parents: string[]) =>
      (await this.git(['commit-tree', tree, ...parents.flatMap((x) => ['-p', x])], { env, input: 'merge side' })).stdout.toString().trim();
    const baseCommit = await make(base, []);
    const [a, b] = await Promise.all([make(ours, [baseCommit]), make(theirs, [baseCommit])]);
    const r = await this.git(['merge-tree', '--write-tree', '--no-messages', a, b], { okExitCodes: [1] });
    if (r.code !== 0) return null;
    return r.stdout.toString('utf8').split('\n')[0].trim();
  }

  // ----- merging ---------------------------------------------------------------------------------------------

  /**
   * The three-way merge of two commits as `git merge-tree --write-tree` makes it, in the object store only (no
   * working tree, no index, no ref moved): the merged tree when clean, else the conflicted paths. The merge base is
   * git's own choice (recursive over criss-cross bases).
   */
  async mergeTree(ours: string, theirs: string, opts: { timeoutMs?: number } = {}): Promise<{ clean: boolean; tree: string; conflicts: string[] }> {
    if (!isFullSha(ours) || !isFullSha(theirs)) throw new InvalidInputError('commit sha');
    const r = await this.git(['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs], {
      okExitCodes: [1], timeoutMs: opts.timeoutMs ?? 60_000, maxBuffer: 8 * 1024 * 1024,
    });
    const parts = r.stdout.toString('utf8').split('\0');
    const tree = parts[0].trim();
    if (!isFullSha(tree)) throw new GitError(`git merge-tree gave no tree: ${r.stderr.trim()}`, ['merge-tree'], r.code, r.stderr);
    const conflicts = r.code === 0 ? [] : [...new Set(parts.slice(1).filter(Boolean))];
    return { clean: r.code === 0, tree, conflicts };
  }

  /**
   * Commits only `a` has (`behind`), commits only `b` has (`ahead`) and the merge base, in one walk
   * (`rev-list --left-right --boundary a...b`): the base is `a` when `b` contains it, `b` when `a` contains it, else
   * the one boundary commit of the walk (null: no common history).
   * `base` is undefined when the walk alone cannot tell (several boundary commits): ask `mergeBase` then.
   */
  async divergenceAndBase(a: string, b: string): Promise<{ behind: number; ahead: number; base: string | null | undefined }> {
    if (!isFullSha(a) || !isFullSha(b)) throw new InvalidInputError('commit sha');
    const { stdout } = await this.git(['rev-list', '--left-right', '--boundary', `${a}...${b}`, '--'], { maxBuffer: 64 * 1024 * 1024 });
    let behind = 0;
    let ahead = 0;
    const boundary: string[] = [];
    for (const line of stdout.toString().split('\n')) {
      if (line.startsWith('<')) behind++;
      else if (line.startsWith('>')) ahead++;
      else if (line.startsWith('-')) boundary.push(line.slice(1).trim());
    }
    const base = behind === 0 ? a : ahead === 0 ? b : boundary.length <= 1 ? boundary[0] ?? null : undefined;
    return { behind, ahead, base };
  }

  /**
   * Objects by id, as `cat-file --batch` gives them (null: not in the repository), read through this worker's
   * long-lived `cat-file --batch` of the repository (sessions.ts); a process of their own when the worker has its
   * most sessions busy. Objects never change, so a process started before they were written still finds them (git
   * looks again for packs it does not know).
   */
  async readObjects(shas: readonly string[]): Promise<RawObject[]> {
    for (const sha of shas) if (!isFullSha(sha)) throw new InvalidInputError('object id', sha);
    if (shas.length === 0) return [];
    const input = shas.map((s) => `${s}\n`).join('');
    const out: RawObject[] = [];
    let pos = 0;
    const read = (buf: Buffer): { used: number; value: RawObject[] } | null => {
      while (out.length < shas.length) {
        const nl = buf.indexOf(10, pos);
        if (nl < 0) return null;
        const header = buf.toString('latin1', pos, nl);
        if (header.endsWith(' missing')) {
          out.push(null);
          pos = nl + 1;
          continue;
        }
        const m = /^([0-9a-f]{40}) (\w+) (\d+)$/.exec(header);
        if (!m || m[1] !== shas[out.length]) throw new GitError(`git cat-file --batch: unexpected answer ${JSON.stringify(header.slice(0, 80))}`, ['cat-file', '--batch'], null, '');
        const size = Number(m[3]);
        if (buf.length < nl + 1 + size + 1) return null;
        out.push({ type: m[2]!, content: Buffer.from(buf.subarray(nl + 1, nl + 1 + size)) });
        pos = nl + 1 + size + 1;
      }
      return { used: pos, value: out };
    };
    const session = this.exists() ? sessionFor('cat-file', this.path) : null;
    if (session) return session.request(input, read);
    if (!this.exists()) throw new RepositoryNotFoundError(this.path);
    const { stdout } = await this.git(['cat-file', '--batch'], { input, maxBuffer: 256 * 1024 * 1024 });
    const r = read(stdout);
    if (!r) throw new GitError('git cat-file --batch: answer cut short', ['cat-file', '--batch'], 0, '');
    return r.value;
  }

  /**
   * `divergenceAndBase` computed here (object-walk.ts: git's own date-ordered walk), with no process per call: each
   * commit from the commit-graph when it holds it (commit-graph.ts), else read through `readObjects`. git answers
   * (`divergenceAndBase`) when the walk cannot tell, past `limit` commits, or past `outsideGraph` commits the graph
   * lacks (each of those is a round trip to `cat-file`: a long history written since the graph is git's to walk).
   */
  async walkDivergenceAndBase(a: string, b: string, limit = 2_000, opts: { outsideGraph?: number } = {}): Promise<{ behind: number; ahead: number; base: string | null | undefined }> {
    if (!isFullSha(a) || !isFullSha(b)) throw new InvalidInputError('commit sha');
    const graph = await CommitGraph.open(this.path);
    const parse = commitsFrom((shas) => this.readObjects(shas));
    let outside = 0;
    const read: CommitReader = async (shas) => {
      const nodes = shas.map((sha) => graph?.lookup(sha));
      const missing = shas.filter((_, i) => !nodes[i]);
      if (!missing.length) return nodes as CommitNode[];
      outside += missing.length;
      if (opts.outsideGraph !== undefined && outside > opts.outsideGraph) return undefined;
      const parsed = await parse(missing);
      let k = 0;
      return nodes.map((n) => n ?? parsed[k++]!);
    };
    const walk = await walkDivergence(read, a, b, limit);
    if (!walk) return this.divergenceAndBase(a, b);
    return { behind: walk.behind, ahead: walk.ahead, base: walk.base };
  }

  /**
   * `changedFileCount` computed here by comparing the two commits' trees read through `readObjects`; git answers
   * (`changedFileCount`) when the count needs its rename detection (files both added and removed), a type change or
   * a submodule is among the changes, or the trees to read pass `limit`.
   */
  async treeDiffCount(from: string, to: string, limit = 5_000): Promise<number> {
    if (!isFullSha(from) || !isFullSha(to)) throw new InvalidInputError('commit sha');
    const objs = await this.readObjects([from, to]);
    const trees = objs.map((o) => (o?.type === 'commit' ? /^tree ([0-9a-f]{40})$/m.exec(o.content.toString('latin1', 0, 100))?.[1] : undefined));
    if (!trees[0] || !trees[1]) return this.changedFileCount(from, to);
    const n = await changedPathCount((shas) => this.readObjects(shas), trees[0], trees[1], limit);
    return n ?? this.changedFileCount(from, to);
  }

  /**
   * Compare-and-swap: `expected` null means the ref must not exist yet; retried briefly while another writer holds
   * the lock. Throws RefExistsError or RefMovedError only when the ref is found where the caller did not expect it
   * (or a ref in its way exists); any other failure (a timeout, a broken object store) stays a GitError.
   *
   * One transaction (start, update, prepare, commit) of this worker's long-lived `update-ref --stdin` of the
   * repository, one at a time per repository, so a merge or a commit moves its branch without starting a process.
   * A refused update ends that process (git exits on a failed prepare); the error is then the one the ref's state
   * explains.
   */
  async updateRef(ref: string, next: string, expected: string | null): Promise<void> {
    if (!ref.startsWith('refs/') || !isValidRefName(ref, { allowOneLevel: false })) throw new InvalidRefNameError(ref);
    if (!isFullSha(next) || (expected !== null && !isFullSha(expected))) throw new InvalidInputError('commit sha');
    const previous = refTransactions.get(this.path) ?? Promise.resolve();
    const mine = previous.then(() => this.refTransaction(ref, next, expected));
    const settled = mine.then(() => undefined, () => undefined);
    refTransactions.set(this.path, settled);
    void settled.then(() => {
      if (refTransactions.get(this.path) === settled) refTransactions.delete(this.path);
    });
    return mine;
  }

  private async refTransaction(ref: string, next: string, expected: string | null): Promise<void> {
    const input = `start\nupdate ${ref} ${next} ${expected ?? zeroShaLike(next)}\nprepare\ncommit\n`;
    const want = 'start: ok\nprepare: ok\ncommit: ok\n';
    const read = (buf: Buffer): { used: number; value: true } | null => {
      if (buf.length < want.length) return want.startsWith(buf.toString('latin1')) ? null : bad(buf);
      return buf.toString('latin1', 0, want.length) === want ? { used: want.length, value: true } : bad(buf);
    };
    const bad = (buf: Buffer): never => {
      throw new GitError(`git update-ref --stdin: unexpected answer ${JSON.stringify(buf.toString('latin1', 0, 80))}`, ['update-ref', '--stdin'], null, '');
    };
    // Each attempt asks for the session anew (a refused transaction ends the process it ran in); with none to be had
    // (the worker's are all busy, or the repository is gone) a process of its own makes the attempt.
    await this.retryingRefLock(ref, expected, async () => {
      const session = this.exists() ? sessionFor('update-ref', this.path) : null;
      if (!session) return this.updateRefOnce(ref, next, expected);
      try {
        await session.request(input, read);
      } catch (e) {
        // The session ended under the transaction (killed, or refused a lock another writer held): with the ref
        // still where the caller expects it, nothing was written, and a process of its own tries again.
        if (!(e instanceof GitError) || e.reason === 'timeout' || (await this.revParse(ref).catch(() => undefined)) !== expected) throw e;
        await this.updateRefOnce(ref, next, expected);
      }
    });
  }

  /** Commits reachable from `head` but not from `base`, oldest first, first-parent order kept, merges left out. */
  async commitsBetween(base: string, head: string, limit = 10_000): Promise<string[]> {
    if (!isFullSha(base) || !isFullSha(head)) throw new InvalidInputError('commit sha');
    const { stdout } = await this.git(['rev-list', '--reverse', '--topo-order', '--no-merges', `--max-count=${limit}`, head, `^${base}`, '--']);
    return stdout.toString().split('\n').filter(Boolean);
  }

  /** A commit's author (name, email, git date `@<seconds> <offset>`) and message exactly as stored, for rewriting it. */
  async rawCommit(sha: string): Promise<{ tree: string; author: { name: string; email: string; date: string }; message: string }> {
    if (!isFullSha(sha)) throw new InvalidInputError('commit sha', sha);
    const raw = (await this.git(['cat-file', 'commit', sha])).stdout.toString('utf8');
    const end = raw.indexOf('\n\n');
    const head = end === -1 ? raw : raw.slice(0, end);
    const tree = /^tree ([0-9a-f]+)$/m.exec(head)?.[1] ?? '';
    const a = /^author (.*) <([^>]*)> (\d+) ([+-]\d{4})$/m.exec(head);
    return {
      tree,
      author: a ? { name: a[1], email: a[2], date: `@${a[3]} ${a[4]}` } : { name: 'unknown', email: '', date: '@0 +0000' },
      message: end === -1 ? '' : raw.slice(end + 2),
    };
  }

  /** Writes a commit object without moving a ref (merge, squash and rebased commits; see commit-writer.ts). */
  commitTree(o: CommitObjectOptions): Promise<string> {
    return writeCommitObject(this, o);
  }

  /** The tree of a commit (for comparing a computed tree with a branch head). */
  async treeOf(commit: string): Promise<string | null> {
    return (await this.resolveObjects([`${assertRevision(commit)}^{tree}`]))[0];
  }

  /** Object ids for revisions in one `cat-file --batch-check`; null where a revision names nothing. */
  private async resolveObjects(revs: string[]): Promise<Array<string | null>> {
    const { stdout } = await this.git(['cat-file', '--batch-check=%(objectname)'], { input: revs.map((r) => `${r}\n`).join('') });
    const lines = stdout.toString('utf8').split('\n');
    return revs.map((_, i) => (isFullSha(lines[i] ?? '') ? lines[i] : null));
  }

  /** Publishes a tree made by applyChangeTree as a commit on `branch` (the one commit writer). */
  createTreeCommit(o: TreeCommitOptions): Promise<CreateCommitResult> {
    return writeTreeCommit(this, o);
  }

  // ----- statistics ------------------------------------------------------------------------------------------

  async isEmpty(): Promise<boolean> {
    const cached = peekRefCache<Promise<readonly Branch[]>>(this.path, 'branches');
    if (cached) return (await cached).length === 0;
    const { stdout } = await this.git(['for-each-ref', '--count=1', '--format=x', 'refs/heads/']);
    return stdout.length === 0;
  }

  /**
   * Adds the reachable commits the commit-graph lacks as a new layer of the split graph (git merges the layers as
   * they grow), so that history walks (merge-base, rev-list, merge-tree) read parents and generations from the graph
   * instead of parsing each commit. git writes each layer and the chain file atomically; the one thing a killed writer
   * leaves is the chain's lock file, removed here once it is older than `staleLockMs` (no writer holds it that long).
   */
  async writeCommitGraph(opts: { staleLockMs?: number; timeoutMs?: number } = {}): Promise<void> {
    const lock = join(this.path, 'objects', 'info', 'commit-graphs', 'commit-graph-chain.lock');
    const held = await lstat(lock).then((st) => st.mtimeMs, () => null);
    if (held !== null && Date.now() - held > (opts.staleLockMs ?? 10 * 60_000)) await rm(lock, { force: true });
    await this.git(['commit-graph', 'write', '--reachable', '--split', '--no-progress'], { timeoutMs: opts.timeoutMs ?? 10 * 60_000 });
  }

  /** Bytes on disk, as repository_size/storage_size statistics report. No git call. */
  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const e of await readdir(this.path, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) total += (await lstat(join(e.parentPath, e.name))).size;
    }
    return total;
  }

  /** Percent of bytes per language for the tree at `ref`; {} for an unknown ref. */
  async languages(ref: string): Promise<Record<string, number>> {
    const entries = await this.readTree(ref, '', { recursive: true });
    if (!entries) return {};
    const files = entries.filter((e) => e.type === 'blob' && (e.mode === MODE_FILE || e.mode === MODE_EXEC));
    return languageShares(files.map((e) => ({ path: e.path, size: e.size ?? 0 })));
  }

  /**
   * Whether a push is writing to the repository now, read from the files receive-pack holds while it works: its
   * quarantine directory (`objects/tmp_objdir-incoming-*`, from the first pushed object until the objects are
   * moved in) and the lock files of the refs it updates (`*.lock` under refs/, `packed-refs.lock`, `HEAD.lock`).
   * Both go away when the push ends, and a push killed mid-way leaves the quarantine behind only until the
   * start-up sweep. Being files, they are seen by every server process and machine sharing the shard, which an
   * in-memory counter would not be.
   */
  async pushInProgress(): Promise<boolean> {
    const names = (dir: string) => readdir(dir).catch(() => [] as string[]);
    if ((await names(join(this.path, 'objects'))).some((n) => n.startsWith('tmp_objdir-incoming-'))) return true;
    const top = await names(this.path);
    if (top.includes('packed-refs.lock') || top.includes('HEAD.lock')) return true;
    const refs = await readdir(join(this.path, 'refs'), { recursive: true }).catch(() => [] as string[]);
    return refs.some((n) => String(n).endsWith('.lock'));
  }

  /**
   * Gitaly's repository checksum (XOR of SHA-1 over "<sha> <ref>" lines of HEAD and the usual ref namespaces), so a
   * copied repository can be verified against its source.
   */
  async checksum(): Promise<string> {
    const r = await this.git(['show-ref', '--head'], { okExitCodes: [1] });
    const sum = Buffer.alloc(20);
    for (const line of r.stdout.toString('utf8').split('\n')) {
      if (!/HEAD|refs\/(heads|tags|keep-around|merge-requests|environments|notes)\//.test(line)) continue;
      const h = createHash('sha1').update(line).digest();
      for (let i = 0; i < 20; i++) sum[i] ^= h[i];
    }
    return sum.toString('hex');
  }
}

/**
 * Links (or, across filesystems, copies) a repository's immutable object files into another's object directory:
 * loose objects and each pack's files, the `.pack` before its index so that an index never names a missing pack.
 * Temporary files, locks, `info/` (alternates, commit-graph) and anything git may still be writing are left out;
 * a file that disappears meanwhile (a repack) is skipped.
 */
async function linkObjectFiles(from: string, to: string): Promise<void> {
  const place = async (a: string, b: string): Promise<boolean> => {
    try {
      await link(a, b);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false;
      if (code === 'EEXIST') return true;
      if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'EMLINK') throw e;
    }
    try {
      await copyFile(a, b, fsConstants.COPYFILE_EXCL | fsConstants.COPYFILE_FICLONE);
      return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return false;
      if (code === 'EEXIST') return true;
      throw e;
    }
  };
  const list = (dir: string) => readdir(dir).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return [] as string[]; throw e; });
  for (const dir of await list(from)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue;
    const names = (await list(join(from, dir))).filter((n) => /^[0-9a-f]{38}$|^[0-9a-f]{62}$/.test(n));
    if (!names.length) continue;
    await mkdir(join(to, dir), { recursive: true });
    for (const n of names) await place(join(from, dir, n), join(to, dir, n));
  }
  const packDir = join(from, 'pack');
  const files = await list(packDir);
  await mkdir(join(to, 'pack'), { recursive: true });
  for (const n of files) {
    const m = /^(pack-[0-9a-f]+)\.pack$/.exec(n);
    if (!m || !(await place(join(packDir, n), join(to, 'pack', n)))) continue;
    for (const ext of ['.rev', '.bitmap', '.idx']) {
      if (files.includes(m[1] + ext)) await place(join(packDir, m[1] + ext), join(to, 'pack', m[1] + ext));
    }
  }
}

/**
 * Parses `git diff --raw -p -z`: first the raw records (":a_mode b_mode a b status\0path\0[path\0]"), then the
 * patch text, split on "diff --git" headers in the same order. With `truncated` output, a file whose patch was cut
 * (or never reached) has a null diff.
 */
function parseRawPatch(text: string, truncated: boolean): Array<Omit<DiffEntry, 'diff'> & { diff: string | null }> {
  const entries: Array<Omit<DiffEntry, 'diff'> & { diff: string | null }> = [];
  let i = 0;
  while (text[i] === ':') {
    const end = text.indexOf('\0', i);
    if (end === -1) break;
    const [aMode, bMode, , , status] = text.slice(i + 1, end).split(' ');
    i = end + 1;
    const p1End = text.indexOf('\0', i);
    if (p1End === -1) break;
    const p1 = text.slice(i, p1End);
    i = p1End + 1;
    let p2 = p1;
    if (status.startsWith('R') || status.startsWith('C')) {
      const p2End = text.indexOf('\0', i);
      if (p2End === -1) break;
      p2 = text.slice(i, p2End);
      i = p2End + 1;
    }
    entries.push({
      old_path: p1, new_path: p2, a_mode: aMode, b_mode: bMode,
      new_file: status === 'A', renamed_file: status.startsWith('R'), deleted_file: status === 'D', diff: truncated ? null : '',
    });
  }
  const patch = text.slice(i).replace(/^\0/, '').replace(/^\n/, '');
  const chunks = patch.split(/^diff --git .*\n/m).slice(1);
  chunks.forEach((c, k) => {
    if (!entries[k]) return;
    // The last chunk of a cut output is incomplete.
    if (truncated && k === chunks.length - 1) return;
    const at = c.search(/^(@@|Binary files)/m);
    entries[k].diff = at >= 0 ? c.slice(at) : '';
  });
  return entries;
}
