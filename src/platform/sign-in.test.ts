import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/support/app.ts';
import { makeUser } from '../../test/support/fixtures.ts';
import type { ManualClock } from './clock.ts';
import { FORGET_MS, FREE_ATTEMPTS, checkSignIn } from './sign-in.ts';

// The throttle counts an attempt before the password is checked, in one statement: concurrent attempts (from any
// worker or machine) get no further than sequential ones would.

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

const failures = async (key: string) => (await t.app.db.selectFrom('sign_in_throttles').select('failures').where('key', '=', key).executeTakeFirst())?.failures ?? null;

test('concurrent wrong passwords: only the free attempts are checked, the others wait', async () => {
  const { user } = await makeUser(t.app, { password: 'right-password-1' });
  const results = await Promise.all(Array.from({ length: 12 }, () => checkSignIn(t.app, user.username, 'wrong-password', '10.0.0.1')));
  const reasons = results.map((r) => (r.ok ? 'ok' : r.reason));
  assert.equal(reasons.filter((r) => r === 'invalid').length, FREE_ATTEMPTS);
  assert.equal(reasons.filter((r) => r === 'throttled').length, 12 - FREE_ATTEMPTS);
  for (const r of results) if (!r.ok && r.reason === 'throttled') assert.equal(r.retryAfterSeconds, 1);
  assert.equal(await failures(`${user.username}|10.0.0.1`), FREE_ATTEMPTS);
  // Even the right password waits its turn.
  const waiting = await checkSignIn(t.app, user.username, 'right-password-1', '10.0.0.1');
  assert.deepEqual(waiting, { ok: false, reason: 'throttled', retryAfterSeconds: 1 });
  (t.clock as ManualClock).advance(1000);
  const good = await checkSignIn(t.app, user.username, 'right-password-1', '10.0.0.1');
  assert.equal(good.ok, true);
  assert.equal(await failures(`${user.username}|10.0.0.1`), null, 'a success clears the counter');
});

test('concurrent right passwords all pass, and failures are forgotten after an hour', async () => {
  const { user } = await makeUser(t.app, { password: 'right-password-2' });
  const ok = await Promise.all(Array.from({ length: 3 }, () => checkSignIn(t.app, user.username, 'right-password-2', '10.0.0.2')));
  assert.deepEqual(ok.map((r) => r.ok), [true, true, true]);
  for (let i = 0; i < FREE_ATTEMPTS; i++) assert.equal((await checkSignIn(t.app, user.username, 'nope', '10.0.0.2')).ok, false);
  assert.equal(await failures(`${user.username}|10.0.0.2`), FREE_ATTEMPTS);
  (t.clock as ManualClock).advance(FORGET_MS);
  const r = await checkSignIn(t.app, user.username, 'nope', '10.0.0.2');
  assert.deepEqual(r, { ok: false, reason: 'invalid' });
  assert.equal(await failures(`${user.username}|10.0.0.2`), 1, 'counting starts again');
});
