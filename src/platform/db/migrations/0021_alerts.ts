import { sql, type Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Alerts raised by monitoring tools: the integrations that receive them (an endpoint and a token kept only as its
// SHA-256 digest), the alerts with their iid per project, their assignees, and the metric images attached to them
// (the file lives under the project's uploads; the row names it). One open alert per fingerprint and project: a
// partial unique index makes a second notification count one more event instead of a duplicate.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const time = timeType(dialect);
  await idColumn(db.schema.createTable('alert_integrations'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('type', 'varchar(16)', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('endpoint_identifier', 'varchar(64)', (c) => c.notNull())
    .addColumn('token_digest', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_integrations_endpoint').unique().on('alert_integrations').columns(['project_id', 'endpoint_identifier']).execute();

  await idColumn(db.schema.createTable('alert_management_alerts'), dialect)
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('integration_id', 'integer', (c) => c.references('alert_integrations.id').onDelete('set null'))
    .addColumn('issue_id', 'integer', (c) => c.references('issues.id').onDelete('set null'))
    .addColumn('title', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('severity', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('started_at', time, (c) => c.notNull())
    .addColumn('ended_at', time)
    .addColumn('events', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('monitoring_tool', 'varchar(100)')
    .addColumn('service', 'varchar(100)')
    .addColumn('hosts', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(40)')
    .addColumn('environment_name', 'varchar(255)')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alerts_project_iid').unique().on('alert_management_alerts').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('alerts_open_fingerprint').unique().on('alert_management_alerts').columns(['project_id', 'fingerprint'])
    .where(sql<boolean>`status <> 'resolved'`).execute();
  await db.schema.createIndex('alerts_project_started').on('alert_management_alerts').columns(['project_id', 'started_at', 'id']).execute();

  await db.schema.createTable('alert_management_alert_assignees')
    .addColumn('alert_id', 'integer', (c) => c.notNull().references('alert_management_alerts.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('alert_management_alert_assignees_pk', ['alert_id', 'user_id'])
    .execute();

  await idColumn(db.schema.createTable('alert_metric_images'), dialect)
    .addColumn('alert_id', 'integer', (c) => c.notNull().references('alert_management_alerts.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('filename', 'varchar(255)', (c) => c.notNull())
    .addColumn('content_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('url', 'varchar(255)')
    .addColumn('url_text', 'varchar(128)')
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('alert_metric_images_alert').on('alert_metric_images').columns(['alert_id', 'created_at', 'id']).execute();
}
