import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyReplacements, fileLines, overlapping, suggestionBlocks, suggestionCommitMessage, suggestionLines, DEFAULT_COMMIT_MESSAGE,
} from './suggestions.parser.ts';

test('suggestion blocks: labels, context, order, other fences ignored', () => {
  const body = [
    'Look:', '```suggestion', '  foo', '  bar', '```', 'and', '```suggestion:-2+1', 'x', '```',
    '```ruby', 'not this', '```', '```suggestion:-a+1', 'nor this', '```', '~~~suggestion:-0+3', 'tilde', '~~~',
    '- in a list', '  ```suggestion', '  listed', '  ```',
  ].join('\n');
  assert.deepEqual(suggestionBlocks(body), [
    { text: '  foo\n  bar', above: 0, below: 0 },
    { text: 'x', above: 2, below: 1 },
    { text: 'tilde', above: 0, below: 3 },
    { text: 'listed', above: 0, below: 0 },
  ]);
  assert.deepEqual(suggestionBlocks('no blocks `suggestion` here'), []);
  assert.deepEqual(suggestionBlocks('```suggestion\n```'), [{ text: '', above: 0, below: 0 }]);
  assert.equal(suggestionBlocks('```suggestion:-99999999999999999999+0\nx\n```')[0].above, 1_000_000);
});

test('the lines a suggestion replaces and its replacement ending as they end', () => {
  const file = 'l1\nl2\nl3\nl4\nl5';
  assert.deepEqual(fileLines(file), ['l1\n', 'l2\n', 'l3\n', 'l4\n', 'l5']);
  assert.deepEqual(fileLines('a\r\nb\r\n'), ['a\r\n', 'b\r\n']);
  assert.deepEqual(suggestionLines(file, 3, { text: 'X', above: 1, below: 1 }), { fromLine: 2, toLine: 4, fromContent: 'l2\nl3\nl4\n', toContent: 'X\n' });
  assert.deepEqual(suggestionLines(file, 2, { text: 'X', above: 5, below: 0 }), { fromLine: 1, toLine: 2, fromContent: 'l1\nl2\n', toContent: 'X\n' });
  assert.deepEqual(suggestionLines(file, 5, { text: 'X', above: 0, below: 0 }), { fromLine: 5, toLine: 5, fromContent: 'l5', toContent: 'X' });
  assert.deepEqual(suggestionLines('a\r\nb\r\n', 1, { text: 'A', above: 0, below: 0 }).toContent, 'A\r\n');
});

test('applying several replacements to one file, and overlaps', () => {
  const file = 'l1\nl2\nl3\nl4\nl5\n';
  const a = { fromLine: 1, toLine: 1, toContent: 'A\n' };
  const b = { fromLine: 3, toLine: 4, toContent: 'B\nB2\nB3\n' };
  const c = { fromLine: 4, toLine: 5, toContent: '' };
  assert.equal(applyReplacements(file, [b, a]), 'A\nl2\nB\nB2\nB3\nl5\n');
  assert.equal(overlapping([a, b]), false);
  assert.equal(overlapping([c, a, b]), true);
  assert.equal(overlapping([{ fromLine: 2, toLine: 2, toContent: '' }, { fromLine: 2, toLine: 2, toContent: '' }]), true);
});

test('commit message: the default, a template, every placeholder', () => {
  const v = {
    branch_name: 'feature', files_count: 2, file_paths: ['b.txt', 'a.txt'], project_name: 'Proj', project_path: 'proj',
    user_full_name: 'Ann Applier', username: 'ann', suggestions_count: 3, co_authors: [{ name: 'Bob', email: 'bob@x.test' }, { name: 'Cy', email: 'cy@x.test' }],
  };
  assert.equal(suggestionCommitMessage(undefined, v), 'Apply 3 suggestion(s) to 2 file(s)\n\nCo-authored-by: Bob <bob@x.test>\nCo-authored-by: Cy <cy@x.test>');
  assert.equal(suggestionCommitMessage('', { ...v, co_authors: [] }), 'Apply 3 suggestion(s) to 2 file(s)\n\n');
  assert.equal(DEFAULT_COMMIT_MESSAGE.includes('%{co_authored_by}'), true);
  assert.equal(
    suggestionCommitMessage('%{branch_name}|%{files_count}|%{file_paths}|%{project_name}|%{project_path}|%{user_full_name}|%{username}|%{suggestions_count}|%{other}', v),
    'feature|2|a.txt, b.txt|Proj|proj|Ann Applier|ann|3|%{other}',
  );
});
