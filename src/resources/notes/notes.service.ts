import { randomBytes } from 'node:crypto';
import { emitEvent } from '../../platform/events.ts';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { DB } from '../../platform/db/schema.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { noteDenial, type NoteAction, type PolicyProject } from '../../platform/access/policy.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../platform/errors.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';
import { checkSpam } from '../../platform/spam/spam-check.ts';
import type { NoteRow } from './notes.presenter.ts';

// Notes and discussions over any noteable (issues, commits; merge requests and their diff threads use the same rows).
// A commit has no row: its notes carry `noteable_id` 0 with the project and the commit's sha (`commit_id`).
// A note belongs to one discussion (`discussion_id`): an individual note has one of its own, a thread's notes share
// it. Who may read the noteable is decided before these functions run, by the noteable's own ability.

export type NoteableType = 'Issue' | 'MergeRequest' | 'Commit' | 'Snippet' | 'AlertManagement::Alert';

/** The table whose `updated_at` a new note moves (the reference touches the noteable). */
const NOTEABLE_TABLE: Record<NoteableType, 'issues' | 'merge_requests' | 'snippets' | null> = {
  Issue: 'issues', MergeRequest: 'merge_requests', Commit: null, Snippet: 'snippets', 'AlertManagement::Alert': null,
};

export interface Noteable {
  type: NoteableType;
  id: number;
  iid: number;
  projectId: number;
  /** Its discussion is locked: only project members may comment. */
  locked: boolean;
  /** A commit's full sha (`id` is then 0). */
  commitId?: string;
  /** Its author (who may resolve its threads). */
  authorId?: number | null;
}

/** Noteables whose threads can be resolved: their discussion and diff notes are resolvable (the reference's). */
const RESOLVABLE_NOTEABLES: ReadonlySet<NoteableType> = new Set(['MergeRequest']);
const resolvableType = (n: Noteable, type: string | null) => RESOLVABLE_NOTEABLES.has(n.type) && (type === 'DiscussionNote' || type === 'DiffNote');

/** Where on a diff a new diff note is written, as the noteable's diff rules checked it (merge-requests/positions.ts). */
export interface DiffPlacement {
  /** The position as JSON, kept as written (also its `original_position`). */
  position: string;
  lineCode: string | null;
  commitId?: string | null;
}

/** A noteable as one caller sees it: the project's state and the caller's role there decide the note rules. */
export interface NoteScope {
  noteable: Noteable;
  project: PolicyProject;
  /** The caller's effective role in the project (0: none). */
  level: number;
  actor: Actor;
}

const MAX_BODY = 1_000_000;

const can = (s: NoteScope, action: NoteAction, note?: NoteRow) =>
  !noteDenial(s.actor, action, s.project, s.level, {
    locked: s.noteable.locked, note: note && { authorId: note.author_id, system: !!note.system }, noteableAuthorId: s.noteable.authorId,
  });

function demand(s: NoteScope, action: NoteAction, note?: NoteRow): void {
  if (!can(s, action, note)) throw new ForbiddenError();
}

/** The reference reports a refused note body as "Note {<attribute> => [<messages>]}" in a 400. */
function checkBody(body: string): void {
  const problem = body.trim() === '' ? "can't be blank" : body.length > MAX_BODY ? `is too long (maximum is ${MAX_BODY} characters)` : null;
  if (problem) throw new BadRequestError(`Note {:note=>["${problem}"]}`);
}

export const newDiscussionId = () => randomBytes(20).toString('hex');

/** The notes of the noteable this caller may read: internal ones for Reporters and up only. */
function readable(db: Db, s: NoteScope): SelectQueryBuilder<DB, 'notes', NoteRow> {
  let q = db.selectFrom('notes').selectAll()
    .where('noteable_type', '=', s.noteable.type).where('noteable_id', '=', s.noteable.id);
  if (s.noteable.commitId !== undefined) q = q.where('project_id', '=', s.noteable.projectId).where('commit_id', '=', s.noteable.commitId);
  if (!can(s, 'read_internal')) q = q.where('internal', '=', 0);
  return q;
}

export type ActivityFilter = 'all_notes' | 'only_comments' | 'only_activity';

/** `GET .../notes`: newest first unless asked otherwise, id as the tie-breaker. */
export function notesQuery(db: Db, s: NoteScope, o: { orderBy: 'created_at' | 'updated_at'; sort: 'asc' | 'desc'; filter: ActivityFilter }) {
  let q = readable(db, s);
  if (o.filter === 'only_comments') q = q.where('system', '=', 0);
  if (o.filter === 'only_activity') q = q.where('system', '=', 1);
  return q.orderBy(o.orderBy, o.sort).orderBy('id', o.sort);
}

/** One readable note of the noteable; anything else (another noteable's, internal to this caller) is 404 Note. */
export async function getNote(db: Db, s: NoteScope, noteId: number): Promise<NoteRow> {
  const row = fitsIntColumn(noteId) ? await readable(db, s).where('id', '=', noteId).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError('Note');
  return row;
}

/** The discussions of the noteable, in the order their first notes were written (for pagination). */
export function discussionsQuery(db: Db, s: NoteScope) {
  return readable(db, s).clearSelect().select(['discussion_id', sql<number>`min(id)`.as('first_id')])
    .groupBy('discussion_id').orderBy('first_id', 'asc');
}

/** The readable notes of these discussions, oldest first, grouped by discussion. */
export async function notesOfDiscussions(db: Db, s: NoteScope, ids: string[]): Promise<Map<string, NoteRow[]>> {
  const out = new Map<string, NoteRow[]>(ids.map((id) => [id, []]));
  if (!ids.length) return out;
  const rows = await readable(db, s).where('discussion_id', 'in', ids).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  for (const r of rows) out.get(r.discussion_id)!.push(r);
  return out;
}

/** One discussion's readable notes; none is 404 `thing` ("Discussion", or "Notes" when its notes were asked for). */
export async function getDiscussion(db: Db, s: NoteScope, discussionId: string, thing = 'Discussion'): Promise<NoteRow[]> {
  const notes = /^[0-9a-f]{40}$/.test(discussionId) ? (await notesOfDiscussions(db, s, [discussionId])).get(discussionId)! : [];
  if (!notes.length) throw new NotFoundError(thing);
  return notes;
}

export interface NoteInput {
  body: string;
  internal?: boolean;
  /** Honoured for project owners and administrators only, as the reference does. */
  createdAt?: number;
  /** The diff line of a commit the note is on (the reference's legacy diff notes on commits). */
  diffLine?: CommitDiffLine;
  /** A diff note's place on a merge request's diff. */
  diff?: DiffPlacement;
  /** What the body derives (a merge-request diff note's suggestions), written in the note's transaction. */
  derive?: NoteDerivation;
}

/** Rows a note's body derives, read before its transaction and written inside it once the note row is known. */
export type NoteDerivation = (trx: Db, note: NoteRow) => Promise<void>;

/** A line of a commit's diff: its file, its number on the side `line_type` names ('new' or 'old'). */
export interface CommitDiffLine {
  path: string;
  line: number;
  line_type: 'new' | 'old';
}

/**
 * Writes a note by the caller: an individual note, the first note of a new discussion (`thread: true`), or a reply
 * to a discussion (`replyTo`). Replying to an individual note turns it into a discussion, as the reference does
 * for issues and merge requests; a reply to an internal thread is internal.
 */
export async function createNote(deps: ServiceDeps, s: NoteScope, input: NoteInput, where: { thread?: boolean; replyTo?: NoteRow[] } = {}): Promise<NoteRow> {
  demand(s, 'create');
  checkBody(input.body);
  if (input.internal && !where.replyTo) demand(s, 'mark_internal');
  const now = deps.clock.now();
  const at = input.createdAt !== undefined && can(s, 'set_created_at') ? input.createdAt : now;
  const first = where.replyTo?.[0];
  // A reply in a diff thread is a diff note on the same lines.
  const diff: DiffPlacement | undefined = first?.type === 'DiffNote'
    ? { position: first.position!, lineCode: first.line_code, commitId: first.commit_id }
    : first ? undefined : input.diff;
  const type = input.diffLine ? 'LegacyDiffNote' : diff ? 'DiffNote' : first || where.thread ? 'DiscussionNote' : null;
  await checkSpam(deps, s.actor, { kind: 'Note', project: s.project, level: s.level, noteable: s.noteable, internal: !!(first ? first.internal : input.internal), before: null, change: input });
  return deps.db.transaction().execute(async (trx) => {
    if (first && first.type === null) {
      await trx.updateTable('notes').set({ type: 'DiscussionNote', resolvable: resolvableType(s.noteable, 'DiscussionNote') ? 1 : 0 })
        .where('discussion_id', '=', first.discussion_id).where('type', 'is', null).execute();
    }
    const row = await trx.insertInto('notes').values({
      noteable_type: s.noteable.type, noteable_id: s.noteable.id, project_id: s.noteable.projectId, author_id: s.actor.user!.id,
      body: input.body, type, system: 0,
      commit_id: s.noteable.commitId ?? diff?.commitId ?? null, position: input.diffLine ? JSON.stringify(input.diffLine) : diff?.position ?? null,
      original_position: diff ? (first?.original_position ?? diff.position) : null, line_code: diff?.lineCode ?? null,
      outdated: first?.outdated ?? 0, resolvable: resolvableType(s.noteable, type) ? 1 : 0,
      internal: (first ? first.internal : input.internal) ? 1 : 0,
      discussion_id: first?.discussion_id ?? newDiscussionId(), created_at: at, updated_at: at,
    }).returningAll().executeTakeFirstOrThrow();
    await input.derive?.(trx, row);
    await touchNoteable(trx, s.noteable, now);
    if (row.project_id !== null) await emitEvent(deps, trx, { type: 'note', action: 'create', projectId: row.project_id, noteId: row.id, actorId: s.actor.user!.id });
    return row;
  });
}

/**
 * Resolves (or reopens) a thread's resolvable notes: by the noteable's author or whoever the policy lets resolve
 * notes; 403 for a thread that cannot be resolved, as the reference's `can_resolve?`.
 */
export async function resolveDiscussion(deps: ServiceDeps, s: NoteScope, notes: NoteRow[], resolved: boolean): Promise<NoteRow[]> {
  if (!notes.some((n) => n.resolvable)) throw new ForbiddenError();
  demand(s, 'resolve');
  const now = deps.clock.now();
  await deps.db.updateTable('notes')
    .set(resolved ? { resolved_at: now, resolved_by_id: s.actor.user!.id } : { resolved_at: null, resolved_by_id: null })
    .where('discussion_id', '=', notes[0].discussion_id).where('id', 'in', notes.map((n) => n.id)).where('resolvable', '=', 1)
    .where('resolved_at', resolved ? 'is' : 'is not', null).execute();
  return deps.db.selectFrom('notes').selectAll().where('id', 'in', notes.map((n) => n.id)).orderBy('created_at').orderBy('id').execute();
}

/** Resolves or reopens one note: 403 without the right, then "400 Note is not resolvable" as the reference. */
export async function resolveNote(deps: ServiceDeps, s: NoteScope, note: NoteRow, resolved: boolean): Promise<NoteRow> {
  demand(s, 'resolve');
  if (!note.resolvable) throw new BadRequestError('Note is not resolvable');
  if (resolved === (note.resolved_at !== null)) return note;
  return deps.db.updateTable('notes')
    .set(resolved ? { resolved_at: deps.clock.now(), resolved_by_id: s.actor.user!.id } : { resolved_at: null, resolved_by_id: null })
    .where('id', '=', note.id).returningAll().executeTakeFirstOrThrow();
}

/** Edits a note's body; what the old body derived is replaced by what the new one derives (`derive`), in one transaction. */
export async function updateNote(deps: ServiceDeps, s: NoteScope, note: NoteRow, body: string, derive?: NoteDerivation): Promise<NoteRow> {
  demand(s, 'admin', note);
  checkBody(body);
  if (body === note.body) return note;
  await checkSpam(deps, s.actor, { kind: 'Note', project: s.project, level: s.level, noteable: s.noteable, internal: !!note.internal, before: note, change: { body } });
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('notes').set({ body, updated_at: deps.clock.now() }).where('id', '=', note.id).returningAll().executeTakeFirstOrThrow();
    if (row.project_id !== null) await emitEvent(deps, trx, { type: 'note', action: 'update', projectId: row.project_id, noteId: row.id, actorId: s.actor.user!.id });
    await derive?.(trx, row);
    return row;
  });
}

export async function deleteNote(deps: ServiceDeps, s: NoteScope, note: NoteRow): Promise<void> {
  demand(s, 'admin', note);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', '=', note.id).execute();
    await trx.deleteFrom('notes').where('id', '=', note.id).execute();
  });
}

/**
 * A note the server writes about a change to the noteable ("closed", "added ~3 label", ...), by the user who made
 * the change, inside the transaction that makes it. System notes are individual notes, never count as user notes,
 * and can be neither edited nor deleted.
 */
export async function writeSystemNote(trx: Db, noteable: Noteable, authorId: number | null, body: string, at: number): Promise<void> {
  await trx.insertInto('notes').values({
    noteable_type: noteable.type, noteable_id: noteable.id, project_id: noteable.projectId, author_id: authorId,
    body, type: null, system: 1, internal: 0, discussion_id: newDiscussionId(), created_at: at, updated_at: at,
  }).execute();
}

/**
 * Copies every note of one noteable to another (a moved issue): system notes included, each discussion keeping its
 * notes together under a new id, authors and times kept, and each note's award emoji along with it.
 */
export async function copyNotes(trx: Db, from: Pick<Noteable, 'type' | 'id'>, to: Pick<Noteable, 'type' | 'id' | 'projectId'>): Promise<void> {
  const notes = await trx.selectFrom('notes').selectAll().where('noteable_type', '=', from.type).where('noteable_id', '=', from.id).orderBy('id').execute();
  if (!notes.length) return;
  const discussions = new Map<string, string>();
  const copies = new Map<number, number>();
  for (const { id, ...note } of notes) {
    if (!discussions.has(note.discussion_id)) discussions.set(note.discussion_id, newDiscussionId());
    const copy = await trx.insertInto('notes').values({
      ...note, noteable_type: to.type, noteable_id: to.id, project_id: to.projectId, discussion_id: discussions.get(note.discussion_id)!,
    }).returning('id').executeTakeFirstOrThrow();
    copies.set(id, copy.id);
  }
  const awards = await trx.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Note').where('awardable_id', 'in', [...copies.keys()]).orderBy('id').execute();
  if (awards.length) {
    await trx.insertInto('award_emoji').values(awards.map(({ id: _id, ...a }) => ({ ...a, awardable_id: copies.get(a.awardable_id)! }))).execute();
  }
}

async function touchNoteable(trx: Db, n: Noteable, at: number): Promise<void> {
  const table = NOTEABLE_TABLE[n.type];
  if (table) await trx.updateTable(table).set({ updated_at: at }).where('id', '=', n.id).execute();
}

/** How many user (not system) notes each noteable has, for the noteables' `user_notes_count`. */
export async function userNotesCounts(db: Db, type: NoteableType, ids: number[]): Promise<Map<number, number>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('notes').select(['noteable_id', sql<number>`count(*)`.as('n')])
    .where('noteable_type', '=', type).where('noteable_id', 'in', ids).where('system', '=', 0)
    .groupBy('noteable_id').execute();
  return new Map(rows.map((r) => [r.noteable_id, Number(r.n)]));
}
