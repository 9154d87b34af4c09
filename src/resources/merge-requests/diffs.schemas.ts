import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { Commit, Diff } from '../repository/repository.schemas.ts';
import { MergeRequest } from './merge-requests.schemas.ts';

// Response shapes of diffs.presenter.ts, same field order.

const versionFields = {
  id: Type.Integer(), head_commit_sha: Nullable(Type.String()), base_commit_sha: Nullable(Type.String()), start_commit_sha: Nullable(Type.String()),
  created_at: Iso(), merge_request_id: Type.Integer(), state: Type.String(), real_size: Nullable(Type.String()), patch_id_sha: Nullable(Type.String()),
};

export const MergeRequestDiff = Entity(versionFields, { description: 'MergeRequestDiff' });

export const MergeRequestDiffFull = Entity({ ...versionFields, commits: Type.Array(Commit), diffs: Type.Array(Diff) }, { description: 'MergeRequestDiffFull' });

export const MergeRequestChanges = Entity({ ...MergeRequest.properties, changes: Type.Array(Diff), overflow: Type.Boolean() }, { description: 'MergeRequestChanges' });
