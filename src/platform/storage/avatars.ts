import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { extname, join } from 'node:path';
import { ValidationError } from '../errors.ts';
import { uploadsRoot, type UploadedFile } from './uploads.ts';

// Avatars of users, projects, groups and topics: one file per record under
// `<data dir>/uploads/-/system/<model>/avatar/<id>/<file name>`, the row naming the file (its `avatar` column), and
// served back at the same path below the external URL, as the reference lays them out.

export type AvatarModel = 'user' | 'project' | 'group' | 'topic';

const DIRS: Record<AvatarModel, string[]> = {
  user: ['-', 'system', 'user', 'avatar'],
  project: ['-', 'system', 'project', 'avatar'],
  group: ['-', 'system', 'group', 'avatar'],
  topic: ['-', 'system', 'projects', 'topic', 'avatar'],
};

/** The reference's avatar limit (Avatarable): 200 KB. */
export const MAX_AVATAR_BYTES = 200 * 1024;
/** The image formats the reference's avatar uploader takes. */
export const AVATAR_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico', 'webp'];

/** Refuses an avatar as the reference's model validation does: a format it does not take, or too large. */
export function checkAvatar(file: UploadedFile | null | undefined): void {
  if (!file || file.size === 0) return;
  const errors: string[] = [];
  const ext = extname(safeFileName(file.filename)).slice(1).toLowerCase();
  if (!AVATAR_EXTENSIONS.includes(ext)) errors.push(`file format is not supported. Please try one of the following supported formats: ${AVATAR_EXTENSIONS.join(', ')}`);
  if (file.size > MAX_AVATAR_BYTES) errors.push('is too big (should be at most 200 KB)');
  if (errors.length) throw new ValidationError({ avatar: errors });
}

/**
 * The client's file name made safe as one path segment, as the reference's uploader sanitizes it: the last segment
 * only, characters other than letters, digits, `.`, `_`, `-` and `+` replaced by `_`, no leading dot, bounded.
 */
export function safeFileName(name: string): string {
  const last = name.split(/[\\/]/).pop() ?? '';
  let out = last.replace(/[^A-Za-z0-9._+-]/g, '_').replace(/^\.+/, '').slice(-200);
  if (out === '' || out === '.' || out === '..') out = 'file';
  return out;
}

/** The path of an avatar below the external URL (`/uploads/-/system/...`). */
export function avatarPath(model: AvatarModel, id: number, name: string): string {
  return `/uploads/${DIRS[model].join('/')}/${id}/${encodeURIComponent(name)}`;
}

/** The absolute URL of a record's avatar, or null when it has none. */
export function avatarUrl(base: string, model: AvatarModel, id: number, name: string | null | undefined): string | null {
  return name ? `${base.replace(/\/$/, '')}${avatarPath(model, id, name)}` : null;
}

/** Where an avatar file lives on disk. `name` is a stored name (made by `safeFileName`), never raw client input. */
export function avatarFile(dataDir: string, model: AvatarModel, id: number, name: string): string {
  return join(uploadsRoot(dataDir), ...DIRS[model], String(id), safeFileName(name));
}

/**
 * Moves an uploaded avatar into place for record `id` and answers the name to store in its row. Called inside the
 * transaction that stores the name; `discard` undoes the move when that transaction fails. A kill between the move
 * and the commit leaves at most an unreferenced file, which is never served (only the row's name is).
 */
export async function placeAvatar(dataDir: string, model: AvatarModel, id: number, file: UploadedFile): Promise<{ name: string; discard(): Promise<void> }> {
  const name = safeFileName(file.filename);
  const target = avatarFile(dataDir, model, id, name);
  await mkdir(join(target, '..'), { recursive: true });
  // Renamed into place in one step, so a reader sees the old file or the new one, never half of one.
  const staged = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  await rename(file.path, staged);
  await rename(staged, target);
  return { name, discard: () => rm(target, { force: true }) };
}

/** Removes a record's avatar files (after its row stopped naming them: on removal, replacement or deletion). */
export async function removeAvatar(dataDir: string, model: AvatarModel, id: number, keep?: string | null): Promise<void> {
  if (keep) {
    const dir = join(uploadsRoot(dataDir), ...DIRS[model], String(id));
    const names = await readdir(dir).catch(() => [] as string[]);
    await Promise.all(names.filter((n) => n !== keep).map((n) => rm(join(dir, n), { force: true })));
    return;
  }
  await rm(join(uploadsRoot(dataDir), ...DIRS[model], String(id)), { recursive: true, force: true });
}

const TABLES = { user: 'users', project: 'projects', group: 'namespaces', topic: 'topics' } as const;

/** Applies an avatar change to the row of record `id` inside the caller's transaction. */
export type ApplyAvatar = (trx: Kysely<DB>, id: number) => Promise<void>;

/**
 * Runs a record's create or update with an avatar change: a file sets it, null removes it, undefined leaves it.
 * `run` calls `apply(trx, id)` inside its transaction (before it reads the row back). The file moves into place
 * there, and out again if the transaction fails; once it committed, the files the row no longer names are removed.
 */
export async function withAvatar<T>(dataDir: string, model: AvatarModel, change: UploadedFile | null | undefined, run: (apply: ApplyAvatar) => Promise<T>): Promise<T> {
  // An empty file part changes nothing, as the reference's uploader skips empty files (python-gitlab sends
  // `avatar = ""` as one); a blank form field removes the avatar.
  if (change && change.size === 0) change = undefined;
  let placed: { name: string; discard(): Promise<void> } | null = null;
  let id: number | null = null;
  const apply: ApplyAvatar = async (trx, rid) => {
    id = rid;
    if (change === undefined) return;
    placed = change ? await placeAvatar(dataDir, model, rid, change) : null;
    await trx.updateTable(TABLES[model]).set({ avatar: placed?.name ?? null }).where('id', '=', rid).execute();
  };
  let out: T;
  try {
    out = await run(apply);
  } catch (e) {
    await (placed as { discard(): Promise<void> } | null)?.discard();
    throw e;
  }
  if (change !== undefined && id !== null) await removeAvatar(dataDir, model, id, (placed as { name: string } | null)?.name ?? null);
  return out;
}
