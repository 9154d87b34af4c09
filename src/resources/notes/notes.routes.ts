import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { parseDateTime } from '../../http/params.ts';
import type { ProjectAbility } from '../../platform/access/policy.ts';
import { BadRequestError, ParamError } from '../../platform/errors.ts';
import { usersByIds } from '../users/users.service.ts';
import {
  createNote, deleteNote, discussionsQuery, getDiscussion, getNote, notesOfDiscussions, notesQuery, resolveDiscussion, resolveNote, updateNote,
  type DiffPlacement, type Noteable, type NoteableType, type NoteDerivation, type NoteScope,
} from './notes.service.ts';
import { discussion, note, peopleOf, type NoteRow, type NotePresentation } from './notes.presenter.ts';
import { Discussion, Note } from './notes.schemas.ts';
import { awardRoutes } from '../award-emoji/award-emoji.routes.ts';

// The notes and discussions routes of one kind of noteable, the same table for each: `/projects/:id/<segment>/
// :<param>/notes[...]` and `/discussions[...]`. The kind says which ability reads its noteables and how one is
// found for the caller (404 as the noteable's own routes answer when it is hidden).

export interface NoteableKind {
  /** URL segment under the project: "issues". */
  segment: string;
  /** The path parameter naming the noteable: "issue_iid". */
  param: string;
  type: NoteableType;
  /** The project ability that reads this kind of noteable. */
  ability: ProjectAbility;
  find(req: ApiRequest<any>, iid: number): Promise<Noteable>;
  /** Threads of this kind can be resolved (`PUT .../discussions/:id`, `resolved` on a note). */
  resolvable?: boolean;
  /** Threads of this kind may be written on a diff (`position`): checks one and says where the note goes. */
  placeOnDiff?(req: ApiRequest<any>, s: NoteScope, position: any, commitId: string | undefined): Promise<DiffPlacement>;
  /** What a diff note's body derives on this kind (suggestions), read before the note is written. */
  derive?(req: ApiRequest<any>, body: string, position: string | null): Promise<NoteDerivation | undefined>;
  /** Each diff note's suggestions as the note entity shows them, for these notes of the noteable. */
  suggestions?(req: ApiRequest<any>, s: NoteScope, notes: NoteRow[]): Promise<Map<number, unknown[]>>;
}

const LineRangeEnd = Type.Object({ line_code: Opt(Str()), type: Opt(Str()), old_line: Opt(Str()), new_line: Opt(Str()) });

/** A diff position as the reference's discussions API takes it. */
export const PositionParam = Type.Object({
  base_sha: Str(), start_sha: Str(), head_sha: Str(), position_type: Enum(['text', 'image'] as const),
  new_path: Opt(Str()), new_line: Opt(Int()), old_path: Opt(Str()), old_line: Opt(Int()),
  width: Opt(Int()), height: Opt(Int()), x: Opt(Int()), y: Opt(Int()),
  line_range: Opt(Type.Object({ start: Opt(LineRangeEnd), end: Opt(LineRangeEnd) })),
});

async function scopeOf(kind: NoteableKind, req: ApiRequest<any>): Promise<NoteScope> {
  const noteable = await kind.find(req, req.input[kind.param]);
  return { noteable, project: req.project.project, level: req.project.level, actor: req.actor };
}

async function presentation(kind: NoteableKind, req: ApiRequest<any>, s: NoteScope, notes: NoteRow[]): Promise<NotePresentation> {
  const diffNotes = notes.filter((n) => n.type === 'DiffNote');
  return {
    base: req.server.config.externalUrl, users: await usersByIds(req.server, peopleOf(notes), req.actor.user), noteableIid: s.noteable.iid,
    suggestions: kind.suggestions && diffNotes.length ? await kind.suggestions(req, s, diffNotes) : undefined,
  };
}

/** What the body of a diff note (new, a reply in a diff thread, or edited) derives on this kind. */
const derived = (kind: NoteableKind, req: ApiRequest<any>, body: string, position: string | null | undefined) =>
  (kind.derive && position ? kind.derive(req, body, position) : Promise.resolve(undefined));

const createdAt = (v: string | undefined) => (v === undefined ? undefined : parseDateTime(v) ?? undefined);

export function noteRoutes(kind: NoteableKind): RouteDef<any>[] {
  const base = `/projects/:id/${kind.segment}/:${kind.param}`;
  const tags = ['notes'];
  const project = { ability: kind.ability };
  const ids = { id: IdOrPath(), [kind.param]: Int() };
  const one = async (req: ApiRequest<any>, s: NoteScope, row: NoteRow) => note(row, await presentation(kind, req, s, [row]));

  return [
    {
      method: 'GET', url: `${base}/notes`, summary: `The notes of ${kind.type}`, tags, access: 'public', project,
      response: Type.Array(Note),
      input: Input({
        ...ids,
        order_by: Opt(Enum(['created_at', 'updated_at'] as const, { default: 'created_at' })),
        sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
        activity_filter: Opt(Enum(['all_notes', 'only_comments', 'only_activity'] as const, { default: 'all_notes' })),
        ...PaginationParams,
      }),
      handler: async (req, reply) => {
        const s = await scopeOf(kind, req);
        const rows = await paginateQuery(req, reply, notesQuery(req.server.db, s, { orderBy: req.input.order_by, sort: req.input.sort, filter: req.input.activity_filter }));
        const pres = await presentation(kind, req, s, rows);
        return rows.map((r) => note(r, pres));
      },
    },
    {
      method: 'GET', url: `${base}/notes/:note_id`, summary: `One note of ${kind.type}`, tags, access: 'public', project,
      response: Note,
      input: Input({ ...ids, note_id: Int() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        return one(req, s, await getNote(req.server.db, s, req.input.note_id));
      },
    },
    {
      method: 'POST', url: `${base}/notes`, summary: `Comment on ${kind.type}`, tags, access: 'authenticated', project,
      response: Note,
      input: Input({ ...ids, body: Str(), internal: Opt(Bool()), confidential: Opt(Bool()), created_at: Opt(DateTime()) }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const row = await createNote(req.server, s, { body: req.input.body, internal: req.input.internal ?? req.input.confidential, createdAt: createdAt(req.input.created_at) });
        return one(req, s, row);
      },
    },
    {
      method: 'PUT', url: `${base}/notes/:note_id`, summary: `Edit a note of ${kind.type}`, tags, access: 'authenticated', project,
      response: Note,
      input: Input({ ...ids, note_id: Int(), body: Opt(Str({ minLength: 1 })), confidential: Opt(Bool()) }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const row = await getNote(req.server.db, s, req.input.note_id);
        if (req.input.body === undefined) return one(req, s, row);
        const derive = row.type === 'DiffNote' ? await derived(kind, req, req.input.body, row.position) : undefined;
        return one(req, s, await updateNote(req.server, s, row, req.input.body, derive));
      },
    },
    {
      method: 'DELETE', url: `${base}/notes/:note_id`, summary: `Delete a note of ${kind.type}`, tags, access: 'authenticated', project,
      response: null,
      input: Input({ ...ids, note_id: Int() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        await deleteNote(req.server, s, await getNote(req.server.db, s, req.input.note_id));
      },
    },
    {
      method: 'GET', url: `${base}/discussions`, summary: `The discussions of ${kind.type}`, tags: ['discussions'], access: 'public', project,
      response: Type.Array(Discussion),
      input: Input({ ...ids, ...PaginationParams }),
      handler: async (req, reply) => {
        const s = await scopeOf(kind, req);
        const page = await paginateQuery(req, reply, discussionsQuery(req.server.db, s));
        const notes = await notesOfDiscussions(req.server.db, s, page.map((d) => d.discussion_id));
        const pres = await presentation(kind, req, s, [...notes.values()].flat());
        return page.map((d) => discussion(d.discussion_id, notes.get(d.discussion_id)!, pres));
      },
    },
    {
      method: 'GET', url: `${base}/discussions/:discussion_id`, summary: `One discussion of ${kind.type}`, tags: ['discussions'], access: 'public', project,
      response: Discussion,
      input: Input({ ...ids, discussion_id: Str() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const notes = await getDiscussion(req.server.db, s, req.input.discussion_id);
        return discussion(req.input.discussion_id, notes, await presentation(kind, req, s, notes));
      },
    },
    {
      method: 'POST', url: `${base}/discussions`, summary: `Start a discussion on ${kind.type}`, tags: ['discussions'], access: 'authenticated', project,
      response: Discussion,
      input: Input({
        ...ids, body: Str(), internal: Opt(Bool()), confidential: Opt(Bool()), created_at: Opt(DateTime()),
        ...(kind.placeOnDiff ? { position: Opt(PositionParam), commit_id: Opt(Str()) } : {}),
      }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const diff = kind.placeOnDiff && req.input.position ? await kind.placeOnDiff(req, s, req.input.position, req.input.commit_id) : undefined;
        const derive = await derived(kind, req, req.input.body, diff?.position);
        const row = await createNote(req.server, s, { body: req.input.body, internal: req.input.internal ?? req.input.confidential, createdAt: createdAt(req.input.created_at), diff, derive }, { thread: true });
        return discussion(row.discussion_id, [row], await presentation(kind, req, s, [row]));
      },
    },
    {
      method: 'GET', url: `${base}/discussions/:discussion_id/notes`, summary: `The notes of a discussion on ${kind.type}`, tags: ['discussions'], access: 'public', project,
      response: Type.Array(Note),
      input: Input({ ...ids, discussion_id: Str() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const notes = await getDiscussion(req.server.db, s, req.input.discussion_id, 'Notes');
        const pres = await presentation(kind, req, s, notes);
        return notes.map((n) => note(n, pres));
      },
    },
    {
      method: 'POST', url: `${base}/discussions/:discussion_id/notes`, summary: `Reply in a discussion on ${kind.type}`, tags: ['discussions'], access: 'authenticated', project,
      response: Note,
      input: Input({ ...ids, discussion_id: Str(), body: Str(), created_at: Opt(DateTime()) }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const thread = await getDiscussion(req.server.db, s, req.input.discussion_id);
        const derive = thread[0].type === 'DiffNote' ? await derived(kind, req, req.input.body, thread[0].position) : undefined;
        return one(req, s, await createNote(req.server, s, { body: req.input.body, createdAt: createdAt(req.input.created_at), derive }, { replyTo: thread }));
      },
    },
    {
      method: 'GET', url: `${base}/discussions/:discussion_id/notes/:note_id`, summary: `One note of a discussion on ${kind.type}`, tags: ['discussions'], access: 'public', project,
      response: Note,
      input: Input({ ...ids, discussion_id: Str(), note_id: Int() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        return one(req, s, await inDiscussion(req, s));
      },
    },
    {
      method: 'PUT', url: `${base}/discussions/:discussion_id/notes/:note_id`, summary: `Edit a note of a discussion on ${kind.type}`, tags: ['discussions'], access: 'authenticated', project,
      response: Note,
      input: Input({ ...ids, discussion_id: Str(), note_id: Int(), body: Opt(Str({ minLength: 1 })), resolved: Opt(Bool()) }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        const row = await inDiscussion(req, s);
        if ((req.input.body === undefined) === (req.input.resolved === undefined)) throw exactlyOne();
        if (req.input.resolved !== undefined) {
          if (!kind.resolvable) throw new BadRequestError('Note is not resolvable');
          return one(req, s, await resolveNote(req.server, s, row, req.input.resolved));
        }
        const derive = row.type === 'DiffNote' ? await derived(kind, req, req.input.body, row.position) : undefined;
        return one(req, s, await updateNote(req.server, s, row, req.input.body, derive));
      },
    },
    ...(kind.resolvable ? [resolveRoute(kind)] : []),
    {
      method: 'DELETE', url: `${base}/discussions/:discussion_id/notes/:note_id`, summary: `Delete a note of a discussion on ${kind.type}`, tags: ['discussions'], access: 'authenticated', project,
      response: null,
      input: Input({ ...ids, discussion_id: Str(), note_id: Int() }),
      handler: async (req) => {
        const s = await scopeOf(kind, req);
        await deleteNote(req.server, s, await inDiscussion(req, s));
      },
    },
    // Award emoji on a note: the note is found as its own routes find it (an internal one hidden from the caller is 404).
    ...awardRoutes({
      base: `${base}/notes/:note_id`, params: { ...ids, note_id: Int() }, what: `a note of ${kind.type}`, ability: kind.ability, tags: ['award_emoji'],
      find: async (req) => {
        const s = await scopeOf(kind, req);
        return { type: 'Note', id: (await getNote(req.server.db, s, req.input.note_id)).id };
      },
    }),
  ];
}

/** `PUT .../discussions/:discussion_id` with `resolved`: the whole thread, answered as the discussion. */
function resolveRoute(kind: NoteableKind): RouteDef<any> {
  return {
    method: 'PUT', url: `/projects/:id/${kind.segment}/:${kind.param}/discussions/:discussion_id`, summary: `Resolve or reopen a discussion on ${kind.type}`,
    tags: ['discussions'], access: 'authenticated', project: { ability: kind.ability }, response: Discussion,
    input: Input({ id: IdOrPath(), [kind.param]: Int(), discussion_id: Str(), resolved: Bool() }),
    handler: async (req) => {
      const s = await scopeOf(kind, req);
      const notes = await resolveDiscussion(req.server, s, await getDiscussion(req.server.db, s, req.input.discussion_id), req.input.resolved);
      return discussion(req.input.discussion_id, notes, await presentation(kind, req, s, notes));
    },
  };
}

/** A note addressed through its discussion: the reference finds it on the noteable, whatever discussion is named. */
async function inDiscussion(req: ApiRequest<any>, s: NoteScope): Promise<NoteRow> {
  return getNote(req.server.db, s, req.input.note_id);
}

const exactlyOne = () => ParamError.of('body, resolved', 'exactly_one');
