// The commit writer: file actions become one commit on a branch without a working tree, checked against the parent
// tree first, built in a private index and published by a compare-and-swap ref update.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSafeRevision, isValidBranchName, zeroShaLike, SHA1_ZERO } from './refs.ts';
import { FileExistsError, FileNotFoundError, InvalidInputError, InvalidPathError, InvalidRefNameError, RefExistsError, RefMovedError, StaleFileError, StartRefMissingError } from './errors.ts';
import type { Identity, Repository } from './repository.ts';
import { hasLooseObject, writeLooseObject } from './loose-object.ts';

/** `last_commit_id`: refuse (StaleFileError) when the file changed since that commit (a prefix of the sha will do). */
export type CommitAction =
  | { action: 'create' | 'update'; file_path: string; content?: Buffer | string; executable?: boolean; last_commit_id?: string }
  | { action: 'delete'; file_path: string; last_commit_id?: string }
  | { action: 'move'; file_path: string; previous_path: string; content?: Buffer | string; executable?: boolean; last_commit_id?: string }
  | { action: 'chmod'; file_path: string; executable: boolean };

export interface CreateCommitOptions {
  branch: string;
  /** Start the branch from this branch (when `branch` does not exist yet, or with `force`). */
  startBranch?: string;
  /** Start the branch from this commit; wins over startBranch. */
  startSha?: string;
  /** Fail with RefMovedError unless the branch is at this commit (null: the branch must not exist). */
  expectedOldSha?: string | null;
  /** Replace an existing branch with a commit on top of the start point. */
  force?: boolean;
  actions: CommitAction[];
  message: string;
  author: Identity;
  /** Defaults to the author. */
  committer?: Identity;
}

export interface CreateCommitResult {
  sha: string;
  treeSha: string;
  parentSha: string | null;
  branchCreated: boolean;
}

export const MODE_FILE = '100644';
export const MODE_EXEC = '100755';

/** Cleans a repository-relative path; refuses `.`/`..` components and NUL. Returns "" for the root. */
export function normalizeRepoPath(path: string): string {
  if (typeof path !== 'string' || path.includes('\0')) throw new InvalidPathError(String(path));
  const parts = path.split('/').filter((s) => s !== '');
  if (parts.some((s) => s === '.' || s === '..')) throw new InvalidPathError(path);
  return parts.join('/');
}

function filePath(path: string): string {
  const p = normalizeRepoPath(path);
  // git itself refuses .git components in an index; say so before building anything.
  if (p === '' || p.split('/').some((s) => s.toLowerCase() === '.git')) throw new InvalidPathError(path);
  return p;
}

function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

function gitDate(date: Date | string | undefined): string {
  if (date === undefined) return `@${Math.floor(Date.now() / 1000)} +0000`;
  if (date instanceof Date) {
    if (Number.isNaN(date.getTime())) throw new InvalidInputError('date');
    return `@${Math.floor(date.getTime() / 1000)} +0000`;
  }
  // git's own raw form (`@<seconds> <offset>`), as a rewritten commit keeps its author date.
  if (/^@\d{1,12} [+-]\d{4}$/.test(date)) return date;
  if (/[\0\n]/.test(date) || Number.isNaN(Date.parse(date))) throw new InvalidInputError('date', date);
  return date;
}

export function checkIdentity(who: Identity, field: string): Identity {
  if (!who || typeof who.name !== 'string' || typeof who.email !== 'string') throw new InvalidInputError(field);
  // "<", ">" and newlines would forge extra header fields in the commit object, so they are dropped.
  const clean = (s: string) => s.replace(/[<>\n\0]/g, '').trim();
  return { ...who, name: clean(who.name) || 'unknown', email: clean(who.email) };
}

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

/** The environment `commit-tree` reads the author and committer from; the committer defaults to the author. */
function identityEnv(authorIn: Identity, committerIn: Identity | undefined): Record<string, string> {
  const author = checkIdentity(authorIn, 'author');
  const committer = checkIdentity(committerIn ?? authorIn, 'committer');
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: gitDate(author.date),
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: gitDate(committer.date ?? (committerIn ? undefined : author.date)),
  };
}

export interface TreeCommitOptions {
  branch: string;
  /** A tree already in the object store (the result of a cherry-pick or a revert). */
  tree: string;
  /** The branch head the tree was made on: the new commit's parent, and what the branch must still point at. */
  parent: string;
  message: string;
  author: Identity;
  committer?: Identity;
}

/**
 * Publishes a tree built elsewhere as one commit on top of `parent`, moving the branch by compare-and-swap from
 * `parent`: a concurrent writer makes this fail with RefMovedError instead of losing a commit.
 */
export async function writeTreeCommit(repo: Repository, o: TreeCommitOptions): Promise<CreateCommitResult> {
  if (!isValidBranchName(o.branch)) throw new InvalidRefNameError(o.branch);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(o.tree)) throw new InvalidInputError('tree', o.tree);
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(o.parent)) throw new InvalidInputError('parent', o.parent);
  if (typeof o.message !== 'string' || o.message.includes('\0')) throw new InvalidInputError('message');
  const env = identityEnv(o.author, o.committer);
  const sha = (await repo.git(['commit-tree', o.tree, '-p', o.parent], { env, input: o.message })).stdout.toString().trim();
  await repo.updateRef(`refs/heads/${o.branch}`, sha, o.parent);
  return { sha, treeSha: o.tree, parentSha: o.parent, branchCreated: false };
}

export interface CommitObjectOptions {
  tree: string;
  /** Parent commits, first parent first (none for a root commit). */
  parents: string[];
  message: string;
  author: Identity;
  committer?: Identity;
}

/**
 * Writes a commit object (`commit-tree`) without moving any ref: merges, squashes and rebased commits are built
 * first and published afterwards by a compare-and-swap ref update.
 */
export async function writeCommitObject(repo: Repository, o: CommitObjectOptions): Promise<string> {
  const full = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
  if (!full.test(o.tree)) throw new InvalidInputError('tree', o.tree);
  if (o.parents.length > 16 || o.parents.some((p) => !full.test(p))) throw new InvalidInputError('parents');
  if (typeof o.message !== 'string' || o.message.includes('\0')) throw new InvalidInputError('message');
  const env = identityEnv(o.author, o.committer);
  // The object as commit-tree would write it, without a process, when its bytes are known exactly and the tree is
  // known to be there (merge-tree writes the trees it makes as loose objects); else git writes it and checks it.
  const body = commitObjectBody(o.tree, o.parents, env, o.message);
  if (body && (await hasLooseObject(repo.path, o.tree))) return writeLooseObject(repo.path, 'commit', body);
  return (await repo.git(['commit-tree', o.tree, ...o.parents.flatMap((p) => ['-p', p])], { env, input: o.message })).stdout.toString().trim();
}

/**
 * Characters some git version trims from either end of a name or e-mail (its `crud`: control characters and space,
 * and `.,:;<>"\'`); an identity ending in one is left to git, so the bytes never depend on which git trims what.
 */
const CRUD_END = /^[\x00-\x20.,:;<>"\\']|[\x00-\x20.,:;<>"\\']$/;
const CONTROL = /[\x00-\x1f\x7f]/;

/** `<name> <<email>> <seconds> <zone>` from commit-tree's environment, or null when git would clean or parse it. */
function identLine(name: string, email: string, date: string): string | null {
  if (!name || !email || CRUD_END.test(name) || CRUD_END.test(email) || CONTROL.test(name) || CONTROL.test(email)) return null;
  // git's raw date form, with an ordinary zone (git may rewrite `-0000` or an hour past 14).
  const d = /^@(\d{1,12}) ([+-])(0\d|1[0-4])([0-5]\d)$/.exec(date);
  return d && `${d[2]}${d[3]}${d[4]}` !== '-0000' ? `${name} <${email}> ${Number(d[1])} ${d[2]}${d[3]}${d[4]}` : null;
}

/**
 * The body of the commit object `git commit-tree <tree> -p <parent>... ` writes from this environment and message
 * (the message as given, no trailing newline added), or null when only git can tell: a SHA-1 repository only.
 */
function commitObjectBody(tree: string, parents: string[], env: Record<string, string>, message: string): Buffer | null {
  if (!/^[0-9a-f]{40}$/.test(tree) || parents.some((p) => !/^[0-9a-f]{40}$/.test(p))) return null;
  const author = identLine(env.GIT_AUTHOR_NAME, env.GIT_AUTHOR_EMAIL, env.GIT_AUTHOR_DATE);
  const committer = identLine(env.GIT_COMMITTER_NAME, env.GIT_COMMITTER_EMAIL, env.GIT_COMMITTER_DATE);
  if (!author || !committer) return null;
  const head = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${author}`, `committer ${committer}`].join('\n');
  return Buffer.from(`${head}\n\n${message}`, 'utf8');
}

export async function writeCommit(repo: Repository, o: CreateCommitOptions): Promise<CreateCommitResult> {
  if (!isValidBranchName(o.branch)) throw new InvalidRefNameError(o.branch);
  if (o.startBranch !== undefined && !isValidBranchName(o.startBranch)) throw new InvalidRefNameError(o.startBranch);
  if (o.startSha !== undefined && (!isSafeRevision(o.startSha) || o.startSha.includes('..'))) throw new InvalidRefNameError(o.startSha);
  if (!Array.isArray(o.actions) || o.actions.length === 0) throw new InvalidInputError('actions', 'none given');
  if (typeof o.message !== 'string' || o.message.includes('\0')) throw new InvalidInputError('message');
  const env = identityEnv(o.author, o.committer);

  const ref = `refs/heads/${o.branch}`;
  const current = await repo.revParse(ref);
  if (o.expectedOldSha !== undefined && o.expectedOldSha !== current) {
    throw new RefMovedError(ref, o.expectedOldSha, current);
  }
  const start = o.startSha ?? (o.startBranch !== undefined && o.startBranch !== o.branch ? `refs/heads/${o.startBranch}` : undefined);
  let parent: string | null;
  if (start !== undefined) {
    if (current && !o.force) throw new RefExistsError(ref);
    parent = await repo.revParse(`${start}^{commit}`);
    if (!parent) throw new StartRefMissingError(o.startSha ?? o.startBranch!);
  } else {
    parent = current;
    // Only the first commit of an empty repository may start from nothing.
    if (!parent && !(await repo.isEmpty())) throw new StartRefMissingError(o.branch);
  }

  const dir = await mkdtemp(join(tmpdir(), 'bellows-commit-'));
  try {
    const indexEnv = { GIT_INDEX_FILE: join(dir, 'index') };
    const changes = await planChanges(repo, parent, o.actions);
    const blobs = changes.filter((c): c is PlannedWrite => c.kind === 'write' && c.content !== undefined);
    if (parent) await repo.git(['read-tree', parent], { env: indexEnv });
    if (blobs.length > 0) {
      const files = await Promise.all(
        blobs.map(async (b, i) => {
          const file = join(dir, `blob-${i}`);
          await writeFile(file, b.content!);
          return file;
        }),
      );
      // --no-filters: store the bytes given, whatever attributes say.
      const out = await repo.git(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: files.join('\n') + '\n' });
      out.stdout.toString().trim().split('\n').forEach((id, i) => (blobs[i].id = id));
    }
    const zero = zeroShaLike(parent ?? SHA1_ZERO); // removals only happen when there is a parent
    // Removals first so a file may take the place of a directory emptied in the same commit.
    const records = [
      ...changes.filter((c) => c.kind === 'remove').map((c) => `0 ${zero}\t${c.path}\0`),
      ...changes.filter((c): c is PlannedWrite => c.kind === 'write').map((c) => `${c.mode} ${c.id}\t${c.path}\0`),
    ];
    await repo.git(['update-index', '-z', '--index-info'], { env: indexEnv, input: records.join('') });
    const tree = (await repo.git(['write-tree'], { env: indexEnv })).stdout.toString().trim();
    const commitArgs = ['commit-tree', tree, ...(parent ? ['-p', parent] : [])];
    const sha = (await repo.git(commitArgs, { env, input: o.message })).stdout.toString().trim();
    await repo.updateRef(ref, sha, current);
    return { sha, treeSha: tree, parentSha: parent, branchCreated: current === null };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Checks the actions in order against the parent tree (one ls-tree of just the touched paths and their
 * directories) and returns the final index edits. `update-index --index-info` silently replaces a file by a
 * directory and the reverse, so every such conflict must be caught here.
 */
async function planChanges(repo: Repository, parent: string | null, actions: CommitAction[]): Promise<PlannedChange[]> {
  const steps = actions.map((a) => ({ a, path: filePath(a.file_path), prev: a.action === 'move' ? filePath(a.previous_path) : undefined }));
  // Path -> entry as the actions go; null once removed. Starts from the parent's entries for the touched paths.
  const state = new Map<string, Entry | null>();
  if (parent) {
    const lookups = new Set(steps.flatMap(({ path, prev }) => [path, ...ancestors(path), ...(prev ? [prev, ...ancestors(prev)] : [])]));
    // -t also lists the directories ls-tree walks through; the environment makes the paths literal.
    const { stdout } = await repo.git(['ls-tree', '-z', '-t', '--full-tree', parent, '--', ...lookups]);
    for (const rec of stdout.toString('utf8').split('\0')) {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(rec);
      if (m) state.set(m[4], { mode: m[1], type: m[2], id: m[3] });
    }
  }
  const touched = new Set<string>();
  const newDirs = new Set<string>();
  const get = (p: string) => state.get(p) ?? null;
  const isFile = (p: string) => get(p)?.type === 'blob';
  const taken = (p: string) =>
    get(p) !== null || newDirs.has(p) || ancestors(p).some((d) => (get(d)?.type ?? 'tree') !== 'tree');
  const put = (p: string, e: Entry) => {
    state.set(p, e);
    touched.add(p);
    for (const d of ancestors(p)) newDirs.add(d);
  };
  const drop = (p: string) => {
    state.set(p, null);
    touched.add(p);
  };
  const mode = (executable: boolean | undefined, old = MODE_FILE) =>
    executable === undefined ? old : executable ? MODE_EXEC : MODE_FILE;
  const blob = (content: Buffer | string | undefined): Entry => ({ mode: MODE_FILE, type: 'blob', content: Buffer.from(content ?? '') });

  const stale = async (a: CommitAction, path: string) => {
    const last = 'last_commit_id' in a && a.last_commit_id && parent ? await repo.lastCommitFor(parent, path) : null;
    if (last && !last.startsWith((a as { last_commit_id: string }).last_commit_id)) throw new StaleFileError(a.file_path);
  };
  for (const { a, path, prev } of steps) {
    const old = get(path);
    switch (a.action) {
      case 'create':
        if (taken(path)) throw new FileExistsError(path);
        put(path, { ...blob(a.content), mode: mode(a.executable) });
        break;
      case 'update':
        if (!isFile(path)) throw new FileNotFoundError(path);
        await stale(a, path);
        put(path, { ...blob(a.content), mode: mode(a.executable, old!.mode) });
        break;
      case 'delete':
        if (!isFile(path)) throw new FileNotFoundError(path);
        await stale(a, path);
        drop(path);
        break;
      case 'move': {
        if (!isFile(prev!)) throw new FileNotFoundError(prev!);
        // A move onto itself names a file that already exists, as the reference answers.
        if (path === prev) throw new FileExistsError(path);
        const from = get(prev!)!;
        drop(prev!);
        if (taken(path)) throw new FileExistsError(path);
        await stale(a, prev!);
        const body = a.content === undefined ? from : blob(a.content);
        put(path, { ...body, mode: mode(a.executable, from.mode) });
        break;
      }
      case 'chmod':
        if (!isFile(path)) throw new FileNotFoundError(path);
        if (typeof a.executable !== 'boolean') throw new InvalidInputError('executable', path);
        put(path, { ...old!, mode: mode(a.executable) });
        break;
      default:
        throw new InvalidInputError('action', String((a as { action: unknown }).action));
    }
  }
  return [...touched].map((path): PlannedChange => {
    const e = get(path);
    return e ? { kind: 'write', path, mode: e.mode, id: e.id, content: e.content } : { kind: 'remove', path };
  });
}

/** A tree entry while planning a commit: from the parent (id known) or new (content to hash). */
interface Entry {
  mode: string;
  type: string;
  id?: string;
  content?: Buffer;
}

interface PlannedWrite {
  kind: 'write';
  path: string;
  mode: string;
  /** Set once known: an existing blob, or after hashing `content`. */
  id?: string;
  content?: Buffer;
}
type PlannedChange = PlannedWrite | { kind: 'remove'; path: string };
