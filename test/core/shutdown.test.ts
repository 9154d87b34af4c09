import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { buildTestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';

// Closing the application lets a request already in flight finish and accepts no new connection.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a request in flight when the server stops still gets its answer; new connections are refused', async () => {
  const t = await buildTestApp();
  try {
    const admin = await makeUser(t.app, { admin: true });
    const target = await makeUser(t.app);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as { port: number }).port;

    const body = JSON.stringify({ bio: 'finished while stopping' });
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    let answer = '';
    socket.on('data', (d) => { answer += d; });
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(`PUT /api/v4/users/${target.user.id} HTTP/1.1\r\nHost: x\r\nPRIVATE-TOKEN: ${admin.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    socket.write(body.slice(0, 5));
    await sleep(150);

    const closing = t.app.close();
    await sleep(150);
    const refused = await new Promise<string>((r) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); r('connected'); });
      s.once('error', (e: NodeJS.ErrnoException) => r(e.code ?? 'error'));
    });
    assert.equal(refused, 'ECONNREFUSED');

    socket.write(body.slice(5));
    // The answer carries "Connection: close", so the socket ends and the stop completes at once.
    const guard = setTimeout(() => socket.destroy(), 5000);
    await ended;
    clearTimeout(guard);
    await closing;
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /"bio":"finished while stopping"/);
    const row = await t.app.db.selectFrom('users').select('bio').where('id', '=', target.user.id).executeTakeFirstOrThrow();
    assert.equal(row.bio, 'finished while stopping');
  } finally {
    await t.close();
  }
});
