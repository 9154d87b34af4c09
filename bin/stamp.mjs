// Whether dist/ (the bundled sources, scripts/build.mjs) matches src/: a digest of every source file's path, size
// and modification time, and of the installed packages' lock file, written beside the build. Reading it takes a few
// milliseconds.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const STAMP_FILE = 'dist/.source-stamp';
/** Two levels below the checkout, as src/<area>/ is: paths relative to a module (config/feature_flags) hold. */
export const BUNDLE_DIR = 'dist/bundle/';
/** The same program as one CommonJS file, run by the workers of `serve` with V8's code cache (bin/code-cache.mjs). */
export const WORKER_BUNDLE = 'dist/bundle/worker.cjs';

export function sourceStamp(root) {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        const s = statSync(p);
        hash.update(`${p}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  const base = fileURLToPath(root);
  walk(join(base, 'src'));
  for (const f of ['tsconfig.json', 'package-lock.json', 'scripts/build.mjs']) {
    try {
      hash.update(`${f}\0${statSync(join(base, f)).mtimeMs}\n`);
    } catch {
      hash.update(`${f}\0-\n`);
    }
  }
  return hash.digest('hex');
}

export function buildIsFresh(root) {
  try {
    return readFileSync(new URL(STAMP_FILE, root), 'utf8') === sourceStamp(root);
  } catch {
    return false;
  }
}
