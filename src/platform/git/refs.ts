// Ref-name rules, mirroring git's check_refname_format (refs.c) so bad names are refused without a process.

export const SHA1_ZERO = '0'.repeat(40);
/** The tree with no entries; a "from" side for diffs of a root commit. */
export const EMPTY_TREE_SHA1 = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const SHA_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
export function isFullSha(value: string): boolean {
  return SHA_RE.test(value);
}

export function zeroShaLike(sha: string): string {
  return '0'.repeat(sha.length);
}

/** The longest ref name or revision taken from a caller: far above real names, far below what argv carries. */
export const MAX_REF_LENGTH = 1024;

/**
 * git check-ref-format, plus a refusal of a leading "-" (such a name reads as an option on every command line).
 * With allowOneLevel (the default) a name without "/" passes, as with `--allow-onelevel`.
 */
export function isValidRefName(name: string, opts: { allowOneLevel?: boolean } = {}): boolean {
  if (typeof name !== 'string' || name === '' || name === '@' || name.startsWith('-') || name.length > MAX_REF_LENGTH) return false;
  const components = name.split('/');
  for (const c of components) {
    // Covers a leading or trailing "/" and "//" as well.
    if (c === '' || c.startsWith('.') || c.endsWith('.lock')) return false;
  }
  if (name.endsWith('.') || name.includes('..') || name.includes('@{')) return false;
  for (let i = 0; i < name.length; i++) {
    const ch = name.charCodeAt(i);
    if (ch < 0x20 || ch === 0x7f) return false;
  }
  if (/[ ~^:?*[\\]/.test(name)) return false;
  return (opts.allowOneLevel ?? true) || components.length >= 2;
}

/** A branch name as users type it (GitLab's GitRefValidator): checked as refs/heads/<name>, not HEAD, not pre-expanded. */
export function isValidBranchName(name: string): boolean {
  if (typeof name !== 'string' || name === 'HEAD') return false;
  if (name.startsWith('refs/heads/') || name.startsWith('refs/remotes/')) return false;
  return !name.startsWith('-') && isValidRefName(`refs/heads/${name}`, { allowOneLevel: false });
}

export function isValidTagName(name: string): boolean {
  if (typeof name !== 'string' || name === 'HEAD' || name.startsWith('refs/')) return false;
  return !name.startsWith('-') && isValidRefName(`refs/tags/${name}`, { allowOneLevel: false });
}

/**
 * A revision a caller may hand to rev-parse/log: a ref name, a sha, `~n`/`^n` suffixes and `a..b` ranges.
 * Refused: option-like text, whitespace and control characters, `:` (tree paths and `:/regex` searches),
 * `@{` (reflog and upstream lookups) and `^{` (peeling and `^{/regex}` searches, which we add ourselves).
 */
export function isSafeRevision(rev: string): boolean {
  if (typeof rev !== 'string' || rev === '' || rev.startsWith('-') || rev.length > MAX_REF_LENGTH) return false;
  if (/[\s\0-\x1f\x7f:\\]/.test(rev)) return false;
  return !rev.includes('@{') && !rev.includes('^{');
}
