import cluster from 'node:cluster';

// Read caches (credentials, authorisations, namespaces, refs) live in each server process. When the server runs
// as several workers, a change made through one worker is announced to the others through the primary process,
// and `settled()` resolves once every other worker has dropped what it cached: the writer's answer waits for it,
// so a client that reads after its write sees the write whichever worker serves the read.

export type CacheTopic = 'all' | 'refs';

interface Announcement {
  bellows: 'cache-void';
  topic: CacheTopic;
  key: string;
  /** Set by the announcing worker; the primary acknowledges it once every other worker has handled it. */
  seq?: number;
  ack?: boolean;
}

const handlers: Record<CacheTopic, Array<(key: string) => void>> = { all: [], refs: [] };
/** Announcements of this worker not yet acknowledged, and who waits for them. */
const pending = new Set<number>();
const waiting = new Map<number, () => void>();
let seq = 0;
let listening = false;

/** Runs `fn` whenever `topic` is announced, here or in another worker; returns the way to stop. */
export function onCacheVoid(topic: CacheTopic, fn: (key: string) => void): () => void {
  handlers[topic].push(fn);
  listen();
  return () => {
    const at = handlers[topic].indexOf(fn);
    if (at >= 0) handlers[topic].splice(at, 1);
  };
}

/** Drops the caches of `topic` (`key`: e.g. a repository path) in this process and, in a cluster, in the others. */
export function announceCacheVoid(topic: CacheTopic, key = ''): void {
  for (const fn of handlers[topic]) fn(key);
  if (!cluster.isWorker || !process.send || !process.connected) return;
  listen();
  const n = ++seq;
  const message: Announcement = { bellows: 'cache-void', topic, key, seq: n };
  pending.add(n);
  process.send(message);
}

/**
 * Resolves once every announcement made by this process so far has been handled by the other workers (or after a
 * second without an acknowledgement: a worker whose primary is gone stops anyway).
 */
export function settled(): Promise<void> {
  if (pending.size === 0) return Promise.resolve();
  const last = Math.max(...pending);
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 1000);
    const done = () => (clearTimeout(timer), resolve());
    const prev = waiting.get(last);
    waiting.set(last, prev ? () => (prev(), done()) : done);
  });
}

function listen(): void {
  if (listening || !cluster.isWorker) return;
  listening = true;
  process.on('message', (m: Announcement) => {
    if (!m || m.bellows !== 'cache-void') return;
    if (m.ack) {
      // Acknowledgements arrive in order: everything up to this number is settled.
      for (const n of [...pending]) {
        if (n > m.seq!) continue;
        pending.delete(n);
        const done = waiting.get(n);
        waiting.delete(n);
        done?.();
      }
      return;
    }
    for (const fn of handlers[m.topic] ?? []) fn(m.key);
    process.send?.({ bellows: 'cache-void', topic: m.topic, key: m.key, seq: m.seq, ack: true } satisfies Announcement);
  });
}

/**
 * The primary's side: relays each announcement to every other worker and acknowledges it to its sender once
 * they all have handled it (a worker that exits meanwhile no longer counts).
 */
export function relayCacheVoids(): void {
  let relayId = 0;
  const open = new Map<number, { from: number; seq: number; left: Set<number> }>();
  const finish = (id: number) => {
    const r = open.get(id);
    if (!r || r.left.size) return;
    open.delete(id);
    const sender = cluster.workers?.[r.from];
    if (sender?.isConnected()) sender.send({ bellows: 'cache-void', topic: 'all', key: '', seq: r.seq, ack: true } satisfies Announcement);
  };
  cluster.on('message', (worker, m: Announcement) => {
    if (!m || m.bellows !== 'cache-void') return;
    if (m.ack) {
      const r = open.get(m.seq!);
      if (!r) return;
      r.left.delete(worker.id);
      finish(m.seq!);
      return;
    }
    const id = ++relayId;
    const others = Object.values(cluster.workers ?? {}).filter((w) => w && w.id !== worker.id && w.isConnected());
    open.set(id, { from: worker.id, seq: m.seq!, left: new Set(others.map((w) => w!.id)) });
    for (const w of others) w!.send({ bellows: 'cache-void', topic: m.topic, key: m.key, seq: id } satisfies Announcement);
    finish(id);
  });
  cluster.on('exit', (worker) => {
    for (const [id, r] of open) {
      r.left.delete(worker.id);
      finish(id);
    }
  });
}
