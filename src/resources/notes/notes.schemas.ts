import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { Suggestion } from '../suggestions/suggestions.schemas.ts';

// Response shapes of notes.presenter.ts, same field order.

export const Note = Entity({
  id: Type.Integer(),
  type: Nullable(Type.String()),
  body: Type.String(),
  attachment: Nullable(Type.String()),
  author: Nullable(UserBasic),
  created_at: Iso(),
  updated_at: Iso(),
  system: Type.Boolean(),
  noteable_id: Type.Integer(),
  noteable_type: Type.String(),
  project_id: Nullable(Type.Integer()),
  commit_id: Type.Optional(Nullable(Type.String())),
  position: Type.Optional(Type.Unknown()),
  resolvable: Type.Boolean(),
  resolved: Type.Optional(Type.Boolean()),
  resolved_by: Type.Optional(Nullable(UserBasic)),
  resolved_at: Type.Optional(Nullable(Iso())),
  /** Merge-request diff notes only. */
  suggestions: Type.Optional(Type.Array(Suggestion)),
  confidential: Type.Boolean(),
  internal: Type.Boolean(),
  noteable_iid: Nullable(Type.Integer()),
  commands_changes: Entity({}),
}, { description: 'Note' });

export const Discussion = Entity({
  id: Type.String(),
  individual_note: Type.Boolean(),
  notes: Type.Array(Note),
}, { description: 'Discussion' });

export const CommitNote = Entity({
  note: Type.String(),
  path: Nullable(Type.String()),
  line: Nullable(Type.Integer()),
  line_type: Nullable(Type.String()),
  author: Nullable(UserBasic),
  created_at: Iso(),
}, { description: 'CommitNote' });
