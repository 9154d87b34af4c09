#!/usr/bin/env node
// Bundles src/ into plain JavaScript in dist/bundle/ (esbuild: our modules and the packages they use, a few files
// loaded once each instead of hundreds looked up and read one by one), so that `bellows` starts without transpiling
// or resolving modules. `--if-stale`: only when dist/ does not match the sources (see bin/stamp.mjs for the stamp).
// `npm start` builds from within `bin/bellows.mjs --build-if-stale` (one process where two started before).
// `--bench-server`: bundles the benchmark's server alone into dist/bench/ and prints its path (bench/run.ts).
// Types are checked by `npm run typecheck` (and `npm test`), not here.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sourceStamp, STAMP_FILE, buildIsFresh, BUNDLE_DIR, WORKER_BUNDLE } from '../bin/stamp.mjs';

const root = new URL('..', import.meta.url);

/** Writes dist/; false when esbuild is not installed (the sources then run through tsx). Throws when bundling fails. */
export async function build() {
  const stamp = sourceStamp(root);
  let esbuild;
  try {
    esbuild = createRequire(import.meta.url)('esbuild');
  } catch {
    // Installed without it: bin/bellows.mjs runs the sources through tsx instead.
    process.stderr.write('bellows: esbuild is not installed; running from the sources\n');
    return false;
  }
  process.stderr.write('bellows: bundling src/ into dist/ ...\n');
  const outdir = fileURLToPath(new URL(BUNDLE_DIR, root));
  rmSync(outdir, { recursive: true, force: true });
  rmSync(fileURLToPath(new URL(STAMP_FILE, root)), { force: true });
  const common = commonOptions();
  // esbuild's service process is stopped once done: `bin/bellows.mjs --build-if-stale` goes on to serve.
  await Promise.all([
    // The command line and the primary of `serve`: what is loaded only on some paths (the application in a primary
    // that only supervises, the SSH command) stays in chunks of its own, loaded when first imported.
    esbuild.build({
      ...common,
      outdir,
      splitting: true,
      format: 'esm',
      banner: { js: ESM_REQUIRE },
    }),
    // A worker of `serve`: the same program as one CommonJS file, which bin/code-cache.mjs compiles with V8's code
    // cache (an ES module cannot be given one on Node 20). Beside the other, so that module-relative paths hold.
    esbuild.build({
      ...common,
      outfile: fileURLToPath(new URL(WORKER_BUNDLE, root)),
      format: 'cjs',
      // What a worker loads only on some paths, long after its start, is left in node_modules: every start reads
      // and decodes the whole bundle (sending e-mail: half a megabyte; parsing SSH keys: a third of one).
      external: [...common.external, 'nodemailer', 'sshpk'],
      define: { 'import.meta.url': '__bellowsModuleUrl' },
      banner: { js: "const __bellowsModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    }),
  ]).finally(() => esbuild.stop());
  const workerBundle = new URL(WORKER_BUNDLE, root);
  asciiOnly(workerBundle);
  // The worker bundle's digest names its code cache (bin/code-cache.mjs).
  writeFileSync(new URL(`${WORKER_BUNDLE}.sha256`, root), `${createHash('sha256').update(readFileSync(workerBundle)).digest('hex')}\n`);
  // The stamp is that of the sources the build started from: a change made meanwhile leaves dist/ stale.
  writeFileSync(new URL(STAMP_FILE, root), stamp);
  return true;
}

/** What every bundle shares: our modules and the packages they use, for Node 20. */
function commonOptions() {
  return {
    absWorkingDir: fileURLToPath(root),
    entryPoints: ['src/cli/index.ts'],
    bundle: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
    // Packages with native parts (and tsx, for development only) are loaded from node_modules as they are.
    external: ['better-sqlite3', 're2', 'pg-native', 'ssh2', 'cpu-features', 'tsx'],
  };
}

/**
 * The benchmark's server (bench/server.ts) as one ES module in dist/bench/, bundled as `bellows` is: the bench
 * measures the code `npm start` runs, not the sources as tsx transpiles them for development (tsx keeps every
 * function's name with a call at each closure's creation, which the production bundle does not have).
 */
async function buildBenchServer() {
  const esbuild = createRequire(import.meta.url)('esbuild');
  const outfile = fileURLToPath(new URL('dist/bench/server.mjs', root));
  await esbuild.build({
    ...commonOptions(),
    entryPoints: ['bench/server.ts'],
    outfile,
    format: 'esm',
    banner: { js: ESM_REQUIRE },
  }).finally(() => esbuild.stop());
  return outfile;
}

// The packages written as CommonJS ask for Node's modules with require().
const ESM_REQUIRE = "import { createRequire as __bellowsCreateRequire } from 'node:module'; const require = __bellowsCreateRequire(import.meta.url);";

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  if (process.argv.includes('--bench-server')) process.stdout.write(`${await buildBenchServer()}\n`);
  else if (!(process.argv.includes('--if-stale') && buildIsFresh(root))) await build().catch(() => process.exit(1));
}

/**
 * Rewrites the few characters beyond ASCII that esbuild leaves in a bundle (in comments kept from the packages and
 * ours, in template text and in regular expressions) as `\uXXXX` escapes, which mean the same character there. A
 * worker then decodes its 6 MB as Latin-1 and V8 holds it as a one-byte string (bin/code-cache.mjs), instead of
 * decoding UTF-8 into a two-byte string: tens of milliseconds of every worker's start. The one place where an escape
 * would not mean the same is a template read raw; the build stops if such a template holds one of these characters.
 */
export function asciiOnly(file) {
  const bytes = readFileSync(file);
  if (isAscii(bytes)) return;
  const text = bytes.toString('utf8');
  const raw = /String\.raw\s*`[^`]*[^\x00-\x7f]/.exec(text);
  if (raw) throw new Error(`a raw template holds a character beyond ASCII: ${raw[0].slice(0, 80)}`);
  writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
