// Profiles one endpoint in process (no network): `node --cpu-prof --import tsx bench/profile.ts <url> [n] [anon]`.
// PROFILE_POST='<json body>' sends that body with POST instead of GET.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { buildApp } from '../src/app.ts';

const url = process.argv[2] ?? '/api/v4/projects';
const n = Number(process.argv[3] ?? 2000);
const anon = process.argv[4] === 'anon';
const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await database.migrate();
const app = await buildApp({ config, database, logger: false });
const sqlTime = new Map<string, { ms: number; n: number; args?: unknown[] }>();
// SQLite: how long the write transactions held the database's write lock (from `begin immediate` to the end of `commit`).
let lockHeld = 0;
let lockSince = 0;
if (process.env.PROFILE_SQL && database.dialect === 'sqlite') {
  const { default: SQLite } = await import('better-sqlite3');
  const proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1'));
  for (const m of ['all', 'run', 'get']) {
    const orig = proto[m];
    proto[m] = function (this: any, ...a: unknown[]) {
      const t0 = performance.now();
      if (this.source === 'begin immediate') lockSince = t0;
      try { return orig.apply(this, a); } finally {
        if (this.source === 'commit' || this.source === 'rollback') lockHeld += performance.now() - lockSince;
        const e = sqlTime.get(this.source) ?? { ms: 0, n: 0, args: [] as unknown[] };
        e.ms += performance.now() - t0; e.n++; e.args = a; sqlTime.set(this.source, e);
      }
    };
  }
}
if (process.env.PROFILE_SQL && database.dialect === 'postgres') {
  // The time from sending a statement to its answer (round trip included), per SQL text.
  const { default: pg } = await import('pg');
  const orig = pg.Client.prototype.query as (...a: any[]) => any;
  (pg.Client.prototype as any).query = function (this: unknown, ...a: any[]) {
    const text: string = typeof a[0] === 'string' ? a[0] : a[0]?.text ?? '';
    const t0 = performance.now();
    const done = () => {
      const e = sqlTime.get(text) ?? { ms: 0, n: 0, args: [] as unknown[] };
      e.ms += performance.now() - t0; e.n++; e.args = a[1] ?? a[0]?.values; sqlTime.set(text, e);
    };
    const r = orig.apply(this, a);
    if (r && typeof r.then === 'function') r.then(done, done);
    return r;
  };
}
const token = readFileSync(join(config.dataDir, 'bench-token'), 'utf8').trim();
const post = process.env.PROFILE_POST;
const headers: Record<string, string> = { ...(anon ? {} : { 'private-token': token }), ...(post ? { 'content-type': 'application/json' } : {}) };
const send = () => app.inject({ url, headers, ...(post ? { method: 'POST' as const, payload: post } : {}) });
for (let i = 0; i < Number(process.env.PROFILE_WARM ?? 200); i++) await send();
if (process.env.PROFILE_DRAIN) await app.jobs.drain();
sqlTime.clear();
lockHeld = 0;
const t = performance.now();
let bytes = 0;
for (let i = 0; i < n; i++) bytes += (await send()).body.length;
const ms = (performance.now() - t) / n;
console.log(`${url}: ${ms.toFixed(3)} ms/request (${Math.round(1000 / ms)} req/s on one core, ${Math.round(bytes / n)} bytes)`);
if (lockHeld) console.log(`${(lockHeld / n).toFixed(3)} ms/req  SQLite write lock held (begin immediate to the end of commit)`);
const printSql = () => {
  for (const [q, e] of [...sqlTime].sort((a, b) => b[1].ms - a[1].ms).slice(0, Number(process.env.PROFILE_SQL_TOP ?? 12))) console.log(`${(e.ms / n).toFixed(3)} ms/req  x${(e.n / n).toFixed(1)}  ${process.env.PROFILE_SQL === "full" ? `${q}\n  ${JSON.stringify(e.args)}` : q.slice(0, 200)}`);
};
printSql();
// PROFILE_DRAIN=1: then the background jobs the timed requests queued (events and what they fan out to) run to the
// end, timed and counted the same way, per timed request (the warm-up's jobs are run before the timing).
if (process.env.PROFILE_DRAIN) {
  sqlTime.clear();
  lockHeld = 0;
  const jobsBefore = await app.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const d = performance.now();
  await app.jobs.drain();
  const dms = (performance.now() - d) / n;
  console.log(`jobs afterwards: ${dms.toFixed(3)} ms/request to run them (${Number(jobsBefore.n)} job rows before)`);
  if (lockHeld) console.log(`${(lockHeld / n).toFixed(3)} ms/req  SQLite write lock held by the jobs`);
  printSql();
}
await app.close();
await database.close();

// With PROFILE_SQL=1: time spent per SQL text (SQLite only).
export {};
