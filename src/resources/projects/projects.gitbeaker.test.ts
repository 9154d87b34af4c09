import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { Gitlab } from '@gitbeaker/rest';
import { buildTestApp, type TestApp } from '../../../test/support/app.ts';
import { makeUser, type TestUser } from '../../../test/support/fixtures.ts';

// A real v4 client over HTTP: @gitbeaker/rest creates, reads, pages through, stars, forks and deletes projects.

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let base: string;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as any).port;
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await buildTestApp({ config: { externalUrl: base } });
  await t.app.listen({ port, host: '127.0.0.1' });
  alice = await makeUser(t.app);
  bob = await makeUser(t.app);
});
after(async () => { await t.close(); });

test('@gitbeaker/rest: create, show, list with pagination, star, fork, edit, delete', async () => {
  const a = new Gitlab({ host: base, token: alice.token });
  const b = new Gitlab({ host: base, token: bob.token });
  const created = await a.Projects.create({ name: 'Client Made', visibility: 'public', topics: ['cli', 'sdk'], initializeWithReadme: true } as any);
  assert.equal(created.path_with_namespace, `${alice.user.username}/client-made`);
  for (let i = 0; i < 4; i++) await a.Projects.create({ name: `extra-${i}`, visibility: 'public' });
  const shown = await b.Projects.show(`${alice.user.username}/client-made`);
  assert.equal(shown.id, created.id);
  assert.deepEqual(shown.topics, ['cli', 'sdk']);
  // Offset pagination followed by the client through the x-* headers.
  const all = await b.Projects.all({ perPage: 2, maxPages: 10, orderBy: 'id', sort: 'asc' } as any);
  assert.deepEqual(all.map((p: any) => p.name), ['Client Made', 'extra-0', 'extra-1', 'extra-2', 'extra-3']);
  // Keyset pagination followed through the Link header.
  const keyset = await b.Projects.all({ pagination: 'keyset', perPage: 2, orderBy: 'id', sort: 'desc' } as any);
  assert.deepEqual(keyset.map((p: any) => p.id), [...all].reverse().map((p: any) => p.id));
  const starred = await b.Projects.star(created.id);
  assert.equal(starred.star_count, 1);
  const fork = await b.Projects.fork(created.id);
  assert.equal((fork as any).forked_from_project?.id, created.id);
  const forks = await a.Projects.allForks(created.id);
  assert.deepEqual(forks.map((f: any) => f.id), [fork.id]);
  const edited = await a.Projects.edit(created.id, { description: 'edited by a client' });
  assert.equal(edited.description, 'edited by a client');
  await b.Projects.remove(fork.id);
  await assert.rejects(b.Projects.show(fork.id), (e: any) => e?.cause?.response?.status === 404);
});
