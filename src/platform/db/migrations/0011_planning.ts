import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Planning records: labels, milestones, iteration cadences and iterations, issues, and what hangs off any
// "noteable" (issues now, merge requests next): notes and their discussions, award emoji, label links,
// subscriptions, time logs and resource events. Polymorphic rows name their target as (`*_type`, `*_id`), with the
// reference's class names as types ('Issue', 'MergeRequest', 'Note', 'Label', ...).
//
// Dates without a time (due_date, start_date) are epoch milliseconds of 00:00 UTC of that day, like token expiry.
//
// `internal_ids` replaces the per-area iid counters: one row per (usage, owner), locked by its upsert, so concurrent
// creates get distinct iids on both databases. The feature-flag user-list counter moves into it.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await db.schema.createTable('internal_ids')
    .addColumn('usage', 'varchar(32)', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('last_value', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('internal_ids_pk', ['usage', 'owner_id'])
    .execute();
  await sql`insert into internal_ids (usage, owner_id, last_value)
    select 'feature_flag_user_lists', project_id, last_iid from feature_flag_user_list_iids`.execute(db);
  await db.schema.dropTable('feature_flag_user_list_iids').execute();

  // A label belongs to a project or to a group (a namespace of kind group), never both.
  await idColumn(db.schema.createTable('labels'), dialect)
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('color', 'varchar(32)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('labels_project_title').unique().on('labels').columns(['project_id', 'title']).execute();
  await db.schema.createIndex('labels_group_title').unique().on('labels').columns(['group_id', 'title']).execute();

  // Priorities are per project, for the project's own labels and for its ancestors' group labels alike.
  await db.schema.createTable('label_priorities')
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('label_priorities_pk', ['project_id', 'label_id'])
    .execute();
  await db.schema.createIndex('label_priorities_label').on('label_priorities').column('label_id').execute();

  await idColumn(db.schema.createTable('milestones'), dialect)
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'varchar(16)', (c) => c.notNull().defaultTo('active')) // active | closed
    .addColumn('start_date', t)
    .addColumn('due_date', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('milestones_project_iid').unique().on('milestones').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('milestones_group_iid').unique().on('milestones').columns(['group_id', 'iid']).execute();
  await db.schema.createIndex('milestones_project_title').unique().on('milestones').columns(['project_id', 'title']).execute();
  await db.schema.createIndex('milestones_group_title').unique().on('milestones').columns(['group_id', 'title']).execute();

  await idColumn(db.schema.createTable('iteration_cadences'), dialect)
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('automatic', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('start_date', t)
    .addColumn('duration_in_weeks', 'integer')
    .addColumn('iterations_in_advance', 'integer')
    .addColumn('roll_over', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_run_date', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('iteration_cadences_group').on('iteration_cadences').columns(['group_id', 'id']).execute();

  // `iid` is per group; `sequence` is the iteration's position within its cadence ("Iteration 3").
  await idColumn(db.schema.createTable('iterations'), dialect)
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('group_id', 'integer', (c) => c.notNull().references('namespaces.id').onDelete('cascade'))
    .addColumn('cadence_id', 'integer', (c) => c.notNull().references('iteration_cadences.id').onDelete('cascade'))
    .addColumn('sequence', 'integer', (c) => c.notNull())
    .addColumn('title', 'varchar(255)')
    .addColumn('description', 'text')
    .addColumn('start_date', t, (c) => c.notNull())
    .addColumn('due_date', t, (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('iterations_group_iid').unique().on('iterations').columns(['group_id', 'iid']).execute();
  await db.schema.createIndex('iterations_cadence_dates').on('iterations').columns(['cadence_id', 'start_date']).execute();

  await idColumn(db.schema.createTable('issues'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'varchar(16)', (c) => c.notNull().defaultTo('opened')) // opened | closed
    .addColumn('issue_type', 'varchar(32)', (c) => c.notNull().defaultTo('issue'))
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('closed_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('closed_at', t)
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('iteration_id', 'integer', (c) => c.references('iterations.id').onDelete('set null'))
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('discussion_locked', 'integer')
    .addColumn('due_date', t)
    .addColumn('weight', 'integer')
    .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('relative_position', 'integer')
    .addColumn('moved_to_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('duplicated_to_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('last_edited_at', t)
    .addColumn('last_edited_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('issues_project_iid').unique().on('issues').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('issues_project_state_created').on('issues').columns(['project_id', 'state', 'created_at', 'id']).execute();
  await db.schema.createIndex('issues_project_created').on('issues').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('issues_author').on('issues').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('issues_milestone').on('issues').column('milestone_id').execute();
  await db.schema.createIndex('issues_iteration').on('issues').column('iteration_id').execute();

  await db.schema.createTable('issue_assignees')
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('issue_assignees_pk', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_assignees_user').on('issue_assignees').columns(['user_id', 'issue_id']).execute();

  await db.schema.createTable('label_links')
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addPrimaryKeyConstraint('label_links_pk', ['target_type', 'target_id', 'label_id'])
    .execute();
  await db.schema.createIndex('label_links_label').on('label_links').columns(['label_id', 'target_type', 'target_id']).execute();

  // A note's discussion is a 40-hex id shared by the notes of one thread; an individual note has its own.
  await idColumn(db.schema.createTable('notes'), dialect)
    .addColumn('noteable_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('noteable_id', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('type', 'varchar(32)') // null | DiscussionNote | DiffNote
    .addColumn('system', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('internal', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('discussion_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('position', 'text') // JSON, for diff notes
    .addColumn('commit_id', 'varchar(64)')
    .addColumn('resolvable', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('resolved_at', t)
    .addColumn('resolved_by_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notes_noteable').on('notes').columns(['noteable_type', 'noteable_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('notes_discussion').on('notes').columns(['discussion_id', 'id']).execute();
  await db.schema.createIndex('notes_project').on('notes').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('notes_author').on('notes').columns(['author_id', 'id']).execute();

  await idColumn(db.schema.createTable('award_emoji'), dialect)
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('awardable_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('awardable_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('award_emoji_unique').unique().on('award_emoji').columns(['awardable_type', 'awardable_id', 'name', 'user_id']).execute();
  await db.schema.createIndex('award_emoji_user').on('award_emoji').columns(['user_id', 'name']).execute();

  // An explicit subscription (or unsubscription) of a user to an issue, a merge request or a label; `project_id` is
  // set for a group label subscribed within one project.
  await idColumn(db.schema.createTable('subscriptions'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('subscribable_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('subscribable_id', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('subscribed', 'integer', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('subscriptions_target').on('subscriptions').columns(['subscribable_type', 'subscribable_id', 'user_id']).execute();

  await idColumn(db.schema.createTable('timelogs'), dialect)
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('time_spent', 'integer', (c) => c.notNull())
    .addColumn('spent_at', t, (c) => c.notNull())
    .addColumn('summary', 'text')
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('timelogs_target').on('timelogs').columns(['target_type', 'target_id']).execute();

  // Resource events: who changed a target's labels, state or milestone, and when.
  await idColumn(db.schema.createTable('resource_label_events'), dialect)
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('label_id', 'integer', (c) => c.references('labels.id').onDelete('set null'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('action', 'varchar(16)', (c) => c.notNull()) // add | remove
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resource_label_events_target').on('resource_label_events').columns(['target_type', 'target_id', 'id']).execute();

  await idColumn(db.schema.createTable('resource_state_events'), dialect)
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('state', 'varchar(16)', (c) => c.notNull()) // opened | closed | reopened | merged | locked
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resource_state_events_target').on('resource_state_events').columns(['target_type', 'target_id', 'id']).execute();

  await idColumn(db.schema.createTable('resource_milestone_events'), dialect)
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'integer', (c) => c.notNull())
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('action', 'varchar(16)', (c) => c.notNull()) // add | remove
    .addColumn('created_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('resource_milestone_events_target').on('resource_milestone_events').columns(['target_type', 'target_id', 'id']).execute();
}
