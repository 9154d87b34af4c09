import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { SuggestionsTable } from '../../platform/db/schema.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { ForbiddenError, RuleError } from '../../platform/errors.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { liveProjectById, storedSettings } from '../../platform/project-rows.ts';
import { serialised } from '../../platform/git/commit-writer.ts';
import { RefMovedError } from '../../platform/git/errors.ts';
import type { Repository } from '../../platform/git/repository.ts';
import type { NoteRow } from '../notes/notes.presenter.ts';
import { usersByIds } from '../users/users.service.ts';
import { afterRefsChanged, repoFor } from '../repository/repository.common.ts';
import { levelIn, mergeRequestDenialFor, type MergeRequestRow } from '../merge-requests/merge-requests.service.ts';
import { canPushSource } from '../merge-requests/merge.service.ts';
import type { Position } from '../merge-requests/positions.ts';
import {
  applyReplacements, linesBetween, MAX_LINES_CONTEXT, overlapping, suggestionBlocks, suggestionCommitMessage, suggestionLines, suggestionRange,
} from './suggestions.parser.ts';

// Suggestions of merge-request diff notes: written with the note (and again when its body changes), shown in the
// note entity, and applied as one commit on the merge request's source branch (the reference's Suggestions::
// ApplyService with its SuggestionSet checks).

export type SuggestionRow = Selectable<SuggestionsTable>;

export interface SuggestionDraft {
  relative_order: number;
  lines_above: number;
  lines_below: number;
  from_content: string;
  to_content: string;
}

/** The text position of a diff note when it is on a line of the new file (where suggestions can be written). */
export function suggestiblePosition(position: string | null): (Position & { new_path: string; new_line: number; head_sha: string }) | null {
  const p = position ? (JSON.parse(position) as Position) : null;
  if (!p || p.position_type !== 'text' || typeof p.new_line !== 'number' || !p.new_path || !p.head_sha) return null;
  return p as Position & { new_path: string; new_line: number; head_sha: string };
}

/**
 * The suggestions a diff note's body makes, read against the file at the note's head: one per fenced block, anchored
 * on the note's new line (a multi-line thread's last line, as the reference anchors them). None when the note is not
 * on a line of the new file or the file is not there.
 */
export async function draftSuggestions(repo: Repository, body: string, position: string | null): Promise<SuggestionDraft[]> {
  const p = suggestiblePosition(position);
  if (!p) return [];
  const blocks = suggestionBlocks(body);
  if (!blocks.length) return [];
  const blob = await repo.blob(p.head_sha, p.new_path);
  if (!blob) return [];
  const text = blob.content.toString('utf8');
  return blocks.map((b, i) => {
    const lines = suggestionLines(text, p.new_line, b);
    return { relative_order: i, lines_above: b.above, lines_below: b.below, from_content: lines.fromContent, to_content: lines.toContent };
  });
}

/** Replaces a note's suggestions with these drafts, inside the note's own transaction. */
export async function writeSuggestions(trx: Db, noteId: number, drafts: SuggestionDraft[], now: number): Promise<void> {
  await trx.deleteFrom('suggestions').where('note_id', '=', noteId).execute();
  if (drafts.length) await trx.insertInto('suggestions').values(drafts.map((d) => ({ ...d, note_id: noteId, created_at: now, updated_at: now }))).execute();
}

/** The suggestions of these notes, each note's in its order. */
export async function suggestionsOfNotes(db: Db, noteIds: number[]): Promise<Map<number, SuggestionRow[]>> {
  const out = new Map<number, SuggestionRow[]>();
  if (!noteIds.length) return out;
  const rows = await db.selectFrom('suggestions').selectAll().where('note_id', 'in', noteIds).orderBy('note_id').orderBy('relative_order').execute();
  for (const r of rows) out.set(r.note_id, [...(out.get(r.note_id) ?? []), r]);
  return out;
}

/** A suggestion as shown: its lines on the note's current position. */
export interface SuggestionView {
  row: SuggestionRow;
  fromLine: number;
  toLine: number;
  applicable: boolean;
}

/** What decides whether a merge request's suggestions can be applied, read once for a page of notes. */
export interface SuggestionContext {
  state: string;
  sourceBranchExists: boolean;
}

export async function suggestionContext(deps: ServiceDeps, mr: MergeRequestRow): Promise<SuggestionContext> {
  return { state: mr.state, sourceBranchExists: await sourceBranchHead(deps, mr).then((h) => h !== null) };
}

/** The reason a suggestion cannot be applied, or null. `current`: the file at the note's head, when it was read (apply). */
function inapplicableReason(s: SuggestionRow, note: NoteRow, ctx: SuggestionContext, current?: string): string | null {
  const p = suggestiblePosition(note.position);
  if (s.applied) return "Can't apply this suggestion.";
  if (ctx.state === 'merged') return 'This merge request was merged. To apply this suggestion, edit this file directly.';
  if (ctx.state === 'closed') return 'This merge request is closed. To apply this suggestion, edit this file directly.';
  if (!ctx.sourceBranchExists) return "Can't apply as the source branch was deleted.";
  if (s.lines_above > MAX_LINES_CONTEXT || s.lines_below > MAX_LINES_CONTEXT) return `Cannot apply as this suggestion spans more than ${MAX_LINES_CONTEXT} lines.`;
  const range = p && suggestionRange(p.new_line, s.lines_above, s.lines_below);
  const outdated = !p || !!note.outdated || (current !== undefined && linesBetween(current, range!.fromLine, range!.toLine) !== s.from_content);
  if (outdated) {
    return s.lines_above === 0 && s.lines_below === 0
      ? "Can't apply as this line was changed in a more recent version."
      : "Can't apply as these lines were changed in a more recent version.";
  }
  if (s.from_content === s.to_content) return 'This suggestion already matches its content.';
  if (p.new_path.endsWith('ipynb')) return "This file was modified for readability, and can't accept suggestions. Edit it directly.";
  return null;
}

/** The suggestions of a page of a merge request's notes as the note entity shows them. */
export function suggestionViews(rows: SuggestionRow[], note: NoteRow, ctx: SuggestionContext): SuggestionView[] {
  const p = suggestiblePosition(note.position);
  return rows.map((row) => {
    const range = p ? suggestionRange(p.new_line, row.lines_above, row.lines_below) : { fromLine: 0, toLine: 0 };
    return { row, ...range, applicable: inapplicableReason(row, note, ctx) === null };
  });
}

/** The suggestions of these diff notes of a merge request, as shown in the note entity. */
export async function noteSuggestions(deps: ServiceDeps, mergeRequestId: number, notes: NoteRow[]): Promise<Map<number, SuggestionView[]>> {
  const rows = await suggestionsOfNotes(deps.db, notes.map((n) => n.id));
  const out = new Map<number, SuggestionView[]>();
  if (!rows.size) return out;
  const mr = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', mergeRequestId).executeTakeFirst();
  if (!mr) return out;
  const ctx = await suggestionContext(deps, mr);
  for (const n of notes) if (rows.has(n.id)) out.set(n.id, suggestionViews(rows.get(n.id)!, n, ctx));
  return out;
}

async function sourceBranchHead(deps: ServiceDeps, mr: MergeRequestRow): Promise<string | null> {
  if (mr.source_project_id === null) return null;
  const source = await liveProjectById(deps, mr.source_project_id);
  return source ? repoFor(deps.config, source).resolveCommit(`refs/heads/${mr.source_branch}`) : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Applying

const NOT_FOUND_ONE = 'Suggestion is not applicable as the suggestion was not found.';
const NOT_FOUND_MANY = 'Suggestions are not applicable as one or more suggestions were not found.';

interface Loaded {
  suggestion: SuggestionRow;
  note: NoteRow;
  mr: MergeRequestRow;
}

/**
 * Finds the suggestions by id for the caller: a missing one, or one on a merge request the caller cannot read, is
 * the reference's 404 sentence; then each needs the right to push to its merge request's source branch (403).
 */
async function loadForApply(deps: ServiceDeps, actor: Actor, ids: number[], single: boolean): Promise<Loaded[]> {
  const notFound = () => new RuleError('not_found', single ? NOT_FOUND_ONE : NOT_FOUND_MANY);
  if (!ids.length || ids.some((id) => !fitsIntColumn(id))) throw notFound();
  const rows = await deps.db.selectFrom('suggestions').selectAll().where('id', 'in', ids).orderBy('id').execute();
  if (rows.length !== ids.length) throw notFound();
  const notes = await deps.db.selectFrom('notes').selectAll().where('id', 'in', [...new Set(rows.map((r) => r.note_id))]).execute();
  const mrIds = [...new Set(notes.filter((n) => n.noteable_type === 'MergeRequest').map((n) => n.noteable_id))];
  const mrs = mrIds.length ? await deps.db.selectFrom('merge_requests').selectAll().where('id', 'in', mrIds).execute() : [];
  const loaded: Loaded[] = [];
  for (const suggestion of rows) {
    const note = notes.find((n) => n.id === suggestion.note_id);
    const mr = note && mrs.find((m) => m.id === note.noteable_id);
    if (!note || !mr) throw notFound();
    const project = await liveProjectById(deps, mr.target_project_id);
    if (!project) throw notFound();
    const level = await levelIn(deps.db, actor, project);
    if (await mergeRequestDenialFor(deps.db, { actor, project, level }, mr, 'read_merge_request')) throw notFound();
    loaded.push({ suggestion, note, mr });
  }
  for (const l of loaded) if (!(await canPushSource(deps, actor, l.mr))) throw new ForbiddenError();
  return loaded;
}

interface FileUpdate {
  path: string;
  content: string;
  items: Loaded[];
}

/**
 * The reference's SuggestionSet checks, in its order, against the source branch as it is now: each suggestion's
 * file, its branch, whether it can be applied (re-read, not cached), whether its note is on the branch head; then
 * overlaps. Returns the new content of each file.
 */
async function checkSet(loaded: Loaded[], repo: Repository, head: string | null): Promise<FileUpdate[]> {
  const first = loaded[0].mr;
  const files = new Map<string, FileUpdate>();
  const bad = (text: string) => new RuleError('bad_request', text);
  for (const l of loaded) {
    const p = suggestiblePosition(l.note.position);
    const blob = p ? await repo.blob(p.head_sha, p.new_path) : null;
    if (!p || !blob) throw bad('A file was not found.');
    if (l.mr.source_project_id !== first.source_project_id || l.mr.source_branch !== first.source_branch) throw bad('Suggestions must all be on the same branch.');
    const content = blob.content.toString('utf8');
    const reason = inapplicableReason(l.suggestion, l.note, { state: l.mr.state, sourceBranchExists: head !== null }, content);
    if (reason) throw bad(reason);
    if (p.head_sha !== head) throw bad('A file has been changed.');
    const file = files.get(p.new_path) ?? { path: p.new_path, content, items: [] };
    file.items.push(l);
    files.set(p.new_path, file);
  }
  const updates = [...files.values()];
  const ranges = (f: FileUpdate) => f.items.map((l) => {
    const p = suggestiblePosition(l.note.position)!;
    return { ...suggestionRange(p.new_line, l.suggestion.lines_above, l.suggestion.lines_below), toContent: l.suggestion.to_content };
  });
  if (updates.some((f) => overlapping(ranges(f)))) throw bad('Suggestions are not applicable as their lines cannot overlap.');
  return updates.map((f) => ({ ...f, content: applyReplacements(f.content, ranges(f)) }));
}

/**
 * Applies suggestions as one commit on their merge request's source branch (in the source project): one update per
 * file, by the suggestions' author when they all have one (the caller commits), the message from `commitMessage`,
 * else the project's template, else the reference's default. The branch moves by compare-and-swap from the head the
 * notes are on, so of two concurrent applies only one lands. Then the suggestions are applied, their threads
 * resolved by the caller, and the merge request follows its branch (a new diff version).
 */
export async function applySuggestions(deps: ServiceDeps, actor: Actor, ids: number[], commitMessage: string | undefined, single: boolean): Promise<SuggestionRow[]> {
  if (!actor.user) throw new ForbiddenError();
  const user = actor.user;
  const unique = [...new Set(ids)];
  // A repeated id finds fewer rows than asked for, as the reference counts them.
  if (unique.length !== ids.length) throw new RuleError('not_found', single ? NOT_FOUND_ONE : NOT_FOUND_MANY);
  const loaded = await loadForApply(deps, actor, unique, single);
  const firstMr = loaded[0].mr;
  const source = await liveProjectById(deps, firstMr.source_project_id!);
  const target = await liveProjectById(deps, firstMr.target_project_id);
  if (!source || !target) throw new ForbiddenError();
  const repo = repoFor(deps.config, source);
  const authors = await usersByIds(deps, [...new Set(loaded.map((l) => l.note.author_id).filter((id): id is number => id !== null))]);
  return serialised(repo.path, async () => {
    // Read again under the repository's writer queue: an apply that went first has moved the branch or applied these.
    const fresh = await loadForApply(deps, actor, unique, single);
    const head = await repo.resolveCommit(`refs/heads/${firstMr.source_branch}`);
    const updates = await checkSet(fresh, repo, head);
    const coAuthors = [...authors.values()].filter((a) => a.id !== user.id).map((a) => ({ name: a.name, email: a.email }));
    const message = suggestionCommitMessage(commitMessage?.trim() ? commitMessage : storedSettings(target).suggestion_commit_message as string | null, {
      branch_name: firstMr.source_branch, files_count: updates.length, file_paths: updates.map((u) => u.path),
      project_name: target.name, project_path: target.path, user_full_name: user.name, username: user.username,
      suggestions_count: fresh.length, co_authors: coAuthors,
    });
    const date = new Date(deps.clock.now());
    const committer = { name: user.name, email: user.email, date };
    const only = authors.size === 1 ? [...authors.values()][0] : null;
    let sha: string;
    try {
      ({ sha } = await repo.createCommit({
        branch: firstMr.source_branch, expectedOldSha: head, message, committer,
        author: only ? { name: only.name, email: only.email, date } : committer,
        actions: updates.map((u) => ({ action: 'update' as const, file_path: u.path, content: u.content })),
      }));
    } catch (e) {
      if (e instanceof RefMovedError) throw new RuleError('bad_request', 'A file has been changed.');
      throw e;
    }
    const now = deps.clock.now();
    const applied = await deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('suggestions').set({ applied: 1, commit_id: sha, updated_at: now }).where('id', 'in', unique).execute();
      await trx.updateTable('notes').set({ resolved_at: now, resolved_by_id: user.id })
        .where('discussion_id', 'in', [...new Set(fresh.map((l) => l.note.discussion_id))]).where('resolvable', '=', 1).where('resolved_at', 'is', null).execute();
      return trx.selectFrom('suggestions').selectAll().where('id', 'in', unique).orderBy('id').execute();
    });
    await afterRefsChanged(deps, source, repo, [`refs/heads/${firstMr.source_branch}`], user.id);
    return unique.map((id) => applied.find((r) => r.id === id)!);
  });
}

/** Suggestions with the lines they cover and whether they can still be applied, for the apply answers. */
export async function presentableSuggestions(deps: ServiceDeps, rows: SuggestionRow[]): Promise<SuggestionView[]> {
  const notes = rows.length ? await deps.db.selectFrom('notes').selectAll().where('id', 'in', rows.map((r) => r.note_id)).execute() : [];
  const mrs = notes.length ? await deps.db.selectFrom('merge_requests').selectAll().where('id', 'in', notes.map((n) => n.noteable_id)).execute() : [];
  const contexts = new Map<number, SuggestionContext>();
  for (const mr of mrs) contexts.set(mr.id, await suggestionContext(deps, mr));
  return rows.map((r) => {
    const note = notes.find((n) => n.id === r.note_id)!;
    return suggestionViews([r], note, contexts.get(note.noteable_id) ?? { state: 'closed', sourceBranchExists: false })[0];
  });
}
