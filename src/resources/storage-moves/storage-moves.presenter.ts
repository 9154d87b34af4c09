import { iso } from '../../http/format.ts';
import { projectSummary } from '../deploy-keys/deploy-keys.presenter.ts';
import type { ProjectSummaryRow } from '../deploy-keys/deploy-keys.service.ts';
import { stateName, type MoveRow } from './storage-moves.service.ts';

// A storage move in the reference's field order (BasicRepositoryStorageMove with its project or snippet).

function moveFields(m: MoveRow) {
  return {
    id: m.id,
    created_at: iso(m.created_at),
    state: stateName(m.state),
    source_storage_name: m.source_storage_name,
    destination_storage_name: m.destination_storage_name,
    error_message: m.error_message,
  };
}

export function presentMove(m: MoveRow, project: ProjectSummaryRow) {
  return { ...moveFields(m), project: projectSummary(project) };
}

/** A snippet's move, with the snippet as BasicSnippet. */
export function presentSnippetMove(m: MoveRow, snippet: Record<string, unknown>) {
  return { ...moveFields(m), snippet };
}
