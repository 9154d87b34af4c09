// Ref cache (a memo, see read-cache.ts): branch and tag lists per repository path, dropped by
// invalidateRefCache() after any ref change, and the indexed snapshots the API reads built from them. Pushes arrive through receive-pack, so the smart HTTP route
// invalidates when receive-pack exits; the other workers of the server hear of it through the cache bus.
import { resolve } from 'node:path';
import { announceCacheVoid, cachingAllowed, onCacheVoid } from '../cache-bus.ts';
import { defineMemo, defineObjectMemo, ownedMemo, type Memo } from '../read-cache.ts';
import type { CommitInfo } from './commit.ts';
import type { Branch, Tag } from './repository.ts';

/** branches and tags: the API's lists; files: the refs as ls-refs reads them (see ls-refs.ts). */
type RefCacheKind = 'branches' | 'tags' | 'files';
const refCache = defineMemo<string, Map<RefCacheKind, unknown>>('git-refs', { max: 1000 });
// An empty path: every repository (another machine's ref move outside this machine's shards, or a lost bus).
onCacheVoid('refs', (path) => (path ? refCache.delete(path) : refCache.clear()));

export function invalidateRefCache(repoPath: string): void {
  announceCacheVoid('refs', resolve(repoPath));
}

function entryOf(repoPath: string): Map<RefCacheKind, unknown> {
  let entry = refCache.get(repoPath);
  if (!entry) refCache.set(repoPath, (entry = new Map()));
  return entry;
}

/** A value kept beside the ref lists of a repository (dropped with them); `repoPath` must be resolved. */
export function peekRefCache<T>(repoPath: string, kind: RefCacheKind): T | undefined {
  if (!cachingAllowed()) return undefined;
  return refCache.get(repoPath)?.get(kind) as T | undefined;
}

export function storeRefCache<T>(repoPath: string, kind: RefCacheKind, value: T): void {
  if (!cachingAllowed()) return;
  entryOf(repoPath).set(kind, value);
}

export function cachedRefs<T>(repoPath: string, kind: 'branches' | 'tags', load: () => Promise<T>): Promise<T> {
  // Without the bus another machine's push would go unheard.
  if (!cachingAllowed()) return load();
  const entry = entryOf(repoPath);
  const hit = entry.get(kind) as Promise<T> | undefined;
  if (hit) return hit;
  const p = load();
  entry.set(kind, p);
  p.catch(() => entry.get(kind) === p && entry.delete(kind));
  return p;
}

// ---- snapshots: the cached lists indexed for the API, kept beside the list and living exactly as long as it ----

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
}

export const EMPTY_SNAPSHOT: RefSnapshot = { list: [], byName: new Map() };

// A cached list's snapshot, and what is derived from a snapshot, live exactly as long as the list (object memos).
const snapshots = defineObjectMemo<readonly unknown[], RefSnapshot>('ref-snapshots');
const derived = defineObjectMemo<RefSnapshot, Memo<string, unknown>>('ref-snapshot-derived');

/**
 * A value derived from a snapshot (a filter's result, the branches merged into a target), made by `make` on first
 * need and dropped with the snapshot; each snapshot keeps its `max` most recently used.
 */
export function derivedFromSnapshot<T extends {}>(snap: RefSnapshot, key: string, make: () => T, max = 64): T {
  const memo = derived.of(snap, () => ownedMemo({ max }));
  let v = memo.get(key) as T | undefined;
  if (v === undefined) memo.set(key, (v = make()));
  return v;
}

/** Drops one derived value (a failed load). */
export function forgetDerived(snap: RefSnapshot, key: string): void {
  derived.get(snap)?.delete(key);
}
let refReads = 0;

/** How many ref snapshots were built from git output (tests and the benchmark use it to prove cache hits). */
export function refReadCount(): number {
  return refReads;
}

// The API shows datetimes with milliseconds and the commit's own offset.
const withMillis = (d: string) => d.replace(/^(.{19})(?=[+-]|Z)/, '$1.000');

export function withMillisDates(c: CommitInfo): CommitInfo {
  return { ...c, created_at: withMillis(c.created_at), authored_date: withMillis(c.authored_date), committed_date: withMillis(c.committed_date) };
}

export function snapshotOf<T extends { name: string }>(list: readonly T[], toEntry: (x: T) => RefEntry | null): RefSnapshot {
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
    snap = { list: entries, byName: new Map(entries.map((r) => [r.name, r])) };
    snapshots.set(list, snap);
  }
  return snap;
}

export const branchEntry = (b: Branch): RefEntry => ({ name: b.name, lower: b.name.toLowerCase(), target: b.sha, commit: withMillisDates(b.commit) });
export const tagEntry = (t: Tag): RefEntry | null => t.commit
  ? {
    name: t.name, lower: t.name.toLowerCase(), target: t.target, commit: withMillisDates(t.commit),
    tag: t.annotated ? { message: t.message ?? '', taggerName: t.tagger?.name ?? '', taggerEmail: t.tagger?.email ?? '', date: withMillis(t.tagger?.date ?? '') } : null,
  }
  : null;
