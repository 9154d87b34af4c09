import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Merge requests. A merge request lives in its target project (iid per target project, usage 'merge_requests') and
// names its source by project and branch; the repository's `refs/merge-requests/<iid>/head` follows the source head
// (`sha`). Everything git can answer (diffs, commits, mergeability) is computed from the repositories: the rows only
// keep what git cannot (who, when, the state, each version's three commits, a mergeability answer per head pair).
//
// `merge_status` is the reference's string: unchecked | checking | can_be_merged | cannot_be_merged |
// cannot_be_merged_recheck. The project settings that steer merging (merge_method, squash_option,
// only_allow_merge_if_all_discussions_are_resolved, merge/squash commit templates, autoclose_referenced_issues,
// remove_source_branch_after_merge, merge_requests_author_approval) live in `projects.settings` like every other
// setting that is never filtered on.
//
// Diff notes keep their position as written (`notes.position`), the position it was first written on
// (`original_position`), where a later version moved it (`change_position`), their `line_code`, and whether a push
// made them outdated.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('merge_requests'), dialect)
    .addColumn('target_project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('target_branch', 'varchar(255)', (c) => c.notNull())
    .addColumn('source_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('source_branch', 'varchar(255)', (c) => c.notNull())
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'varchar(16)', (c) => c.notNull().defaultTo('opened')) // opened | closed | merged | locked
    .addColumn('draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    // The source head (also `refs/merge-requests/<iid>/head` in the target repository) and the merge's results.
    .addColumn('sha', 'varchar(64)')
    .addColumn('merge_commit_sha', 'varchar(64)')
    .addColumn('squash_commit_sha', 'varchar(64)')
    .addColumn('rebase_commit_sha', 'varchar(64)')
    // A merge being written: the commit made before the ref moved, so a crash between the two is recognised.
    .addColumn('in_progress_merge_commit_sha', 'varchar(64)')
    .addColumn('squash', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('force_remove_source_branch', 'integer')
    .addColumn('allow_collaboration', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('discussion_locked', 'integer')
    .addColumn('merge_status', 'varchar(32)', (c) => c.notNull().defaultTo('unchecked'))
    .addColumn('merge_error', 'text')
    .addColumn('merge_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('merge_when_pipeline_succeeds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('merge_commit_message', 'text')
    .addColumn('squash_commit_message', 'text')
    // JSON object of the merge's own parameters (should_remove_source_branch, sha, ...), as the reference keeps them.
    .addColumn('merge_params', 'text')
    .addColumn('merge_jid', 'varchar(64)')
    .addColumn('rebase_jid', 'varchar(64)')
    .addColumn('rebase_in_progress', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('merged_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('merged_at', t)
    .addColumn('closed_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('closed_at', t)
    .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
    // The newest row of merge_request_diffs (no foreign key: the two rows refer to each other).
    .addColumn('latest_diff_id', 'integer')
    .addColumn('last_edited_at', t)
    .addColumn('last_edited_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  const mrIdx = (name: string, columns: string[]) => db.schema.createIndex(name).on('merge_requests').columns(columns).execute();
  await db.schema.createIndex('merge_requests_target_iid').unique().on('merge_requests').columns(['target_project_id', 'iid']).execute();
  await mrIdx('merge_requests_target_state_created', ['target_project_id', 'state', 'created_at', 'id']);
  await mrIdx('merge_requests_target_created', ['target_project_id', 'created_at', 'id']);
  await mrIdx('merge_requests_target_updated', ['target_project_id', 'updated_at', 'id']);
  // The open merge requests of a branch: the duplicate refusal and a push to a source branch; merges into a target branch.
  await mrIdx('merge_requests_source_branch', ['source_project_id', 'source_branch', 'state']);
  await mrIdx('merge_requests_target_branch', ['target_project_id', 'target_branch', 'state']);
  await mrIdx('merge_requests_author', ['author_id', 'id']);
  await mrIdx('merge_requests_milestone', ['milestone_id']);
  await mrIdx('merge_requests_created', ['created_at', 'id']);
  await mrIdx('merge_requests_updated', ['updated_at', 'id']);

  await db.schema.createTable('merge_request_assignees')
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_request_assignees_pk', ['merge_request_id', 'user_id'])
    .execute();
  await db.schema.createIndex('merge_request_assignees_user').on('merge_request_assignees').columns(['user_id', 'merge_request_id']).execute();

  await db.schema.createTable('merge_request_reviewers')
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('unreviewed')) // unreviewed | reviewed | requested_changes | approved
    .addColumn('created_at', t, (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_request_reviewers_pk', ['merge_request_id', 'user_id'])
    .execute();
  await db.schema.createIndex('merge_request_reviewers_user').on('merge_request_reviewers').columns(['user_id', 'merge_request_id']).execute();

  // One version per push to the source branch: the three commits a diff of that version is computed from.
  await idColumn(db.schema.createTable('merge_request_diffs'), dialect)
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('base_commit_sha', 'varchar(64)')
    .addColumn('head_commit_sha', 'varchar(64)')
    .addColumn('start_commit_sha', 'varchar(64)')
    .addColumn('state', 'varchar(32)', (c) => c.notNull().defaultTo('collected')) // collected | empty | overflow | without_files
    .addColumn('real_size', 'varchar(32)')
    .addColumn('commits_count', 'integer')
    .addColumn('files_count', 'integer')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_request_diffs_mr').on('merge_request_diffs').columns(['merge_request_id', 'id']).execute();

  await idColumn(db.schema.createTable('merge_request_approvals'), dialect)
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_request_approvals_mr_user').unique().on('merge_request_approvals').columns(['merge_request_id', 'user_id']).execute();
  await db.schema.createIndex('merge_request_approvals_user').on('merge_request_approvals').column('user_id').execute();

  // Mergeability answered by `git merge-tree` in the target repository for a (target head, source head) pair; a new
  // head on either side is a new key, so an answer never goes stale. `tree_sha` is the merged tree when clean.
  await db.schema.createTable('merge_request_mergeability')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('target_sha', 'varchar(64)', (c) => c.notNull())
    .addColumn('source_sha', 'varchar(64)', (c) => c.notNull())
    .addColumn('merge_base_sha', 'varchar(64)')
    .addColumn('has_conflicts', 'integer', (c) => c.notNull())
    .addColumn('tree_sha', 'varchar(64)')
    .addColumn('conflict_paths', 'text') // JSON array
    .addColumn('checked_at', t, (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_request_mergeability_pk', ['project_id', 'target_sha', 'source_sha'])
    .execute();

  // Issues a merge request names in its description: `closes` 1 for a closing pattern (`Closes #N`), 0 for a mention.
  await idColumn(db.schema.createTable('merge_requests_closing_issues'), dialect)
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('closes', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_requests_closing_issues_mr_issue').unique().on('merge_requests_closing_issues').columns(['merge_request_id', 'issue_id']).execute();
  await db.schema.createIndex('merge_requests_closing_issues_issue').on('merge_requests_closing_issues').columns(['issue_id', 'merge_request_id']).execute();

  await db.schema.alterTable('notes').addColumn('original_position', 'text').execute();
  await db.schema.alterTable('notes').addColumn('change_position', 'text').execute();
  await db.schema.alterTable('notes').addColumn('line_code', 'varchar(255)').execute();
  await db.schema.alterTable('notes').addColumn('outdated', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
