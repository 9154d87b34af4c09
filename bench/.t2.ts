import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { buildApp } from '../src/app.ts';
import { loadPresentation, fullProject } from '../src/resources/projects/projects.presenter.ts';
import { buildListQuery, accessFromAuthorization } from '../src/resources/projects/projects.list.ts';
const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const app = await buildApp({ config, database, logger: false });
const user = await app.db.selectFrom('users').selectAll().where('id', '=', 2).executeTakeFirstOrThrow();
const actor: any = { user, admin: false, token: null, via: 'token', sudo: false };
const n = 300;
const acc = [0, 0, 0, 0, 0];
for (let i = 0; i < n + 50; i++) {
  const t0 = performance.now();
  const built = await buildListQuery(app, actor, { order_by: 'created_at', sort: 'desc' } as any);
  const t1 = performance.now();
  const rows = await built.query.limit(101).offset(0).execute();
  const t2 = performance.now();
  const pres = await loadPresentation(app, actor, rows, { full: true, access: accessFromAuthorization(app, built.auth!, rows) });
  const t3 = performance.now();
  const body = rows.map((r: any) => fullProject(r, pres));
  const t4 = performance.now();
  JSON.stringify(body);
  const t5 = performance.now();
  if (i >= 50) { acc[0] += t1 - t0; acc[1] += t2 - t1; acc[2] += t3 - t2; acc[3] += t4 - t3; acc[4] += t5 - t4; }
}
console.log(['build', 'page query', 'presentation', 'render', 'stringify'].map((k, i) => `${k} ${(acc[i] / n * 1000).toFixed(0)}µs`).join('  '));
await app.close(); await database.close();
