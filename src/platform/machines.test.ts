import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/support/app.ts';
import type { ManualClock } from './clock.ts';
import { STALE_MS, ShardListMismatchError, joinInstallation, oneStartAtATime } from './machines.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

const rows = () => t.app.db.selectFrom('machines').select(['shards']).orderBy('started_at').execute();

test('machines with the same shards join; another list is refused while one of them runs; a stale one does not count', async () => {
  const deps = { db: t.app.db, clock: t.clock };
  const a = await joinInstallation({ ...deps, shards: ['default', 'fast'] });
  const b = await joinInstallation({ ...deps, shards: ['fast', 'default'] });
  assert.deepEqual(await rows(), [{ shards: 'default,fast' }, { shards: 'default,fast' }]);
  await assert.rejects(joinInstallation({ ...deps, shards: ['default'] }), (e: unknown) => {
    assert.ok(e instanceof ShardListMismatchError);
    assert.match(e.message, /^storage shards differ from those of the running machine .+ \(pid \d+\): there \[default,fast\], here \[default\]; stop every machine to change the shard list$/);
    return true;
  });
  assert.equal((await rows()).length, 2, 'nothing recorded for the refused machine');
  await a.leave();
  await assert.rejects(joinInstallation({ ...deps, shards: ['default'] }), ShardListMismatchError);
  await b.leave();
  assert.deepEqual(await rows(), []);
  // Everyone stopped: the new list is accepted, and a machine not seen for STALE_MS no longer holds its list.
  const c = await joinInstallation({ ...deps, shards: ['default'] });
  (t.clock as ManualClock).advance(STALE_MS + 1);
  const d = await joinInstallation({ ...deps, shards: ['default', 'other'] });
  assert.deepEqual(await rows(), [{ shards: 'default,other' }], 'the stale machine was removed');
  await c.leave();
  await d.leave();
});

test('first starts take turns', async () => {
  const order: string[] = [];
  const step = (name: string) => oneStartAtATime(t.app.db, async () => {
    order.push(`${name} in`);
    await new Promise((r) => setTimeout(r, 30));
    order.push(`${name} out`);
  });
  await Promise.all([step('a'), step('b')]);
  if (t.app.database.dialect === 'postgres') {
    // Each holds the lock throughout.
    assert.ok(order.join() === 'a in,a out,b in,b out' || order.join() === 'b in,b out,a in,a out', order.join());
  } else {
    assert.equal(order.length, 4);
  }
});
