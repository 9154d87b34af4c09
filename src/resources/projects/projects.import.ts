import type { Transaction } from 'kysely';
import type { DB } from '../../platform/db/index.ts';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { announceCacheVoid } from '../../platform/cache-bus.ts';
import { Repository } from '../../platform/git/repository.ts';
import { BlockedUrlError, checkOutboundUrl, gitPinning, redactCredentials, withoutCredentials, type OutboundTarget } from '../../platform/outbound-url.ts';
import { projectRepositoryPath, refreshRepositoryFacts } from './projects.service.ts';

// Importing a repository from a URL (`POST /projects` with `import_url`): the project is created empty with
// `import_status: "scheduled"` and a job queued in the same transaction; the job (`import_project`) mirrors the
// remote's branches and tags into the project's repository (`started`), then `finished`, or `failed` with
// `import_error`. The URL is checked by the outbound guard when the project is created and again when the job
// connects, to the address it checked then. Its credentials are kept only in `project_import_data` until the
// import ended; the project row and every answer carry the URL without them.

export const IMPORT_JOB = 'import_project';
export const IMPORT_SCHEMES = ['http', 'https', 'git'] as const;
const IMPORT_TIMEOUT_MS = 30 * 60_000;

function guard(deps: ServiceDeps, url: string): Promise<OutboundTarget> {
  return checkOutboundUrl(deps, url, { schemes: IMPORT_SCHEMES, allowLocal: 'allow_local_requests_from_web_hooks_and_services' });
}

/** Why an import URL is refused (the text after "is blocked: "), or null. */
export async function importUrlProblem(deps: ServiceDeps, url: string): Promise<string | null> {
  try {
    await guard(deps, url);
    return null;
  } catch (e) {
    if (e instanceof BlockedUrlError) return e.message;
    throw e;
  }
}

/** The project columns of an import being scheduled. */
export function scheduledImportColumns(url: string) {
  return { import_url: withoutCredentials(url), import_type: 'git', import_status: 'scheduled', import_error: null };
}

/** Inside the creating transaction: keeps the URL for the job and queues it. */
export async function scheduleImport(deps: ServiceDeps, trx: Transaction<DB>, projectId: number, url: string): Promise<void> {
  await trx.insertInto('project_import_data').values({ project_id: projectId, url, created_at: deps.clock.now() }).execute();
  await deps.jobs.enqueue(trx, IMPORT_JOB, { project_id: projectId }, { uniqueKey: `${IMPORT_JOB}:${projectId}` });
}

async function setStatus(deps: ServiceDeps, projectId: number, status: 'started' | 'finished' | 'failed', error: string | null): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('projects').set({ import_status: status, import_error: error, updated_at: deps.clock.now() }).where('id', '=', projectId).execute();
    if (status !== 'started') await trx.deleteFrom('project_import_data').where('project_id', '=', projectId).execute();
  });
  announceCacheVoid('all');
}

/**
 * Runs one import. A run cut short (the process died) runs again from the start: fetching is idempotent. A failure
 * of the remote (refused, unreachable, timed out, not a repository) ends the import `failed`, not the job.
 */
export async function runImport(deps: ServiceDeps, projectId: number, signal: AbortSignal): Promise<void> {
  const project = await deps.db.selectFrom('projects').select(['id', 'full_path', 'repository_storage', 'default_branch', 'import_status'])
    .where('id', '=', projectId).executeTakeFirst();
  if (!project || project.import_status === 'finished' || project.import_status === 'failed') return;
  const data = await deps.db.selectFrom('project_import_data').select('url').where('project_id', '=', projectId).executeTakeFirst();
  const shown = withoutCredentials(data?.url ?? '') ?? '';
  if (!data) return setStatus(deps, projectId, 'failed', 'The URL to import from is missing');
  await setStatus(deps, projectId, 'started', null);
  let target: OutboundTarget | null = null;
  try {
    target = await guard(deps, data.url);
    const repo = new Repository(projectRepositoryPath(deps, project));
    await repo.ensure(project.default_branch ?? 'main');
    const { url, env } = gitPinning(target);
    const head = await repo.mirrorFrom(url, { env, timeoutMs: IMPORT_TIMEOUT_MS, signal });
    let defaultBranch = project.default_branch;
    if (head && head !== defaultBranch) {
      await repo.setDefaultBranch(head);
      await deps.db.updateTable('projects').set({ default_branch: head }).where('id', '=', projectId).execute();
      defaultBranch = head;
    }
    await refreshRepositoryFacts(deps, { ...project, default_branch: defaultBranch });
  } catch (e) {
    if (signal.aborted) throw e; // stopping: the queue gives the job back and it runs again
    const reason = e instanceof BlockedUrlError ? `is blocked: ${e.message}` : firstLine(e);
    const text = `Error importing repository ${shown} into ${project.full_path} - ${reason}`;
    return setStatus(deps, projectId, 'failed', redactCredentials(text, target ?? credentialsOf(data.url)).slice(0, 1000));
  }
  await setStatus(deps, projectId, 'finished', null);
}

function firstLine(e: unknown): string {
  const stderr = (e as { stderr?: string }).stderr?.trim();
  const fatal = stderr?.split('\n').find((l) => /^(fatal|error):/.test(l)) ?? stderr?.split('\n')[0];
  return fatal || (e instanceof Error ? e.message : String(e));
}

function credentialsOf(raw: string): { username: string; password: string } {
  try {
    const u = new URL(raw);
    return { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  } catch {
    return { username: '', password: '' };
  }
}

/** The import job kind: one import at a time per process besides others' work, a few attempts for a dying process. */
export function importJobs(deps: ServiceDeps): Record<string, JobKind<{ project_id: number }>> {
  return {
    [IMPORT_JOB]: {
      maxAttempts: 3,
      concurrency: 2,
      leaseMs: 60_000,
      run: (args, ctx) => runImport(deps, args.project_id, ctx.signal),
    },
  };
}
