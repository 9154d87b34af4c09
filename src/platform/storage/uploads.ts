import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// Uploaded files (avatars, attachments) live under `<data dir>/uploads`. A request's file parts are streamed to
// `uploads/tmp` first, under names of our own making (never the client's file name), and either kept by the
// area that asked for them or removed when the request ends.

/** A file part of a multipart request, already on disk. Only the multipart reader makes these. */
export class UploadedFile {
  constructor(
    /** The client's file name, for display only; never used as a path. */
    readonly filename: string,
    readonly mimetype: string,
    readonly path: string,
    readonly size: number,
  ) {}
}

export function uploadsRoot(dataDir: string): string {
  return join(dataDir, 'uploads');
}

/** Streams `stream` to a new temporary file; the stream itself enforces the size limit (it errors past it). */
export async function saveTemporary(dataDir: string, stream: Readable, filename: string, mimetype: string): Promise<UploadedFile> {
  const dir = join(uploadsRoot(dataDir), 'tmp');
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomBytes(16).toString('hex'));
  let size = 0;
  stream.on('data', (chunk: Buffer) => { size += chunk.length; });
  try {
    await pipeline(stream, createWriteStream(path, { flags: 'wx', mode: 0o600 }));
  } catch (e) {
    await rm(path, { force: true });
    throw e;
  }
  return new UploadedFile(filename, mimetype, path, size);
}

/** Moves a temporary upload to its place under the uploads root (`relative` is made by the caller, not the client). */
export async function keepUpload(dataDir: string, file: UploadedFile, relative: string[]): Promise<string> {
  const target = join(uploadsRoot(dataDir), ...relative);
  await mkdir(join(target, '..'), { recursive: true });
  await rename(file.path, target);
  return target;
}

export async function discardUploads(files: UploadedFile[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f.path, { force: true })));
}

/** Where the files uploaded into a project for its Markdown live (`uploads/project/<id>/<secret>/<name>`). */
export function projectUploadsDir(dataDir: string, projectId: number): string {
  return join(uploadsRoot(dataDir), 'project', String(projectId));
}

/** Removes a deleted project's uploaded files (after its rows are gone). */
export async function removeProjectUploads(dataDir: string, projectId: number): Promise<void> {
  await rm(projectUploadsDir(dataDir, projectId), { recursive: true, force: true });
}
