import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceDeps } from '../../platform/deps.ts';
import { safeFileName } from '../../platform/storage/avatars.ts';
import { localFileStore, projectUploadsDir, type UploadedFile } from '../../platform/storage/uploads.ts';
import type { JobKind } from '../../platform/jobs/queue.ts';

// Files uploaded into a project for its Markdown: stored under `uploads/project/<id>/<secret>/<name>`, a row per file,
// served back at `/<project path>/uploads/<secret>/<name>` to whoever reads the project.

export interface ProjectUpload { id: number; secret: string; filename: string }

export async function saveProjectUpload(deps: ServiceDeps, projectId: number, userId: number, file: UploadedFile): Promise<ProjectUpload> {
  const secret = randomBytes(16).toString('hex');
  const filename = safeFileName(file.filename);
  const dir = join(projectUploadsDir(deps.config.dataDir, projectId), secret);
  const target = join(dir, filename);
  await mkdir(dir, { recursive: true });
  await rename(file.path, target);
  try {
    // The row is the record: a kill before the commit leaves only an unreferenced file, which is never served.
    const row = await deps.db.insertInto('project_uploads').values({
      project_id: projectId, secret, filename, size: file.size, uploaded_by_id: userId, created_at: deps.clock.now(),
    }).returning('id').executeTakeFirstOrThrow();
    return { id: row.id, secret, filename };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** The stored file of an upload, when the project holds one under that secret and name. */
export async function projectUploadFile(deps: ServiceDeps, projectId: number, secret: string, filename: string): Promise<string | null> {
  if (!/^[0-9a-f]{32}$/.test(secret)) return null;
  const row = await deps.db.selectFrom('project_uploads').select('filename')
    .where('project_id', '=', projectId).where('secret', '=', secret).where('filename', '=', filename).executeTakeFirst();
  return row ? join(projectUploadsDir(deps.config.dataDir, projectId), secret, row.filename) : null;
}

/** The job that removes a stored file whose row is gone (queued in the row's deletion; retried while removal fails). */
export const REMOVE_STORED_FILE = 'uploads.remove_file';

export function uploadJobs(deps: ServiceDeps): Record<string, JobKind<{ key: string[] }>> {
  return {
    [REMOVE_STORED_FILE]: {
      maxAttempts: 10, concurrency: 2,
      async run(args) {
        await localFileStore(deps.config.dataDir).remove(args.key);
      },
    },
  };
}
