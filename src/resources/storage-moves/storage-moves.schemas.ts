import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { ProjectSummary } from '../deploy-keys/deploy-keys.schemas.ts';
import { BasicSnippet } from '../snippets/snippets.schemas.ts';

// Response shape of storage-moves.presenter.ts, same field order.

const MoveFields = {
  id: Type.Integer(),
  created_at: Iso(),
  state: Type.Union(['initial', 'scheduled', 'started', 'replicated', 'finished', 'failed', 'cleanup failed'].map((s) => Type.Literal(s))),
  source_storage_name: Type.String(),
  destination_storage_name: Type.String(),
  error_message: Nullable(Type.String()),
};

export const ProjectRepositoryStorageMove = Entity({ ...MoveFields, project: ProjectSummary }, { description: 'ProjectRepositoryStorageMove' });

export const SnippetRepositoryStorageMove = Entity({ ...MoveFields, snippet: BasicSnippet }, { description: 'SnippetRepositoryStorageMove' });
