import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// What a user keeps on their profile: SSH and GPG keys, further e-mail addresses, a status, and the custom attributes
// administrators attach. Keys (user and deploy keys alike) are found by either fingerprint through an index.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);
  await idColumn(db.schema.createTable('ssh_keys'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('key_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('key_bits', 'integer', (c) => c.notNull())
    .addColumn('key_blob', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(128)', (c) => c.notNull())
    .addColumn('fingerprint_sha256', 'varchar(128)', (c) => c.notNull())
    .addColumn('usage_type', 'varchar(32)', (c) => c.notNull().defaultTo('auth_and_signing'))
    .addColumn('expires_at', t)
    .addColumn('last_used_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ssh_keys_fingerprint_sha256').unique().on('ssh_keys').column('fingerprint_sha256').execute();
  await db.schema.createIndex('ssh_keys_fingerprint').on('ssh_keys').column('fingerprint').execute();
  await db.schema.createIndex('ssh_keys_user').on('ssh_keys').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('deploy_keys_fingerprint').on('deploy_keys').column('fingerprint').execute();

  await idColumn(db.schema.createTable('gpg_keys'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('primary_keyid', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('gpg_keys_fingerprint').unique().on('gpg_keys').column('fingerprint').execute();
  await db.schema.createIndex('gpg_keys_user').on('gpg_keys').columns(['user_id', 'id']).execute();

  await idColumn(db.schema.createTable('emails'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'varchar(255)', (c) => c.notNull())
    .addColumn('email_lower', 'varchar(255)', (c) => c.notNull())
    .addColumn('confirmed_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('emails_email_lower').unique().on('emails').column('email_lower').execute();
  await db.schema.createIndex('emails_user').on('emails').columns(['user_id', 'id']).execute();

  await db.schema.createTable('user_statuses')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('emoji', 'varchar(255)', (c) => c.notNull())
    .addColumn('message', 'varchar(100)')
    .addColumn('availability', 'varchar(16)', (c) => c.notNull().defaultTo('not_set'))
    .addColumn('clear_status_at', t)
    .execute();

  await idColumn(db.schema.createTable('user_custom_attributes'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'varchar(255)', (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('uca_user_key').unique().on('user_custom_attributes').columns(['user_id', 'key']).execute();
  await db.schema.createIndex('uca_key_value').on('user_custom_attributes').columns(['key', 'value', 'user_id']).execute();
}
