// Creates (or drops) the migrated template database that a PostgreSQL test run clones for each test app.
// Each run has its own template, so several runs may share one server.
import pg from 'pg';
import { openDatabase } from '../src/platform/db/index.ts';

const base = process.env.DATABASE_URL!;
const template = process.env.BELLOWS_TEST_TEMPLATE!;
if (!/^[a-z0-9_]+$/.test(template)) throw new Error('BELLOWS_TEST_TEMPLATE must be a plain identifier');
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
if (process.argv[2] === 'drop') {
  await admin.end();
} else {
  await admin.query(`CREATE DATABASE ${template}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${template}`;
  const database = openDatabase({ databaseUrl: u.toString(), dataDir: '.tmp' });
  await database.migrate();
  await database.close();
}
