// What every repository route needs: the project's bare repository, the download/push rules, and the project
// bookkeeping after a ref moved (activity, empty_repo, the default branch on the first push).
import { announceCacheVoid } from '../../platform/cache-bus.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Config } from '../../config/index.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { Repository, invalidateRefCache } from '../../platform/git/repository.ts';
import { MAX_REF_LENGTH, SHA1_ZERO } from '../../platform/git/refs.ts';
import { emitEvent } from '../../platform/events.ts';
import { NotFoundError, RuleError } from '../../platform/errors.ts';
import type { ProjectContext } from '../../http/access.ts';
import type { Actor } from '../../http/auth.ts';
import type { FastifyReply } from 'fastify';
import type { Caller } from './protection.ts';
import { refreshRepositoryFacts } from '../projects/projects.service.ts';
import { repositoryPath } from '../projects/repository.ts';
import { refreshMergeRequests } from '../merge-requests/merge-requests.refresh.ts';
import type { Db } from '../../platform/db/index.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { hasBlobIndexes, queueBlobIndex } from '../search/blob-index.ts';

export function repoFor(config: Config, project: Pick<ProjectRow, 'id' | 'repository_storage'>): Repository {
  return new Repository(repositoryPath(config, project.repository_storage, project.id));
}

export function callerOf(ctx: ProjectContext, actor: Actor): Caller {
  return { userId: actor.user?.id ?? null, level: actor.user ? ctx.level : 0, admin: actor.admin };
}

/** The branch the API treats as default: the project's setting, else the repository's HEAD. */
export async function defaultBranchOf(project: ProjectRow, repo: Repository): Promise<string | null> {
  if (project.default_branch) return project.default_branch;
  return repo.defaultBranch();
}

/**
 * After refs moved (push or API): forget cached refs, record activity, clear empty_repo, give a project without a
 * default branch the first branch that exists (HEAD's if present), and queue the repository's housekeeping.
 *
 * `changedRefs` names the full refs that moved when the caller knows them; the repository facts the project
 * keeps (statistics, languages, README) are read again only when the default branch may have moved, here, or by
 * the job the caller already queued in its own transaction (`factsQueued`, see `queueRepositoryFacts`).
 */
export async function afterRefsChanged(
  deps: ServiceDeps, project: ProjectRow, repo: Repository, changedRefs?: string[], userId: number | null = null, opts: { factsQueued?: boolean } = {},
): Promise<void> {
  invalidateRefCache(repo.path);
  const patch: Partial<Record<'last_activity_at' | 'empty_repo' | 'default_branch', number | string | null>> = { last_activity_at: deps.clock.now() };
  // A project with branches and a default branch needs no git call here: pushes stay cheap on large repositories.
  if (project.empty_repo || !project.default_branch) {
    const { stdout } = await repo.git(['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/']);
    const names = new Set(stdout.toString('utf8').split('\n').filter(Boolean));
    const empty = names.size === 0 ? 1 : 0;
    if (empty !== project.empty_repo) patch.empty_repo = empty;
    // The first push picks the default branch when the configured one was not pushed.
    if (names.size > 0 && (!project.default_branch || (project.empty_repo && !names.has(project.default_branch)))) {
      const head = await repo.defaultBranch();
      const pick = head && names.has(head) ? head : names.has('main') ? 'main' : names.has('master') ? 'master' : [...names].sort()[0];
      patch.default_branch = pick;
      if (head !== pick) await repo.setDefaultBranch(pick);
    }
  }
  await deps.db.updateTable('projects').set(patch as any).where('id', '=', project.id).execute();
  Object.assign(project, patch);
  const defaultRef = project.default_branch ? `refs/heads/${project.default_branch}` : null;
  const defaultMayHaveMoved = !changedRefs || patch.default_branch !== undefined || (defaultRef !== null && changedRefs.includes(defaultRef));
  // A default branch picked here is new to the caller too, whose queued job (REPOSITORY_FACTS_JOB) may not know it.
  const queuedByCaller = !!opts.factsQueued && patch.default_branch === undefined;
  if (defaultMayHaveMoved && !queuedByCaller) await refreshRepositoryFacts(deps, project);
  // A project whose blobs are searched gets the index of its default branch's new tree (blob-index.ts).
  if (defaultMayHaveMoved && (await hasBlobIndexes(repo))) await queueBlobIndex(deps, deps.db, project.id, null);
  // Open merge requests follow their moved source branches (a new diff version each) before anyone reads them.
  await refreshMergeRequests(deps, project, changedRefs, userId);
  // The commit-graph takes the new commits later, once for a burst of ref changes (housekeeping.ts).
  await queueHousekeeping(deps, deps.db, project.id);
  // Pushes and background jobs change the project outside a state-changing API request: every worker's read
  // caches must hear of it (an API request announces again when it answers).
  announceCacheVoid('all');
}

export const REPOSITORY_FACTS_JOB = 'repository_facts';

/**
 * How long a queued facts refresh waits, and how long a run waits before reading again when the branch moved while
 * it read: the merges of a burst share one read of the whole tree instead of one read each.
 */
export const REPOSITORY_FACTS_DELAY_MS = 5_000;

/**
 * Queues the refresh of the repository facts (statistics, languages, README) of a project whose default branch
 * moved, inside the caller's transaction (`db`), so that a change which commits always has it queued. One waits
 * or runs per project at a time, due `REPOSITORY_FACTS_DELAY_MS` after the first change of a burst; the run reads
 * again until the branch stood still (`refreshRepositoryFactsJob`).
 */
export async function queueRepositoryFacts(deps: ServiceDeps, db: Db, projectId: number): Promise<void> {
  await deps.jobs.enqueue(db, REPOSITORY_FACTS_JOB, { project_id: projectId }, {
    uniqueKey: `${REPOSITORY_FACTS_JOB}:${projectId}`, runAt: deps.clock.now() + REPOSITORY_FACTS_DELAY_MS,
  });
}

export const HOUSEKEEPING_JOB = 'repository_housekeeping';

/**
 * How long a queued housekeeping run waits: the ref changes within it (a burst of pushes or merges) share the one
 * run, which writes their commits as one layer of the commit-graph.
 */
export const HOUSEKEEPING_DELAY_MS = 30_000;

/** Queues the housekeeping of a project's repository (housekeeping.ts) unless one is waiting or running already. */
export async function queueHousekeeping(deps: ServiceDeps, db: Db, projectId: number): Promise<void> {
  await deps.jobs.enqueue(db, HOUSEKEEPING_JOB, { project_id: projectId }, {
    uniqueKey: `${HOUSEKEEPING_JOB}:${projectId}`, runAt: deps.clock.now() + HOUSEKEEPING_DELAY_MS,
  });
}

/**
 * The queued refresh: the facts read at the default branch's head. When that head moved while they were read (a
 * move during the run found its own queueing refused, as this run was still running), the job asks to run again
 * `REPOSITORY_FACTS_DELAY_MS` later, so that merges still arriving share that next read.
 */
export async function refreshRepositoryFactsJob(deps: ServiceDeps, projectId: number, runAgainAt: (at: number) => void): Promise<void> {
  const project = await liveProjectById(deps, projectId);
  if (!project) return;
  const repo = repoFor(deps.config, project);
  const head = () => (project.default_branch ? repo.resolveCommit(`refs/heads/${project.default_branch}`) : Promise.resolve(null));
  const before = await head();
  await refreshRepositoryFacts(deps, project);
  if ((await head()) !== before) runAgainAt(deps.clock.now() + REPOSITORY_FACTS_DELAY_MS);
}

/** A revision the caller names is bounded before it reaches a command line (and an error message). */
export function assertRefLength(ref: string, param = 'ref'): void {
  if (typeof ref === 'string' && ref.length > MAX_REF_LENGTH) {
    throw new RuleError('bad_request', `${param} is too long (maximum is ${MAX_REF_LENGTH} characters)`);
  }
}

export function notFound(thing: string): never {
  throw new NotFoundError(thing);
}

/**
 * The file's metadata as `X-Gitlab-*` headers (the reference's `set_http_headers`): every field but the content,
 * named by capitalising each word of the field (`blob_id` → `X-Gitlab-Blob-Id`). HEAD answers with these alone.
 */
export function setFileHeaders(reply: FastifyReply, file: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(file)) {
    if (key === 'content') continue;
    const name = 'X-Gitlab-' + key.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('-');
    // A header is bytes: a name beyond ASCII goes out as its UTF-8 bytes, as the reference sends it; control
    // characters, which no header may carry, become "_".
    const text = value === null || value === undefined ? '' : String(value);
    reply.header(name, Buffer.from(text, 'utf8').toString('latin1').replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '_'));
  }
}

/** One ref a push or an API call moved: full name, and the old and new ids (40 zeros for none). */
export interface RefUpdate {
  ref: string;
  before: string;
  after: string;
}

/**
 * The domain events of moved refs, one per branch ('push') or tag ('tag_push'), in one transaction. For a push,
 * only the updates that really happened count: receive-pack may have declined some commands, so each ref's value
 * now must be the one the command asked for.
 */
export async function emitRefEvents(deps: ServiceDeps, project: Pick<ProjectRow, 'id'>, repo: Repository | null, actorId: number | null, updates: RefUpdate[]): Promise<void> {
  if (actorId === null) return;
  const wanted = updates.filter((u) => u.ref.startsWith('refs/heads/') || u.ref.startsWith('refs/tags/'));
  let done = wanted;
  if (repo && wanted.length) {
    // One git call for every ref named: what each holds now.
    const { stdout } = await repo.git(['for-each-ref', '--format=%(objectname) %(refname)', '--', ...new Set(wanted.map((u) => u.ref))]);
    const now = new Map(stdout.toString('utf8').split('\n').filter(Boolean).map((l) => [l.slice(41), l.slice(0, 40)]));
    done = wanted.filter((u) => (now.get(u.ref) ?? SHA1_ZERO) === u.after);
  }
  if (!done.length) return;
  await deps.db.transaction().execute(async (trx) => {
    for (const u of done) {
      await emitEvent(deps, trx, { type: u.ref.startsWith('refs/tags/') ? 'tag_push' : 'push', projectId: project.id, actorId, ref: u.ref, before: u.before, after: u.after });
    }
  });
}
