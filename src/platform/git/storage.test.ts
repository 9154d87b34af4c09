import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Storage, UnknownShardError, diskPath } from './storage.ts';

// A small deterministic generator (mulberry32) so distribution checks are stable.
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('repository paths come from the project id only and stay under the shard', () => {
  const storage = new Storage([{ name: 'default', path: '/srv/repos/', weight: 100 }]);
  const p = storage.repoPath('default', 42);
  // sha256("42")
  assert.equal(p, '/srv/repos/@hashed/73/47/73475cb40a568e8da8a045ced110137e159f890ac4da883b6b17dc651b3a8049.git');
  assert.equal(storage.repoPath('default', 42, 'wiki'), p.replace(/\.git$/, '.wiki.git'));
  // A snippet's repository: its own id under @snippets, apart from the projects'.
  assert.equal(storage.repoPath('default', 42, 'snippet'), p.replace('/@hashed/', '/@snippets/'));
  assert.notEqual(storage.repoPath('default', 43), p);
  assert.equal(diskPath(42), p.slice('/srv/repos/'.length));
  for (const bad of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
    assert.throws(() => storage.repoPath('default', bad), RangeError, String(bad));
  }
  assert.throws(() => storage.repoPath('nope', 1), UnknownShardError);
});

test('shard configuration is validated', () => {
  assert.throws(() => new Storage([]), /at least one/);
  assert.throws(() => new Storage([{ name: '../x', path: '/a', weight: 1 }]), /invalid storage shard name/);
  assert.throws(() => new Storage([{ name: 'a', path: 'relative', weight: 1 }]), /absolute/);
  assert.throws(() => new Storage([{ name: 'a', path: '/a', weight: -1 }]), /weight/);
  assert.throws(
    () => new Storage([{ name: 'a', path: '/a', weight: 1 }, { name: 'a', path: '/b', weight: 1 }]),
    /duplicate/,
  );
});

test('pick is weighted, deterministic with an injected random source, and skips weight 0', () => {
  const shards = [
    { name: 'default', path: '/a', weight: 100 },
    { name: 'big', path: '/b', weight: 300 },
    { name: 'off', path: '/c', weight: 0 },
  ];
  const counts: Record<string, number> = { default: 0, big: 0, off: 0 };
  const storage = new Storage(shards, { random: seeded(7) });
  for (let i = 0; i < 4000; i++) counts[storage.pick()]++;
  assert.equal(counts.off, 0);
  assert.ok(Math.abs(counts.big / 4000 - 0.75) < 0.03, JSON.stringify(counts));

  const again = new Storage(shards, { random: seeded(7) });
  const first = new Storage(shards, { random: seeded(7) });
  assert.deepEqual(
    Array.from({ length: 20 }, () => again.pick()),
    Array.from({ length: 20 }, () => first.pick()),
  );
  // Fixed draws: 0.5^(1/100) < 0.9^(1/300), so "big" wins.
  const draws = [0.5, 0.9];
  assert.equal(new Storage(shards, { random: () => draws.shift()! }).pick(), 'big');
  assert.equal(new Storage([{ name: 'x', path: '/x', weight: 0 }, { name: 'y', path: '/y', weight: 0 }]).pick(), 'x');
});

test('sweep removes old leftovers of stopped pushes and creations on every shard, and nothing a running one uses', async () => {
  const { mkdtempSync, mkdirSync, writeFileSync, utimesSync, existsSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join, dirname } = await import('node:path');
  const roots = [mkdtempSync(join(tmpdir(), 'bellows-sweep-a-')), mkdtempSync(join(tmpdir(), 'bellows-sweep-b-'))];
  const storage = new Storage(roots.map((path, i) => ({ name: `s${i}`, path, weight: 1 })));
  const now = Date.now();
  const old = (p: string) => utimesSync(p, new Date(now - 2 * 3600_000), new Date(now - 2 * 3600_000));
  const make = (p: string) => {
    mkdirSync(p, { recursive: true });
    writeFileSync(join(p, 'pack-x.pack'), 'x');
    return p;
  };
  const kept: string[] = [];
  const gone: string[] = [];
  for (const [i] of roots.entries()) {
    const repo = storage.repoPath(`s${i}`, 7 + i);
    make(join(repo, 'objects', 'pack'));
    const stale = make(join(repo, 'objects', 'tmp_objdir-incoming-AbC123'));
    old(stale);
    gone.push(stale);
    kept.push(make(join(repo, 'objects', 'tmp_objdir-incoming-running')), join(repo, 'objects', 'pack'));
    const staged = make(storage.stagingPath(`s${i}`));
    old(staged);
    gone.push(staged);
    kept.push(make(storage.stagingPath(`s${i}`)));
    const trash = make(`${repo}+123-456+deleted`);
    gone.push(trash);
    // Snippet repositories are swept the same way.
    const snippet = storage.repoPath(`s${i}`, 7 + i, 'snippet');
    const snippetStale = make(join(snippet, 'objects', 'tmp_objdir-incoming-Old'));
    old(snippetStale);
    gone.push(snippetStale, make(`${snippet}+1-2+deleted`));
    kept.push(dirname(repo));
  }
  const removed = await storage.sweep(3600_000, now);
  assert.deepEqual(removed.sort(), gone.sort());
  for (const p of gone) assert.equal(existsSync(p), false, p);
  for (const p of kept) assert.equal(existsSync(p), true, p);
});
