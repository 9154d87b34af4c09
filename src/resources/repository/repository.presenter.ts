// Repository wire shapes: rows, refs and commits in, the reference's JSON out. Pure: no database, no git.
import type { Config } from '../../config/index.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { defineObjectMemo } from '../../platform/read-cache.ts';
import { sha256 } from '../../platform/crypto/tokens.ts';
import type { CommitInfo, DiffEntry, RefEntry } from '../../platform/git/repository.ts';
import { ACCESS_DESCRIPTIONS, type AccessEntry, type BranchRule, type TagRule } from './protection.ts';
import type { BranchView } from './branches.service.ts';
import type { Comparison } from './repository.service.ts';
import type { SignatureView } from './commits.service.ts';

export function projectWebUrl(config: Config, project: Pick<ProjectRow, 'full_path'>): string {
  return `${config.externalUrl}/${project.full_path}`;
}

/** Path segments as a browser URL carries them: "/" kept, everything else that needs it escaped. */
export function urlPath(s: string): string {
  return s.split('/').map(encodeURIComponent).join('/');
}

export function presentCommit(config: Config, project: Pick<ProjectRow, 'full_path'>, c: CommitInfo) {
  return {
    id: c.id,
    short_id: c.short_id,
    created_at: c.created_at,
    parent_ids: c.parent_ids,
    title: c.title,
    message: c.message,
    author_name: c.author_name,
    author_email: c.author_email,
    authored_date: c.authored_date,
    committer_name: c.committer_name,
    committer_email: c.committer_email,
    committed_date: c.committed_date,
    trailers: c.trailers,
    extended_trailers: c.extended_trailers,
    web_url: `${projectWebUrl(config, project)}/-/commit/${c.id}`,
  };
}

/** A commit with its project, and its line counts when they were asked for. */
export function presentCommitDetail(config: Config, project: ProjectRow, c: CommitInfo, stats?: { additions: number; deletions: number; total: number }) {
  return {
    ...presentCommit(config, project, c),
    ...(stats ? { stats } : {}),
    status: null,
    project_id: project.id,
    last_pipeline: null,
  };
}

export function presentTreeEntry(e: { id: string; name: string; type: string; path: string; mode: string }) {
  return { id: e.id, name: e.name, type: e.type, path: e.path, mode: e.mode };
}

export function presentFile(ref: string, commit: string, path: string, blob: { id: string; mode: string; size: number; content: Buffer }, lastCommitId: string | null) {
  return {
    file_name: path.split('/').pop(),
    file_path: path,
    size: blob.size,
    encoding: 'base64',
    content_sha256: sha256(blob.content, 'hex'),
    ref,
    blob_id: blob.id,
    commit_id: commit,
    last_commit_id: lastCommitId,
    execute_filemode: blob.mode === '100755',
    content: blob.content.toString('base64'),
  };
}

/**
 * `unidiff`: the patch with its `---`/`+++` file lines, as the reference's `unidiff=true` gives it (a binary notice
 * and an empty patch stay as they are).
 */
function unidiffOf(d: DiffEntry): string {
  if (d.diff === '' || d.diff.startsWith('Binary files')) return d.diff;
  return `--- ${d.new_file ? '/dev/null' : `a/${d.old_path}`}\n+++ ${d.deleted_file ? '/dev/null' : `b/${d.new_path}`}\n${d.diff}`;
}

/** A changed file; `too_large` (and `collapsed`) when the repository left a patch out for its size. */
export function presentDiff(d: DiffEntry & { too_large?: boolean; collapsed?: boolean }, unidiff = false) {
  return {
    diff: unidiff ? unidiffOf(d) : d.diff,
    collapsed: d.collapsed ?? false,
    too_large: d.too_large ?? false,
    new_path: d.new_path,
    old_path: d.old_path,
    a_mode: d.a_mode,
    b_mode: d.b_mode,
    new_file: d.new_file,
    renamed_file: d.renamed_file,
    deleted_file: d.deleted_file,
    generated_file: false,
  };
}

export function presentComparison(config: Config, project: ProjectRow, from: string, to: string, c: Comparison, unidiff = false) {
  const head = c.commits.length ? c.commits[c.commits.length - 1] : null;
  return {
    commit: head ? presentCommit(config, project, head) : null,
    commits: c.commits.map((x) => presentCommit(config, project, x)),
    diffs: c.diffs.map((d) => presentDiff(d, unidiff)),
    compare_timeout: false,
    compare_same_ref: c.sameRef,
    web_url: `${projectWebUrl(config, project)}/-/compare/${encodeURIComponent(from)}...${encodeURIComponent(to)}`,
  };
}

export function presentTag(config: Config, project: ProjectRow, t: RefEntry, isProtected: boolean) {
  return {
    name: t.name,
    message: t.tag ? t.tag.message.replace(/\n$/, '') : '',
    target: t.target,
    commit: presentCommit(config, project, t.commit),
    release: null,
    protected: isProtected,
    created_at: t.tag?.date || null,
  };
}

// Branch lists present the same cached ref entries again and again: the commit part is built once per entry.
const presentedCommits = defineObjectMemo<RefEntry, { base: string; commit: Record<string, unknown> }>('branch-commits');

/** The branch commit, without extended_trailers (the spec's field list); built once per cached ref and project URL. */
function branchCommit(config: Config, project: ProjectRow, entry: RefEntry) {
  const base = projectWebUrl(config, project);
  const memo = presentedCommits.get(entry);
  if (memo && memo.base === base) return memo.commit;
  const { extended_trailers: _x, ...commit } = presentCommit(config, project, entry.commit);
  void _x;
  presentedCommits.set(entry, { base, commit });
  return commit;
}

export function presentBranch(config: Config, project: ProjectRow, v: BranchView, commitFirst = false) {
  const commit = branchCommit(config, project, v.entry);
  const rest = {
    name: v.entry.name,
    merged: v.merged,
    protected: v.protected,
    default: v.default,
    developers_can_push: v.developers_can_push,
    developers_can_merge: v.developers_can_merge,
    can_push: v.can_push,
    web_url: `${projectWebUrl(config, project)}/-/tree/${urlPath(v.entry.name)}`,
  };
  return commitFirst ? { commit, ...rest } : { ...rest, commit };
}

/** Display names of the users, groups and deploy keys that access entries name, by id. */
export interface AccessEntryNames {
  users: Map<number, string>;
  groups: Map<number, string>;
  keys: Map<number, string>;
}

function description(e: AccessEntry, n: AccessEntryNames): string {
  if (e.deploy_key_id !== null) return n.keys.get(e.deploy_key_id) ?? 'Deploy key';
  if (e.user_id !== null) return n.users.get(e.user_id) ?? 'User';
  if (e.group_id !== null) return n.groups.get(e.group_id) ?? 'Group';
  return ACCESS_DESCRIPTIONS[e.access_level ?? 40] ?? String(e.access_level);
}

// Entries for users, groups and deploy keys carry the Maintainer level, as the reference's column default.
const levelOf = (e: AccessEntry) => e.access_level ?? 40;

export function protectedBranchEntity(r: BranchRule, names: AccessEntryNames) {
  const entry = (e: AccessEntry) => ({
    id: e.id,
    access_level: levelOf(e),
    access_level_description: description(e, names),
    deploy_key_id: e.deploy_key_id,
    user_id: e.user_id,
    group_id: e.group_id,
  });
  return {
    id: r.id,
    name: r.name,
    push_access_levels: r.push.map(entry),
    merge_access_levels: r.merge.map(entry),
    allow_force_push: r.allow_force_push,
    unprotect_access_levels: r.unprotect.map(entry),
    code_owner_approval_required: r.code_owner_approval_required,
  };
}

export function protectedTagEntity(r: TagRule, names: AccessEntryNames) {
  return {
    name: r.name,
    create_access_levels: r.create.map((e) => ({
      id: e.id,
      access_level: levelOf(e),
      access_level_description: description(e, names),
      ...(e.deploy_key_id !== null ? { deploy_key_id: e.deploy_key_id } : {}),
      ...(e.user_id !== null ? { user_id: e.user_id } : {}),
      ...(e.group_id !== null ? { group_id: e.group_id } : {}),
    })),
  };
}

export function presentBlob(b: { id: string; size: number; content: Buffer }) {
  return { size: b.size, encoding: 'base64', content: b.content.toString('base64'), sha: b.id };
}

export function presentBlameRange(g: { commit: CommitInfo; lines: string[] }) {
  const c = g.commit;
  return {
    commit: {
      id: c.id,
      parent_ids: c.parent_ids,
      message: c.message,
      authored_date: c.authored_date,
      author_name: c.author_name,
      author_email: c.author_email,
      committed_date: c.committed_date,
      committer_name: c.committer_name,
      committer_email: c.committer_email,
    },
    lines: g.lines,
  };
}

export function presentSignature(s: SignatureView) {
  if (s.type === 'SSH') return { signature_type: 'SSH', verification_status: s.status, key: null, commit_source: 'gitaly' };
  if (s.type === 'X509') return { signature_type: 'X509', verification_status: s.status, x509_certificate: null, commit_source: 'gitaly' };
  return {
    signature_type: 'PGP',
    gpg_key_id: s.key?.id ?? null,
    gpg_key_primary_keyid: s.keyId,
    gpg_key_user_name: s.key?.user_name ?? null,
    gpg_key_user_email: s.key?.user_email ?? null,
    verification_status: s.status,
    gpg_key_subkey_id: null,
    commit_source: 'gitaly',
  };
}
