import type { Config } from '../config/index.ts';
import type { Db } from './db/index.ts';
import type { Clock } from './clock.ts';
import type { ReadCaches } from './read-cache.ts';
import type { JobQueue } from './jobs/queue.ts';

/** What every service needs; the application instance satisfies it. */
export interface ServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  /** The application's read caches (see read-cache.ts). */
  caches: ReadCaches;
  /** The durable job queue (see jobs/queue.ts). */
  jobs: JobQueue;
}
