// Repository housekeeping, the job `queueHousekeeping` (repository.common.ts) queues after refs moved: the
// commit-graph brought up to date, so that the history walks of mergeability, merges and compares read commits from
// the graph instead of parsing each one.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { HOUSEKEEPING_JOB, repoFor } from './repository.common.ts';

/** The queued run: the commit-graph of the project's repository as it is now (gone or empty: nothing to do). */
export async function runHousekeeping(deps: ServiceDeps, projectId: number): Promise<void> {
  const project = await liveProjectById(deps, projectId);
  if (!project) return;
  const repo = repoFor(deps.config, project);
  if (!repo.exists() || (await repo.isEmpty())) return;
  await repo.writeCommitGraph();
}

export function housekeepingJobs(deps: ServiceDeps): Record<string, JobKind<{ project_id: number }>> {
  return {
    [HOUSEKEEPING_JOB]: {
      concurrency: 1, maxAttempts: 3,
      async run(args) {
        await runHousekeeping(deps, args.project_id);
      },
    },
  };
}
