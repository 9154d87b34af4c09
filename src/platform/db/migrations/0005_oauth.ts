import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// The OAuth 2.0 provider: registered applications, authorization codes, access/refresh token pairs,
// and the counters that slow down repeated failed sign-ins.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const t = timeType(dialect);

  await idColumn(db.schema.createTable('oauth_applications'), dialect)
    .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('uid', 'varchar(128)', (c) => c.notNull())
    .addColumn('secret_digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'varchar(1024)', (c) => c.notNull())
    .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('updated_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oauth_applications_uid').unique().on('oauth_applications').column('uid').execute();
  await db.schema.createIndex('oauth_applications_owner').on('oauth_applications').column('owner_id').execute();

  await idColumn(db.schema.createTable('oauth_grants'), dialect)
    .addColumn('application_id', 'integer', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scopes', 'varchar(1024)', (c) => c.notNull())
    .addColumn('code_challenge', 'varchar(128)')
    .addColumn('code_challenge_method', 'varchar(16)')
    .addColumn('expires_at', t, (c) => c.notNull())
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('revoked_at', t)
    .execute();
  await db.schema.createIndex('oauth_grants_code').unique().on('oauth_grants').column('code_digest').execute();

  await idColumn(db.schema.createTable('oauth_access_tokens'), dialect)
    .addColumn('application_id', 'integer', (c) => c.references('oauth_applications.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The authorization code the token family descends from: reuse of the code or of a rotated-out
    // refresh token revokes every token of the family.
    .addColumn('grant_id', 'integer', (c) => c.references('oauth_grants.id').onDelete('cascade'))
    .addColumn('token_digest', 'varchar(128)', (c) => c.notNull())
    .addColumn('refresh_token_digest', 'varchar(128)')
    .addColumn('scopes', 'varchar(1024)', (c) => c.notNull())
    .addColumn('expires_at', t)
    .addColumn('created_at', t, (c) => c.notNull())
    .addColumn('revoked_at', t)
    .execute();
  await db.schema.createIndex('oauth_access_tokens_token').unique().on('oauth_access_tokens').column('token_digest').execute();
  await db.schema.createIndex('oauth_access_tokens_refresh').unique().on('oauth_access_tokens').column('refresh_token_digest').execute();
  await db.schema.createIndex('oauth_access_tokens_user_app').on('oauth_access_tokens').columns(['user_id', 'application_id']).execute();
  await db.schema.createIndex('oauth_access_tokens_grant').on('oauth_access_tokens').column('grant_id').execute();

  await idColumn(db.schema.createTable('sign_in_throttles'), dialect)
    .addColumn('key', 'varchar(600)', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_failure_at', t, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_throttles_key').unique().on('sign_in_throttles').column('key').execute();
}
