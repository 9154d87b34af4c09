import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Project webhooks: where to POST the payload of each event kind a hook subscribes to. The secret token is sent in
// `X-Gitlab-Token` and so kept as given, but never shown again; custom header values likewise. `recent_failures`
// and `disabled_until` are the reference's auto-disabling state (a hook failing again and again backs off, then is
// disabled until a successful test or an update).
const FLAGS: Array<[string, number]> = [
  ['push_events', 1], ['tag_push_events', 0], ['merge_requests_events', 0], ['repository_update_events', 0],
  ['enable_ssl_verification', 1], ['issues_events', 0], ['confidential_issues_events', 0], ['note_events', 0],
  ['confidential_note_events', 0], ['pipeline_events', 0], ['wiki_page_events', 0], ['deployment_events', 0],
  ['feature_flag_events', 0], ['job_events', 0], ['releases_events', 0], ['milestone_events', 0], ['emoji_events', 0],
  ['resource_access_token_events', 0],
];

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const time = timeType(dialect);
  let t = idColumn(db.schema.createTable('web_hooks'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('token', 'text')
    .addColumn('name', 'varchar(255)')
    .addColumn('description', 'text')
    .addColumn('push_events_branch_filter', 'text')
    .addColumn('branch_filter_strategy', 'varchar(16)', (c) => c.notNull().defaultTo('wildcard'))
    // JSON object of header name to value.
    .addColumn('custom_headers', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('recent_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled_until', time)
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull());
  for (const [name, dflt] of FLAGS) t = t.addColumn(name, 'integer', (c) => c.notNull().defaultTo(dflt));
  await t.execute();
  await db.schema.createIndex('web_hooks_project').on('web_hooks').columns(['project_id', 'id']).execute();
}
