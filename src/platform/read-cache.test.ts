import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadCaches } from './read-cache.ts';
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
