import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

test('the helper stays through SIGINT and SIGTERM: its worker decides when to stop', async () => {
  configureGit({ helper: true, binary: fake });
  const helper = Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim());
  process.kill(helper, 'SIGINT');
  process.kill(helper, 'SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(Number((await runGit(['parent'], { cwd: dir })).stdout.toString().trim()), helper);
  configureGit({ helper: false, binary: 'git' });
});

test('a helper ends when its worker ends', async () => {
  const { spawnSync } = await import('node:child_process');
  const command = new URL('./command.ts', import.meta.url).href;
  const code = `const m = await import(${JSON.stringify(command)}); m.configureGit({ helper: true, binary: ${JSON.stringify(fake)} });`
    + ` process.stdout.write((await m.runGit(['parent'], { cwd: ${JSON.stringify(dir)} })).stdout); process.exit(0);`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const helper = Number(r.stdout.trim());
  assert.ok(helper > 0);
  // Ended: gone, or a zombie nobody reaped (its new parent may be a container's init that does not reap).
  const alive = () => {
    try {
      return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${helper}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 50 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(alive(), false);
});

test('through the helper, close comes after the last chunk, also for a reader that pauses', async () => {
  const { startThroughHelper } = await import('./spawner.ts');
  const child = startThroughHelper(fake, ['echo'], dir, { PATH: process.env.PATH ?? '/usr/bin:/bin' });
  assert.ok(child);
  const input = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < input.length; i++) input[i] = i % 253;
  const got: Buffer[] = [];
  let closedAt = -1;
  child.stdout.on('data', (chunk: Buffer) => {
    got.push(chunk);
    // A reader applying back-pressure: it takes the next chunk a moment later.
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), 1);
  });
  child.stderr.resume();
  const closed = new Promise<number | null>((resolve) => child.on('close', (code: number | null) => {
    closedAt = Buffer.concat(got).length;
    resolve(code);
  }));
  child.stdin.end(input);
  assert.equal(await closed, 0);
  assert.equal(closedAt, input.length);
  assert.ok(Buffer.concat(got).equals(input));
});
