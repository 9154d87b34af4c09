import type { ServiceDeps } from '../../platform/deps.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { repoFor } from '../repository/repository.common.ts';
import { BLOB_INDEX_JOB, buildBlobIndex } from './blob-index.ts';

/**
 * The blob search index jobs (blob-index.ts): the index of the tree named, or of the default branch's tree when
 * none is (the branch moved). One build at a time per process: it reads the whole tree.
 */
export function searchJobs(deps: ServiceDeps): Record<string, JobKind<{ project_id: number; tree: string | null }>> {
  return {
    [BLOB_INDEX_JOB]: {
      concurrency: 1, maxAttempts: 3,
      async run(args, ctx) {
        const project = await liveProjectById(deps, args.project_id);
        if (!project) return;
        const repo = repoFor(deps.config, project);
        if (!repo.exists()) return;
        let tree = args.tree;
        if (!tree) {
          const head = project.default_branch ? await repo.resolveCommit(`refs/heads/${project.default_branch}`) : null;
          tree = head ? await repo.treeOf(head) : null;
          if (!tree) return;
        }
        await buildBlobIndex(repo, tree, { signal: ctx.signal });
      },
    },
  };
}
