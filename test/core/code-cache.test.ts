import assert from 'node:assert/strict';
import { isAscii } from 'node:buffer';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

// bin/code-cache.mjs: the workers of `serve` run the CommonJS bundle through it with V8's code cache. Each run is a
// process of its own, as each worker is (V8 keeps what it compiled in a process, and would not look at a cache twice).
const LOADER = pathToFileURL(resolve('bin/code-cache.mjs')).href;
function runWithCodeCache(file: string, o: { save?: boolean } = {}): { cached: boolean; result: number; where: boolean; self: boolean } {
  const script = `const { runWithCodeCache } = await import(${JSON.stringify(LOADER)});
const b = runWithCodeCache(${JSON.stringify(file)});
const out = { cached: b.cached, result: b.exports.run(), where: b.exports.where, self: b.exports.self };
${o.save === false ? '' : 'b.save(); b.save();'}
process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function bundleDir(source: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bellows-code-cache-'));
  const file = join(dir, 'worker.cjs');
  writeFileSync(file, source);
  return { dir, file };
}
const caches = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.cache'));
// Functions enough that V8 compiles them lazily, and a require() and __filename as a CommonJS module has them.
const SOURCE = [
  "const { join } = require('node:path');",
  ...Array.from({ length: 50 }, (_, i) => `function f${i}(x) { return x.map((y) => y * ${i + 1}).reduce((a, b) => a + b, 0); }`),
  `exports.run = () => [${Array.from({ length: 50 }, (_, i) => `f${i}([1, 2, 3])`).join(', ')}].reduce((a, b) => a + b, 0);`,
  'exports.where = join(__dirname, "x") === __filename.replace(/worker\\.cjs$/, "x");',
  'exports.self = this === module.exports;',
].join('\n');

test('the first run compiles and writes the cache after it ran; the next run takes it; both run the same', () => {
  const { dir, file } = bundleDir(SOURCE);
  try {
    const first = runWithCodeCache(file, { save: false });
    assert.deepEqual(first, { cached: false, result: 6 * (50 * 51) / 2, where: true, self: true });
    assert.deepEqual(caches(dir), []);
    assert.equal(runWithCodeCache(file).cached, false);
    assert.equal(caches(dir).length, 1);
    assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);
    const before = readFileSync(join(dir, caches(dir)[0]!));
    const second = runWithCodeCache(file);
    assert.deepEqual(second, { cached: true, result: 6 * (50 * 51) / 2, where: true, self: true });
    // A cache that was taken is not written again.
    assert.deepEqual(readFileSync(join(dir, caches(dir)[0]!)), before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a corrupted or truncated cache is compiled around and written again', () => {
  const { dir, file } = bundleDir(SOURCE);
  try {
    runWithCodeCache(file);
    const name = join(dir, caches(dir)[0]!);
    for (const bad of [Buffer.from('garbage'), Buffer.alloc(4096, 7), readFileSync(name).subarray(0, 200)]) {
      writeFileSync(name, bad);
      const run = runWithCodeCache(file);
      assert.equal(run.cached, false);
      assert.equal(run.result, 6 * (50 * 51) / 2);
      assert.equal(runWithCodeCache(file).cached, true);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('another bundle never reads the cache of the previous one, whose cache is removed', () => {
  const { dir, file } = bundleDir(SOURCE);
  try {
    runWithCodeCache(file);
    const old = caches(dir);
    // The same length, other bytes: V8 itself would only compare the length.
    writeFileSync(file, SOURCE.replace('y * 1)', 'y * 9)'));
    const run = runWithCodeCache(file);
    assert.equal(run.cached, false);
    assert.equal(run.result, 6 * (50 * 51) / 2 + 6 * 8);
    assert.equal(caches(dir).length, 1);
    assert.notDeepEqual(caches(dir), old);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a cache that cannot be written or read leaves the bundle running and nothing behind', () => {
  const { dir, file } = bundleDir(SOURCE);
  try {
    runWithCodeCache(file);
    const name = join(dir, caches(dir)[0]!);
    // In the cache's place a directory (not empty): reading it and renaming onto it both fail.
    rmSync(name);
    mkdirSync(join(name, 'inside'), { recursive: true });
    const run = runWithCodeCache(file);
    assert.equal(run.cached, false);
    assert.equal(run.result, 6 * (50 * 51) / 2);
    assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), []);
    assert.deepEqual(readdirSync(name), ['inside']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the build leaves the worker bundle ASCII only, its strings, templates and patterns meaning what they did', async () => {
  // @ts-expect-error: a script of the build, without types
  const { asciiOnly } = await import('../../scripts/build.mjs');
  const source = [
    '// a comment \u2192 kept from a package, and \u00a0 a no-break space',
    "const tag = (s, ...v) => s.reduce((a, p, i) => a + p + (i < v.length ? v[i] : ''), '');",
    'exports.run = () => [tag`<title>${"x"} \u00b7 Bellows</title>`, "caf\u00e9 \u{1F600}", /([?!])\u2026/.test("?\u2026"), /\u0440\u0444$/u.test("\u0440\u0444")].join("|");',
  ].join('\n');
  const { dir, file } = bundleDir(source);
  try {
    const before = readFileSync(file);
    assert.ok(!isAscii(before));
    asciiOnly(file);
    const after = readFileSync(file);
    assert.ok(isAscii(after));
    const run = (text: string) => { const m = { exports: {} as { run(): string } }; new Function('exports', 'module', text)(m.exports, m); return m.exports.run(); };
    assert.equal(run(after.toString('latin1')), run(before.toString('utf8')));
    assert.equal(run(after.toString('latin1')), '<title>x \u00b7 Bellows</title>|caf\u00e9 \u{1F600}|true|true');
    writeFileSync(file, 'exports.run = () => String.raw`a \u00b7 b`;');
    assert.throws(() => asciiOnly(file), /raw template/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bundle without the build\'s digest beside it is read as UTF-8 when it is not ASCII', () => {
  const { dir, file } = bundleDir('exports.run = () => "caf\u00e9 \u2192".length;\nexports.where = true;\nexports.self = true;');
  try {
    assert.equal(runWithCodeCache(file).result, 6);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
