import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Group hooks live in `web_hooks` beside project hooks: a hook belongs to a project (`project_id`) or to a group
// (`group_id`), never both, and one delivery path serves both. A group hook takes the events of every project in the
// group and its subgroups. The group-only event flags (`subgroup_events`, `member_events`, `project_events`,
// `vulnerability_events`) are kept as given; Bellows has no source for those events yet. Also: the merge request
// whose merge closed an issue, on the state event.
const FLAGS: Array<[string, number]> = [
  ['push_events', 1], ['tag_push_events', 0], ['merge_requests_events', 0], ['repository_update_events', 0],
  ['enable_ssl_verification', 1], ['issues_events', 0], ['confidential_issues_events', 0], ['note_events', 0],
  ['confidential_note_events', 0], ['pipeline_events', 0], ['wiki_page_events', 0], ['deployment_events', 0],
  ['feature_flag_events', 0], ['job_events', 0], ['releases_events', 0], ['milestone_events', 0], ['emoji_events', 0],
  ['resource_access_token_events', 0],
];
const GROUP_FLAGS = ['subgroup_events', 'member_events', 'project_events', 'vulnerability_events'];
const KEPT = ['id', 'project_id', 'url', 'token', 'name', 'description', 'push_events_branch_filter', 'branch_filter_strategy',
  'custom_headers', 'recent_failures', 'disabled_until', 'created_at', 'updated_at', ...FLAGS.map(([n]) => n)];

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') {
    await sql`ALTER TABLE web_hooks ALTER COLUMN project_id DROP NOT NULL`.execute(db);
    await db.schema.alterTable('web_hooks').addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade')).execute();
    for (const f of GROUP_FLAGS) await db.schema.alterTable('web_hooks').addColumn(f, 'integer', (c) => c.notNull().defaultTo(0)).execute();
  } else {
    // SQLite cannot drop a NOT NULL: the table is rebuilt with the same rows and ids.
    const time = timeType(dialect);
    let t = idColumn(db.schema.createTable('web_hooks_next'), dialect)
      .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
      .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('token', 'text')
      .addColumn('name', 'varchar(255)')
      .addColumn('description', 'text')
      .addColumn('push_events_branch_filter', 'text')
      .addColumn('branch_filter_strategy', 'varchar(16)', (c) => c.notNull().defaultTo('wildcard'))
      .addColumn('custom_headers', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('recent_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('disabled_until', time)
      .addColumn('created_at', time, (c) => c.notNull())
      .addColumn('updated_at', time, (c) => c.notNull());
    for (const [name, dflt] of FLAGS) t = t.addColumn(name, 'integer', (c) => c.notNull().defaultTo(dflt));
    for (const f of GROUP_FLAGS) t = t.addColumn(f, 'integer', (c) => c.notNull().defaultTo(0));
    await t.execute();
    const cols = sql.join(KEPT.map((c) => sql.ref(c)));
    await sql`INSERT INTO web_hooks_next (${cols}) SELECT ${cols} FROM web_hooks`.execute(db);
    await db.schema.dropTable('web_hooks').execute();
    await db.schema.alterTable('web_hooks_next').renameTo('web_hooks').execute();
    await db.schema.createIndex('web_hooks_project').on('web_hooks').columns(['project_id', 'id']).execute();
  }
  await db.schema.createIndex('web_hooks_group').on('web_hooks').columns(['group_id', 'id']).execute();
  // A close by a merge names the merge request (the reference's ResourceStateEvent#source_merge_request_id).
  await db.schema.alterTable('resource_state_events').addColumn('source_merge_request_id', 'integer').execute();
}
