import { iso, webUrl } from '../../http/format.ts';
import { visibilityName } from '../../platform/membership.ts';
import type { User } from '../users/users.service.ts';
import { userBasic } from '../users/users.presenter.ts';
import { hostOf } from '../projects/projects.presenter.ts';
import { SNIPPET_BRANCH, type SnippetRow } from './snippets.service.ts';

// Snippet rows → wire JSON, in the reference's field order (BasicSnippet, then author, file_name, files).

export interface SnippetPresentation {
  base: string;
  author: User;
  /** The project's full path for a project snippet. */
  projectPath: string | null;
  files: string[];
}

const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

export function snippetWebUrl(base: string, row: Pick<SnippetRow, 'id'>, projectPath: string | null): string {
  return projectPath ? webUrl(base, projectPath, '-/snippets', String(row.id)) : webUrl(base, '-/snippets', String(row.id));
}

/** BasicSnippet: the snippet without its files. */
export function basicSnippetEntity(row: SnippetRow, p: Omit<SnippetPresentation, 'files'>) {
  const { file_name: _name, files: _files, ...basic } = snippetEntity(row, { ...p, files: [] });
  return basic;
}

export function snippetEntity(row: SnippetRow, p: SnippetPresentation) {
  const web = snippetWebUrl(p.base, row, p.projectPath);
  const repoPath = p.projectPath ? `${p.projectPath}/snippets/${row.id}.git` : `snippets/${row.id}.git`;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    visibility: visibilityName(row.visibility_level),
    updated_at: iso(row.updated_at)!,
    created_at: iso(row.created_at)!,
    project_id: row.project_id,
    web_url: web,
    raw_url: `${web}/raw`,
    ssh_url_to_repo: `git@${hostOf(p.base).hostname}:${repoPath}`,
    http_url_to_repo: webUrl(p.base, repoPath),
    author: userBasic(p.author, p.base),
    file_name: p.files[0] ?? row.file_name,
    files: p.files.map((path) => ({ path, raw_url: `${web}/raw/${SNIPPET_BRANCH}/${encodePath(path)}` })),
  };
}
