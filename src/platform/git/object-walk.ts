// History and tree answers computed from raw objects (read through the repository's long-lived `cat-file --batch`),
// written to give git's own answers: the merge base and the two sides' commit counts by git's date-ordered walk
// (`paint_down_to_common`), and the changed-file count of `git diff -M --name-only`. Where git would need more than
// these walks know (several merge bases, a rename to detect, a type change, a submodule, a walk past its bound),
// the answer is `undefined` and the caller asks git.

/** An object as `cat-file --batch` gives it; null when the repository does not have it. */
export type RawObject = { type: string; content: Buffer } | null;
export type ObjectReader = (shas: readonly string[]) => Promise<RawObject[]>;

export interface CommitNode {
  tree: string;
  parents: string[];
  /** Committer time, seconds since the epoch. */
  date: number;
}

export function parseCommit(content: Buffer): CommitNode {
  const end = content.indexOf('\n\n');
  const head = content.subarray(0, end === -1 ? content.length : end).toString('latin1');
  let tree = '';
  const parents: string[] = [];
  let date = 0;
  for (const line of head.split('\n')) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    else if (line.startsWith('committer ')) {
      const m = /> (\d+) [+-]\d{4}$/.exec(line);
      date = m ? Number(m[1]) : 0;
    } else if (line.startsWith(' ')) continue; // a continued header (signatures)
  }
  return { tree, parents, date };
}

export interface TreeItem {
  mode: string;
  name: string;
  sha: string;
}

/** A tree object's entries, `<mode> <name>\0<20-byte id>` each. */
export function parseTree(content: Buffer): TreeItem[] {
  const out: TreeItem[] = [];
  let i = 0;
  while (i < content.length) {
    const sp = content.indexOf(0x20, i);
    const nul = content.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object');
    out.push({ mode: content.toString('latin1', i, sp), name: content.toString('utf8', sp + 1, nul), sha: content.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}

const PARENT1 = 1;
const PARENT2 = 2;
const STALE = 4;
const RESULT = 8;

/** A max-heap on the commit date; equal dates come out in the order they went in (as git's prio_queue). */
class DateQueue {
  private heap: Array<{ sha: string; date: number; n: number }> = [];
  private n = 0;
  get size() {
    return this.heap.length;
  }
  entries() {
    return this.heap;
  }
  private before(x: { date: number; n: number }, y: { date: number; n: number }) {
    return x.date > y.date || (x.date === y.date && x.n < y.n);
  }
  push(sha: string, date: number) {
    const h = this.heap;
    h.push({ sha, date, n: this.n++ });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): string {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top.sha;
  }
}

/** Commits by id, in the order asked; undefined when the reader gives up (its own bound). */
export type CommitReader = (shas: readonly string[]) => Promise<CommitNode[] | undefined>;

/** A commit reader parsing the raw objects of `read`. */
export function commitsFrom(read: ObjectReader): (shas: readonly string[]) => Promise<CommitNode[]> {
  return async (shas) => {
    const objs = await read(shas);
    return shas.map((sha, i) => {
      const o = objs[i];
      if (!o || o.type !== 'commit') throw new Error(`not a commit: ${sha}`);
      return parseCommit(o.content);
    });
  };
}

/** Reads commits through `read`, each once per walk; undefined past `limit` commits read. */
class CommitStore {
  readonly nodes = new Map<string, CommitNode>();
  constructor(private readonly read: CommitReader, private readonly limit: number) {}
  async load(shas: string[]): Promise<boolean> {
    const missing = shas.filter((s) => !this.nodes.has(s));
    if (!missing.length) return true;
    if (this.nodes.size + missing.length > this.limit) return false;
    const got = await this.read(missing);
    if (!got) return false;
    missing.forEach((sha, i) => this.nodes.set(sha, got[i]!));
    return true;
  }
}

/**
 * Commits only `a` has (`behind`), commits only `b` has (`ahead`) and their merge base, as `git rev-list
 * --left-right --count a...b` and `git merge-base a b` answer on a history whose commit dates do not go backwards
 * (git's walk without a commit-graph: by committer date). `base` null: no common history. Undefined when git must
 * answer: several merge-base candidates (a criss-cross; git's choice among them needs its redundancy check), or more
 * than `limit` commits to read, or `read` gave up.
 */
export async function walkDivergence(read: CommitReader, a: string, b: string, limit = 2_000): Promise<{ behind: number; ahead: number; base: string | null; commits: Map<string, CommitNode> } | undefined> {
  const store = new CommitStore(read, limit);
  if (a === b) {
    if (!(await store.load([a]))) return undefined;
    return { behind: 0, ahead: 0, base: a, commits: store.nodes };
  }
  if (!(await store.load([a, b]))) return undefined;
  const flags = new Map<string, number>([[a, PARENT1], [b, PARENT2]]);
  const queue = new DateQueue();
  queue.push(a, store.nodes.get(a)!.date);
  queue.push(b, store.nodes.get(b)!.date);
  const results: string[] = [];
  const isStale = (sha: string) => ((flags.get(sha) ?? 0) & STALE) !== 0;
  // As git: on while any queued commit is not stale (its flags as they are now, not as when it was queued).
  while (queue.entries().some((e) => !isStale(e.sha))) {
    const c = queue.pop();
    let f = (flags.get(c) ?? 0) & (PARENT1 | PARENT2 | STALE);
    if (f === (PARENT1 | PARENT2)) {
      if (!((flags.get(c) ?? 0) & RESULT)) {
        flags.set(c, flags.get(c)! | RESULT);
        results.push(c);
      }
      f |= STALE;
    }
    const todo = store.nodes.get(c)!.parents.filter((p) => ((flags.get(p) ?? 0) & f) !== f);
    if (!todo.length) continue;
    if (!(await store.load(todo))) return undefined;
    for (const p of todo) {
      const before = flags.get(p) ?? 0;
      if ((before & f) === f) continue;
      flags.set(p, before | f);
      queue.push(p, store.nodes.get(p)!.date);
    }
  }
  const bases = results.filter((r) => !isStale(r));
  if (bases.length > 1) return undefined;
  let behind = 0;
  let ahead = 0;
  for (const [, f] of flags) {
    const side = f & (PARENT1 | PARENT2);
    if (side === PARENT1) behind++;
    else if (side === PARENT2) ahead++;
  }
  return { behind, ahead, base: bases[0] ?? null, commits: store.nodes };
}

const isTreeMode = (mode: string) => mode === '40000' || mode === '040000';
const isGitlink = (mode: string) => mode === '160000';
const isSymlink = (mode: string) => mode === '120000';

/**
 * How many paths `git diff -M --name-only from to` lists between two trees; undefined when the answer needs git's
 * rename detection (files both added and removed), or shows a type change or a submodule, or reads past `limit`
 * trees.
 */
export async function changedPathCount(read: ObjectReader, fromTree: string, toTree: string, limit = 5_000): Promise<number | undefined> {
  let added = 0;
  let deleted = 0;
  let modified = 0;
  let reads = 0;
  let unsure = false;
  const trees = async (shas: string[]): Promise<TreeItem[][] | undefined> => {
    reads += shas.length;
    if (reads > limit) return undefined;
    const objs = await read(shas);
    return objs.map((o, i) => {
      if (!o || o.type !== 'tree') throw new Error(`not a tree: ${shas[i]}`);
      return parseTree(o.content);
    });
  };
  // Every file under a tree that appears or disappears whole.
  const leaves = async (sha: string): Promise<number | undefined> => {
    const [items] = (await trees([sha])) ?? [];
    if (!items) return undefined;
    let n = 0;
    for (const it of items) {
      if (isGitlink(it.mode)) unsure = true;
      const k = await whole(it);
      if (k === undefined) return undefined;
      n += k;
    }
    return n;
  };
  // The files an entry that appears or disappears whole stands for: a tree's leaves, or the one file.
  const whole = async (e: TreeItem): Promise<number | undefined> => (isTreeMode(e.mode) ? leaves(e.sha) : 1);
  const compare = async (x: string, y: string): Promise<boolean> => {
    const got = await trees([x, y]);
    if (!got) return false;
    const [xs, ys] = got as [TreeItem[], TreeItem[]];
    const byName = new Map(ys.map((e) => [e.name, e]));
    for (const e of xs) {
      const o = byName.get(e.name);
      byName.delete(e.name);
      if (o && o.sha === e.sha && o.mode === e.mode) continue;
      if (isGitlink(e.mode) || (o && isGitlink(o.mode))) unsure = true;
      if (!o) {
        const k = await whole(e);
        if (k === undefined) return false;
        deleted += k;
      } else if (isTreeMode(e.mode) && isTreeMode(o.mode)) {
        if (!(await compare(e.sha, o.sha))) return false;
      } else if (isTreeMode(e.mode) || isTreeMode(o.mode)) {
        // A file became a directory or the reverse: the file goes or comes, and every file under the tree.
        const k = await leaves(isTreeMode(e.mode) ? e.sha : o.sha);
        if (k === undefined) return false;
        if (isTreeMode(e.mode)) (deleted += k), added++;
        else deleted++, (added += k);
      } else {
        if (isSymlink(e.mode) !== isSymlink(o.mode)) unsure = true;
        modified++;
      }
      if (unsure) return false;
    }
    for (const o of byName.values()) {
      if (isGitlink(o.mode)) unsure = true;
      const k = await whole(o);
      if (k === undefined) return false;
      added += k;
      if (unsure) return false;
    }
    return !unsure;
  };
  if (fromTree === toTree) return 0;
  if (!(await compare(fromTree, toTree))) return undefined;
  if (added > 0 && deleted > 0) return undefined;
  return added + deleted + modified;
}
