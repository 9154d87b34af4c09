import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidRefName, isValidBranchName, isValidTagName, isSafeRevision } from './refs.ts';
import { runGit } from './command.ts';

// [name, valid as a one-level-allowed ref name]
const table: Array<[string, boolean]> = [
  ['main', true],
  ['feature/login', true],
  ['release-1.0', true],
  ['a./b', true],
  ['ünïcode/名前', true],
  ['x{y}', true],
  ['@', false],
  ['a@b', true],
  ['a@{b', false],
  ['branch*', false],
  ['new design', false],
  ['a..b', false],
  ['a/.hidden', false],
  ['.hidden', false],
  ['topic.lock', false],
  ['a.lock/b', false],
  ['a/b.lock', false],
  ['trailing.', false],
  ['trailing/', false],
  ['/leading', false],
  ['a//b', false],
  ['tab\there', false],
  ['nl\nhere', false],
  ['del\x7fchar', false],
  ['tilde~1', false],
  ['caret^', false],
  ['colon:x', false],
  ['question?', false],
  ['open[bracket', false],
  ['back\\slash', false],
  ['', false],
];

test('isValidRefName follows git check-ref-format', async () => {
  for (const [name, expected] of table) {
    assert.equal(isValidRefName(name), expected, `isValidRefName(${JSON.stringify(name)})`);
  }
});

test('isValidRefName agrees with the git binary', async () => {
  const names = table.map(([n]) => n).filter((n) => n !== '' && !n.includes('\0'));
  const results = await Promise.all(
    names.map((n) => runGit(['check-ref-format', '--allow-onelevel', n], { okExitCodes: [1] })),
  );
  names.forEach((n, i) => assert.equal(results[i].code === 0, isValidRefName(n), `git disagrees on ${JSON.stringify(n)}`));
});

test('leading dash and one-level names', () => {
  assert.equal(isValidRefName('-x'), false);
  assert.equal(isValidRefName('--upload-pack=evil'), false);
  assert.equal(isValidRefName('main', { allowOneLevel: false }), false);
  assert.equal(isValidRefName('refs/heads/main', { allowOneLevel: false }), true);
});

test('branch and tag names follow the API rules', () => {
  assert.equal(isValidBranchName('main'), true);
  assert.equal(isValidBranchName('feature/x'), true);
  assert.equal(isValidBranchName('HEAD'), false);
  assert.equal(isValidBranchName('refs/heads/main'), false);
  assert.equal(isValidBranchName('-rf'), false);
  assert.equal(isValidBranchName('branch*'), false);
  assert.equal(isValidBranchName('new design'), false);
  assert.equal(isValidBranchName('@'), true, 'refs/heads/@ is a valid ref');
  assert.equal(isValidTagName('v1.0.0'), true);
  assert.equal(isValidTagName('v1.0.0.lock'), false);
});

test('isSafeRevision refuses option text and revision-syntax searches', () => {
  for (const ok of ['main', 'a1b2c3', 'main~2', 'main^2', 'v1..main', 'a...b', 'refs/tags/v1']) {
    assert.equal(isSafeRevision(ok), true, ok);
  }
  for (const bad of ['-n', '--all', 'main:README', ':/fix', 'main@{1}', 'main^{/msg}', 'a b', 'a\nb', '']) {
    assert.equal(isSafeRevision(bad), false, bad);
  }
});
