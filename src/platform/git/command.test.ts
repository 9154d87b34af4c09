import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runGit, assertSafeArg, GitError, UnsafeArgumentError, gitInvocationCount, spawnGit } from './command.ts';

test('runGit returns stdout as a Buffer and counts invocations', async () => {
  const before = gitInvocationCount();
  const r = await runGit(['--version']);
  assert.match(r.stdout.toString(), /^git version /);
  assert.equal(r.code, 0);
  assert.equal(gitInvocationCount(), before + 1);
});

test('the environment is fixed: no inherited GIT_* variables, private HOME', async () => {
  process.env.GIT_AUTHOR_NAME = 'leaked';
  process.env.GIT_CONFIG_PARAMETERS = "'core.pager=evil'";
  try {
    const r = await runGit(['var', 'GIT_AUTHOR_IDENT'], { env: { GIT_AUTHOR_EMAIL: 'a@b.c' }, okExitCodes: [128] });
    assert.doesNotMatch(r.stdout.toString(), /leaked/);
    const cfg = await runGit(['config', '--get', 'core.pager'], { okExitCodes: [1] });
    assert.equal(cfg.code, 1);
  } finally {
    delete process.env.GIT_AUTHOR_NAME;
    delete process.env.GIT_CONFIG_PARAMETERS;
  }
});

test('a failing command rejects with GitError carrying exit code and stderr', async () => {
  await assert.rejects(runGit(['rev-parse', '--verify', 'nope'], { gitDir: '/nonexistent-bellows-repo' }), GitError);
  const err = await runGit(['cat-file', '-t', '0'.repeat(40)], { cwd: '/' }).catch((e) => e);
  assert.ok(err instanceof GitError);
  assert.equal(err.exitCode, 128);
  assert.match(err.stderr, /not a git repository|Not a valid object/);
});

test('okExitCodes turns an exit code into an answer', async () => {
  const r = await runGit(['check-ref-format', 'a..b'], { okExitCodes: [1] });
  assert.equal(r.code, 1);
});

test('timeouts kill the process', async () => {
  // `hash-object --stdin` waits on stdin forever; spawnGit leaves stdin open, so only the timeout ends it.
  const child = spawnGit(['hash-object', '--stdin'], { timeoutMs: 100 });
  const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('close', (c, s) => r([c, s])));
  assert.equal(code, null);
  assert.equal(signal, 'SIGKILL');
});

test('maxBuffer stops runaway output', async () => {
  const err = await runGit(['help', '-a'], { maxBuffer: 10 }).catch((e) => e);
  assert.ok(err instanceof GitError);
  assert.equal(err.reason, 'max_buffer');
});

test('assertSafeArg refuses option-like values', () => {
  assert.equal(assertSafeArg('main'), 'main');
  assert.throws(() => assertSafeArg('-x'), UnsafeArgumentError);
  assert.throws(() => assertSafeArg('--upload-pack=touch /tmp/x'), UnsafeArgumentError);
  assert.throws(() => assertSafeArg(''), UnsafeArgumentError);
  assert.throws(() => assertSafeArg('a\0b'), UnsafeArgumentError);
});
