#!/usr/bin/env node
// Runs the command line: from the bundled JavaScript in dist/ when it matches the sources (`npm start` and
// `npm run build` make it), otherwise from the TypeScript sources through tsx (development, tests).
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildIsFresh, STAMP_FILE, WORKER_BUNDLE } from './stamp.mjs';

const root = new URL('..', import.meta.url);
// `--build-if-stale` before the command (`npm start`): dist/ is bundled again first when it does not match the
// sources, in this process rather than in one started for it. Taken out of the arguments the workers are given.
const buildIfStale = process.argv[2] === '--build-if-stale';
if (buildIfStale) process.argv.splice(2, 1);
// `serve`'s first worker is forked here, before this process loads the command line, the configuration and the
// database modules: the worker's own start (a Node start, then the application's) is the longest part of the
// server's, and it runs meanwhile. src/main.ts takes it as its first worker, or ends it when the configuration is
// wrong or asks for no worker processes. Only for `serve` alone: `serve --help` forks nothing. Where dist/ was built,
// the worker is forked to run it even before the sources are compared with it (a walk of src/, tens of milliseconds),
// and ended if they differ.
const serves = cluster.isPrimary && process.argv.length === 3 && process.argv[2] === 'serve';
let first = null;
if (serves && process.env.BELLOWS_FROM_SOURCE !== '1' && existsSync(new URL(STAMP_FILE, root))) {
  process.env.BELLOWS_RUNS_FROM = 'dist';
  first = cluster.fork();
}
// A worker process of `serve` runs what its primary chose, without looking at the sources again.
const fromDist = cluster.isWorker && process.env.BELLOWS_RUNS_FROM
  ? process.env.BELLOWS_RUNS_FROM === 'dist'
  : buildIfStale
    ? (await freshAfterBuild(first)) && process.env.BELLOWS_FROM_SOURCE !== '1'
    : process.env.BELLOWS_FROM_SOURCE !== '1' && buildIsFresh(root);
if (cluster.isPrimary) process.env.BELLOWS_RUNS_FROM = fromDist ? 'dist' : 'sources';
if (first && !fromDist) first.process.kill('SIGKILL');
if (serves && (!first || first.process.killed)) cluster.fork();
// Once a worker has started (it listens, and has answered its first requests), V8's code cache of what it compiled on
// the way is written for the next start, if it had none that fitted.
const SAVE_CACHE_AFTER_MS = 2_000;
let runCli;
if (fromDist && cluster.isWorker) {
  const { runWithCodeCache } = await import('./code-cache.mjs');
  const bundle = runWithCodeCache(fileURLToPath(new URL(WORKER_BUNDLE, root)));
  await bundle.exports.runCli(process.argv);
  // Or as it stops, if that comes first (a worker stopped at once still leaves its cache).
  const timer = setTimeout(() => bundle.save(), SAVE_CACHE_AFTER_MS).unref();
  process.once('exit', () => {
    clearTimeout(timer);
    bundle.save();
  });
} else if (fromDist) {
  ({ runCli } = await import('../dist/bundle/index.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../src/cli/index.ts'));
}
if (runCli) await runCli(process.argv);

/**
 * Whether dist/ matches the sources, once bundled if it did not; a failed bundle stops here. A worker forked to run
 * dist/ as it was is ended before dist/ is bundled again.
 */
async function freshAfterBuild(worker) {
  if (buildIsFresh(root)) return true;
  worker?.process.kill('SIGKILL');
  const { build } = await import('../scripts/build.mjs');
  return (await build().catch(() => process.exit(1))) && buildIsFresh(root);
}
