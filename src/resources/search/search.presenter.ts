import type { FoundBlob } from './search.service.ts';

// A found blob in the reference's field order; a wiki blob also names its group (none for a project's wiki).

export function foundBlob(b: FoundBlob, projectId: number) {
  return { basename: b.basename, data: b.data, path: b.path, filename: b.filename, id: b.id, ref: b.ref, startline: b.startline, project_id: projectId };
}

export function foundWikiBlob(b: FoundBlob, projectId: number) {
  return { ...foundBlob(b, projectId), group_id: null };
}
