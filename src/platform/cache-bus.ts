import cluster from 'node:cluster';
import type pg from 'pg';
import { CACHE_CHANNEL } from './db/change-notify.ts';
import { postgresClient } from './db/pg-client.ts';

// Read caches (credentials, authorisations, namespaces, refs) live in each server process. When the server runs
// as several workers, a change made through one worker is announced to the others through the primary process,
// and `settled()` resolves once every other worker has dropped what it cached: the writer's answer waits for it,
// so a client that reads after its write sees the write whichever worker serves the read.
//
// Several machines on one PostgreSQL database hear of each other's changes through the database itself
// (`startDatabaseBus`): every table the read caches read carries a trigger that NOTIFYs the channel in the writing
// transaction (platform/db/change-notify.ts), so the notification is committed with the change, whoever made it
// (a request, a job, the command line), before the change is answered; ref moves, which are no database change,
// are published on the same channel. Each process LISTENs on a connection of its own; while that connection is
// lost, nothing may be cached (`cachingAllowed()`), and everything cached before is dropped, since notifications
// missed meanwhile cannot be replayed.

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

/**
 * Drops the caches of `topic` (`key`: e.g. a repository path) in this process and, in a cluster, in the others; a
 * ref move also on the other machines of a database bus ('all' reaches them through the database's own triggers).
 */
export function announceCacheVoid(topic: CacheTopic, key = ''): void {
  for (const fn of handlers[topic]) fn(key);
  if (topic === 'refs') for (const bus of buses) bus.publish(key);
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
export async function settled(): Promise<void> {
  if (published.size) await Promise.all([...published]);
  if (pending.size === 0) return;
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

// ---- between machines: PostgreSQL LISTEN/NOTIFY ---------------------------------------------------------------

export interface SharedPaths {
  /** A repository path as every machine names it (`<shard>:<relative path>`), or null when outside every shard. */
  share(path: string): string | null;
  /** This machine's path for a shared name, or null when the shard is unknown here. */
  local(shared: string): string | null;
}

export interface DatabaseBusOptions {
  databaseUrl: string;
  paths: SharedPaths;
  /** Wait between attempts to listen again after the connection was lost (ms). */
  retryMs?: number;
  /** How often the listening connection is checked (ms); one not answering within this time counts as lost. */
  checkMs?: number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export interface DatabaseBus {
  /** Whether the listening connection is up (caches may be used). */
  readonly listening: boolean;
  publish(path: string): void;
  close(): Promise<void>;
}

const buses = new Set<DatabaseBus>();
/** Publications not yet committed: `settled()` waits for them. */
const published = new Set<Promise<void>>();

/** False while any database bus of this process is not listening: nothing is cached, nothing cached is served. */
export function cachingAllowed(): boolean {
  for (const bus of buses) if (!bus.listening) return false;
  return true;
}

async function oneShot(databaseUrl: string, args: string[]): Promise<void> {
  const c = new (postgresClient().Client)({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  c.on('error', () => {});
  try {
    await c.connect();
    await c.query('select pg_notify($1, $2)', args);
  } finally {
    await c.end().catch(() => {});
  }
}

function voidHere(topic: CacheTopic, key: string): void {
  for (const fn of handlers[topic]) fn(key);
}

/**
 * Listens for the other machines' changes on the database; resolves once listening (or, when the database cannot be
 * reached now, at once: caching stays off until a later attempt succeeds).
 */
export async function startDatabaseBus(o: DatabaseBusOptions): Promise<DatabaseBus> {
  const retryMs = o.retryMs ?? 1000;
  const checkMs = o.checkMs ?? 5000;
  let client: pg.Client | null = null;
  let up = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;

  const lost = (err?: unknown) => {
    const c = client;
    client = null;
    if (c) {
      c.removeAllListeners('notification');
      c.on('error', () => {});
      c.end().catch(() => {});
    }
    if (closed) return;
    if (up) o.log?.warn({ err }, 'lost the cache notification connection; not caching until it is back');
    up = false;
    // Whatever was cached may have been changed by a machine whose notification will never arrive.
    voidHere('all', '');
    voidHere('refs', '');
    if (!timer) timer = setTimeout(() => { timer = null; void connect(); }, retryMs);
  };

  const connect = async () => {
    if (closed || client) return;
    // Named, so that an operator (or a test) can tell this connection in pg_stat_activity: the server's process id
    // (a worker's primary), then this process's.
    const c = new (postgresClient().Client)({ connectionString: o.databaseUrl, keepAlive: true, keepAliveInitialDelayMillis: checkMs, connectionTimeoutMillis: checkMs, application_name: `bellows cache bus ${cluster.isWorker ? process.ppid : process.pid}/${process.pid}` });
    client = c;
    c.on('error', (err) => { if (client === c) lost(err); });
    c.on('end', () => { if (client === c) lost(new Error('connection ended')); });
    c.on('notification', (n) => {
      if (n.channel !== CACHE_CHANNEL) return;
      const payload = n.payload ?? '';
      if (payload.startsWith('refs:')) {
        const shared = payload.slice(5);
        const path = shared ? o.paths.local(shared) : null;
        voidHere('refs', path ?? '');
      } else {
        voidHere('all', '');
      }
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CACHE_CHANNEL}`);
    } catch (err) {
      if (client === c) lost(err);
      return;
    }
    if (client !== c || closed) return;
    // Changes made while not listening were not heard: start from nothing.
    voidHere('all', '');
    voidHere('refs', '');
    if (!up) o.log?.info({}, 'listening for cache notifications');
    up = true;
  };

  // A connection cut without a word (a network partition) would never say so: it is asked a question now and then.
  const checker = setInterval(() => {
    const c = up ? client : null;
    if (!c) return;
    let timeout: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => { timeout = setTimeout(() => reject(new Error('no answer')), checkMs); });
    Promise.race([c.query('select 1'), late]).then(
      () => clearTimeout(timeout),
      (err) => { clearTimeout(timeout); if (client === c) lost(err); },
    );
  }, checkMs);
  checker.unref();

  const bus: DatabaseBus = {
    get listening() {
      return up;
    },
    publish(path) {
      const c = up ? client : null;
      const shared = path ? o.paths.share(path) ?? '' : '';
      const args = [CACHE_CHANNEL, `refs:${shared}`];
      // Not listening: the other machines must hear of the move all the same, through a connection of its own.
      const send = c
        ? c.query('select pg_notify($1, $2)', args).catch((err) => { if (client === c) lost(err); throw err; })
        : oneShot(o.databaseUrl, args);
      const p: Promise<void> = send.then(
        () => undefined,
        (err) => o.log?.warn({ err }, 'could not publish a ref move to the other machines'),
      ).finally(() => published.delete(p));
      published.add(p);
    },
    async close() {
      closed = true;
      buses.delete(bus);
      clearInterval(checker);
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      up = false;
      if (c) await c.end().catch(() => {});
    },
  };
  buses.add(bus);
  await connect();
  return bus;
}
