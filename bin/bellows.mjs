#!/usr/bin/env node
// Runs the command line: from the bundled JavaScript in dist/ when it matches the sources (`npm start` and
// `npm run build` make it), otherwise from the TypeScript sources through tsx (development, tests).
import { buildIsFresh } from './stamp.mjs';

const root = new URL('..', import.meta.url);
let runCli;
if (process.env.BELLOWS_FROM_SOURCE !== '1' && buildIsFresh(root)) {
  ({ runCli } = await import('../dist/bundle/index.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ runCli } = await import('../src/cli/index.ts'));
}
await runCli(process.argv);
