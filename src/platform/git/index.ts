// The git platform layer: everything the server needs from git, with no HTTP types.
export { runGit, spawnGit, assertSafeArg, configureGit, gitInvocationCount, GitError, UnsafeArgumentError } from './command.ts';
export type { GitRunOptions, GitResult, GitSpawnOptions } from './command.ts';
export {
  isValidRefName,
  isValidBranchName,
  isValidTagName,
  isSafeRevision,
  isFullSha,
  SHA1_ZERO,
  EMPTY_TREE_SHA1,
} from './refs.ts';
export * from './errors.ts';
export { parseTrailers, commitTitle, type CommitInfo } from './commit.ts';
export { Repository, invalidateRefCache } from './repository.ts';
export { normalizeRepoPath, type CommitAction, type CreateCommitOptions, type CreateCommitResult } from './commit-writer.ts';
export type {
  Branch,
  Tag,
  Identity,
  TreeEntry,
  BlobContent,
  LogOptions,
  DiffFile,
  GrepMatch,
} from './repository.ts';
export { languageOf, languageShares } from './languages.ts';
export { Storage, UnknownShardError, diskPath, type ShardConfig, type RepositoryKind } from './storage.ts';
