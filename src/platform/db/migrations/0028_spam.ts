import type { Kysely } from 'kysely';
import { idColumn, timeType, type DialectName } from '../dialect.ts';

// The spam log: one row per piece of content a spam check flagged (platform/spam.ts), with who sent it, from where,
// what it said and the kind of record it was for. A CAPTCHA retry names its row (`X-Service-Spam-Log-Id`) and marks
// it verified, once; an administrator may mark a row as not spam (`submitted_as_ham`).
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  const time = timeType(dialect);
  await idColumn(db.schema.createTable('spam_logs'), dialect)
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('source_ip', 'varchar(255)')
    .addColumn('user_agent', 'text')
    .addColumn('via_api', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('noteable_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('submitted_as_ham', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recaptcha_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', time, (c) => c.notNull())
    .addColumn('updated_at', time, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('spam_logs_user').on('spam_logs').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('spam_logs_created').on('spam_logs').column('created_at').execute();
}
