import type { SuggestionView } from './suggestions.service.ts';

// The Suggestion entity, field order as the reference's (`applicable` as the spec names it).

export function suggestionEntity(v: SuggestionView) {
  return {
    id: v.row.id,
    from_line: v.fromLine,
    to_line: v.toLine,
    applicable: v.applicable,
    applied: !!v.row.applied,
    from_content: v.row.from_content,
    to_content: v.row.to_content,
  };
}
