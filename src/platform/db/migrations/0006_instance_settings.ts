import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// Broadcast messages and notification settings. Feature gates live in `feature_gates` (0001).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('broadcast_messages'), dialect)
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('starts_at', t, (c) => c.notNull())
    .addColumn('ends_at', t, (c) => c.notNull())
    .addColumn('font', 'varchar(32)')
    .addColumn('target_access_levels', 'varchar(255)', (c) => c.notNull().defaultTo('')) // "10,20"; empty: every level
    .addColumn('target_path', 'varchar(1024)')
    .addColumn('broadcast_type', 'varchar(32)', (c) => c.notNull().defaultTo('banner'))
    .addColumn('dismissable', 'integer')
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('broadcast_messages_window').on('broadcast_messages').columns(['ends_at', 'starts_at']).execute();

  await idColumn(db.schema.createTable('notification_settings'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('source_type', 'varchar(16)', (c) => c.notNull()) // Global | Namespace | Project
    .addColumn('source_id', 'integer', (c) => c.notNull()) // 0 for the global setting
    .addColumn('level', 'varchar(32)', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull().defaultTo('{}')) // JSON {event: boolean}, only the events ever set
    .addColumn('notification_email', 'varchar(255)') // global setting only; null: the primary e-mail
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_settings_user_source').unique().on('notification_settings').columns(['user_id', 'source_type', 'source_id']).execute();
  await db.schema.createIndex('notification_settings_source').on('notification_settings').columns(['source_type', 'source_id']).execute();
}
