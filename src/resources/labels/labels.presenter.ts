import { singleLineHtml } from '../projects/projects.presenter.ts';
import { textColor } from './colors.ts';
import type { LabelExtras, LabelRow } from './labels.service.ts';

// Labels in the reference's field order: LabelBasic, then the counts (with_counts), `subscribed`, and on a
// project's routes the project's `priority` and `is_project_label`.

export function labelBasic(l: LabelRow) {
  return {
    id: l.id,
    name: l.title,
    color: l.color,
    description: l.description,
    description_html: singleLineHtml(l.description),
    text_color: textColor(l.color),
    // Bellows does not remove labels when an issue closes.
    remove_on_close: false,
  };
}

export function label(l: LabelRow, x: LabelExtras) {
  const counts = x.counts?.get(l.id);
  return {
    ...labelBasic(l),
    ...(counts ? { open_issues_count: counts.open, closed_issues_count: counts.closed, open_merge_requests_count: 0 } : {}),
    subscribed: x.subscribed.has(l.id),
  };
}

export function projectLabel(l: LabelRow, x: LabelExtras) {
  return { ...label(l, x), priority: x.priority.get(l.id) ?? null, is_project_label: l.project_id !== null };
}
