#!/usr/bin/env node
// Loads the TypeScript sources through tsx, then runs the command line.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/index.ts');
await runCli(process.argv);
