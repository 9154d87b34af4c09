import { Type } from '@sinclair/typebox';
import { Entity, Nullable } from '../../http/response-schemas.ts';

// Response shapes of the repository area (branches, tags, commits, files, tree, compare, protected refs), in the
// field order of the functions that present them (repository.common.ts, *.service.ts).

const S = Type.String;
const B = Type.Boolean;
const I = Type.Integer;

const commitFields = {
  id: S(), short_id: S(), created_at: S(), parent_ids: Type.Array(S()), title: S(), message: S(), author_name: S(),
  author_email: S(), authored_date: S(), committer_name: S(), committer_email: S(), committed_date: S(),
  trailers: Type.Record(S(), S()), extended_trailers: Type.Record(S(), Type.Array(S())), web_url: S(),
};
export const Commit = Entity(commitFields, { description: 'Commit' });

const { extended_trailers: _x, ...branchCommitFields } = commitFields;
void _x;
/** A branch's commit, without `extended_trailers`. */
export const BranchCommit = Entity(branchCommitFields);

export const CommitDetail = Entity({
  ...commitFields,
  /** Unless `stats=false`. */
  stats: Type.Optional(Entity({ additions: I(), deletions: I(), total: I() })),
  status: Nullable(S()), project_id: I(), last_pipeline: Type.Null(),
}, { description: 'CommitDetail' });

export const Branch = Entity({
  name: S(), merged: B(), protected: B(), default: B(), developers_can_push: B(), developers_can_merge: B(), can_push: B(),
  web_url: S(), commit: BranchCommit,
}, { description: 'Branch' });

export const Tag = Entity({
  name: S(), message: S(), target: S(), commit: Commit, release: Type.Null(), protected: B(), created_at: Nullable(S()),
}, { description: 'Tag' });

export const TreeEntry = Entity({ id: S(), name: S(), type: S(), path: S(), mode: S() }, { description: 'TreeObject' });

export const RepositoryFile = Entity({
  file_name: S(), file_path: S(), size: I(), encoding: S(), content_sha256: S(), ref: S(), blob_id: S(), commit_id: S(),
  last_commit_id: S(), execute_filemode: B(), content: S(),
}, { description: 'File' });

/** The answer to creating or updating a file. */
export const FileWritten = Entity({ file_path: S(), branch: S() });

export const Diff = Entity({
  diff: S(), collapsed: B(), too_large: B(), new_path: S(), old_path: S(), a_mode: S(), b_mode: S(), new_file: B(),
  renamed_file: B(), deleted_file: B(), generated_file: B(),
}, { description: 'Diff' });

export const Compare = Entity({
  commit: Nullable(Commit), commits: Type.Array(Commit), diffs: Type.Array(Diff), compare_timeout: B(), compare_same_ref: B(),
  web_url: S(),
}, { description: 'Compare' });

export const ProtectedRefAccessLevel = Entity({
  id: I(), access_level: I(), access_level_description: S(), deploy_key_id: Nullable(I()), user_id: Nullable(I()),
  group_id: Nullable(I()),
});

export const ProtectedBranch = Entity({
  id: I(), name: S(), push_access_levels: Type.Array(ProtectedRefAccessLevel), merge_access_levels: Type.Array(ProtectedRefAccessLevel),
  allow_force_push: B(), unprotect_access_levels: Type.Array(ProtectedRefAccessLevel), code_owner_approval_required: B(),
}, { description: 'ProtectedBranch' });

/** Tag rules name only the subject they have. */
export const ProtectedTag = Entity({
  name: S(),
  create_access_levels: Type.Array(Entity({
    id: I(), access_level: I(), access_level_description: S(), deploy_key_id: Type.Optional(I()),
    user_id: Type.Optional(I()), group_id: Type.Optional(I()),
  })),
}, { description: 'ProtectedTag' });

/** A blob by id, base64. */
export const Blob = Entity({ size: I(), encoding: S(), content: S(), sha: S() });

export const BasicRef = Entity({ type: S(), name: S() }, { description: 'BasicRef' });

export const BlameRange = Entity({
  commit: Entity({
    id: S(), parent_ids: Type.Array(S()), message: S(), authored_date: S(), author_name: S(), author_email: S(),
    committed_date: S(), committer_name: S(), committer_email: S(),
  }),
  lines: Type.Array(S()),
}, { description: 'BlameRange' });

export const Contributor = Entity({ name: S(), email: S(), commits: I(), additions: I(), deletions: I() }, { description: 'Contributor' });

/** GPG signatures name the key; SSH and X.509 ones say only their kind and status here. */
export const CommitSignature = Type.Union([
  Entity({
    signature_type: Type.Literal('PGP'), gpg_key_id: Nullable(I()), gpg_key_primary_keyid: Nullable(S()), gpg_key_user_name: Nullable(S()),
    gpg_key_user_email: Nullable(S()), verification_status: S(), gpg_key_subkey_id: Type.Null(), commit_source: S(),
  }),
  Entity({ signature_type: Type.Literal('SSH'), verification_status: S(), key: Type.Null(), commit_source: S() }),
  Entity({ signature_type: Type.Literal('X509'), verification_status: S(), x509_certificate: Type.Null(), commit_source: S() }),
], { description: 'CommitSignature' });

/** A cherry-pick or revert asked with `dry_run`, that would succeed. */
export const DryRun = Entity({ dry_run: Type.Literal('success') });
