#!/usr/bin/env node
// Fails when an import under src/ points up the layers (docs/architecture.md, "Layers"):
//   platform -> http -> oauth -> web, and resources beside web (it may use oauth, never web);
//   config is below everything; app.ts, main.ts and cli/ sit on top and may import anything.
// Tests (*.test.ts, testing.ts) may also import the test support under test/; production code may not.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SRC = join(ROOT, 'src');

/** What each layer may import besides itself. */
const ALLOWED = {
  config: [],
  platform: ['config'],
  http: ['config', 'platform'],
  oauth: ['config', 'platform', 'http'],
  web: ['config', 'platform', 'http', 'oauth'],
  resources: ['config', 'platform', 'http', 'oauth'],
};

function files(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

// Static imports and re-exports (`import x from`, `import 'x'`, `export ... from`) and dynamic `import('x')`.
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

function layerOf(file) {
  const rel = relative(SRC, file);
  if (rel.startsWith('..')) return rel.startsWith(`..${sep}test${sep}`) ? 'test' : 'outside';
  const top = rel.split(sep)[0];
  return top in ALLOWED ? top : 'top';
}

const problems = [];
for (const file of files(SRC)) {
  const from = layerOf(file);
  if (from === 'top') continue;
  const isTest = /\.test\.ts$|(^|\/)testing\.ts$/.test(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const to = layerOf(resolve(dirname(file), spec));
    if (to === from) continue;
    if (to === 'test' && isTest) continue;
    if (ALLOWED[from].includes(to)) continue;
    const line = text.slice(0, m.index).split('\n').length + (m[0].startsWith('\n') ? 1 : 0);
    problems.push(`${relative(ROOT, file)}:${line}: ${from}/ must not import ${to === 'top' ? spec : `${to}/`} (${spec})`);
  }
}

if (problems.length) {
  console.error(`Imports pointing up the layers (see docs/architecture.md):\n${problems.join('\n')}`);
  process.exit(1);
}
