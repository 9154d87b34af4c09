// How long `child_process.spawn` holds a worker's event loop, by the worker's size:
//   node --import tsx bench/spawn-cost.ts --data-dir D
// The application is built on a bench data dir (bench:seed) and reads 2,000 different issues at a time, as a worker
// under load does; after each step, 15 spawns of `true` are timed (the synchronous part of spawn(): libuv forks the
// whole process on Linux, so its cost grows with the resident memory it has to mark copy-on-write).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { 'data-dir': { type: 'string' }, steps: { type: 'string', default: '3' } } });
if (args['data-dir']) process.env.BELLOWS_DATA_DIR = args['data-dir'];
const { loadConfig } = await import('../src/config/index.ts');
const { openDatabase } = await import('../src/platform/db/index.ts');
const { buildApp } = await import('../src/app.ts');
const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const app = await buildApp({ config, database, logger: false });
const headers = { 'private-token': readFileSync(join(config.dataDir, 'bench-token'), 'utf8').trim() };
const big = Number(readFileSync(join(config.dataDir, 'bench-big-project'), 'utf8'));

async function measure(label: string) {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const at = performance.now();
    const child = spawn('true', [], { stdio: 'ignore' });
    times.push(performance.now() - at);
    await new Promise((resolve) => child.on('exit', resolve));
  }
  times.sort((a, b) => a - b);
  const m = process.memoryUsage();
  console.log(`${label}: resident ${(m.rss / 2 ** 20).toFixed(0)} MB, heap ${(m.heapUsed / 2 ** 20).toFixed(0)} MB: spawn() holds the loop ${times[7]!.toFixed(1)} ms (median of 15)`);
}

await measure('application built');
for (let step = 1; step <= Number(args.steps); step++) {
  for (let i = 0; i < 2000; i++) {
    await app.inject({ method: 'GET', url: `/api/v4/projects/${big}/issues/${1 + ((i * 7919 + step * 31) % 100_000)}`, headers });
  }
  await measure(`after ${(step * 2000).toLocaleString('en')} different issues read`);
}
await app.close();
await database.close();
