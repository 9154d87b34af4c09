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

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * Banners for the server's HTML pages (sign-in, consent), from activeBroadcastMessages(). The message is shown as
 * escaped text; `font` is used only when it is a colour code, which the API already guarantees.
 */
export function broadcastBannersHtml(rows: BroadcastMessageRow[]): string {
  return rows.map((r) => {
    const color = r.font && /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(r.font) ? ` style="color: ${r.font}"` : '';
    const kind = r.broadcast_type === 'notification' ? 'notification' : 'banner';
    return `<div class="broadcast-message broadcast-${kind}" role="alert" data-id="${r.id}"${color}>${escapeHtml(r.message)}</div>`;
  }).join('\n');
}
