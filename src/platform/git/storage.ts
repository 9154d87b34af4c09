// Named storage shards (directories holding repositories) and where a project's repository lives in one.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { sha256 } from '../crypto/tokens.ts';

export interface ShardConfig {
  name: string;
  path: string;
  /** Relative share of new repositories; 0 takes none while any shard has weight. */
  weight: number;
}

export class UnknownShardError extends Error {
  override name = 'UnknownShardError';
  constructor(readonly shard: string) {
    super(`unknown storage shard: ${shard}`);
  }
}

const SHARD_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A project's code, its wiki (beside it), or a snippet (its own id, under `@snippets`). */
export type RepositoryKind = 'project' | 'wiki' | 'snippet';

/**
 * Repository paths derive from the numeric record id only, never from names users choose, so renames and
 * transfers never move files: `<shard>/@hashed/ab/cd/<sha256(id)>.git` (GitLab's hashed storage layout; the two
 * fan-out levels keep directories small), the wiki at `<same>.wiki.git`, a snippet at
 * `<shard>/@snippets/ab/cd/<sha256(snippet id)>.git`.
 */
export function diskPath(id: number, kind: RepositoryKind = 'project'): string {
  if (!Number.isSafeInteger(id) || id <= 0) throw new RangeError(`invalid ${kind} id: ${id}`);
  const h = sha256(String(id), 'hex');
  const top = kind === 'snippet' ? '@snippets' : '@hashed';
  return `${top}/${h.slice(0, 2)}/${h.slice(2, 4)}/${h}${kind === 'wiki' ? '.wiki' : ''}.git`;
}

export class Storage {
  private readonly shards: ReadonlyMap<string, Readonly<ShardConfig>>;
  private readonly random: () => number;

  constructor(shards: ShardConfig[], opts: { random?: () => number } = {}) {
    if (!Array.isArray(shards) || shards.length === 0) throw new Error('at least one storage shard is required');
    const map = new Map<string, Readonly<ShardConfig>>();
    for (const s of shards) {
      if (!SHARD_NAME_RE.test(s.name)) throw new Error(`invalid storage shard name: ${JSON.stringify(s.name)}`);
      if (map.has(s.name)) throw new Error(`duplicate storage shard: ${s.name}`);
      if (typeof s.path !== 'string' || !isAbsolute(s.path)) throw new Error(`storage shard ${s.name}: path must be absolute`);
      if (!Number.isFinite(s.weight) || s.weight < 0) throw new Error(`storage shard ${s.name}: weight must be >= 0`);
      map.set(s.name, Object.freeze({ name: s.name, path: resolve(s.path), weight: s.weight }));
    }
    this.shards = map;
    this.random = opts.random ?? Math.random;
  }

  get names(): string[] {
    return [...this.shards.keys()];
  }

  has(name: string): boolean {
    return this.shards.has(name);
  }

  root(name: string): string {
    const s = this.shards.get(name);
    if (!s) throw new UnknownShardError(name);
    return s.path;
  }

  /**
   * A shard for a new repository, at random in proportion to the weights (Efraimidis–Spirakis: the largest
   * random()^(1/weight) wins, as GitLab picks storages). Weight-0 shards only win when every weight is 0, and then
   * the first shard is used.
   */
  pick(): string {
    let best: string | undefined;
    let bestKey = -1;
    for (const s of this.shards.values()) {
      if (s.weight === 0) continue;
      const key = this.random() ** (1 / s.weight);
      if (key > bestKey) {
        bestKey = key;
        best = s.name;
      }
    }
    return best ?? this.names[0];
  }

  /**
   * A path under a shard as every machine names it, `<shard>:<path relative to the shard>` (machines may mount the
   * shared storage at different places), or null outside every shard.
   */
  share(path: string): string | null {
    const p = resolve(path);
    for (const s of this.shards.values()) {
      const rel = relative(s.path, p);
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return `${s.name}:${rel}`;
    }
    return null;
  }

  /** This machine's path for a name given by `share`, or null for a shard unknown here or a path leaving it. */
  local(shared: string): string | null {
    const at = shared.indexOf(':');
    const s = at > 0 ? this.shards.get(shared.slice(0, at)) : undefined;
    if (!s) return null;
    const path = resolve(s.path, shared.slice(at + 1));
    const rel = relative(s.path, path);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? path : null;
  }

  /** Absolute path of a project's (or snippet's) repository on a shard; always inside the shard's directory. */
  repoPath(shardName: string, id: number, kind: RepositoryKind = 'project'): string {
    const root = this.root(shardName);
    const path = join(root, diskPath(id, kind));
    const rel = relative(root, path);
    if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) {
      throw new Error(`repository path escapes shard ${shardName}`);
    }
    return path;
  }

  /**
   * A fresh path on the shard where a new repository is made whole before it takes its place with one rename
   * (same filesystem): a stop halfway leaves only a leftover here, never a half-made repository at a project's path.
   */
  stagingPath(shardName: string): string {
    return join(this.root(shardName), STAGING, `${Date.now()}-${randomBytes(6).toString('hex')}.git`);
  }

  /**
   * Moves a staged repository to its place. Whatever is there already belongs to no project (the caller has just
   * claimed the id): an earlier attempt stopped after its move but before its row was kept.
   */
  async place(staged: string, path: string): Promise<void> {
    await rm(path, { recursive: true, force: true });
    await mkdir(dirname(path), { recursive: true });
    await rename(staged, path);
  }

  /**
   * Removes what stopped work leaves on every shard, when older than `olderThanMs` (so nothing a running request
   * still uses): receive-pack's quarantine directories (`objects/tmp_objdir-incoming-*`) of pushes killed mid-way,
   * staged repositories that never took their place, and deleted repositories whose removal was cut short.
   * Returns the paths removed.
   */
  async sweep(olderThanMs: number, now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    const drop = async (path: string, always = false) => {
      const st = await stat(path).catch(() => null);
      if (!st || (!always && now - st.mtimeMs < olderThanMs)) return;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    };
    const list = (dir: string) => readdir(dir).catch(() => [] as string[]);
    for (const root of new Set([...this.shards.values()].map((s) => s.path))) {
      for (const name of await list(join(root, STAGING))) await drop(join(root, STAGING, name));
      for (const top of ['@hashed', '@snippets']) for (const a of await list(join(root, top))) {
        for (const b of await list(join(root, top, a))) {
          const dir = join(root, top, a, b);
          for (const repo of await list(dir)) {
            if (repo.endsWith('+deleted')) {
              await drop(join(dir, repo), true);
              continue;
            }
            for (const o of await list(join(dir, repo, 'objects'))) {
              if (o.startsWith('tmp_objdir-incoming-')) await drop(join(dir, repo, 'objects', o));
            }
          }
        }
      }
    }
    return removed;
  }
}

const STAGING = '@staging';
