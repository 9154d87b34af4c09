// Runs a CommonJS bundle (dist/bundle/worker.cjs) with V8's code cache: the bytecode of the functions compiled while
// a process started, kept beside the bundle, so that the next start deserialises it instead of parsing and compiling
// the same code again. Node 20 has no cache for ES modules (`module.enableCompileCache` is Node 22), hence the
// CommonJS bundle compiled here through `vm.Script`, as Node's own loader compiles a CommonJS file.
//
// The cache file's name carries a digest of the bundle's bytes and of what V8 checks the cache against (Node's
// version, V8's cache version tag and flags): another bundle or another Node never reads it. V8 refuses a cache that
// does not fit anyway (`cachedDataRejected`); the bundle is then compiled from its source as if there were none, and
// the cache is written again. It is written once the process has started (`save()`, called later by its caller), so
// that it holds the functions compiled on the way there, not only the top level; through a temporary file renamed
// into place, so that a process reading it never sees half of one.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Runs the bundle at `file` (an absolute path); returns its exports, whether V8 took a cache (`cached`), and `save()`,
 * which writes the cache if there was none that fitted.
 */
export function runWithCodeCache(file) {
  const bytes = readFileSync(file);
  // The bundle's digest is written beside it by the build (hashing 6 MB at every start would cost more than the rest
  // of this); its size and time are added, so that a bundle changed in place never meets the cache of another.
  // The build writes the digest once it has made the bundle ASCII-only (scripts/build.mjs, `asciiOnly`): a bundle with
  // a digest is decoded as Latin-1 without looking at its 6 MB again.
  let digest;
  let ascii = true;
  try {
    digest = readFileSync(`${file}.sha256`, 'utf8').trim();
  } catch {
    digest = createHash('sha256').update(bytes).digest('hex');
    ascii = isAscii(bytes);
  }
  const { size, mtimeMs } = statSync(file);
  const key = createHash('sha256')
    .update(`${digest}\0${size}\0${mtimeMs}\0${process.version}\0${process.arch}\0${v8.cachedDataVersionTag()}\0${process.execArgv.join(' ')}`)
    .digest('hex')
    .slice(0, 32);
  const cacheFile = `${file}.${key}.cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(ascii ? bytes.latin1Slice() : bytes.toString('utf8')), { filename: file, cachedData });
  const stale = cachedData === undefined || script.cachedDataRejected === true;
  let saved = false;
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    cached: !stale,
    /** Writes the cache when there was none or V8 refused it; never fails (a read-only dist/ just goes without). */
    save() {
      if (!stale || saved) return;
      saved = true;
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      try {
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
        // Caches of earlier bundles or other Node versions are of no more use.
        const prefix = `${basename(file)}.`;
        for (const name of readdirSync(dirname(file))) {
          if (name.startsWith(prefix) && name.endsWith('.cache') && name !== basename(cacheFile)) rmSync(join(dirname(file), name), { force: true });
        }
      } catch {
        rmSync(tmp, { force: true });
      }
    },
  };
}
