import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, rmdir, stat } from 'node:fs/promises';
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

/**
 * Where an area's stored files live, behind one small interface so that an object-storage backend can take the
 * local directory's place. A key is a list of path segments made by the area (ids and sanitised names), never raw
 * client input.
 */
export interface FileStore {
  /** Moves a temporary upload to `key`. */
  put(file: UploadedFile, key: readonly string[]): Promise<void>;
  /** The stored file at `key` (a stream and its size), or null when there is none. */
  open(key: readonly string[]): Promise<{ stream: Readable; size: number } | null>;
  /** Removes the file at `key`, and its directory once empty (a missing file is no error). */
  remove(key: readonly string[]): Promise<void>;
}

/** The local directory backend: files under `<data dir>/uploads`. */
export function localFileStore(dataDir: string): FileStore {
  const at = (key: readonly string[]) => {
    if (!key.length || key.some((s) => !s || s === '.' || s === '..' || /[\\/\0]/.test(s))) throw new Error(`invalid storage key ${key.join('/')}`);
    return join(uploadsRoot(dataDir), ...key);
  };
  return {
    async put(file, key) {
      await keepUpload(dataDir, file, [...key]);
    },
    async open(key) {
      const path = at(key);
      const st = await stat(path).catch(() => null);
      if (!st?.isFile()) return null;
      return { stream: createReadStream(path), size: st.size };
    },
    async remove(key) {
      const path = at(key);
      await rm(path, { force: true });
      if (key.length > 1) {
        await rmdir(join(path, '..')).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT' && e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
        });
      }
    },
  };
}

/** Image types told by their first bytes (the file's content, whatever its name says). */
export type ImageType = 'png' | 'jpeg' | 'gif' | 'bmp' | 'tiff' | 'ico' | 'webp';

export const IMAGE_CONTENT_TYPES: Record<ImageType, string> = {
  png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', ico: 'image/vnd.microsoft.icon', webp: 'image/webp',
};

/** The image type of a file by its magic bytes, or null when it is none of the safe image types. */
export async function detectImageType(path: string): Promise<ImageType | null> {
  const fh = await open(path, 'r');
  const head = Buffer.alloc(16);
  let n = 0;
  try {
    n = (await fh.read(head, 0, 16, 0)).bytesRead;
  } finally {
    await fh.close();
  }
  const b = head.subarray(0, n);
  const starts = (...bytes: number[]) => bytes.every((x, i) => b[i] === x);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (starts(0xff, 0xd8, 0xff)) return 'jpeg';
  if (b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a') return 'gif';
  if (b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (starts(0x49, 0x49, 0x2a, 0x00) || starts(0x4d, 0x4d, 0x00, 0x2a)) return 'tiff';
  if (starts(0x00, 0x00, 0x01, 0x00) && b.length >= 6 && b[4] + b[5] > 0) return 'ico';
  if (starts(0x42, 0x4d) && b.length >= 14) return 'bmp';
  return null;
}

/** The image type a safe image extension names (jpg and jpeg are one type, as are tif and tiff). */
export function imageTypeOfExtension(ext: string): ImageType | null {
  const e = ext.toLowerCase();
  if (e === 'jpg' || e === 'jpeg') return 'jpeg';
  if (e === 'tif' || e === 'tiff') return 'tiff';
  return (['png', 'gif', 'bmp', 'ico', 'webp'] as const).find((t) => t === e) ?? null;
}
