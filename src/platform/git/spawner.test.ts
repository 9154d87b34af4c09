import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configureGit, GitError, runGit } from './command.ts';

// runGit behaves the same whether this process starts git or the helper process does (spawner.ts): the same output,
// exit codes, errors and limits. The helper is what the application turns on.

const dir = mkdtempSync(join(tmpdir(), 'bellows-spawner-'));
after(() => {
  configureGit({ helper: false, binary: 'git' });
  rmSync(dir, { recursive: true, force: true });
});

// A stand-in for git that says who started it (its parent's pid), echoes its input, or kills its parent.
const fake = join(dir, 'fake-git');
writeFileSync(fake, [
  '#!/bin/sh',
  'case "$1" in',
  '  sleep) exec sleep 5 ;;',
  '  parent) echo "$PPID" ;;',
  '  echo) cat ;;',
  '  kill-parent) kill -9 "$PPID"; sleep 2 ;;',
  'esac',
].join('\n'));
chmodSync(fake, 0o755);

for (const helper of [false, true]) {
  const mode = helper ? 'through the helper' : 'from this process';

  test(`runGit ${mode}: output, input, exit codes and stderr`, async () => {
    configureGit({ helper, binary: 'git' });
    const version = await runGit(['--version']);
    assert.match(version.stdout.toString(), /^git version /);
    assert.equal(version.code, 0);
    const hashed = await runGit(['hash-object', '--stdin'], { input: Buffer.from('hello\n'), cwd: dir });
    assert.equal(hashed.stdout.toString().trim(), 'ce013625030ba8dba906f756967f9e9ca394464a');
    assert.equal((await runGit(['check-ref-format', 'a..b'], { okExitCodes: [1] })).code, 1);
    const err = await runGit(['cat-file', '-t', '0'.repeat(40)], { cwd: '/' }).catch((e) => e);
    assert.ok(err instanceof GitError);
    assert.equal(err.exitCode, 128);
    assert.match(err.stderr, /not a git repository|Not a valid object/);
  });

  test(`runGit ${mode}: large output arrives whole and in order`, async () => {
    configureGit({ helper, binary: fake });
    const input = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < input.length; i++) input[i] = i % 251;
    const r = await runGit(['echo'], { input, cwd: dir });
    assert.equal(r.stdout.length, input.length);
    assert.ok(r.stdout.equals(input));
  });

  test(`runGit ${mode}: the timeout, the output limit and an abort stop git`, async () => {
    configureGit({ helper, binary: fake });
    const started = Date.now();
    const slow = await runGit(['sleep'], { timeoutMs: 200, cwd: dir }).catch((e) => e);
    assert.ok(slow instanceof GitError);
    assert.equal(slow.reason, 'timeout');
    assert.ok(Date.now() - started < 4_000);
    const controller = new AbortController();
    const waiting = runGit(['sleep'], { cwd: dir, signal: controller.signal }).catch((e) => e);
    setTimeout(() => controller.abort(), 50);
    const aborted = await waiting;
    assert.ok(aborted instanceof GitError);
    assert.equal(aborted.reason, 'aborted');
    const big = Buffer.alloc(2 * 1024 * 1024, 1);
    const over = await runGit(['echo'], { input: big, maxBuffer: 64 * 1024, cwd: dir }).catch((e) => e);
    assert.ok(over instanceof GitError);
    assert.equal(over.reason, 'max_buffer');
    const cut = await runGit(['echo'], { input: big, maxBuffer: 64 * 1024, truncate: true, cwd: dir });
    assert.equal(cut.truncated, true);
    assert.equal(cut.stdout.length, 64 * 1024);
  });

  test(`runGit ${mode}: a binary that is not there is a spawn error`, async () => {
    configureGit({ helper, binary: join(dir, 'no-such-git') });
    const err = await runGit(['--version']).catch((e) => e);
    assert.ok(err instanceof GitError);
    assert.equal(err.reason, 'spawn');
    configureGit({ binary: 'git' });
  });
}

test('with the helper, git is started by the helper, not by this process', async () => {
  configureGit({ helper: true, binary: fake });
  const parent = Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim());
  assert.ok(parent > 0);
  assert.notEqual(parent, process.pid);
  configureGit({ helper: false });
  assert.equal(Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim()), process.pid);
});

test('a helper that dies fails the calls it held with a spawn error, and the next call starts another', async () => {
  configureGit({ helper: true, binary: fake });
  const first = Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim());
  const err = await runGit(['kill-parent'], { cwd: dir }).catch((e) => e);
  assert.ok(err instanceof GitError);
  assert.equal(err.reason, 'spawn');
  const second = Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim());
  assert.ok(second > 0);
  assert.notEqual(second, first);
  configureGit({ helper: false, binary: 'git' });
});
