import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitTitle, parseTrailerText, splitRecords } from './commit.ts';
import { languageOf, languageShares } from './languages.ts';

test('commitTitle is the first line, or a fixed text for blank messages', () => {
  assert.equal(commitTitle('Fix it\n\nBody'), 'Fix it');
  assert.equal(commitTitle('Windows\r\nline'), 'Windows');
  assert.equal(commitTitle('x'.repeat(150)), 'x'.repeat(150));
  assert.equal(commitTitle(' \n\n'), 'No commit message');
});

test('splitRecords keeps arbitrary text, newlines included, inside fields', () => {
  const out = 'a\0line1\nline2\n\0\nb\0\0\n';
  assert.deepEqual(splitRecords(out, 2), [['a', 'line1\nline2\n'], ['b', '']]);
  assert.deepEqual(splitRecords('', 2), []);
});

test('parseTrailerText: last value wins, extended keeps all', () => {
  const t = parseTrailerText('Signed-off-by\x1fA\x1eSigned-off-by\x1fB\x1eChangelog\x1ffixed: yes');
  assert.deepEqual(t.trailers, { 'Signed-off-by': 'B', Changelog: 'fixed: yes' });
  assert.deepEqual(t.extended_trailers, { 'Signed-off-by': ['A', 'B'], Changelog: ['fixed: yes'] });
});

test('languageOf maps names to languages and skips prose, data and vendored code', () => {
  assert.equal(languageOf('src/a.ts'), 'TypeScript');
  assert.equal(languageOf('lib/x.CPP'), 'C++');
  assert.equal(languageOf('Makefile'), 'Makefile');
  assert.equal(languageOf('README.md'), null);
  assert.equal(languageOf('package.json'), null);
  assert.equal(languageOf('.bashrc'), null);
  assert.equal(languageOf('node_modules/x/index.js'), null);
  assert.equal(languageOf('web/app.min.js'), null);
  assert.deepEqual(languageShares([{ path: 'a.py', size: 1 }, { path: 'b.go', size: 2 }, { path: 'c.md', size: 100 }]), {
    Go: 66.67,
    Python: 33.33,
  });
  assert.deepEqual(languageShares([]), {});
});
