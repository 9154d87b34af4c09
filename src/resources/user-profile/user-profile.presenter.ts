import { iso } from '../../http/format.ts';
import type { CustomAttributeRow, EmailRow, StatusRow } from './user-profile.service.ts';

export function email(e: EmailRow) {
  return { id: e.id, email: e.email, confirmed_at: iso(e.confirmed_at) };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The reference's UserStatus entity; a user without a status shows every field empty. */
export function userStatus(s: StatusRow | null) {
  return {
    emoji: s?.emoji ?? null,
    availability: s?.availability ?? null,
    message: s?.message ?? null,
    message_html: s?.message ? `<p dir="auto">${escapeHtml(s.message)}</p>` : null,
    clear_status_at: iso(s?.clear_status_at ?? null),
  };
}

export function customAttribute(a: CustomAttributeRow) {
  return { key: a.key, value: a.value };
}

export function membership(m: { source_id: number; source_type: string; access_level: number; project_name: string | null; group_name: string | null }) {
  return { source_id: m.source_id, source_name: m.source_type === 'Project' ? m.project_name : m.group_name, source_type: m.source_type, access_level: m.access_level };
}
