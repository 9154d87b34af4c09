import { Type, type TProperties } from '@sinclair/typebox';
import { Bool, CommaList, DateTime, Enum, Int, Opt, Str } from '../../http/schemas.ts';
import { parseDateTime } from '../../http/params.ts';
import { ParamError } from '../../platform/errors.ts';
import { special, type NegatableFilter } from './noteables.finder.ts';

// The list and filter parameters issues and merge requests share, declared once: their schemas (each route composes
// them in the reference's order) and how they become a filter.

export const LabelMilestoneParams = {
  labels: Opt(CommaList(Str())),
  milestone: Opt(Str()),
};

export const IidsParam = { iids: Opt(Type.Array(Int())) };

export const AuthorParams = {
  author_id: Opt(Int()),
  author_username: Opt(Str()),
};

export const AssigneeParams = {
  assignee_id: Opt(Str({ description: 'a user id, None or Any' })),
  assignee_username: Opt(CommaList(Str())),
};

export const ReactionParam = { my_reaction_emoji: Opt(Str()) };

export const SearchParams = {
  search: Opt(Str()),
  in: Opt(CommaList(Enum(['title', 'description'] as const))),
};

export const TimeParams = {
  created_after: Opt(DateTime()),
  created_before: Opt(DateTime()),
  updated_after: Opt(DateTime()),
  updated_before: Opt(DateTime()),
};

export const SortParam = { sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })) };

export const LabelsDetailsParam = { with_labels_details: Opt(Bool({ default: false })) };

/** Group lists leave archived projects out unless asked. */
export const NonArchivedParam = { non_archived: Opt(Bool({ default: true })) };

/** `not[...]`: the negatable filters of a kind, unknown names ignored. */
export const notParam = <T extends TProperties>(negatable: T) => ({ not: Opt(Type.Object(negatable, { additionalProperties: true })) });

/** Two parameters that may not come together. */
export function exclusive(input: Record<string, unknown>, a: string, b: string) {
  if (input[a] !== undefined && input[b] !== undefined) throw ParamError.group([a, b], 'mutually_exclusive');
}

/** A number or one of `words` (None, Any, ...), lower-cased; anything else is invalid `param`. */
export function idOrWord(v: string | undefined, param: string, words: string[]): any {
  if (v === undefined) return undefined;
  const w = special(v).toLowerCase();
  if (words.includes(w)) return w;
  if (!/^\d+$/.test(v)) throw ParamError.of(param, 'invalid');
  return Number(v);
}

/** A comma list given as one string or as an array (inside `not[...]` the comma form arrives unsplit). */
export const commaList = (v: unknown): string[] | undefined =>
  v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter((x) => x !== '');

/**
 * The negatable filters both kinds have; `prefix` names the parameter in errors (`not[`). `pairs`: a kind's own
 * mutually exclusive parameters, checked after the shared ones and before any value.
 */
export function commonNegatable(input: any, prefix: string, pairs: Array<[string, string]> = []): Omit<NegatableFilter, 'iids'> {
  exclusive(input, 'author_id', 'author_username');
  exclusive(input, 'assignee_id', 'assignee_username');
  for (const [a, b] of pairs) exclusive(input, a, b);
  return {
    labels: commaList(input.labels), milestone: input.milestone, author_id: input.author_id, author_username: input.author_username,
    assignee_id: idOrWord(input.assignee_id, `${prefix}assignee_id`, ['none', 'any']), assignee_username: commaList(input.assignee_username),
    my_reaction_emoji: input.my_reaction_emoji,
  };
}

/** The creation and update time bounds. */
export function timeFilter(input: any) {
  const time = (v: string | undefined) => (v === undefined ? undefined : parseDateTime(v) ?? undefined);
  return {
    created_after: time(input.created_after), created_before: time(input.created_before),
    updated_after: time(input.updated_after), updated_before: time(input.updated_before),
  };
}

/** `scope` in either spelling (created-by-me, created_by_me), else the list's default. */
export const scopeFilter = <S extends string>(input: any, defaultScope: S | undefined): S | undefined =>
  input.scope ? (input.scope.replace(/-/g, '_') as S) : defaultScope;
