// Creates the migrated template database that PostgreSQL test runs clone for each test app.
import pg from 'pg';
import { openDatabase } from '../src/platform/db/index.ts';

const base = process.env.DATABASE_URL!;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
const stale = await admin.query("SELECT datname FROM pg_database WHERE datname LIKE 'bellows_t\\_%'");
for (const r of stale.rows) await admin.query(`DROP DATABASE IF EXISTS ${r.datname} WITH (FORCE)`);
await admin.query('DROP DATABASE IF EXISTS bellows_template WITH (FORCE)');
await admin.query('CREATE DATABASE bellows_template');
await admin.end();
const u = new URL(base);
u.pathname = '/bellows_template';
const database = openDatabase({ databaseUrl: u.toString(), dataDir: '.tmp' });
await database.migrate();
await database.close();
console.log('prepared template database bellows_template');
