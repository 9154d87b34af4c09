import type { Kysely } from 'kysely';
import { timeType, type DialectName } from '../dialect.ts';

// Notification e-mails.
// - `server_secrets`: secrets the server makes for itself, shared by every process and machine of the installation
//   (the key that signs the unsubscribe links of notification e-mails), made once on first use.
export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.createTable('server_secrets')
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_at', timeType(dialect), (c) => c.notNull())
    .execute();
}
