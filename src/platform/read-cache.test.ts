import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createReadCaches, defineMemo, defineObjectMemo, ownedMemo } from './read-cache.ts';
import { announceCacheVoid } from './cache-bus.ts';

function setup(window = 1000) {
  let t = 0;
  const caches = createReadCaches({ window, now: () => t });
  let loads = 0;
  const load = (v: string) => async () => (loads++, v);
  return { caches, load, loads: () => loads, advance: (ms: number) => (t += ms) };
}

test('an entry serves reads for the window, then is read again', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 10 });
  assert.equal(await c.get(1, s.load('a')), 'a');
  s.advance(999);
  assert.equal(await c.get(1, s.load('b')), 'a');
  s.advance(1);
  assert.equal(await c.get(1, s.load('c')), 'c');
  assert.equal(s.loads(), 2);
  s.caches.close();
});

test('a window of 0 keeps nothing; a cache may have a window of its own', async () => {
  const s = setup(0);
  const off = s.caches.define<number, string>('off', { max: 10 });
  await off.get(1, s.load('a'));
  assert.equal(await off.get(1, s.load('b')), 'b');
  const own = s.caches.define<number, string>('own', { max: 10, window: 50 });
  await own.get(1, s.load('a'));
  assert.equal(await own.get(1, s.load('b')), 'a');
  s.caches.close();
});

test('define gives the same cache to every caller of a name', async () => {
  const s = setup();
  await s.caches.define<number, string>('c', { max: 10 }).get(1, s.load('a'));
  assert.equal(await s.caches.define<number, string>('c', { max: 10 }).get(1, s.load('b')), 'a');
  s.caches.close();
});

test('voidAll and announcements on the cache bus drop every entry; after close the bus is not heard', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 10 });
  await c.get(1, s.load('a'));
  s.caches.voidAll();
  assert.equal(await c.get(1, s.load('b')), 'b');
  announceCacheVoid('all');
  assert.equal(await c.get(1, s.load('c')), 'c');
  s.caches.close();
  announceCacheVoid('all');
  assert.equal(await c.get(1, s.load('d')), 'c');
});

test('a value loaded while a write passed serves its own read only', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 10 });
  const read = c.get(1, async () => {
    s.caches.voidAll(); // the write passes while the read is in flight
    return 'stale';
  });
  assert.equal(await read, 'stale');
  assert.equal(await c.get(1, s.load('fresh')), 'fresh');
  const many = c.getMany([2, 3], async (ids) => (s.caches.voidAll(), new Map(ids.map((id) => [id, `stale${id}`]))));
  assert.deepEqual([...(await many).entries()], [[2, 'stale2'], [3, 'stale3']]);
  assert.deepEqual([...(await c.getMany([2], async () => new Map([[2, 'fresh2']]))).entries()], [[2, 'fresh2']]);
  s.caches.close();
});

test('reads missing the same key at once share one load; a load begun before a write is not joined', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 10 });
  const releases: Array<(v: string) => void> = [];
  let loads = 0;
  const slow = () => new Promise<string>((resolve) => { loads++; releases.push(resolve); });
  const first = c.get(1, slow);
  const second = c.get(1, slow);
  const other = c.get(2, s.load('two'));
  assert.equal(loads, 1);
  releases[0]('a');
  assert.deepEqual(await Promise.all([first, second, other]), ['a', 'a', 'two']);
  s.advance(1000);
  const before = c.get(1, slow);
  s.caches.voidAll();
  const after = c.get(1, slow);
  assert.equal(loads, 3);
  releases[1]('stale');
  releases[2]('b');
  assert.deepEqual(await Promise.all([before, after]), ['stale', 'b']);
  assert.equal(await c.get(1, s.load('c')), 'b');
  // A failed load fails its joiners too, and is not remembered.
  s.advance(1000);
  const failing = () => new Promise<string>((_, reject) => { loads++; setImmediate(() => reject(new Error('boom'))); });
  const r = await Promise.allSettled([c.get(3, failing), c.get(3, failing)]);
  assert.deepEqual(r.map((x) => x.status), ['rejected', 'rejected']);
  assert.equal(loads, 4);
  assert.equal(await c.get(3, s.load('three')), 'three');
  s.caches.close();
});

test('bounds: the least recently used entries go first', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 2 });
  await c.get(1, s.load('a'));
  await c.get(2, s.load('b'));
  await c.get(1, s.load('x'));
  await c.get(3, s.load('c'));
  assert.equal(await c.get(1, s.load('y')), 'a');
  assert.equal(await c.get(2, s.load('z')), 'z');
  s.caches.close();
});

test('getMany loads only what is missing, once per key, and remembers keys without a value', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('c', { max: 10 });
  const asked: number[][] = [];
  const load = async (ids: number[]) => (asked.push(ids), new Map(ids.filter((id) => id !== 9).map((id) => [id, `v${id}`])));
  assert.deepEqual([...(await c.getMany([1, 2, 1, 9], load)).entries()], [[1, 'v1'], [2, 'v2']]);
  assert.deepEqual([...(await c.getMany([3, 2, 9], load)).entries()], [[2, 'v2'], [3, 'v3']]);
  assert.deepEqual(asked, [[1, 2, 9], [3]]);
  s.caches.close();
});

test('keep decides which values are kept', async () => {
  const s = setup();
  const c = s.caches.define<number, number | null>('c', { max: 10, keep: (v) => v === null });
  await c.get(1, async () => 5);
  assert.equal(await c.get(1, async () => 6), 6);
  await c.get(2, async () => null);
  assert.equal(await c.get(2, async () => 7), null);
  s.caches.close();
});

test('a versioned entry serves the version it holds, whatever the window or writes', async () => {
  const s = setup();
  const c = s.caches.define<number, { id: number; v: number }>('rows', { max: 10, version: (r) => r.v });
  const rows = new Map([[1, { id: 1, v: 1 }], [2, { id: 2, v: 1 }]]);
  let reads = 0;
  const load = async (ids: number[]) => (reads++, new Map(ids.filter((id) => rows.has(id)).map((id) => [id, rows.get(id)!])));
  await c.getMany([1, 2], load, [1, 1]);
  s.advance(10_000);
  s.caches.voidAll();
  assert.equal((await c.getMany([1, 2], load, [1, 1])).get(1)!.v, 1);
  assert.equal(reads, 1);
  rows.set(1, { id: 1, v: 2 });
  assert.equal((await c.getMany([1, 2], load, [2, 1])).get(1)!.v, 2);
  assert.equal(reads, 2);
  assert.equal((await c.get(1, async () => ({ id: 1, v: 3 }), 2)).v, 2);
  rows.delete(2);
  assert.equal((await c.getMany([2], load, [5])).has(2), false);
  s.caches.close();
});

test('an object memo keeps one value per object, made once, and gives the same memo to every caller of a name', () => {
  const m = defineObjectMemo<object, { n: number }>('test-object-memo');
  const a = {};
  const b = {};
  let made = 0;
  const first = m.of(a, () => ({ n: ++made }));
  assert.equal(m.of(a, () => ({ n: ++made })), first);
  assert.deepEqual(m.of(b, () => ({ n: ++made })), { n: 2 });
  assert.equal(made, 2);
  // Keys are identities: an equal object is another key.
  assert.equal(m.get({}), undefined);
  assert.equal(defineObjectMemo<object, { n: number }>('test-object-memo').get(a), first);
  assert.equal(defineObjectMemo<object, { n: number }>('test-object-memo-2').get(a), undefined);
  m.delete(a);
  assert.equal(m.get(a), undefined);
  assert.deepEqual(m.of(a, () => ({ n: ++made })), { n: 3 });
  m.set(b, { n: 9 });
  assert.deepEqual(m.get(b), { n: 9 });
});

test('an object memo remembers a made value even when it is falsy, and a failing make keeps nothing', () => {
  const m = defineObjectMemo<object, number>('test-object-memo-falsy');
  const k = {};
  let made = 0;
  assert.equal(m.of(k, () => (made++, 0)), 0);
  assert.equal(m.of(k, () => (made++, 1)), 0);
  assert.equal(made, 1);
  const other = {};
  assert.throws(() => m.of(other, () => { throw new Error('no'); }), /no/);
  assert.equal(m.of(other, () => 5), 5);
});

test('an object memo does not keep its keys alive', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const m = defineObjectMemo<object, number[]>('test-object-memo-weak');
  const refs: WeakRef<object>[] = [];
  (() => {
    for (let i = 0; i < 10; i++) {
      const key = {};
      refs.push(new WeakRef(key));
      m.of(key, () => [i]);
    }
  })();
  for (let i = 0; i < 5 && refs.some((r) => r.deref()); i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  assert.equal(refs.filter((r) => r.deref()).length, 0);
});

test('owned and named memos are bounded LRUs', () => {
  const o = ownedMemo<number, string>({ max: 2 });
  o.set(1, 'a');
  o.set(2, 'b');
  o.get(1);
  o.set(3, 'c');
  assert.equal(o.get(2), undefined);
  assert.equal(o.get(1), 'a');
  assert.equal(o.get(3), 'c');
  const named = defineMemo<number, string>('test-named-memo', { max: 1 });
  named.set(1, 'a');
  assert.equal(defineMemo<number, string>('test-named-memo', { max: 1 }).get(1), 'a');
  named.set(2, 'b');
  assert.equal(named.get(1), undefined);
  named.clear();
  assert.equal(named.get(2), undefined);
});

test('an immutable entry serves reads past the window and writes; concurrent reads of it share one load', async () => {
  const s = setup();
  const c = s.caches.define<string, string>('immutable', { max: 10, immutable: true, keep: (v) => v !== 'big' });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let loads = 0;
  const slow = async () => { loads++; await gate; return 'a'; };
  const both = Promise.all([c.get('k', slow), c.get('k', slow)]);
  release();
  assert.deepEqual(await both, ['a', 'a']);
  assert.equal(loads, 1);
  s.advance(10_000);
  s.caches.voidAll();
  assert.equal(await c.get('k', s.load('b')), 'a');
  assert.equal(s.loads(), 0);
  // What `keep` refuses is loaded again.
  assert.equal(await c.get('x', s.load('big')), 'big');
  assert.equal(await c.get('x', s.load('small')), 'small');
  assert.equal(s.loads(), 2);
  // A failed load is not kept and does not hold the key.
  await assert.rejects(c.get('e', async () => { throw new Error('boom'); }), /boom/);
  assert.equal(await c.get('e', s.load('ok')), 'ok');
  s.caches.close();
});

test('an epoch cache serves a read naming the epoch it was loaded at, across writes, within the window', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('epoch', { max: 10, epoch: true });
  assert.equal(await c.get(1, s.load('a'), 7), 'a');
  s.caches.voidAll();
  announceCacheVoid('all');
  // A read naming epoch 7 is served what was loaded at 7; a read naming none follows the window and generation rule.
  assert.equal(await c.get(1, s.load('b'), 7), 'a');
  assert.equal(await c.get(1, s.load('c')), 'c');
  // The value loaded without an epoch replaced one of epoch 7 and is newer: it keeps the epoch.
  s.caches.voidAll();
  assert.equal(await c.get(1, s.load('d'), 7), 'c');
  // Another epoch (the database moved) loads again.
  assert.equal(await c.get(1, s.load('e'), 8), 'e');
  s.caches.voidAll();
  assert.equal(await c.get(1, s.load('f'), 7), 'f');
  // The window still bounds it.
  s.advance(1000);
  assert.equal(await c.get(1, s.load('g'), 7), 'g');
  assert.equal(s.loads(), 5);
  s.caches.close();
});

test('a cache not declared for epochs ignores an epoch named by a read', async () => {
  const s = setup();
  const c = s.caches.define<number, string>('plain', { max: 10 });
  assert.equal(await c.get(1, s.load('a'), 7), 'a');
  s.caches.voidAll();
  assert.equal(await c.get(1, s.load('b'), 7), 'b');
  s.caches.close();
});
