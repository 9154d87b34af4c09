// Typed outcomes of repository operations. Services map them to API errors; nothing here knows HTTP.

export abstract class GitDomainError extends Error {
  abstract readonly code: string;
}

export class InvalidRefNameError extends GitDomainError {
  readonly code = 'invalid_ref_name';
  constructor(readonly refName: string) {
    super(`invalid reference name: ${JSON.stringify(refName)}`);
  }
}

export class InvalidPathError extends GitDomainError {
  readonly code = 'invalid_path';
  constructor(readonly path: string) {
    super(`invalid path: ${JSON.stringify(path)}`);
  }
}

/** A malformed value other than a ref or path (an identity with "<", an empty action list, ...). */
export class InvalidInputError extends GitDomainError {
  readonly code = 'invalid_input';
  constructor(readonly field: string, detail?: string) {
    super(`invalid ${field}${detail ? `: ${detail}` : ''}`);
  }
}

export class FileExistsError extends GitDomainError {
  readonly code = 'file_exists';
  constructor(readonly path: string) {
    super(`a file with this name already exists: ${path}`);
  }
}

export class FileNotFoundError extends GitDomainError {
  readonly code = 'file_not_found';
  constructor(readonly path: string) {
    super(`a file with this name doesn't exist: ${path}`);
  }
}

/** The file changed since the commit the caller last saw (`last_commit_id`). */
export class StaleFileError extends GitDomainError {
  readonly code = 'stale_file';
  constructor(readonly path: string) {
    super(`the file changed since it was last read: ${path}`);
  }
}

/** The compare-and-swap on a ref failed: someone else moved it since it was read. */
export class RefMovedError extends GitDomainError {
  readonly code = 'ref_moved';
  constructor(readonly ref: string, readonly expected: string | null, readonly actual: string | null) {
    super(`${ref} moved: expected ${expected ?? 'absent'}, found ${actual ?? 'absent'}`);
  }
}

export class StartRefMissingError extends GitDomainError {
  readonly code = 'start_ref_missing';
  constructor(readonly ref: string) {
    super(`start reference not found: ${ref}`);
  }
}

export class RefExistsError extends GitDomainError {
  readonly code = 'ref_exists';
  constructor(readonly ref: string) {
    super(`reference already exists: ${ref}`);
  }
}

export class RefNotFoundError extends GitDomainError {
  readonly code = 'ref_not_found';
  constructor(readonly ref: string) {
    super(`reference not found: ${ref}`);
  }
}

export class RepositoryExistsError extends GitDomainError {
  readonly code = 'repository_exists';
  constructor(readonly path: string) {
    super(`repository already exists: ${path}`);
  }
}

export class RepositoryNotFoundError extends GitDomainError {
  readonly code = 'repository_not_found';
  constructor(readonly path: string) {
    super(`repository not found: ${path}`);
  }
}
