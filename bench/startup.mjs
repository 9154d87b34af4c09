#!/usr/bin/env node
// Start-up time: from starting the server on an existing data directory (migrated, root made) to its first answer
// (GET /-/readiness 200). `node bench/startup.mjs [runs]`; BELLOWS_WORKERS as the server reads it (default: auto).
// Runs `npm start` (compiled JavaScript, built first when stale) and, for comparison, the sources through tsx.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';

const runs = Number(process.argv[2] ?? 5);
const dataDir = mkdtempSync(join(tmpdir(), 'bellows-startup-'));
const freePort = () => new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
const baseEnv = { ...process.env, BELLOWS_DATA_DIR: dataDir, BELLOWS_LOG_LEVEL: 'warn', BELLOWS_ROOT_PASSWORD: 'startup-bench-pw' };

spawnSync('node', ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });

async function once(cmd, args, env) {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(cmd, args, { env: { ...baseEnv, ...env, PORT: String(port) }, stdio: 'ignore', detached: true });
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/-/readiness`);
      if (r.status === 200) break;
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 10));
  }
  const ms = performance.now() - t0;
  process.kill(-child.pid, 'SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return ms;
}

// The first start migrates and makes root: not measured.
await once('node', ['bin/bellows.mjs', 'serve'], {});
const report = async (name, cmd, args, env = {}) => {
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once(cmd, args, env));
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${Math.round(times[Math.floor(times.length / 2)])} ms, best ${Math.round(times[0])} ms, worst ${Math.round(times.at(-1))} ms (${runs} runs)`);
};
await report('npm start (dist/)', 'npm', ['start', '--silent']);
await report('node bin/bellows.mjs serve (dist/)', 'node', ['bin/bellows.mjs', 'serve']);
await report('sources through tsx', 'node', ['bin/bellows.mjs', 'serve'], { BELLOWS_FROM_SOURCE: '1' });
rmSync(dataDir, { recursive: true, force: true });
