import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeGroup, addMember, quickUser, type TestUser } from '../../../test/support/fixtures.ts';
import { wikiRepositoryPath } from '../projects/repository.ts';
import { Repository } from '../../platform/git/repository.ts';
import { snippetRepo } from '../snippets/snippets.service.ts';

// A project's wiki and snippets go wherever the project goes: a transfer keeps them (paths derive from ids), a fork
// copies the wiki, a storage move moves the wiki beside the code, and a deletion removes both.

const STORAGE = [
  { name: 'default', path: 'repositories', weight: 100 },
  { name: 'second', path: 'second', weight: 0 },
];

let t: TestApp;
let owner: TestUser;
let admin: TestUser;
before(async () => {
  t = await buildTestApp({ config: { storage: STORAGE } as any });
  owner = await quickUser(t.app);
  admin = await quickUser(t.app, { admin: true });
});
after(async () => { await t.close(); });

/** A project made through the API with one wiki page and one project snippet. */
async function projectWithWikiAndSnippet() {
  const p = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: `p${Math.random().toString(16).slice(2, 8)}`, visibility: 'public', initialize_with_readme: true } });
  assert.equal(p.status, 201, JSON.stringify(p.body));
  const w = await call(t.app, 'POST', `/projects/${p.body.id}/wikis`, { token: owner.token, body: { title: 'home', content: 'wiki text' } });
  assert.equal(w.status, 201);
  const s = await call(t.app, 'POST', `/projects/${p.body.id}/snippets`, { token: owner.token, body: { title: 's', file_name: 'f.txt', content: 'snip', visibility: 'public' } });
  assert.equal(s.status, 201);
  const row = await t.app.db.selectFrom('projects').selectAll().where('id', '=', p.body.id).executeTakeFirstOrThrow();
  const snippet = await t.app.db.selectFrom('snippets').selectAll().where('id', '=', s.body.id).executeTakeFirstOrThrow();
  return { project: row, snippet };
}

describe('a project carries its wiki and snippets', () => {
  test('transfer: the wiki and snippets are served under the new path', async () => {
    const { project, snippet } = await projectWithWikiAndSnippet();
    const group = await makeGroup(t.app, { visibility: 20 });
    await addMember(t.app, { type: 'Namespace', id: group.id }, owner.user.id, 50);
    const r = await call(t.app, 'PUT', `/projects/${project.id}/transfer`, { token: owner.token, body: { namespace: group.id } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const moved = encodeURIComponent(`${group.full_path}/${project.path}`);
    assert.equal((await call(t.app, 'GET', `/projects/${moved}/wikis/home`)).body.content, 'wiki text');
    const s = await call(t.app, 'GET', `/projects/${moved}/snippets/${snippet.id}`);
    assert.equal(s.body.web_url, `${t.app.config.externalUrl}/${group.full_path}/${project.path}/-/snippets/${snippet.id}`);
    assert.equal((await call(t.app, 'GET', `/projects/${moved}/snippets/${snippet.id}/raw`)).text, 'snip');
  });

  test('fork: the wiki is copied; the snippets stay with the source', async () => {
    const { project } = await projectWithWikiAndSnippet();
    const other = await quickUser(t.app);
    const f = await call(t.app, 'POST', `/projects/${project.id}/fork`, { token: other.token, body: {} });
    assert.equal(f.status, 201, JSON.stringify(f.body));
    assert.equal((await call(t.app, 'GET', `/projects/${f.body.id}/wikis/home`, { token: other.token })).body.content, 'wiki text');
    assert.deepEqual((await call(t.app, 'GET', `/projects/${f.body.id}/snippets`, { token: other.token })).body, []);
    // The copies are independent.
    await call(t.app, 'PUT', `/projects/${f.body.id}/wikis/home`, { token: other.token, body: { content: 'fork text' } });
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/wikis/home`)).body.content, 'wiki text');
  });

  test('a fork of a project without a wiki has none', async () => {
    const p = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: `nowiki${Date.now()}`, visibility: 'public' } });
    const other = await quickUser(t.app);
    const f = await call(t.app, 'POST', `/projects/${p.body.id}/fork`, { token: other.token, body: {} });
    assert.equal(f.status, 201);
    assert.equal(Repository.exists(wikiRepositoryPath(t.app.config, f.body.repository_storage ?? 'default', f.body.id)), false);
  });

  test('storage move: the wiki moves beside the code', async () => {
    const { project } = await projectWithWikiAndSnippet();
    const before = wikiRepositoryPath(t.app.config, 'default', project.id);
    assert.ok(Repository.exists(before));
    const m = await call(t.app, 'POST', `/projects/${project.id}/repository_storage_moves`, { token: admin.token, body: { destination_storage_name: 'second' } });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    await t.app.jobs.drain();
    const moved = await t.app.db.selectFrom('projects').select('repository_storage').where('id', '=', project.id).executeTakeFirstOrThrow();
    assert.equal(moved.repository_storage, 'second');
    assert.ok(Repository.exists(wikiRepositoryPath(t.app.config, 'second', project.id)));
    assert.equal(Repository.exists(before), false);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/wikis/home`)).body.content, 'wiki text');
  });

  test('delete: the wiki, the snippets, their notes and repositories go with the project', async () => {
    const { project, snippet } = await projectWithWikiAndSnippet();
    await call(t.app, 'POST', `/projects/${project.id}/snippets/${snippet.id}/notes`, { token: owner.token, body: { body: 'n' } });
    const wiki = wikiRepositoryPath(t.app.config, project.repository_storage, project.id);
    const snippetRepository = snippetRepo(t.app, snippet);
    assert.ok(Repository.exists(wiki) && snippetRepository.exists());
    const d = await call(t.app, 'DELETE', `/projects/${project.id}`, { token: owner.token });
    assert.equal(d.status, 202);
    await t.app.jobs.drain();
    assert.equal(Repository.exists(wiki), false);
    assert.equal(snippetRepository.exists(), false);
    assert.equal(await t.app.db.selectFrom('snippets').select('id').where('id', '=', snippet.id).executeTakeFirst(), undefined);
    assert.equal((await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', snippet.id).execute()).length, 0);
  });
});
