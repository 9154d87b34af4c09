import { createHash } from 'node:crypto';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import { BadRequestError } from '../../platform/errors.ts';
import { isFullSha } from '../../platform/git/refs.ts';
import type { DiffFile, Repository } from '../../platform/git/repository.ts';
import type { DiffPlacement } from '../notes/notes.service.ts';
import { diffBetween, diffFrom, type DiffVersionRow } from './diffs.service.ts';
import { repoFor, type MergeRequestRow } from './merge-requests.service.ts';

// Diff note positions: where on a merge request's diff a thread is written (the reference's Gitlab::Diff::Position
// of type text), checked against the diff git computes at the position's commits, and moved along when a push
// makes a new version (or marked outdated when the push changed the lines it was on).

export interface LineRangeEnd { line_code?: string; type?: string | null; old_line?: number | string | null; new_line?: number | string | null }

/** A position as clients send it and as the note entity shows it (the reference's `position.to_h`, same order). */
export interface Position {
  base_sha: string | null;
  start_sha: string | null;
  head_sha: string | null;
  old_path: string | null;
  new_path: string | null;
  position_type: 'text' | 'image';
  old_line?: number | null;
  new_line?: number | null;
  line_range?: { start?: LineRangeEnd; end?: LineRangeEnd } | null;
  width?: number | null;
  height?: number | null;
  x?: number | null;
  y?: number | null;
}

/** One line of a patch: `old` removed, `new` added, null unchanged; both counters as git numbers them there. */
export interface DiffLine { type: 'old' | 'new' | null; oldPos: number; newPos: number }

/** The lines of a unified patch (hunk headers and "\ No newline" markers left out). */
export function diffLines(patch: string): DiffLine[] {
  const out: DiffLine[] = [];
  let oldPos = 0;
  let newPos = 0;
  for (const line of patch.split('\n')) {
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (h) { oldPos = Number(h[1]); newPos = Number(h[2]); continue; }
    if (line.startsWith('+')) out.push({ type: 'new', oldPos, newPos: newPos++ });
    else if (line.startsWith('-')) out.push({ type: 'old', oldPos: oldPos++, newPos });
    else if (line.startsWith(' ')) out.push({ type: null, oldPos: oldPos++, newPos: newPos++ });
  }
  return out;
}

/** The reference's line code: the file path's SHA-1, then the line's old and new numbers. */
export const lineCode = (path: string, oldPos: number, newPos: number) => `${createHash('sha1').update(path).digest('hex')}_${oldPos}_${newPos}`;

/** The file of a diff a position names (by its new path, else its old path). */
export function fileFor(files: readonly DiffFile[], p: Pick<Position, 'old_path' | 'new_path'>): DiffFile | undefined {
  return files.find((f) => (p.new_path && f.new_path === p.new_path) || (!p.new_path && p.old_path && f.old_path === p.old_path));
}

/**
 * The diff line a text position is on: an added line names only `new_line`, a removed one only `old_line`, an
 * unchanged one both (as the reference's `line_for_position`).
 */
export function lineFor(file: DiffFile, p: Pick<Position, 'old_line' | 'new_line'>): DiffLine | undefined {
  const oldLine = p.old_line ?? null;
  const newLine = p.new_line ?? null;
  if (oldLine === null && newLine === null) return undefined;
  return diffLines(file.diff).find((l) =>
    (l.type === 'new' ? null : l.oldPos) === oldLine && (l.type === 'old' ? null : l.newPos) === newLine);
}

const complete = (p: Position) =>
  !!p.base_sha && !!p.start_sha && !!p.head_sha && !!(p.old_path || p.new_path) &&
  (p.position_type === 'image' ? [p.x, p.y, p.width, p.height].every((v) => typeof v === 'number') : (p.old_line ?? p.new_line) != null);

/** The position as stored and shown: the reference's keys in its order, text and image fields as its formatters give them. */
export function normalisePosition(input: Position): Position {
  const base = {
    base_sha: input.base_sha ?? null, start_sha: input.start_sha ?? null, head_sha: input.head_sha ?? null,
    old_path: input.old_path ?? null, new_path: input.new_path ?? null, position_type: input.position_type,
  };
  if (input.position_type === 'image') return { ...base, width: input.width ?? null, height: input.height ?? null, x: input.x ?? null, y: input.y ?? null };
  return { ...base, old_line: input.old_line ?? null, new_line: input.new_line ?? null, line_range: lineRange(input.line_range) };
}

/** A line range's ends with their line numbers as numbers (null when not given), whatever form they came in. */
function lineRange(r: Position['line_range']): Position['line_range'] {
  if (!r) return null;
  const num = (v: unknown) => (v === null || v === undefined || v === '' ? null : /^\d+$/.test(String(v)) ? Number(v) : null);
  const end = (e: LineRangeEnd | undefined) => e && { line_code: e.line_code, type: e.type ?? null, old_line: num(e.old_line), new_line: num(e.new_line) };
  return { start: end(r.start), end: end(r.end) };
}

/**
 * Checks a new diff note's position against the diff of its own commits and returns what the note keeps. The
 * reference's refusal (its model errors in a 400): no such line gives no line code, an incomplete position says so.
 */
export async function placeDiffNote(deps: ServiceDeps, repo: Repository, input: Position): Promise<DiffPlacement> {
  const position = normalisePosition(input);
  const errors: string[] = [];
  let code: string | null = null;
  const shas = [position.base_sha, position.start_sha, position.head_sha];
  const file = shas.every((s) => s && isFullSha(s)) ? fileFor(await diffOrNone(deps, repo, position), position) : undefined;
  if (file && position.position_type === 'text') {
    const line = lineFor(file, position);
    if (line) code = lineCode(file.new_path, line.oldPos, line.newPos);
  }
  if (position.position_type === 'text' && !code) errors.push(`:line_code=>["can't be blank", "must be a valid line code"]`);
  if (!complete(position) || (position.position_type === 'image' && !file)) errors.push(':position=>["is incomplete"]');
  if (errors.length) throw new BadRequestError(`Note {${errors.join(', ')}}`);
  return { position: JSON.stringify(position), lineCode: code };
}

async function diffOrNone(deps: ServiceDeps, repo: Repository, p: Position): Promise<readonly DiffFile[]> {
  try {
    return await diffBetween(deps, repo, diffFrom({ base_commit_sha: p.base_sha, start_commit_sha: p.start_sha })!, p.head_sha!);
  } catch {
    return []; // commits the repository does not have
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A push: new versions move the diff notes along

/**
 * Where `line` (a line number on one side of a file) is after a change whose patch is `patch`: shifted past the
 * hunks before it, or null when the change removed or rewrote it.
 */
export function traceLine(patch: string, line: number): number | null {
  let shift = 0;
  for (const l of diffLines(patch)) {
    if (l.type === 'old' && l.oldPos === line) return null;
    if (l.type !== 'new' && l.oldPos >= line) break;
    if (l.type === 'new') shift++;
    else if (l.type === 'old') shift--;
  }
  return line + shift;
}

function traceSide(files: readonly DiffFile[], path: string | null, line: number | null | undefined): { line: number | null; path: string | null } | null {
  if (line == null || path === null) return { line: line ?? null, path };
  const f = files.find((x) => x.old_path === path);
  if (!f) return { line, path };
  if (f.deleted_file || f.too_large) return null;
  const traced = traceLine(f.diff, line);
  return traced === null ? null : { line: traced, path: f.new_path };
}

/**
 * Marks the merge request's diff notes written on lines a new version changed as outdated (keeping where the change
 * happened in `change_position`, on the diff between the two heads, as the reference does) and moves every other
 * active diff note to the new version's commits, its lines shifted by what the push added or removed above them.
 * Called where a push records a new version, inside that transaction (`trx`), after the version row is written.
 */
export async function markOutdatedDiffNotes(
  deps: ServiceDeps, trx: Db | undefined, mr: MergeRequestRow, oldVersion: DiffVersionRow, newVersion: DiffVersionRow,
): Promise<number> {
  const db = trx ?? deps.db;
  // Read through `db`: inside the caller's transaction another connection's read could wait on it.
  const project = await db.selectFrom('projects').select(['id', 'repository_storage']).where('id', '=', mr.target_project_id).executeTakeFirst();
  if (!project) return 0;
  const repo = repoFor(deps.config, project);
  const notes = await db.selectFrom('notes').select(['id', 'position', 'line_code', 'discussion_id']).where('noteable_type', '=', 'MergeRequest')
    .where('noteable_id', '=', mr.id).where('type', '=', 'DiffNote').where('outdated', '=', 0).execute();
  if (!notes.length || !oldVersion.head_commit_sha || !newVersion.head_commit_sha || oldVersion.head_commit_sha === newVersion.head_commit_sha) return 0;
  const oldHead = oldVersion.head_commit_sha;
  const newHead = newVersion.head_commit_sha;
  const headChange = await diffBetween(deps, repo, oldHead, newHead);
  const oldBase = diffFrom(oldVersion);
  const newBase = diffFrom(newVersion);
  const baseChange = oldBase && newBase && oldBase !== newBase ? await diffBetween(deps, repo, oldBase, newBase) : [];
  let outdated = 0;
  const now = deps.clock.now();
  for (const n of notes) {
    const p = JSON.parse(n.position ?? 'null') as Position | null;
    if (!p || p.position_type !== 'text') continue;
    const side = traceSide(headChange, p.new_path, p.new_line);
    const oldSide = traceSide(baseChange, p.old_path, p.old_line);
    if (!side || !oldSide) {
      const changed = fileFor(headChange, { old_path: p.new_path, new_path: null });
      const change: Position = {
        base_sha: oldHead, start_sha: oldHead, head_sha: newHead, old_path: p.new_path, new_path: changed?.new_path ?? p.new_path,
        position_type: 'text', old_line: p.new_line ?? null, new_line: null, line_range: null,
      };
      await db.updateTable('notes').set({ outdated: 1, change_position: JSON.stringify(change), updated_at: now }).where('id', '=', n.id).execute();
      outdated++;
      continue;
    }
    const moved: Position = {
      ...p, base_sha: newVersion.base_commit_sha ?? newVersion.start_commit_sha, start_sha: newVersion.start_commit_sha, head_sha: newHead,
      old_path: oldSide.path, new_path: side.path, old_line: oldSide.line, new_line: side.line,
    };
    await db.updateTable('notes').set({ position: JSON.stringify(normalisePosition(moved)) }).where('id', '=', n.id).execute();
  }
  return outdated;
}
