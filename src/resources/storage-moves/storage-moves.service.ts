import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { Config } from '../../config/index.ts';
import type { ProjectRepositoryStorageMovesTable } from '../../platform/db/schema.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import { ParamError, RecordNotFoundError, ValidationError } from '../../platform/errors.ts';
import { Repository } from '../../platform/git/repository.ts';
import { announceCacheVoid, settled } from '../../platform/cache-bus.ts';
import {
  PROJECT_REPOSITORY_KINDS, pickStorage, placeRepository, removeRepository, repositoryPath, snippetRepositoryPath, stagingPath, storageOf,
} from '../projects/repository.ts';

// Repository storage moves of projects and of snippets (the container): the reference's state machine
// (repository_storage_movable.rb) over a row per move, driven by one durable job per move. Both containers go through
// the same steps; a `MoveTarget` names what differs (the moves table, the container's table and key, its
// repositories on a shard).
//
//   schedule            initial   -> scheduled   the container becomes read-only, in the transaction that makes the row
//                                                 and queues the job
//   start               scheduled -> started     the job, once
//   finish_replication  started   -> replicated  the copy is verified; the project is switched and writable again
//   finish_cleanup      replicated -> finished   the source repository is removed
//   do_fail             started   -> failed      the project stays on its source, writable again; the copy is removed
//   do_fail             replicated -> cleanup_failed   the project lives on the destination; the source is left
//
// A job that is run again after its process died (its lease ran out) resumes from the state the row records:
// `started` copies again from the start (the source is still read-only and unchanged), `replicated` removes the
// source. The project is only ever switched to a copy that is whole (made in a staging directory, verified, then
// renamed into place), so nothing is served from a half-copied repository.

/** A move row of either container; `container_id` is its project or snippet. */
export type MoveRow = Omit<Selectable<ProjectRepositoryStorageMovesTable>, 'project_id'> & { container_id: number };

export type Container = 'project' | 'snippet';

interface MoveTarget {
  table: 'project_repository_storage_moves' | 'snippet_repository_storage_moves';
  owner: 'projects' | 'snippets';
  key: 'project_id' | 'snippet_id';
  /** The container's repositories on a shard (a project: code and wiki; a snippet: its one repository). */
  paths(config: Config, storage: string, id: number): Array<{ kind: string; path: string }>;
}

const TARGETS: Record<Container, MoveTarget> = {
  project: {
    table: 'project_repository_storage_moves', owner: 'projects', key: 'project_id',
    paths: (config, storage, id) => PROJECT_REPOSITORY_KINDS.map((kind) => ({ kind, path: repositoryPath(config, storage, id, kind) })),
  },
  snippet: {
    table: 'snippet_repository_storage_moves', owner: 'snippets', key: 'snippet_id',
    paths: (config, storage, id) => [{ kind: 'snippet', path: snippetRepositoryPath(config, storage, id) }],
  },
};

export const MOVE_JOB = 'project_repository_storage_move';
export const SHARD_MOVE_JOB = 'project_repository_shard_move';

/** The job arguments of one move (a project move carries no container, as before snippets moved). */
export interface MoveJobArgs { move_id: number; container?: Container }

const ERROR_MAX = 256;

/** The wire name of a state: the state machine's human name (`cleanup_failed` reads "cleanup failed"). */
export const stateName = (state: string) => state.replace(/_/g, ' ');

// The two move tables share their columns; queries name the table of the container at hand.
const anyDb = (db: Db) => db as unknown as Kysely<any>;

export function movesQuery(db: Db, container: Container, containerId?: number): SelectQueryBuilder<any, any, MoveRow> {
  const t = TARGETS[container];
  let q = anyDb(db).selectFrom(t.table).selectAll().select(`${t.key} as container_id`);
  if (containerId !== undefined) q = q.where(t.key, '=', containerId);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc') as unknown as SelectQueryBuilder<any, any, MoveRow>;
}

/** One move, of the container when given; "404 Not found" otherwise. */
export async function getMove(db: Db, container: Container, id: number, containerId?: number): Promise<MoveRow> {
  const t = TARGETS[container];
  let q = anyDb(db).selectFrom(t.table).selectAll().select(`${t.key} as container_id`).where('id', '=', id);
  if (containerId !== undefined) q = q.where(t.key, '=', containerId);
  const row = await q.executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row as MoveRow;
}

/**
 * Schedules a move of one container's repositories (`destination` omitted: a shard chosen by weight). The container
 * becomes read-only in the same transaction as the row and its job, and only if it was writable: a container already
 * moving (or made read-only otherwise) is refused with the reference's "is read-only".
 */
export async function scheduleMove(deps: ServiceDeps, container: Container, containerId: number, destination?: string | null, onlyFrom?: string): Promise<MoveRow | null> {
  const t = TARGETS[container];
  const storage = storageOf(deps.config);
  const dest = destination ?? pickStorage(deps.config);
  if (!storage.has(dest)) throw new ValidationError({ destination_storage_name: ['is not included in the list'] });
  return anyDb(deps.db).transaction().execute(async (trx) => {
    const row = await trx.selectFrom(t.owner).select(['id', 'repository_storage']).where('id', '=', containerId).executeTakeFirst();
    if (!row) throw new ValidationError({ [container]: ["can't be blank"] });
    // The whole-shard move passes over containers that left the shard since it listed them.
    if (onlyFrom !== undefined && row.repository_storage !== onlyFrom) return null;
    if (!storage.has(row.repository_storage)) throw new ValidationError({ source_storage_name: ['is not included in the list'] });
    // Conditional, so that of two moves scheduled at once exactly one makes the container read-only.
    const flipped = await trx.updateTable(t.owner).set({ repository_read_only: 1 })
      .where('id', '=', containerId).where('repository_read_only', '=', 0).executeTakeFirst();
    if (Number(flipped.numUpdatedRows) !== 1) throw new ValidationError({ [container]: ['is read-only'] });
    const now = deps.clock.now();
    const move = await trx.insertInto(t.table).values({
      [t.key]: containerId, state: 'scheduled', source_storage_name: row.repository_storage, destination_storage_name: dest,
      error_message: null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const args: MoveJobArgs = container === 'project' ? { move_id: move.id } : { move_id: move.id, container };
    await deps.jobs.enqueue(trx as unknown as Db, MOVE_JOB, args, { uniqueKey: container === 'project' ? `${MOVE_JOB}:${move.id}` : `${MOVE_JOB}:${container}:${move.id}` });
    return { ...move, container_id: containerId } as MoveRow;
  }).finally(() => announceCacheVoid('all'));
}

/** Names of the configured shards; an unknown one is the reference's Grape `values:` error. */
export function assertShardParam(deps: ServiceDeps, param: string, name: string | undefined): void {
  if (name !== undefined && !storageOf(deps.config).has(name)) throw ParamError.of(param, 'value');
}

/** Queues the move of every container on `source` (answered 202 at once; the job schedules the moves). */
export async function scheduleShardMove(deps: ServiceDeps, container: Container, source: string, destination?: string): Promise<void> {
  await deps.jobs.enqueue(deps.db, SHARD_MOVE_JOB, {
    source_storage_name: source, destination_storage_name: destination ?? null, ...(container === 'project' ? {} : { container }),
  });
}

export interface MoveOptions {
  /** How many times to look for pushes in progress, and how long to wait between looks (the reference: 3, 10 s). */
  pushChecks?: number;
  pushCheckIntervalMs?: number;
  signal?: AbortSignal;
}

/** Waits until no push writes to the repository, or gives up with the reference's text. */
export async function waitForPushes(repo: Repository, o: MoveOptions = {}, container: Container = 'project'): Promise<void> {
  const checks = o.pushChecks ?? 3;
  for (let i = 0; i < checks; i++) {
    if (!(await repo.pushInProgress())) return;
    if (i < checks - 1) await new Promise((r) => setTimeout(r, o.pushCheckIntervalMs ?? 10_000));
    o.signal?.throwIfAborted();
  }
  throw new Error(`Timeout waiting for ${container} repository pushes`);
}

const setState = (db: Db, t: MoveTarget, id: number, from: string, to: string, now: number, extra: { error_message?: string } = {}) =>
  anyDb(db).updateTable(t.table).set({ state: to, updated_at: now, ...extra }).where('id', '=', id).where('state', '=', from).executeTakeFirst()
    .then((r) => Number(r.numUpdatedRows) === 1);

/**
 * Runs one move (the job). Only a `scheduled` move starts; a `started` or `replicated` one was cut short by a stop
 * and resumes; any other state means there is nothing left to do.
 */
export async function runMove(deps: ServiceDeps, container: Container, moveId: number, o: MoveOptions = {}): Promise<void> {
  const t = TARGETS[container];
  const move = await getMove(deps.db, container, moveId).catch(() => null);
  if (!move) return;
  if (move.state === 'scheduled') {
    if (!(await setState(deps.db, t, move.id, 'scheduled', 'started', deps.clock.now()))) return;
  } else if (move.state !== 'started' && move.state !== 'replicated') {
    return;
  }
  try {
    if (move.state !== 'replicated') await replicate(deps, container, move, o);
    await cleanup(deps, t, move);
  } catch (e) {
    // A stop (the runner gives the job back) is no failure: the next run resumes from the state recorded.
    if (o.signal?.aborted) throw e;
    await fail(deps, t, move, e);
  }
}

/** The container's repository paths on the move's two shards (equal when both shards share one directory). */
function pathsOf(deps: ServiceDeps, t: MoveTarget, move: MoveRow) {
  const to = t.paths(deps.config, move.destination_storage_name, move.container_id);
  return t.paths(deps.config, move.source_storage_name, move.container_id).map(({ kind, path }, i) => ({ kind, source: path, destination: to[i].path }));
}

async function replicate(deps: ServiceDeps, container: Container, move: MoveRow, o: MoveOptions): Promise<void> {
  const t = TARGETS[container];
  for (const { kind, source, destination } of pathsOf(deps, t, move)) {
    const what = kind;
    const src = new Repository(source);
    if (source !== destination && src.exists()) {
      await waitForPushes(src, o, container);
      // The copy is made in a staging directory on the destination shard, and takes its place with one rename once
      // its checksum matches the source's. The source's object files are linked (copied across filesystems; they
      // are never changed in place) and git then fetches the refs: it checks that everything the refs reach is
      // present and sends through its pack protocol whatever is not (a repack or gc half-way), so the copy is a
      // consistent set of refs and objects; the rename on the destination's filesystem means the project's path
      // there holds a whole copy or none. A copy left in staging by a stop is removed by the start-up sweep, and one
      // at the project's path by the next try.
      const staged = stagingPath(deps.config, move.destination_storage_name);
      try {
        const copy = await Repository.copyFrom(source, staged, { refs: 'all', linkObjects: true });
        o.signal?.throwIfAborted();
        const [before, after] = await Promise.all([src.checksum(), copy.checksum()]);
        if (before !== after) {
          throw new Error(`Failed to verify ${what} repository checksum from ${before} to ${after}`);
        }
        await placeRepository(deps.config, staged, destination);
        // A push that passed its read-only check just before the move was scheduled and wrote after the copy shows
        // here: the source no longer matches what was copied, and the move fails rather than lose the push.
        const now = await src.checksum();
        if (now !== before) throw new Error(`Failed to verify ${what} repository checksum from ${now} to ${after}`);
      } catch (e) {
        await removeRepository(staged).catch(() => {});
        throw e;
      }
    } else if (source !== destination) {
      // No repository on disk yet (it is made on first use): the project must not find a leftover of an older move.
      await removeRepository(destination);
    }
  }
  // The switch: the container reads from the destination and takes pushes again, in one transaction with the state.
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    if (!(await setState(trx, t, move.id, 'started', 'replicated', now))) throw new Error('The move is no longer started');
    await anyDb(trx).updateTable(t.owner).set({ repository_storage: move.destination_storage_name, repository_read_only: 0, updated_at: now })
      .where('id', '=', move.container_id).execute();
  });
  move.state = 'replicated';
  // Every worker forgets the project row naming the source before the source goes away.
  announceCacheVoid('all');
  await settled();
}

async function cleanup(deps: ServiceDeps, t: MoveTarget, move: MoveRow): Promise<void> {
  for (const { source, destination } of pathsOf(deps, t, move)) if (source !== destination) await removeRepository(source);
  await setState(deps.db, t, move.id, 'replicated', 'finished', deps.clock.now());
}

/** `do_fail`: from started the container stays on its source and is writable again; from replicated the source is left. */
async function fail(deps: ServiceDeps, t: MoveTarget, move: MoveRow, e: unknown): Promise<void> {
  const message = (e instanceof Error ? e.message : String(e)).slice(0, ERROR_MAX);
  const paths = pathsOf(deps, t, move);
  const dropCopies = async () => {
    for (const { source, destination } of paths) if (source !== destination) await removeRepository(destination).catch(() => {});
  };
  const current = await anyDb(deps.db).selectFrom(t.table).select('state').where('id', '=', move.id).executeTakeFirst();
  if (current?.state === 'started') {
    // The container never read the copy: it goes, so only the source remains.
    await dropCopies();
    await deps.db.transaction().execute(async (trx) => {
      const now = deps.clock.now();
      if (await setState(trx, t, move.id, 'started', 'failed', now, { error_message: message })) {
        await anyDb(trx).updateTable(t.owner).set({ repository_read_only: 0 }).where('id', '=', move.container_id).execute();
      }
    });
  } else if (current?.state === 'replicated') {
    await setState(deps.db, t, move.id, 'replicated', 'cleanup_failed', deps.clock.now(), { error_message: message });
  } else if (!current) {
    // The container was deleted during the move (its moves went with it): a copy it never switched to is nobody's.
    const owner = await anyDb(deps.db).selectFrom(t.owner).select('repository_storage').where('id', '=', move.container_id).executeTakeFirst();
    if (owner?.repository_storage !== move.destination_storage_name) await dropCopies();
  }
  announceCacheVoid('all');
}

/**
 * The whole-shard move (the job): schedules a move for every container on `source`, each in its own transaction;
 * one that cannot move now (already read-only) is skipped with a log line, as the reference does.
 */
export async function runShardMove(
  deps: ServiceDeps, container: Container, source: string, destination: string | null, log?: { warn(obj: object, msg: string): void },
): Promise<void> {
  if (!storageOf(deps.config).has(source)) throw new Error(`unknown storage shard: ${source}`);
  const t = TARGETS[container];
  let after = 0;
  for (;;) {
    let q = anyDb(deps.db).selectFrom(t.owner).select(['id', container === 'project' ? 'full_path as name' : 'title as name'])
      .where('repository_storage', '=', source).where('id', '>', after);
    if (container === 'project') q = q.where('pending_delete', '=', 0);
    const batch: Array<{ id: number; name: string }> = await q.orderBy('id').limit(100).execute();
    if (!batch.length) return;
    for (const p of batch) {
      try {
        await scheduleMove(deps, container, p.id, destination, source);
      } catch (e) {
        if (!(e instanceof ValidationError)) throw e;
        const errors = Object.entries(e.errors).map(([k, v]) => `${k} ${([] as unknown[]).concat(v).join(', ')}`).join(', ');
        log?.warn({ [t.key]: p.id }, `Container ${container === 'project' ? p.name : `snippet ${p.id}`} (${p.id}) was skipped: ${errors}`);
      }
    }
    after = batch[batch.length - 1].id;
  }
}
