import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';
import { ProjectSimple } from '../projects/projects.schemas.ts';
import { IssueBasic } from '../issues/issues.schemas.ts';
import { MergeRequestBasic } from '../merge-requests/merge-requests.schemas.ts';
import { Milestone } from '../milestones/milestones.schemas.ts';
import { Snippet } from '../snippets/snippets.schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';
import { Note } from '../notes/notes.schemas.ts';
import { CommitDetail } from '../repository/repository.schemas.ts';

// Search results: the entities of the records' own areas, and the found blob of blobs and wiki blobs.

const S = Type.String;
const I = Type.Integer;

const blobFields = { basename: S(), data: S(), path: S(), filename: S(), id: Nullable(S()), ref: S(), startline: I(), project_id: I() };

export const FoundBlob = Entity(blobFields, { description: 'Blob' });
export const FoundWikiBlob = Entity({ ...blobFields, group_id: Nullable(I()) }, { description: 'WikiBlob' });

/** Whatever the scope asked for. */
export const SearchResults = Type.Array(Type.Union([
  ProjectSimple, IssueBasic, MergeRequestBasic, Milestone, Snippet, UserBasic, Note, CommitDetail, FoundBlob, FoundWikiBlob,
]));
