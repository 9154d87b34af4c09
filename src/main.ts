import cluster, { type Worker } from 'node:cluster';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { loadConfig, type Config } from './config/index.ts';
import type { Database } from './platform/db/index.ts';
import type { Machine } from './platform/machines.ts';

const STOP_DELAY_MS = 10_000;
// The other workers start once the first has answered its first request, or this long after it listens if no
// request comes: started at once, their start shared the two cores with that first answer.
const OTHERS_AFTER_MS = 500;
// How often a worker asks again whether it may listen, until the primary answers (see `mayListen`).
const ASK_AGAIN_MS = 1_000;
// Leftovers of work stopped mid-way are removed at start once older than any push may run (30 minutes).
const LEFTOVER_AGE_MS = 60 * 60_000;

/**
 * `bellows serve`: migrate, make sure root exists, then serve: from this process with one worker, or from
 * `workers` processes sharing the port (node:cluster), each with its own database connection and read caches
 * kept coherent through the primary (platform/cache-bus.ts). SIGTERM/SIGINT stop gracefully.
 */
export async function serve(): Promise<void> {
  if (cluster.isWorker) return serveWorker(loadConfig());
  let config: Config;
  try {
    config = loadConfig();
    mkdirSync(config.dataDir, { recursive: true });
  } catch (e) {
    endForkedWorkers();
    throw e;
  }
  const log = pino({ level: config.logLevel });
  // The workers start first (the first one usually before this module was loaded: bin/bellows.mjs): they load and
  // build the application while this process loads the database modules, migrates and makes root, and listen only
  // once it has (see `release`).
  if (config.workers === 1) endForkedWorkers();
  const workers = config.workers === 1 ? null : startWorkers(config, log);
  let database: Database;
  try {
    // Opened (an SQLite file made and turned to WAL) long before a worker, still loading, opens it; and were they
    // at it together, the busy timeout set first makes the other wait.
    const { openDatabase } = await import('./platform/db/index.ts');
    database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  } catch (e) {
    workers?.abort();
    throw e;
  }
  try {
    await prepare(config, log, database, workers);
  } catch (e) {
    workers?.abort();
    throw e;
  }
}

async function prepare(config: Config, log: pino.Logger, database: Database, workers: Workers | null): Promise<void> {
  // Loaded once the workers are started (they load the application meanwhile).
  const [{ ensureRoot }, { systemClock }, { createReadCaches }, { JobQueue }, { Storage }, { ensureHostKeys }, { joinInstallation, oneStartAtATime }] = await Promise.all([
    import('./resources/users/users.service.ts'), import('./platform/clock.ts'), import('./platform/read-cache.ts'), import('./platform/jobs/queue.ts'),
    import('./platform/git/storage.ts'), import('./resources/git-ssh/host-keys.ts'), import('./platform/machines.ts'),
  ]);
  const passwordFile = join(config.dataDir, 'initial_root_password');
  // Machines started together take turns here: the root account and its token are made once.
  const { machine, root } = await oneStartAtATime(database.db, async () => {
    await database.migrate();
    // Refuses to start beside a running machine with other storage shards (one database, several machines).
    const machine = await joinInstallation({ db: database.db, clock: systemClock, shards: config.storage.map((s) => s.name), log });
    const caches = createReadCaches({ window: 0 });
    try {
      const root = await ensureRoot({ db: database.db, config, clock: systemClock, caches, jobs: new JobQueue({ db: database.db, clock: systemClock }) }, {
        password: config.rootPassword, token: config.rootToken, passwordFile,
        writeFile: (p, c) => writeFileSync(p, c, { mode: 0o600 }),
      });
      return { machine, root };
    } catch (e) {
      await machine.leave();
      throw e;
    } finally {
      caches.close();
    }
  });
  const swept = await new Storage(config.storage).sweep(LEFTOVER_AGE_MS);
  if (swept.length) log.info({ removed: swept.length }, 'removed leftovers of stopped pushes and repository moves');
  // Made here, before any worker listens, so that the workers all serve the same host keys.
  if (config.sshEnabled) ensureHostKeys(config.dataDir);
  if (root.created) log.info({ passwordFile: root.generatedPassword ? passwordFile : undefined }, 'created the root administrator');
  if (!workers) {
    await listen(config, database, null, machine).catch(async (e) => {
      await machine.leave();
      throw e;
    });
    return;
  }
  // The primary keeps its connection for this machine's row (platform/machines.ts), removed when it stops.
  const leave = async () => {
    await machine.leave();
    await database.close();
  };
  await workers.release(leave).catch(async (e) => {
    await leave();
    throw e;
  });
}

function appLogger(config: Config) {
  return {
    level: config.logLevel,
    // Lines are written without blocking: under load the ones queued during a write go out together in the
    // next, instead of one blocking write per request; pino flushes what is left when the process exits.
    stream: pino.destination({ dest: 1, sync: false }),
    redact: { paths: ['req.headers.authorization', 'req.headers["private-token"]', 'req.headers.cookie', 'req.headers.sudo'], remove: true },
    serializers: {
      // Query strings may carry private_token/access_token: log the path only.
      req: (r: any) => ({ method: r.method, path: String(r.url).split('?')[0], remote_ip: r.ip }),
    },
  };
}

async function serveWorker(config: Config): Promise<void> {
  // The primary has migrated the database already.
  const { openDatabase } = await import('./platform/db/index.ts');
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // A terminal's Ctrl-C reaches every process of the group; the primary decides and tells the workers.
  process.on('SIGINT', () => {});
  let stop: ((signal?: string) => void) | null = null;
  process.on('message', (m: { bellows?: string; signal?: string }) => {
    if (m?.bellows !== 'stop') return;
    // Told to stop before serving anything: there is nothing to finish.
    if (!stop) process.exit(0);
    stop(m.signal);
  });
  stop = await listen(config, database, { skip: ['SIGINT'] }, null);
}

/** Builds the application and listens; returns how to stop it gracefully. */
async function listen(config: Config, database: Database, worker: { skip: Array<'SIGINT'> } | null, machine: Machine | null = null): Promise<(signal?: string) => void> {
  // Loaded here, not at the top: a primary that only supervises workers never loads the application.
  const { buildApp } = await import('./app.ts');
  const app = await buildApp({ config, database, logger: appLogger(config) });
  // A worker built its application while the primary prepared the database and the host keys: it waits for them.
  if (worker) await mayListen();
  // Git over SSH from the same process; workers share its port as they share the HTTP one.
  const [{ createSshServer }, { ensureHostKeys }] = await Promise.all([import('./resources/git-ssh/ssh-server.ts'), import('./resources/git-ssh/host-keys.ts')]);
  const ssh = config.sshEnabled ? createSshServer(app, { hostKeys: ensureHostKeys(config.dataDir), log: app.log }) : null;
  // A worker is told to stop by the primary, which names the signal it received.
  let stopSignal: string | undefined;
  const grace = closeWithGrace({ delay: STOP_DELAY_MS, ...(worker ? { skip: worker.skip } : {}) }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'stopping after an error');
    else app.log.info({ signal: signal ?? stopSignal }, 'stopping');
    await Promise.all([ssh?.close(STOP_DELAY_MS - 2_000), app.close()]);
    await machine?.leave();
    await database.close();
  });
  await app.listen({ port: config.port, host: config.host });
  // The primary starts the other workers once this one has answered (see startWorkers).
  if (worker) app.server.once('request', (_req, res) => res.once('close', () => process.send?.({ bellows: 'answered' })));
  if (ssh) {
    const port = await ssh.listen(config.sshPort, config.host);
    if (!worker) app.log.info({ port }, 'serving git over SSH');
  }
  app.jobs.start();
  return (signal) => {
    stopSignal = signal;
    void grace.close();
  };
}

/** The worker processes forked so far and not ended (nor being ended). */
function livingWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead() && !w.process.killed);
}

/** Ends the workers forked before the configuration was read (bin/bellows.mjs), which are of no use. */
function endForkedWorkers(): void {
  for (const w of livingWorkers()) w.process.kill('SIGKILL');
}

/**
 * Asks the primary whether the database is ready (migrated, root made) and waits for its yes. Asked again until heard:
 * a first worker forked before its primary loaded this module (bin/bellows.mjs) may ask before the primary listens.
 */
function mayListen(): Promise<void> {
  return new Promise((resolve) => {
    const ask = () => process.send!({ bellows: 'may-listen' });
    const again = setInterval(ask, ASK_AGAIN_MS);
    const heard = (m: { bellows?: string }) => {
      if (m?.bellows !== 'listen') return;
      process.off('message', heard);
      clearInterval(again);
      resolve();
    };
    process.on('message', heard);
    ask();
  });
}

interface Workers {
  /** The database is ready: the workers may listen; resolves once they all do. `leave` runs when the server stops. */
  release(leave: () => Promise<void>): Promise<void>;
  /** Preparing failed: the workers are killed. */
  abort(): void;
}

/** The primary: starts the workers, replaces one that dies, and stops them all on SIGTERM/SIGINT. */
function startWorkers(config: Config, log: pino.Logger): Workers {
  let stopping = false;
  // Workers that listen; the others have served nothing yet.
  const serving = new WeakSet<Worker>();
  cluster.on('listening', (worker) => serving.add(worker));
  let released = false;
  let leave: () => Promise<void> = async () => {};
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Workers that asked to listen before the database was ready; answered on release.
  const asking = new Set<Worker>();
  let firstAnswered = () => {};
  cluster.on('message', (worker, m: { bellows?: string }) => {
    if (m?.bellows === 'answered' && worker === workers[0]) firstAnswered();
    if (m?.bellows !== 'may-listen') return;
    if (released) worker.send({ bellows: 'listen' });
    else asking.add(worker);
  });
  let started = false;
  const restarts: number[] = [];
  // The first worker may have been forked already, before this module was loaded (bin/bellows.mjs).
  const forked = livingWorkers();
  const start = (): Worker => {
    const w = forked.shift() ?? cluster.fork();
    // A message sent to a worker as it exits (a relayed cache void, its stop) fails on the closed channel with EPIPE.
    // What it was told no longer matters and its exit is handled below; without a listener, the error ended the primary.
    w.on('error', (err) => log.debug({ err, worker: w.process.pid }, 'a message to an exiting worker was lost'));
    return w;
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping || !started) return;
    log.error({ worker: worker.process.pid, code, signal }, 'a worker stopped; starting another');
    // A worker that keeps dying at start (a bad configuration, a full disk) stops the server instead of looping.
    const now = Date.now();
    restarts.push(now);
    while (restarts.length && restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > 10) {
      log.fatal('workers keep stopping; giving up');
      process.exit(1);
    }
    start();
  });
  const listens = (w: Worker) => new Promise<void>((resolve, reject) => {
    w.once('listening', () => resolve());
    w.once('exit', (code) => reject(new Error(`a worker exited with ${code} while starting`)));
  });
  // The first worker starts alone, with a core of its own while it loads and builds the application, so that the
  // first answer comes as early as it can; the others start once it has given that answer (or OTHERS_AFTER_MS
  // after it listens, when no request comes).
  const workers = [start()];
  const answered = new Promise<void>((resolve) => (firstAnswered = resolve));
  const listening = listens(workers[0]!).then(async () => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([answered, new Promise<void>((resolve) => (timer = setTimeout(resolve, OTHERS_AFTER_MS)))]);
    clearTimeout(timer);
    if (stopping) return;
    const others = Array.from({ length: config.workers - 1 }, start);
    workers.push(...others);
    return Promise.all(others.map(listens)).then(() => {});
  });
  // Until released, a worker that fails is reported by release(); none is left unobserved.
  listening.catch(() => {});
  const abort = () => {
    for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL');
  };
  return {
    abort,
    async release(leaveWith) {
      leave = leaveWith;
      // The workers' announcements and metrics requests pass through here from the moment they may serve.
      const [{ relayCacheVoids }, { relayMetrics }] = await Promise.all([import('./platform/cache-bus.ts'), import('./platform/metrics.ts')]);
      relayCacheVoids();
      relayMetrics();
      released = true;
      for (const w of asking) if (!w.isDead()) w.send({ bellows: 'listen' });
      asking.clear();
      try {
        await listening;
      } catch (e) {
        if (stopping) return;
        abort();
        throw e;
      }
      started = true;
      log.info({ workers: config.workers, port: config.port }, 'serving');
    },
  };

  function stop(signal: NodeJS.Signals) {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    const running = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && !w.isDead());
    let left = running.length;
    let failed = false;
    const done = () => void leave().finally(() => process.exit(failed ? 1 : 0));
    if (left === 0) done();
    for (const w of running) {
      const served = serving.has(w);
      w.once('exit', (code) => {
        if (served && code !== 0) failed = true;
        if (--left === 0) done();
      });
      // A worker still starting (it may not even hear messages yet) has nothing to finish: it is ended at once.
      if (served) w.send({ bellows: 'stop', signal });
      else w.process.kill('SIGTERM');
    }
    setTimeout(() => {
      for (const w of running) if (!w.isDead()) w.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_DELAY_MS + 2_000).unref();
  }
}
