// Profiles merge request creation in process: `node --import tsx bench/profile-create.ts --data-dir D [n]`.
// Writes n branches off main (as the creation row does), creates a merge request from each, one at a time, and
// prints the time of each step; PROFILE_GIT=1 also prints the git commands each creation ran and their time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dropWork, prepareWork, readFacts } from './merge-requests.ts';

const { values: args, positionals } = parseArgs({ options: { 'data-dir': { type: 'string' } }, allowPositionals: true });
if (args['data-dir']) process.env.BELLOWS_DATA_DIR = args['data-dir'];
const n = Number(positionals[0] ?? 20);
const { loadConfig } = await import('../src/config/index.ts');
const { openDatabase } = await import('../src/platform/db/index.ts');
const { buildApp } = await import('../src/app.ts');
const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
const facts = readFacts(config.dataDir);
await dropWork(facts.repoPath, 'bench-prof-');
const branches = await prepareWork(facts.repoPath, `bench-prof-${Date.now().toString(36)}-`, n);
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await database.migrate();
const app = await buildApp({ config, database, logger: false });
const token = readFileSync(join(config.dataDir, 'bench-token'), 'utf8').trim();
const headers = { 'private-token': token, 'content-type': 'application/json' };
const times: number[] = [];
const made: number[] = [];
for (const b of branches) {
  const t = performance.now();
  const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${facts.project}/merge_requests`, headers, payload: { source_branch: b, target_branch: 'main', title: `Work ${b}` } });
  times.push(performance.now() - t);
  if (r.statusCode !== 201) console.log(r.statusCode, r.body.slice(0, 200));
  else made.push(JSON.parse(r.body).iid);
}
times.sort((a, b) => a - b);
console.log(`${n} creations: p50 ${times[Math.floor(n / 2)].toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[n - 1].toFixed(1)} ms`);
for (const iid of made) await app.inject({ method: 'DELETE', url: `/api/v4/projects/${facts.project}/merge_requests/${iid}`, headers });
await dropWork(facts.repoPath, 'bench-prof-');
await app.close();
await database.close();
