#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node's test runner (Node 20 does not expand globs).
// With DATABASE_URL set, first migrates a template database that each test app clones.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = [...find('src'), ...find('test')].sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));

// Cheap password hashes keep the suite fast; production keeps the default cost.
const env = { BELLOWS_PASSWORD_HASH_COST: '10', ...process.env };
let template = null;
if (process.env.DATABASE_URL) {
  template = `bellows_tpl_${process.pid}`;
  env.BELLOWS_TEST_TEMPLATE = template;
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/prepare-test-db.ts', 'create'], { stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const args = ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env });
if (template) spawnSync(process.execPath, ['--import', 'tsx', 'scripts/prepare-test-db.ts', 'drop'], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
