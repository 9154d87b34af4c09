import { LRUCache } from 'lru-cache';
import { cachingAllowed, onCacheVoid } from './cache-bus.ts';

// The application's read caches, all under one rule. An entry serves reads for the window (config authCacheMs)
// unless a write passed since it was made: every state-changing request voids the caches of every worker at its
// start (here) and at its end (through the cache bus), and a value loaded while the generation moved may be stale,
// so it serves its own request only. Together these keep anything read during a write from outliving it.
// Version-validated caches (rows carrying a database-maintained version) instead serve a read that asks for the
// version they hold, whatever the window or writes: the version says whether the row changed, whoever changed it.
// Epoch caches (values read only from the tables the read epoch follows, platform/read-epoch.ts) also serve, within
// the window, a read that names the epoch they were loaded at, whatever writes passed meanwhile: a state-changing
// request reads the epoch as it begins, and a cached caller loaded at that epoch is as current as one read afresh.
// While the cache bus cannot promise to hear of other machines' writes (its database connection is lost), nothing
// is kept and nothing kept is served.

export interface CacheOptions<V> {
  /** Most entries kept; the least recently used go first. */
  max: number;
  /** How long an entry serves reads, in ms (default: the application's window; 0 turns the cache off). */
  window?: number;
  /** The version of a value: the entry serves reads that ask for this version, and no others. */
  version?: (value: V) => number;
  /**
   * The key names its value for ever (it holds a commit id, and the value is read from that commit alone): an entry
   * serves every read until evicted, whatever the window or writes; concurrent reads of a key not held share one load.
   */
  immutable?: boolean;
  /** Whether a loaded value may be kept (default: every value). */
  keep?: (value: V) => boolean;
  /**
   * The values are read only from the tables the read epoch follows: a read naming an epoch (`get`'s third argument)
   * is served what was loaded at that epoch, within the window, whatever writes passed.
   */
  epoch?: boolean;
}

export interface ReadCache<K, V> {
  /**
   * The value of `key`, loaded when not cached (`version`: the version wanted, for a version-validated cache; the
   * read epoch of the request, for an epoch cache).
   */
  get(key: K, load: () => Promise<V>, version?: number): Promise<V>;
  /**
   * The values of `keys` (`versions[i]` for `keys[i]` in a version-validated cache); `load` reads those not cached.
   * A key `load` leaves out has no value and is remembered so.
   */
  getMany(keys: readonly K[], load: (missing: K[]) => Promise<Map<K, V>>, versions?: readonly number[]): Promise<Map<K, V>>;
}

export interface ReadCaches {
  /** The cache called `name`, made on first use with these options (every later call gets the same cache). */
  define<K, V>(name: string, opts: CacheOptions<V>): ReadCache<K, V>;
  /** A write passes: nothing cached before it serves a read after it. */
  voidAll(): void;
  /** Stops following the cache bus (the application is closing). */
  close(): void;
}

interface Entry<V> {
  value: V;
  at: number;
  gen: number;
  /** The read epoch it was loaded at (epoch caches, when the read named one). */
  epoch?: number;
}

export function createReadCaches(o: { window: number; now?: () => number }): ReadCaches {
  const now = o.now ?? Date.now;
  const caches = new Map<string, ReadCache<unknown, unknown>>();
  let gen = 0;

  function make<K, V>(opts: CacheOptions<V>): ReadCache<K, V> {
    const window = opts.window ?? o.window;
    const version = opts.version;
    const immutable = !!opts.immutable;
    const byEpoch = !!opts.epoch;
    const entries = boundedEntries<K & {}, Entry<V>>(opts.max);
    // Loads under way, by key: a read that misses while the same key is being loaded since the last write waits for
    // that load instead of making its own, so many readers missing at once (an entry's window ending under load)
    // cost one load. A load begun before a write is not joined, unless the value is immutable (a write cannot change it).
    const loading = new Map<K, { gen: number; epoch?: number; value: Promise<V> }>();
    const sameEpoch = (a: number | undefined, wanted: number | undefined) => byEpoch && wanted !== undefined && a === wanted;
    const fresh = (e: Entry<V> | undefined, wanted: number | undefined, t: number): e is Entry<V> =>
      e !== undefined && cachingAllowed() && (immutable || (version ? version(e.value) === wanted
        : (e.gen === gen || sameEpoch(e.epoch, wanted)) && t - e.at < window));
    // A versioned value is checked by its version, not by when it was read; without a value (a row deleted) it has
    // no version to check and is not kept. A value loaded for a read naming an epoch is at least as new as that
    // epoch, writes during its load or not.
    const storable = (since: number, value: V, wanted?: number) =>
      cachingAllowed() && (immutable || (version ? value !== undefined : window > 0 && (gen === since || (byEpoch && wanted !== undefined))))
      && (!opts.keep || opts.keep(value));

    return {
      async get(key, load, wanted) {
        const t = now();
        const hit = immutable || version || window > 0 ? entries.get(key as K & {}) : undefined;
        // (Before the freshness test narrows it.)
        const priorEpoch = hit?.epoch;
        if (fresh(hit, wanted, t)) return hit.value;
        const since = gen;
        // Loaded after the entry it replaces, a value is at least as new as that entry's epoch: it keeps it.
        const epoch = byEpoch ? wanted ?? priorEpoch : undefined;
        const shared = (immutable || (!version && window > 0)) && cachingAllowed();
        const running = shared ? loading.get(key) : undefined;
        if (running && (immutable || running.gen === since || sameEpoch(running.epoch, epoch))) return running.value;
        const value = load().then((v) => {
          if (storable(since, v, epoch)) entries.set(key as K & {}, { value: v, at: t, gen: since, epoch });
          return v;
        });
        if (!shared) return value;
        const entry = { gen: since, epoch, value };
        loading.set(key, entry);
        try {
          return await value;
        } finally {
          if (loading.get(key) === entry) loading.delete(key);
        }
      },

      async getMany(keys, load, versions) {
        const t = now();
        const out = new Map<K, V>();
        const missing = new Set<K>();
        const on = immutable || version !== undefined || window > 0;
        keys.forEach((key, i) => {
          const hit = on ? entries.get(key as K & {}) : undefined;
          if (fresh(hit, versions?.[i], t)) {
            if (hit.value !== undefined) out.set(key, hit.value);
          } else if (!out.has(key)) missing.add(key);
        });
        if (missing.size === 0) return out;
        const since = gen;
        const loaded = await load([...missing]);
        for (const key of missing) {
          const value = loaded.get(key) as V;
          if (value !== undefined) out.set(key, value);
          if (storable(since, value)) entries.set(key as K & {}, { value, at: t, gen: since });
        }
        return out;
      },
    };
  }

  const voidAll = () => {
    gen++;
  };
  const stop = onCacheVoid('all', voidAll);
  return {
    define<K, V>(name: string, opts: CacheOptions<V>) {
      let c = caches.get(name);
      if (!c) caches.set(name, (c = make<K, V>(opts) as ReadCache<unknown, unknown>));
      return c as ReadCache<K, V>;
    },
    voidAll,
    close: stop,
  };
}

/**
 * The entries of a cache or memo: an LRU of at most `max`, allocated at its first entry. An LRU allocates its
 * tables for `max` entries when it is made (100,000 entries take tens of milliseconds), and most caches are declared
 * when their module loads, at start, long before they hold anything, if they ever do.
 */
function boundedEntries<K extends {}, V extends {}>(max: number): Pick<LRUCache<K, V>, 'get' | 'set' | 'delete' | 'clear'> {
  let lru: LRUCache<K, V> | undefined;
  return {
    get: (key) => lru?.get(key),
    set: (key, value) => (lru ??= new LRUCache<K, V>({ max })).set(key, value),
    delete: (key) => lru?.delete(key) ?? false,
    clear: () => lru?.clear(),
  };
}

// ---- memos ---------------------------------------------------------------------------------------------------

// Values that cannot go stale: derived from their key alone (a protected-branch pattern's matcher, an object's
// peeled id, a URL's host), or carrying the stamps (inode, size, mtime, ctime) of the files they were read from and
// used by their caller only while those hold (a repository's refs, its packed-refs, its configuration; a ref move
// through the server also drops its repository's entries on every worker, through the cache bus 'refs' channel).
// They are not under the window and generation rule above, and they belong to the process rather than to an
// application: every application in the process reads the same files and derives the same values. Declared here,
// like every other cache, so that bounds and eviction are written once.

export interface Memo<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
  clear(): void;
}

const memos = new Map<string, Memo<unknown, unknown>>();

/** The memo called `name` (a bounded LRU of `max` entries), made on first use. */
export function defineMemo<K, V extends {}>(name: string, opts: { max: number }): Memo<K, V> {
  let c = memos.get(name);
  if (!c) memos.set(name, (c = ownedMemo<K, V>(opts) as Memo<unknown, unknown>));
  return c as Memo<K, V>;
}

/**
 * A bounded memo of one owner (a database handle's statements, a ref snapshot's filter results), made for a value
 * of an object memo below and living as long as its owner. Named by the object memo that keeps it.
 */
export function ownedMemo<K, V extends {}>(opts: { max: number }): Memo<K, V> {
  const entries = boundedEntries<K & {}, V>(opts.max);
  return {
    get: (key) => entries.get(key as K & {}),
    set: (key, value) => void entries.set(key as K & {}, value),
    delete: (key) => void entries.delete(key as K & {}),
    clear: () => entries.clear(),
  };
}

// ---- object memos --------------------------------------------------------------------------------------------

// Values that belong to one object and live exactly as long as it: derived from an object that never changes
// (a frozen row's parsed settings, a configuration's storage, a ref list's indexed snapshot) or kept for it (a
// database handle's prepared statements, an application's declared routes). Keyed by the object's identity in a
// WeakMap, so they need no bound and no eviction: the garbage collector drops a value with its key. A changed
// row, list or configuration is a new object and so a new key; nothing here can serve a stale value.

export interface ObjectMemo<K extends object, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  /** The value of `key`, made by `make` on first need and kept as long as `key` lives. */
  of(key: K, make: () => V): V;
  delete(key: K): void;
}

const objectMemos = new Map<string, ObjectMemo<object, unknown>>();

/** The object memo called `name` (a WeakMap keyed by the object), made on first use. */
export function defineObjectMemo<K extends object, V>(name: string): ObjectMemo<K, V> {
  let c = objectMemos.get(name);
  if (!c) {
    const entries = new WeakMap<K, V>();
    c = {
      get: (key) => entries.get(key),
      set: (key, value) => void entries.set(key, value),
      of(key, make) {
        if (entries.has(key)) return entries.get(key)!;
        const value = make();
        entries.set(key, value);
        return value;
      },
      delete: (key) => void entries.delete(key),
    } satisfies ObjectMemo<K, V> as unknown as ObjectMemo<object, unknown>;
    objectMemos.set(name, c);
  }
  return c as unknown as ObjectMemo<K, V>;
}
