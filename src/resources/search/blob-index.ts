import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { Repository } from '../../platform/git/index.ts';

// The blob search index of one tree: for each trigram of the files' text, the files holding it. A content search
// reads the files holding every trigram of its term (the candidates) and hands those alone to `git grep`, which
// stays the one matcher: the index only says which files cannot match.
//
// - Trigrams are of bytes, ASCII letters folded to lower case, and only of three ASCII bytes: `git grep -i -F`
//   in the fixed environment (LC_ALL=C) folds ASCII letters alone, so a file matching the term holds every
//   all-ASCII trigram of the folded term. A term without one (shorter than three characters, or no three ASCII
//   characters in a row) is searched over the whole tree.
// - One file per tree, `<repository>/search-index/<tree>.trigrams`, written whole under a temporary name and
//   renamed into place once synced: a stop at any point leaves either no index or the whole one. The file names
//   the tree it was read from, so it never goes stale; a moved branch names another tree, which has no index until
//   one is built, and is searched over the whole tree meanwhile.
// - Built by the job `BLOB_INDEX_JOB` (search.jobs.ts), queued when a tree without one is searched and when the
//   default branch of a project already searched moves; the newest few per repository are kept.
//
// Layout (little-endian): "BSIX0001", u32 files, u32 trigrams, u32 path bytes, u32 posting bytes; the trigrams
// (u32, ascending); their posting offsets (u32, one more than the trigrams); the paths of the tree in git's order
// (`ls-tree -r`), NUL-terminated; the postings: per trigram the ascending indexes of its files as varint gaps.

export const BLOB_INDEX_JOB = 'blob_search_index';
const MAGIC = Buffer.from('BSIX0001', 'latin1');
const HEADER = 24;
const DIR = 'search-index';
const SUFFIX = '.trigrams';
/** How many indexes a repository keeps (the newest built). */
export const KEPT_INDEXES = 4;
/** Above this many candidate files the term is searched over the whole tree (it is common: git finds a page soon). */
export const MAX_CANDIDATES = 2_000;
const KEYS = 1 << 21;

/** Where the index of `tree` lives (a full object id, checked: it becomes part of a path). */
export function indexFile(repo: Repository, tree: string): string {
  if (!/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(tree)) throw new Error(`not a tree id: ${tree}`);
  return join(repo.path, DIR, `${tree}${SUFFIX}`);
}

/** The trigram keys of `text` (a term): folded, all-ASCII trigrams only, each once, ascending. */
export function termTrigrams(term: string): number[] {
  const bytes = Buffer.from(term, 'utf8');
  const out = new Set<number>();
  let k = 0;
  let run = 0;
  for (const raw of bytes) {
    if (raw >= 128) { run = 0; continue; }
    const c = raw >= 65 && raw <= 90 ? raw + 32 : raw;
    k = ((k << 7) & (KEYS - 1)) | c;
    if (++run >= 3) out.add(k);
  }
  return [...out].sort((a, b) => a - b);
}

/** An index read for lookups: its trigrams, their offsets and the tree's paths; postings are read on demand. */
export interface BlobIndex {
  file: string;
  keys: Uint32Array;
  offsets: Uint32Array;
  paths: string[];
  /** The paths in lower case (file-name matches compare without case). */
  lowerPaths: string[];
  postingsAt: number;
}

/** The index of `tree`, or null when none is built (or the file is not one). */
export async function readBlobIndex(repo: Repository, tree: string): Promise<BlobIndex | null> {
  const file = indexFile(repo, tree);
  const fh = await open(file, 'r').catch(() => null);
  if (!fh) return null;
  try {
    const head = Buffer.alloc(HEADER);
    if ((await fh.read(head, 0, HEADER, 0)).bytesRead !== HEADER || !head.subarray(0, 8).equals(MAGIC)) return null;
    const [files, nKeys, pathBytes, postingBytes] = [head.readUInt32LE(8), head.readUInt32LE(12), head.readUInt32LE(16), head.readUInt32LE(20)];
    const tableBytes = 4 * nKeys + 4 * (nKeys + 1) + pathBytes;
    const size = (await fh.stat()).size;
    if (size !== HEADER + tableBytes + postingBytes) return null;
    const table = Buffer.alloc(tableBytes);
    if ((await fh.read(table, 0, tableBytes, HEADER)).bytesRead !== tableBytes) return null;
    const copy = (at: number, n: number) => new Uint32Array(table.buffer.slice(table.byteOffset + at, table.byteOffset + at + 4 * n));
    const keys = copy(0, nKeys);
    const offsets = copy(4 * nKeys, nKeys + 1);
    const paths = table.toString('utf8', 8 * nKeys + 4, tableBytes).split('\0');
    paths.pop();
    if (paths.length !== files || offsets[nKeys] !== postingBytes) return null;
    return { file, keys, offsets, paths, lowerPaths: paths.map((p) => p.toLowerCase()), postingsAt: HEADER + tableBytes };
  } finally {
    await fh.close();
  }
}

function find(keys: Uint32Array, k: number): number {
  let lo = 0;
  let hi = keys.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < k) lo = mid + 1;
    else if (keys[mid]! > k) hi = mid - 1;
    else return mid;
  }
  return -1;
}

function decode(bytes: Buffer): number[] {
  const out: number[] = [];
  let prev = -1;
  for (let i = 0; i < bytes.length; ) {
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      b = bytes[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    prev += v + 1;
    out.push(prev);
  }
  return out;
}

/**
 * The paths (in git's order) of the files that may hold `term`, or null when the index cannot say (no trigram in
 * the term) and the whole tree is to be searched. An index file gone since it was read answers null too.
 */
export async function candidatePaths(index: BlobIndex, term: string): Promise<string[] | null> {
  const wanted = termTrigrams(term);
  if (!wanted.length) return null;
  const at: number[] = [];
  for (const k of wanted) {
    const i = find(index.keys, k);
    if (i === -1) return [];
    at.push(i);
  }
  // The rarest trigrams first: the running intersection is small from the start.
  at.sort((a, b) => (index.offsets[a + 1]! - index.offsets[a]!) - (index.offsets[b + 1]! - index.offsets[b]!));
  const fh = await open(index.file, 'r').catch(() => null);
  if (!fh) return null;
  try {
    let found: number[] | null = null;
    for (const i of at) {
      const n = index.offsets[i + 1]! - index.offsets[i]!;
      // A few candidates left and a list far longer (a common trigram): reading it would cost more than the files
      // it could rule out; git grep checks those few anyway.
      if (found !== null && found.length <= 32 && n > 64 * found.length) break;
      const buf = Buffer.alloc(n);
      if ((await fh.read(buf, 0, n, index.postingsAt + index.offsets[i]!)).bytesRead !== n) return null;
      const list = decode(buf);
      if (found === null) found = list;
      else {
        const next: number[] = [];
        for (let a = 0, b = 0; a < found.length && b < list.length; ) {
          if (found[a]! < list[b]!) a++;
          else if (found[a]! > list[b]!) b++;
          else { next.push(found[a]!); a++; b++; }
        }
        found = next;
      }
      if (!found.length) break;
    }
    return found!.map((f) => index.paths[f]!);
  } finally {
    await fh.close();
  }
}

/** Grows a byte buffer as varints are appended. */
class Bytes {
  buf: Buffer;
  length = 0;
  constructor(size: number) { this.buf = Buffer.allocUnsafe(Math.max(1024, size)); }
  varint(v: number) {
    if (this.length + 5 > this.buf.length) {
      const next = Buffer.allocUnsafe(this.buf.length * 2);
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    while (v >= 0x80) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.length++] = v;
  }
}

/**
 * Builds the index of `tree` unless it exists: reads every blob once (`cat-file --batch`), writes the file under a
 * temporary name, syncs it and renames it into place, then removes the older indexes past the newest
 * `KEPT_INDEXES` and temporary files left by a build that was stopped. Answers whether it built one.
 */
export async function buildBlobIndex(repo: Repository, tree: string, o: { signal?: AbortSignal } = {}): Promise<boolean> {
  const target = indexFile(repo, tree);
  if (await readBlobIndex(repo, tree)) return false;
  const entries = await repo.treeFiles(tree);
  const blobs: Array<{ id: string; size: number; file: number }> = [];
  entries.forEach((e, file) => { if (e.size !== null) blobs.push({ id: e.id, size: e.size, file }); });

  // Each file's distinct trigrams, in one growing array (`starts[f]` where file f's begin), and how many files hold each.
  const seen = new Uint32Array(KEYS);
  const counts = new Uint32Array(KEYS);
  let fileKeys = new Uint32Array(1 << 20);
  let used = 0;
  const starts = new Uint32Array(entries.length + 1);
  let last = 0;
  await repo.eachBlob(blobs, (i, content) => {
    const file = blobs[i]!.file;
    for (let f = last; f <= file; f++) starts[f] = used;
    last = file + 1;
    const mark = file + 1;
    let k = 0;
    let run = 0;
    for (let j = 0; j < content.length; j++) {
      const raw = content[j]!;
      if (raw >= 128) { run = 0; continue; }
      k = ((k << 7) & (KEYS - 1)) | (raw >= 65 && raw <= 90 ? raw + 32 : raw);
      if (++run < 3 || seen[k] === mark) continue;
      seen[k] = mark;
      counts[k]!++;
      if (used === fileKeys.length) {
        const grown = new Uint32Array(fileKeys.length * 2);
        grown.set(fileKeys);
        fileKeys = grown;
      }
      fileKeys[used++] = k;
    }
  }, { signal: o.signal });
  for (let f = last; f <= entries.length; f++) starts[f] = used;
  if (o.signal?.aborted) throw new Error('stopped');

  // Postings: the files of each trigram in ascending order (files are visited in order).
  const keyList: number[] = [];
  const pos = seen; // reused: the start of each trigram's files in `postings`
  let total = 0;
  for (let k = 0; k < KEYS; k++) {
    if (!counts[k]) continue;
    keyList.push(k);
    pos[k] = total;
    total += counts[k]!;
  }
  const postings = new Uint32Array(total);
  for (let f = 0; f < entries.length; f++) for (let j = starts[f]!; j < starts[f + 1]!; j++) postings[pos[fileKeys[j]!]!++] = f;
  fileKeys = new Uint32Array(0);
  const out = new Bytes(total * 2);
  const keys = new Uint32Array(keyList.length);
  const offsets = new Uint32Array(keyList.length + 1);
  let p = 0;
  keyList.forEach((k, i) => {
    keys[i] = k;
    offsets[i] = out.length;
    let prev = -1;
    for (const end = p + counts[k]!; p < end; p++) {
      out.varint(postings[p]! - prev - 1);
      prev = postings[p]!;
    }
  });
  offsets[keyList.length] = out.length;
  const paths = Buffer.from(entries.map((e) => `${e.path}\0`).join(''), 'utf8');
  const head = Buffer.alloc(HEADER);
  MAGIC.copy(head);
  head.writeUInt32LE(entries.length, 8);
  head.writeUInt32LE(keyList.length, 12);
  head.writeUInt32LE(paths.length, 16);
  head.writeUInt32LE(out.length, 20);

  const dir = join(repo.path, DIR);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `${tree}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fh = await open(temp, 'wx');
  try {
    await fh.writev([head, Buffer.from(keys.buffer), Buffer.from(offsets.buffer), paths, out.buf.subarray(0, out.length)]);
    await fh.datasync();
  } catch (e) {
    await fh.close();
    await rm(temp, { force: true });
    throw e;
  }
  await fh.close();
  if (o.signal?.aborted) {
    await rm(temp, { force: true });
    throw new Error('stopped');
  }
  await rename(temp, target);
  const d = await open(dir, 'r');
  await d.sync().finally(() => d.close());
  await prune(dir, target);
  return true;
}

/** Keeps the newest `KEPT_INDEXES` indexes (and `keep`); removes temporary files over an hour old (a stopped build's). */
async function prune(dir: string, keep: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  const indexes: Array<{ path: string; at: number }> = [];
  for (const name of names) {
    const path = join(dir, name);
    const s = await stat(path).catch(() => null);
    if (!s) continue;
    if (name.endsWith(SUFFIX)) indexes.push({ path, at: s.mtimeMs });
    else if (name.includes('.tmp-') && now - s.mtimeMs > 3_600_000) await rm(path, { force: true });
  }
  indexes.sort((a, b) => b.at - a.at);
  for (const old of indexes.filter((x) => x.path !== keep).slice(KEPT_INDEXES - 1)) await rm(old.path, { force: true });
}

/** Whether the repository has any index (its project's blobs were searched). */
export async function hasBlobIndexes(repo: Repository): Promise<boolean> {
  return (await readdir(join(repo.path, DIR)).catch(() => [] as string[])).some((n) => n.endsWith(SUFFIX));
}

/**
 * Queues the build of a project's index: of `tree` (one searched without one), or of its default branch's tree
 * at the time the job runs (`tree` null: the branch moved; a burst of pushes shares one run).
 */
export async function queueBlobIndex(deps: ServiceDeps, db: Db, projectId: number, tree: string | null): Promise<void> {
  await deps.jobs.enqueue(db, BLOB_INDEX_JOB, { project_id: projectId, tree }, {
    uniqueKey: `${BLOB_INDEX_JOB}:${projectId}:${tree ?? 'default'}`,
    ...(tree ? {} : { runAt: deps.clock.now() + 10_000 }),
  });
}
