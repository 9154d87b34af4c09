// Profiles merges in process on a merge-requests data dir: `BELLOWS_DATA_DIR=D node --import tsx bench/_mergeprof.ts [n] [conc]`
// writes n work branches, creates their merge requests, then times merging them (conc at a time), one line per merge,
// and the processor time per merge of this process and of the git processes it waited for (from /proc/self/stat).
// `CPU_PROFILE=file.cpuprofile` writes a CPU profile of the merges alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { buildApp } from '../src/app.ts';
import { prepareWork, readFacts } from './merge-requests.ts';
import { Repository } from '../src/platform/git/repository.ts';

let logGit = false;
const orig = Repository.prototype.git;
Repository.prototype.git = async function (this: Repository, args: string[], opts?: any) {
  const at = performance.now();
  try { return await orig.call(this, args, opts); } finally {
    if (logGit) console.log(`  git ${(performance.now() - at).toFixed(1).padStart(7)} ms  ${args.join(' ').slice(0, 140)}`);
  }
} as any;

const n = Number(process.argv[2] ?? 20);
const conc = Number(process.argv[3] ?? 1);
const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
const facts = readFacts(config.dataDir);
const branches = await prepareWork(facts.repoPath, `bench-work-prof${Date.now().toString(36)}-`, n);
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await database.migrate();
const app = await buildApp({ config, database, logger: false });
const sqlTime = new Map<string, { ms: number; n: number }>();
let logSql = false;
if (process.env.LOG_SQL && database.dialect === 'sqlite') {
  const { default: SQLite } = await import('better-sqlite3');
  const proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1'));
  for (const m of ['all', 'run', 'get', 'iterate']) {
    const orig = proto[m];
    proto[m] = function (this: any, ...a: unknown[]) {
      const t0 = performance.now();
      try { return orig.apply(this, a); } finally {
        if (logSql) { const e = sqlTime.get(this.source) ?? { ms: 0, n: 0 }; e.ms += performance.now() - t0; e.n++; sqlTime.set(this.source, e); }
      }
    };
  }
}
const token = readFileSync(join(config.dataDir, 'bench-token'), 'utf8').trim();
const headers = { 'private-token': token, 'content-type': 'application/json' };
const p = facts.project;
const iids: number[] = [];
for (const b of branches) {
  const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${p}/merge_requests`, headers, payload: { source_branch: b, target_branch: 'main', title: `Work ${b}` } });
  if (r.statusCode !== 201) throw new Error(`${r.statusCode} ${r.body}`);
  iids.push(r.json().iid);
}
console.log(`created ${iids.length}; merging (${conc} at a time)`);
logGit = !!process.env.LOG_GIT; logSql = true;
/** CPU ms of this process and of its waited-for children (user + system), from /proc/self/stat. */
const cpuNow = () => {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const tick = 10; // USER_HZ 100
  return { self: (Number(f[11]) + Number(f[12])) * tick, children: (Number(f[13]) + Number(f[14])) * tick };
};
const session = process.env.CPU_PROFILE ? new Session() : null;
if (session) { session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); }
const cpu0 = cpuNow();
const t = performance.now();
let next = 0;
const times: number[] = [];
await Promise.all(Array.from({ length: conc }, async () => {
  while (next < iids.length) {
    const iid = iids[next++];
    const at = performance.now();
    const r = await app.inject({ method: 'PUT', url: `/api/v4/projects/${p}/merge_requests/${iid}/merge`, headers });
    times.push(performance.now() - at);
    if (logGit) console.log(`merge ${iid}: ${(performance.now() - at).toFixed(1)} ms`);
    if (r.statusCode !== 200) console.log(`!${iid}: ${r.statusCode} ${r.body.slice(0, 200)}`);
  }
}));
const s = (performance.now() - t) / 1000;
const cpu1 = cpuNow();
if (session) { const { profile } = await session.post('Profiler.stop'); writeFileSync(process.env.CPU_PROFILE!, JSON.stringify(profile)); }
times.sort((a, b) => a - b);
console.log(`${iids.length} merges in ${s.toFixed(2)} s: ${(iids.length / s).toFixed(1)}/s, p50 ${times[times.length >> 1].toFixed(1)} ms`);
console.log(`CPU per merge: this process ${((cpu1.self - cpu0.self) / iids.length).toFixed(1)} ms, git processes ${((cpu1.children - cpu0.children) / iids.length).toFixed(1)} ms (load ${loadavg()[0].toFixed(1)})`);
for (const [q, e] of [...sqlTime].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) console.log(`${(e.ms / iids.length).toFixed(2).padStart(8)} ms/merge x${(e.n / iids.length).toFixed(1)}  ${q.slice(0, 220)}`);
await app.close();
await database.close();
