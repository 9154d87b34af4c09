import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { BroadcastMessagesTable } from '../../platform/db/schema.ts';
import { RecordNotFoundError, ValidationError } from '../../platform/errors.ts';
import { isFeatureEnabled } from '../../platform/features.ts';

export type BroadcastMessageRow = Selectable<BroadcastMessagesTable>;

export const BROADCAST_TYPES = ['banner', 'notification'] as const;
export const TARGET_ACCESS_LEVELS = [10, 20, 30, 40, 50] as const;
export const DEFAULT_FONT = '#FFFFFF';
const HOUR_MS = 3_600_000;
const COLOR_RE = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

export interface BroadcastMessageInput {
  message?: string;
  /** Epoch milliseconds. */
  starts_at?: number;
  ends_at?: number;
  font?: string;
  target_access_levels?: number[];
  target_path?: string;
  broadcast_type?: (typeof BROADCAST_TYPES)[number];
  dismissable?: boolean;
}

/** `active`: the window has started and has not ended yet. */
export function isActive(row: Pick<BroadcastMessageRow, 'starts_at' | 'ends_at'>, now: number): boolean {
  return row.starts_at <= now && row.ends_at >= now;
}

export function accessLevelsOf(row: Pick<BroadcastMessageRow, 'target_access_levels'>): number[] {
  return row.target_access_levels.split(',').filter(Boolean).map(Number);
}

function validate(v: { message: string; starts_at: number; ends_at: number; font: string | null }): void {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!v.message.trim()) add('message', "can't be blank");
  if (v.ends_at <= v.starts_at) add('ends_at', 'must be after starts_at');
  if (v.font && !COLOR_RE.test(v.font)) add('font', 'must be a valid color code');
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

const levelsText = (levels: number[]) => [...new Set(levels)].sort((a, b) => a - b).join(',');

export async function getBroadcastMessage(deps: ServiceDeps, id: number): Promise<BroadcastMessageRow> {
  const row = await deps.db.selectFrom('broadcast_messages').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row;
}

export function listBroadcastMessagesQuery(deps: ServiceDeps) {
  return deps.db.selectFrom('broadcast_messages').selectAll().orderBy('id', 'desc');
}

export async function createBroadcastMessage(deps: ServiceDeps, input: BroadcastMessageInput & { message: string }): Promise<BroadcastMessageRow> {
  const now = deps.clock.now();
  const v = {
    message: input.message,
    starts_at: input.starts_at ?? now,
    ends_at: input.ends_at ?? now + HOUR_MS,
    font: input.font ?? DEFAULT_FONT,
  };
  validate(v);
  return deps.db.insertInto('broadcast_messages').values({
    ...v,
    target_access_levels: levelsText(input.target_access_levels ?? []),
    target_path: input.target_path ?? null,
    broadcast_type: input.broadcast_type ?? 'banner',
    dismissable: input.dismissable === undefined ? null : input.dismissable ? 1 : 0,
    created_at: now,
    updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

export async function updateBroadcastMessage(deps: ServiceDeps, row: BroadcastMessageRow, input: BroadcastMessageInput): Promise<BroadcastMessageRow> {
  const v = {
    message: input.message ?? row.message,
    starts_at: input.starts_at ?? row.starts_at,
    ends_at: input.ends_at ?? row.ends_at,
    font: input.font ?? row.font,
  };
  validate(v);
  return deps.db.updateTable('broadcast_messages').set({
    ...v,
    target_access_levels: input.target_access_levels ? levelsText(input.target_access_levels) : row.target_access_levels,
    target_path: input.target_path ?? row.target_path,
    broadcast_type: input.broadcast_type ?? row.broadcast_type,
    dismissable: input.dismissable === undefined ? row.dismissable : input.dismissable ? 1 : 0,
    updated_at: deps.clock.now(),
  }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteBroadcastMessage(deps: ServiceDeps, row: BroadcastMessageRow): Promise<void> {
  await deps.db.deleteFrom('broadcast_messages').where('id', '=', row.id).execute();
}

/**
 * Whether a message's `target_path` matches the page being shown: an empty target matches every page,
 * no current path matches nothing else; `*` is a wildcard, the rest literal, case-insensitive, whole path.
 */
export function matchesTargetPath(targetPath: string | null, currentPath: string | null | undefined): boolean {
  if (!targetPath) return true;
  if (currentPath === null || currentPath === undefined) return false;
  const path = currentPath.startsWith('/') ? currentPath : `/${currentPath}`;
  const pattern = targetPath.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`, 'i').test(path);
}

export interface BannerViewer {
  /** The page's path, e.g. "/users/sign_in"; null when there is no page (nothing targeted matches then). */
  path: string | null;
  /** The viewer's access level where the page is shown; null for anonymous viewers or pages outside a project or group. */
  userAccessLevel?: number | null;
  broadcastType?: (typeof BROADCAST_TYPES)[number];
}

/**
 * The messages to show on a page, oldest first: active now, matching the page's path, and, when the
 * `role_targeted_broadcast_messages` flag is on, aimed at the viewer's role (no levels: everyone).
 */
export async function activeBroadcastMessages(deps: ServiceDeps, viewer: BannerViewer): Promise<BroadcastMessageRow[]> {
  const now = deps.clock.now();
  let q = deps.db.selectFrom('broadcast_messages').selectAll().where('starts_at', '<=', now).where('ends_at', '>=', now);
  if (viewer.broadcastType) q = q.where('broadcast_type', '=', viewer.broadcastType);
  const rows = await q.orderBy('id', 'asc').execute();
  if (rows.length === 0) return rows;
  const byRole = await isFeatureEnabled(deps.db, 'role_targeted_broadcast_messages');
  return rows.filter((r) => {
    if (!matchesTargetPath(r.target_path, viewer.path)) return false;
    if (!byRole) return true;
    const levels = accessLevelsOf(r);
    return levels.length === 0 || (viewer.userAccessLevel !== null && viewer.userAccessLevel !== undefined && levels.includes(viewer.userAccessLevel));
  });
}
