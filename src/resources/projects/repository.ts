import type { Config } from '../../config/index.ts';
import { Repository, Storage, type RepositoryKind } from '../../platform/git/index.ts';
import { defineObjectMemo } from '../../platform/read-cache.ts';

// A project's bare repository, through the git platform layer: its path derives from the project id
// on its shard (renames and transfers never move it), plus the whole-repository steps of a project's life.

// One Storage per configuration (frozen), an object memo.
const storages = defineObjectMemo<Config, Storage>('storages');
export function storageOf(config: Config): Storage {
  return storages.of(config, () => new Storage(config.storage.map((x) => ({ name: x.name, path: x.path, weight: x.weight }))));
}

/** A shard for a new repository, chosen by weight. */
export function pickStorage(config: Config): string {
  return storageOf(config).pick();
}

export function repositoryPath(config: Config, storage: string, projectId: number, kind: RepositoryKind = 'project'): string {
  const s = storageOf(config);
  return s.repoPath(s.has(storage) ? storage : s.names[0], projectId, kind);
}

/** A project's wiki repository: beside its code on the same shard (`<hash>.wiki.git`), made on the first write. */
export function wikiRepositoryPath(config: Config, storage: string, projectId: number): string {
  return repositoryPath(config, storage, projectId, 'wiki');
}

/** A snippet's repository, on the shard recorded with the snippet. */
export function snippetRepositoryPath(config: Config, storage: string, snippetId: number): string {
  return repositoryPath(config, storage, snippetId, 'snippet');
}

/**
 * The repositories a project keeps on its own shard, the one list every step of a project's life goes through
 * (deletion, forks, storage moves): its code and its wiki. Project snippets live on their own shards, by id.
 */
export const PROJECT_REPOSITORY_KINDS = ['project', 'wiki'] as const;

/** Where a new repository on `storage` is made whole before it takes its place (see Storage.stagingPath). */
export function stagingPath(config: Config, storage: string): string {
  return storageOf(config).stagingPath(storage);
}

/** Moves a staged repository to the project's path; readers see it appear whole. */
export async function placeRepository(config: Config, staged: string, path: string): Promise<void> {
  await storageOf(config).place(staged, path);
  new Repository(path).invalidate();
}

export function repositoryExists(path: string): boolean {
  return Repository.exists(path);
}

export async function initRepository(path: string, defaultBranch: string): Promise<void> {
  if (!Repository.exists(path)) await Repository.init(path, { defaultBranch });
}

/** A full copy (every ref) for a fork; an absent source (rows seeded without repositories) gives an empty one. */
export async function copyRepository(from: string, to: string, defaultBranch: string): Promise<void> {
  if (!Repository.exists(from)) return initRepository(to, defaultBranch);
  await Repository.copyFrom(from, to, { refs: 'branches-and-tags' });
}

export async function removeRepository(path: string): Promise<void> {
  await Repository.purge(path);
}

/** Moves HEAD (the default branch) of an existing repository. */
export async function setHead(path: string, branch: string): Promise<void> {
  if (Repository.exists(path)) await new Repository(path).setDefaultBranch(branch);
}

/** One commit adding README.md on `branch` (project creation with initialize_with_readme). */
export async function commitReadme(path: string, branch: string, content: string, author: { name: string; email: string }, when: number): Promise<void> {
  await new Repository(path).createCommit({
    branch, actions: [{ action: 'create', file_path: 'README.md', content }], message: 'Initial commit',
    author: { name: author.name, email: author.email, date: new Date(when) },
  });
}

export interface RepositoryFacts {
  empty: boolean;
  readmePath: string | null;
  /** Language name -> percentage of the default branch's bytes in recognised files. */
  languages: Array<{ name: string; share: number }>;
  commitCount: number;
  size: number;
}

/** What the project record keeps about its repository, read from the default branch. */
export async function readRepositoryFacts(path: string, branch: string | null): Promise<RepositoryFacts> {
  if (!Repository.exists(path)) return { empty: true, readmePath: null, languages: [], commitCount: 0, size: 0 };
  const repo = new Repository(path);
  const size = await repo.sizeBytes();
  const none: RepositoryFacts = { empty: true, readmePath: null, languages: [], commitCount: 0, size };
  if (await repo.isEmpty()) return none;
  const head = branch ? await repo.resolveRef(`refs/heads/${branch}`).catch(() => null) : null;
  if (!branch || !head) return { ...none, empty: false };
  const [top, languages, commitCount] = await Promise.all([
    repo.readTree(head, ''),
    repo.languages(head),
    repo.countCommits(head),
  ]);
  let readmePath: string | null = null;
  for (const e of top ?? []) {
    if (e.type === 'blob' && /^readme(\.[a-z0-9]+)?$/i.test(e.name) && (readmePath === null || e.name.length < readmePath.length)) readmePath = e.name;
  }
  return {
    empty: false, readmePath, commitCount, size,
    languages: Object.entries(languages).map(([name, share]) => ({ name, share })),
  };
}
