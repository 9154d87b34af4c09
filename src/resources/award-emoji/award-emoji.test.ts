import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeIssue, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import type { ProjectRow } from '../../platform/membership.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const awardsOf = async (type: string, id: number) =>
  (await t.app.db.selectFrom('award_emoji').select(['name', 'user_id']).where('awardable_type', '=', type).where('awardable_id', '=', id).orderBy('id').execute());

const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;

describe('award emoji on notes', () => {
  let p: ProjectRow;
  let roles: RoleCast;
  let issue: { id: number; iid: number };
  let secret: { id: number; iid: number };
  let noteId: number;
  let internalId: number;
  let secretNoteId: number;
  const url = (id = noteId, i = issue) => `/projects/${p.id}/issues/${i.iid}/notes/${id}/award_emoji`;
  before(async () => {
    p = await makeProject(t.app, { visibility: 0 });
    roles = await castRoles(t.app, p);
    issue = await makeIssue(t.app, p, { authorId: roles.owner.user.id });
    secret = await makeIssue(t.app, p, { authorId: roles.owner.user.id, confidential: true });
    noteId = (await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.developer.token, body: { body: 'a note' } })).body.id;
    internalId = (await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.reporter.token, body: { body: 'hush', internal: true } })).body.id;
    secretNoteId = (await call(t.app, 'POST', `/projects/${p.id}/issues/${secret.iid}/notes`, { token: roles.reporter.token, body: { body: 'secret' } })).body.id;
  });

  test('award, list, read and remove: the reference entity with awardable_type Note', async () => {
    const r = await call(t.app, 'POST', url(), { token: roles.guest.token, body: { name: 'thumbsup' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), ['id', 'name', 'user', 'created_at', 'updated_at', 'awardable_id', 'awardable_type', 'url']);
    assert.deepEqual({ ...r.body, id: 0, user: r.body.user.username }, {
      id: 0, name: 'thumbsup', user: roles.guest.user.username, created_at: new Date(t.clock.now()).toISOString(),
      updated_at: new Date(t.clock.now()).toISOString(), awardable_id: noteId, awardable_type: 'Note', url: null,
    });
    assert.deepEqual(await awardsOf('Note', noteId), [{ name: 'thumbsup', user_id: roles.guest.user.id }]);
    assert.deepEqual(await awardsOf('Issue', issue.id), []);
    const list = await call(t.app, 'GET', url(), { token: roles.reporter.token });
    assert.deepEqual([list.status, list.headers['x-total'], list.body], [200, '1', [r.body]]);
    const one = await call(t.app, 'GET', `${url()}/${r.body.id}`, { token: roles.reporter.token });
    assert.deepEqual([one.status, one.body], [200, r.body]);
    // The issue's own awards do not name the note's.
    const onIssue = await call(t.app, 'GET', `/projects/${p.id}/issues/${issue.iid}/award_emoji/${r.body.id}`, { token: roles.reporter.token });
    assert.deepEqual([onIssue.status, onIssue.body], [404, { message: '404 Not found' }]);
    const dup = await call(t.app, 'POST', url(), { token: roles.guest.token, body: { name: 'thumbsup' } });
    assert.deepEqual([dup.status, dup.body], [404, { message: '404 Award Emoji Name has already been taken Not Found' }]);
    const bad = await call(t.app, 'POST', url(), { token: roles.guest.token, body: { name: 'Not An Emoji' } });
    assert.deepEqual([bad.status, bad.body], [404, { message: '404 Award Emoji Name is not a valid emoji name Not Found' }]);
    const notMine = await call(t.app, 'DELETE', `${url()}/${r.body.id}`, { token: roles.maintainer.token });
    assert.deepEqual([notMine.status, notMine.body], [401, { message: '401 Unauthorized' }]);
    assert.equal((await awardsOf('Note', noteId)).length, 1);
    const gone = await call(t.app, 'DELETE', `${url()}/${r.body.id}`, { token: roles.guest.token });
    assert.equal(gone.status, 204);
    assert.deepEqual(await awardsOf('Note', noteId), []);
    const again = await call(t.app, 'GET', `${url()}/${r.body.id}`, { token: roles.guest.token });
    assert.deepEqual([again.status, again.body], [404, { message: '404 Not found' }]);
  });

  test('an unknown note, a note of another issue and an internal note hidden from the caller are 404 Note', async () => {
    const other = await makeIssue(t.app, p, { authorId: roles.owner.user.id });
    for (const [token, u] of [
      [roles.guest.token, url(2_000_000)],
      [roles.guest.token, url(noteId, other)],
      [roles.guest.token, url(internalId)],
    ] as const) {
      const r = await call(t.app, 'POST', u, { token, body: { name: 'tada' } });
      assert.deepEqual([r.status, r.body], [404, { message: '404 Note Not Found' }], u);
      const l = await call(t.app, 'GET', u, { token });
      assert.deepEqual([l.status, l.body], [404, { message: '404 Note Not Found' }], u);
    }
    const r = await call(t.app, 'POST', url(internalId), { token: roles.reporter.token, body: { name: 'tada' } });
    assert.equal(r.status, 201);
    assert.deepEqual(await awardsOf('Note', internalId), [{ name: 'tada', user_id: roles.reporter.user.id }]);
  });

  const rows: Array<[string, () => string, number[]]> = [
    // on a note of an open issue, on an internal note, on a note of a confidential issue
    ['a note', () => url(), [401, 404, 201, 201, 201, 201, 201, 201]],
    ['an internal note', () => url(internalId), [401, 404, 404, 201, 201, 201, 201, 201]],
    ['a note of a confidential issue', () => url(secretNoteId, secret), [401, 404, 404, 201, 201, 201, 201, 201]],
  ];
  for (const [what, u, statuses] of rows) {
    CALLERS.forEach((caller, i) => {
      test(`${caller}: awarding on ${what} answers ${statuses[i]}, listing ${statuses[i] === 201 ? 200 : statuses[i]}`, async () => {
        const token = roles[caller]?.token;
        const w = await call(t.app, 'POST', u(), { token, body: { name: `role_${i}` } });
        assert.equal(w.status, statuses[i], JSON.stringify(w.body));
        const l = await call(t.app, 'GET', u(), { token });
        assert.equal(l.status, statuses[i] === 201 ? 200 : statuses[i], JSON.stringify(l.body));
        if (statuses[i] === 201) assert.ok(l.body.some((a: any) => a.id === w.body.id));
        if (statuses[i] === 404) {
          const hidden = ['anonymous', 'nonMember'].includes(caller) ? '404 Project Not Found' : what === 'an internal note' ? '404 Note Not Found' : '404 Issue Not Found';
          assert.deepEqual(w.body, { message: hidden });
        }
      });
    });
  }

  test('deleting a note removes its awards', async () => {
    const n = (await call(t.app, 'POST', `/projects/${p.id}/issues/${issue.iid}/notes`, { token: roles.developer.token, body: { body: 'brief' } })).body.id;
    await call(t.app, 'POST', url(n), { token: roles.guest.token, body: { name: 'heart' } });
    assert.equal((await awardsOf('Note', n)).length, 1);
    assert.equal((await call(t.app, 'DELETE', `/projects/${p.id}/issues/${issue.iid}/notes/${n}`, { token: roles.developer.token })).status, 204);
    assert.deepEqual(await awardsOf('Note', n), []);
  });

  test('python-gitlab: note.awardemojis', { skip: pythonSkip }, async () => {
    const base = await listening(t);
    const out = await pythonGitlab(base, roles.developer.token, `
p = gl.projects.get(${p.id})
i = p.issues.get(${issue.iid})
n = i.notes.get(${noteId})
a = n.awardemojis.create({"name": "rocket"})
out["created"] = [a.name, a.awardable_type, a.awardable_id]
out["listed"] = sorted(x.name for x in n.awardemojis.list(all=True))
out["one"] = n.awardemojis.get(a.id).name
a.delete()
out["after"] = "rocket" in [x.name for x in n.awardemojis.list(all=True)]
`);
    assert.deepEqual(out.created, ['rocket', 'Note', noteId]);
    assert.ok(out.listed.includes('rocket'));
    assert.deepEqual([out.one, out.after], ['rocket', false]);
  });
});
