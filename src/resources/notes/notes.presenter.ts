import type { Selectable } from 'kysely';
import type { NotesTable } from '../../platform/db/schema.ts';
import type { User } from '../users/users.service.ts';
import { iso } from '../../http/format.ts';
import { userBasic } from '../users/users.presenter.ts';

// Note and Discussion entities, field order as the reference's.

export type NoteRow = Selectable<NotesTable>;

export interface NotePresentation {
  base: string;
  users: Map<number, User>;
  /** The noteable's iid (issues and merge requests have one). */
  noteableIid: number | null;
  /** Merge-request diff notes: each note's suggestions as entities. */
  suggestions?: Map<number, unknown[]>;
}

const person = (id: number | null, pres: NotePresentation) => {
  const u = id === null ? undefined : pres.users.get(id);
  return u ? userBasic(u, pres.base) : null;
};

export function note(n: NoteRow, pres: NotePresentation): Record<string, unknown> {
  const diff = n.type === 'DiffNote';
  const resolvable = !!n.resolvable;
  return {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: person(n.author_id, pres),
    created_at: iso(n.created_at),
    updated_at: iso(n.updated_at),
    system: !!n.system,
    noteable_id: n.noteable_id,
    noteable_type: n.noteable_type,
    project_id: n.project_id,
    commit_id: diff && n.noteable_type === 'MergeRequest' ? n.commit_id : undefined,
    position: diff && n.position ? JSON.parse(n.position) : undefined,
    resolvable,
    resolved: resolvable ? n.resolved_at !== null : undefined,
    resolved_by: resolvable ? person(n.resolved_by_id, pres) : undefined,
    resolved_at: resolvable ? iso(n.resolved_at) : undefined,
    suggestions: diff && n.noteable_type === 'MergeRequest' ? (pres.suggestions?.get(n.id) ?? []) : undefined,
    confidential: !!n.internal,
    internal: !!n.internal,
    noteable_iid: pres.noteableIid,
    commands_changes: {},
  };
}

/** A comment on a commit (the reference's CommitNote): its diff line when it is on one. */
export function commitNote(n: NoteRow, pres: NotePresentation): Record<string, unknown> {
  const at = n.type === 'LegacyDiffNote' && n.position ? JSON.parse(n.position) as { path: string; line: number; line_type: string } : null;
  return {
    note: n.body,
    path: at?.path ?? null,
    line: at?.line ?? null,
    line_type: at?.line_type ?? null,
    author: person(n.author_id, pres),
    created_at: iso(n.created_at),
  };
}

/** A thread: its notes oldest first; a lone note that is not a discussion note is an individual note. */
export function discussion(id: string, notes: NoteRow[], pres: NotePresentation): Record<string, unknown> {
  return {
    id,
    individual_note: notes.length === 1 && notes[0].type === null,
    notes: notes.map((n) => note(n, pres)),
  };
}

/** The ids of the people a presentation of these notes names. */
export function peopleOf(notes: NoteRow[]): number[] {
  const ids = new Set<number>();
  for (const n of notes) {
    if (n.author_id !== null) ids.add(n.author_id);
    if (n.resolved_by_id !== null) ids.add(n.resolved_by_id);
  }
  return [...ids];
}
