#!/usr/bin/env node
// Compiles src/ to plain JavaScript in dist/ (tsconfig.build.json), so that `bellows` runs without transpiling at
// start. `--if-stale`: only when dist/ does not match the sources (see bin/bellows.mjs for the stamp).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { sourceStamp, STAMP_FILE, buildIsFresh } from '../bin/stamp.mjs';

const root = new URL('..', import.meta.url);
if (process.argv.includes('--if-stale') && buildIsFresh(root)) process.exit(0);
const stamp = sourceStamp(root);
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // Installed without development packages: bin/bellows.mjs runs the sources through tsx instead.
  process.stderr.write('bellows: typescript is not installed; running from the sources\n');
  process.exit(0);
}
process.stderr.write('bellows: compiling src/ to dist/ ...\n');
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
// The stamp is that of the sources the build started from: a change made meanwhile leaves dist/ stale.
writeFileSync(new URL(STAMP_FILE, root), stamp);
