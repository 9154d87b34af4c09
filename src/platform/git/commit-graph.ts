// Commits read from the repository's commit-graph files (git's `gitformat-commit-graph`), so that a history walk
// (object-walk.ts) gets a commit's tree, parents and date from a lookup in memory instead of a round trip to
// `cat-file --batch` and a parse per commit. git writes the graph (`writeCommitGraph`, after refs move), each layer
// and the chain file atomically; a layer file is named by the checksum of its content, so a layer read once never
// changes. Commits newer than the graph are not in it: the walk reads those through `cat-file`.
//
// Anything unexpected (another hash than SHA-1, a version git did not write, offsets outside the file, a chain whose
// layers do not name each other) makes the graph unused rather than trusted: the walk then reads every commit.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defineMemo } from '../read-cache.ts';
import type { CommitNode } from './object-walk.ts';

const SIGNATURE = 0x43475048; // "CGPH"
const CHUNK_OIDF = 0x4f494446;
const CHUNK_OIDL = 0x4f49444c;
const CHUNK_CDAT = 0x43444154;
const CHUNK_EDGE = 0x45444745;
const CHUNK_BASE = 0x42415345;
const HASH_LEN = 20;
const PARENT_NONE = 0x70000000;
const OCTOPUS = 0x80000000;

/** One graph file: its commits at global positions `base` .. `base + count - 1` of the chain. */
interface Layer {
  /** The file's content (its own copy: the whole file is read once). */
  data: Buffer;
  count: number;
  oidf: number;
  oidl: number;
  cdat: number;
  edge: number;
  edgeCount: number;
  /** The checksums of the layers below, base first (the BASE chunk). */
  bases: string[];
  /** The file's own checksum (its trailer), which names it in a chain. */
  checksum: string;
}

// Parsed layer files by path and identity (a chain layer's name is its checksum; the single `commit-graph` file is
// replaced in place, so its size, time and inode are part of the key). A layer is a few MB for 100,000 commits.
const layers = defineMemo<string, Layer>('git-commit-graph-layers', { max: 32 });

function parseLayer(data: Buffer): Layer | null {
  if (data.length < 8 + 12 + HASH_LEN || data.readUInt32BE(0) !== SIGNATURE) return null;
  if (data[4] !== 1 || data[5] !== 1) return null; // version 1, SHA-1
  const chunks = data[6]!;
  const baseCount = data[7]!;
  const offsets = new Map<number, [number, number]>();
  const tableEnd = 8 + (chunks + 1) * 12;
  if (tableEnd > data.length) return null;
  for (let i = 0; i < chunks; i++) {
    const at = 8 + i * 12;
    const id = data.readUInt32BE(at);
    const start = Number(data.readBigUInt64BE(at + 4));
    const end = Number(data.readBigUInt64BE(at + 16));
    if (start < tableEnd || end < start || end > data.length - HASH_LEN) return null;
    offsets.set(id, [start, end]);
  }
  const oidf = offsets.get(CHUNK_OIDF);
  const oidl = offsets.get(CHUNK_OIDL);
  const cdat = offsets.get(CHUNK_CDAT);
  if (!oidf || !oidl || !cdat || oidf[1] - oidf[0] !== 256 * 4) return null;
  const count = data.readUInt32BE(oidf[0] + 255 * 4);
  if (oidl[1] - oidl[0] !== count * HASH_LEN || cdat[1] - cdat[0] !== count * (HASH_LEN + 16)) return null;
  const edge = offsets.get(CHUNK_EDGE) ?? [0, 0];
  const base = offsets.get(CHUNK_BASE);
  if (baseCount > 0 && (!base || base[1] - base[0] !== baseCount * HASH_LEN)) return null;
  const bases = Array.from({ length: baseCount }, (_, i) => data.toString('hex', base![0] + i * HASH_LEN, base![0] + (i + 1) * HASH_LEN));
  return {
    data, count, oidf: oidf[0], oidl: oidl[0], cdat: cdat[0], edge: edge[0], edgeCount: (edge[1] - edge[0]) / 4, bases,
    checksum: data.toString('hex', data.length - HASH_LEN),
  };
}

async function loadLayer(path: string): Promise<Layer | null> {
  const st = await stat(path).catch(() => null);
  if (!st?.isFile()) return null;
  const key = `${path}\0${st.ino}\0${st.size}\0${st.mtimeMs}`;
  const known = layers.get(key);
  if (known) return known;
  const layer = parseLayer(await readFile(path).catch(() => Buffer.alloc(0)));
  if (layer) layers.set(key, layer);
  return layer;
}

/** The commits of a repository's commit-graph (its layers, base first), looked up by id. */
export class CommitGraph {
  private readonly starts: number[] = [];
  readonly size: number;

  private constructor(private readonly chain: Layer[]) {
    let n = 0;
    for (const l of chain) {
      this.starts.push(n);
      n += l.count;
    }
    this.size = n;
  }

  /**
   * The graph of the repository at `gitDir` (the split chain, else the single file); null when it has none, or
   * when git would not use one (a shallow repository, grafts) or its files are not as git writes them.
   */
  static async open(gitDir: string): Promise<CommitGraph | null> {
    const info = join(gitDir, 'objects', 'info');
    const [shallow, grafts] = await Promise.all([stat(join(gitDir, 'shallow')).catch(() => null), stat(join(info, 'grafts')).catch(() => null)]);
    if (shallow || grafts) return null;
    const chainFile = await readFile(join(info, 'commit-graphs', 'commit-graph-chain'), 'latin1').catch(() => null);
    if (chainFile !== null) {
      const names = chainFile.split('\n').filter(Boolean);
      if (!names.length || names.some((h) => !/^[0-9a-f]{40}$/.test(h))) return null;
      const chain = await Promise.all(names.map((h) => loadLayer(join(info, 'commit-graphs', `graph-${h}.graph`))));
      // Each layer must be the one its name says, on exactly the layers below it.
      const ok = chain.every((l, i) => l && l.checksum === names[i] && l.bases.length === i && l.bases.every((b, j) => b === names[j]));
      return ok ? new CommitGraph(chain as Layer[]) : null;
    }
    const single = await loadLayer(join(info, 'commit-graph'));
    return single && single.bases.length === 0 ? new CommitGraph([single]) : null;
  }

  /** The commit's tree, parents and committer time; undefined when the graph does not hold it. */
  lookup(sha: string): CommitNode | undefined {
    if (sha.length !== 40) return undefined;
    const id = Buffer.from(sha, 'hex');
    if (id.length !== HASH_LEN) return undefined;
    for (let li = this.chain.length - 1; li >= 0; li--) {
      const l = this.chain[li]!;
      const first = id[0]!;
      let lo = first === 0 ? 0 : l.data.readUInt32BE(l.oidf + (first - 1) * 4);
      let hi = l.data.readUInt32BE(l.oidf + first * 4);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const at = l.oidl + mid * HASH_LEN;
        const c = l.data.compare(id, 0, HASH_LEN, at, at + HASH_LEN);
        if (c === 0) return this.node(l, mid);
        if (c > 0) hi = mid;
        else lo = mid + 1;
      }
    }
    return undefined;
  }

  private node(l: Layer, i: number): CommitNode | undefined {
    const at = l.cdat + i * (HASH_LEN + 16);
    const d = l.data;
    const tree = d.toString('hex', at, at + HASH_LEN);
    const parents: string[] = [];
    const p1 = d.readUInt32BE(at + HASH_LEN);
    const p2 = d.readUInt32BE(at + HASH_LEN + 4);
    if (p1 !== PARENT_NONE) {
      const id = this.idAt(p1);
      if (!id) return undefined;
      parents.push(id);
    }
    if (p2 !== PARENT_NONE) {
      if (p2 & OCTOPUS) {
        // The second and later parents are listed in the EDGE chunk from this index; the last has the high bit.
        for (let e = p2 & ~OCTOPUS; ; e++) {
          if (e >= l.edgeCount) return undefined;
          const v = d.readUInt32BE(l.edge + e * 4);
          const id = this.idAt((v & ~OCTOPUS) >>> 0);
          if (!id) return undefined;
          parents.push(id);
          if (v & OCTOPUS) break;
        }
      } else {
        const id = this.idAt(p2);
        if (!id) return undefined;
        parents.push(id);
      }
    }
    // The commit time: 34 bits, the two high ones in the low bits of the generation word.
    const date = (d.readUInt32BE(at + HASH_LEN + 8) & 0x3) * 2 ** 32 + d.readUInt32BE(at + HASH_LEN + 12);
    return { tree, parents, date };
  }

  /** The commit id at a position of the chain (a parent's position may be in any layer at or below the child's). */
  private idAt(pos: number): string | undefined {
    for (let li = this.chain.length - 1; li >= 0; li--) {
      const start = this.starts[li]!;
      if (pos >= start) {
        const l = this.chain[li]!;
        const i = pos - start;
        if (i >= l.count) return undefined;
        return l.data.toString('hex', l.oidl + i * HASH_LEN, l.oidl + (i + 1) * HASH_LEN);
      }
    }
    return undefined;
  }
}
