import { iso } from '../../http/format.ts';
import { accessLevelsOf, isActive, type BroadcastMessageRow } from './broadcast-messages.service.ts';

/** A broadcast message in the spec's field order (no `color`: the spec removed it). */
export function broadcastMessageJson(row: BroadcastMessageRow, now: number) {
  return {
    id: row.id,
    message: row.message,
    starts_at: iso(row.starts_at),
    ends_at: iso(row.ends_at),
    font: row.font,
    active: isActive(row, now),
    target_access_levels: accessLevelsOf(row),
    target_path: row.target_path,
    broadcast_type: row.broadcast_type,
    dismissable: row.dismissable === null ? null : !!row.dismissable,
  };
}
