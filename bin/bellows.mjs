#!/usr/bin/env node
// Runs the command line: from the bundled JavaScript in dist/ when it matches the sources (`npm start` and
// `npm run build` make it), otherwise from the TypeScript sources through tsx (development, tests).
import cluster from 'node:cluster';
import { buildIsFresh } from './stamp.mjs';

const root = new URL('..', import.meta.url);
// A worker process of `serve` runs what its primary chose, without looking at the sources again.
const fromDist = cluster.isWorker && process.env.BELLOWS_RUNS_FROM
  ? process.env.BELLOWS_RUNS_FROM === 'dist'
  : process.env.BELLOWS_FROM_SOURCE !== '1' && buildIsFresh(root);
if (cluster.isPrimary) process.env.BELLOWS_RUNS_FROM = fromDist ? 'dist' : 'sources';
let runCli;
if (fromDist) {
  ({ runCli } = await import('../dist/bundle/index.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../src/cli/index.ts'));
}
await runCli(process.argv);
