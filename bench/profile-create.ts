// Profiles merge request creation in process: `node --import tsx bench/profile-create.ts --data-dir D [n]`.
// Writes n branches off main (as the creation row does), creates a merge request from each, one at a time, and
// prints the times, the worker's own CPU per creation and the git processes the creations started (by command, with
// their wall time; the long-lived ones count once when they start).
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
const { onGitFinished, gitInvocationCount } = await import('../src/platform/git/command.ts');
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
const gitTime = new Map<string, { n: number; s: number }>();
let counting = false;
onGitFinished((command, seconds) => {
  if (!counting) return;
  const e = gitTime.get(command) ?? { n: 0, s: 0 };
  e.n++;
  e.s += seconds;
  gitTime.set(command, e);
});
const spawnedBefore = gitInvocationCount();
const cpu = process.cpuUsage();
counting = true;
for (const b of branches) {
  const t = performance.now();
  const r = await app.inject({ method: 'POST', url: `/api/v4/projects/${facts.project}/merge_requests`, headers, payload: { source_branch: b, target_branch: 'main', title: `Work ${b}` } });
  times.push(performance.now() - t);
  if (r.statusCode !== 201) console.log(r.statusCode, r.body.slice(0, 200));
  else made.push(JSON.parse(r.body).iid);
}
const used = process.cpuUsage(cpu);
const spawned = gitInvocationCount() - spawnedBefore;
counting = false;
times.sort((a, b) => a - b);
console.log(`${n} creations: p50 ${times[Math.floor(n / 2)].toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[n - 1].toFixed(1)} ms`);
console.log(`worker CPU per creation: ${((used.user + used.system) / 1000 / n).toFixed(1)} ms (user ${(used.user / 1000 / n).toFixed(1)}, system ${(used.system / 1000 / n).toFixed(1)})`);
console.log(`git processes started: ${spawned} (${(spawned / n).toFixed(2)} per creation)`);
for (const [command, e] of gitTime) console.log(`  git ${command}: ${e.n} ended, ${((e.s * 1000) / e.n).toFixed(1)} ms wall each`);
for (const iid of made) await app.inject({ method: 'DELETE', url: `/api/v4/projects/${facts.project}/merge_requests/${iid}`, headers });
await dropWork(facts.repoPath, 'bench-prof-');
await app.close();
await database.close();
