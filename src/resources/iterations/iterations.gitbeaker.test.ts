import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Gitlab } from '@gitbeaker/rest';
import { call, type TestApp } from '../../../test/support/app.ts';
import { listeningTestApp } from '../../../test/support/gitbeaker.ts';
import { addMember, makeGroup, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';

// @gitbeaker/rest reading group iterations (the reference serves them read-only over REST; the cadence
// that makes them is a Bellows extension, created here through the API).

let t: TestApp;
let base: string;
before(async () => { ({ t, base } = await listeningTestApp()); });
after(async () => { await t.close(); });

test('@gitbeaker/rest drives GroupIterations', async () => {
  const owner = await quickUser(t.app);
  const top = await makeGroup(t.app, { visibility: 0 });
  const sub = await makeGroup(t.app, { visibility: 0, parent: top });
  const p = await makeProject(t.app, { namespace: sub, visibility: 0 });
  await addMember(t.app, { type: 'Namespace', id: top.id }, owner.user.id, Role.owner);
  // The test clock stands at 2026-06-01 (a Monday): one current and two upcoming weekly iterations.
  const c = await call(t.app, 'POST', `/groups/${top.id}/iteration_cadences`, {
    token: owner.token, body: { title: 'Weekly', start_date: '2026-06-01', duration_in_weeks: 1, iterations_in_advance: 2 },
  });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  const m = await call(t.app, 'POST', `/groups/${sub.id}/iteration_cadences`, { token: owner.token, body: { title: 'Manual', automatic: false } });
  const own = await call(t.app, 'POST', `/groups/${sub.id}/iterations`, {
    token: owner.token, body: { cadence_id: m.body.id, title: 'Sub sprint', start_date: '2026-05-01', due_date: '2026-05-14' },
  });
  assert.equal(own.status, 201, JSON.stringify(own.body));
  const api = new Gitlab({ host: base, token: owner.token });
  const all = await api.GroupIterations.all(top.id);
  assert.deepEqual(all.map((i: any) => [i.start_date, i.due_date, i.state, i.group_id]), [
    ['2026-06-01', '2026-06-07', 2, top.id], ['2026-06-08', '2026-06-14', 1, top.id], ['2026-06-15', '2026-06-21', 1, top.id],
  ]);
  assert.deepEqual((await api.GroupIterations.all(top.id, { state: 'current' })).map((i: any) => i.start_date), ['2026-06-01']);
  assert.deepEqual((await api.GroupIterations.all(top.id, { state: 'upcoming' })).length, 2);
  assert.deepEqual((await api.GroupIterations.all(sub.id, { includeAncestors: false })).map((i: any) => i.title), ['Sub sprint']);
  assert.deepEqual((await api.GroupIterations.all(sub.id, { state: 'closed' })).map((i: any) => i.title), ['Sub sprint']);
  assert.deepEqual((await api.GroupIterations.all(sub.id, { search: 'Sub' })).map((i: any) => i.id), [own.body.id]);
  // gitbeaker's ProjectIterations asks for /project/:id/iterations (singular), which no server answers: a 404 here.
  await assert.rejects(api.ProjectIterations.all(p.id), (e: any) => e?.cause?.response?.status === 404);
  const page = await api.GroupIterations.all(sub.id, { perPage: 2, maxPages: 1 } as any);
  assert.deepEqual(page.map((i: any) => i.start_date), ['2026-05-01', '2026-06-01']);
});
