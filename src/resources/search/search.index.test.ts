import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { commitFiles, makeGroup, makeProject, quickUser } from '../../../test/support/fixtures.ts';
import { containsText } from '../../platform/db/dialect.ts';
import { gitInvocationCount } from '../../platform/git/index.ts';
import { repoFor } from '../repository/repository.common.ts';

// What makes search fast must not change what it finds: blobs stopped early page as before, answers kept per
// commit follow the ref, and project search through the names index finds what reading every project finds.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const get = (url: string, token: string | undefined, query: Record<string, unknown>) =>
  call(t.app, 'GET', url, { token, query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });

describe('search: git scopes stop early and keep answers per commit', () => {
  test('blobs: git stops once the page is full; page 2 and the capped total as without stopping', async () => {
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { visibility: 20 });
    // 130 files holding the word once each (one block each), named so that git's order is the number's.
    const files: Record<string, string> = {};
    for (let n = 0; n < 130; n++) files[`f${String(n).padStart(3, '0')}.txt`] = `line\nthe heron ${n}\nend\n`;
    await commitFiles(t.app, project, 'main', files);
    const url = `/projects/${project.id}/search`;
    const p1 = await get(url, user.token, { scope: 'blobs', search: 'heron', per_page: 20 });
    assert.equal(p1.status, 200);
    assert.deepEqual(p1.body.map((b: any) => b.path), Array.from({ length: 20 }, (_, n) => `f${String(n).padStart(3, '0')}.txt`));
    // Fetched up to 100 + offset: the total is capped there.
    assert.equal(p1.headers['x-total'], '100');
    const p2 = await get(url, user.token, { scope: 'blobs', search: 'heron', per_page: 20, page: 2 });
    assert.deepEqual(p2.body.map((b: any) => [b.path, b.startline, b.data]),
      Array.from({ length: 20 }, (_, k) => [`f${String(20 + k).padStart(3, '0')}.txt`, 1, `line\nthe heron ${20 + k}\nend\n`]));
    assert.equal(p2.headers['x-total'], '120');
    const p7 = await get(url, user.token, { scope: 'blobs', search: 'heron', per_page: 20, page: 7 });
    assert.deepEqual(p7.body.map((b: any) => b.path), Array.from({ length: 10 }, (_, k) => `f${120 + k}.txt`));
    assert.equal(p7.headers['x-total'], '130');
  });

  test('the repository stops git at the bound and counts only the files the filters keep', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const files: Record<string, string> = {};
    for (let n = 0; n < 40; n++) files[`a${String(n).padStart(2, '0')}.md`] = 'ibis\n';
    files['z1.txt'] = 'ibis one\n';
    files['z2.txt'] = 'ibis two\n';
    const sha = await commitFiles(t.app, project, 'main', files);
    const repo = repoFor(t.app.config, project);
    const three = await repo.searchContent(sha, 'ibis', { context: 2, limit: 3 });
    assert.deepEqual(three.map((b) => b.path), ['a00.md', 'a01.md', 'a02.md']);
    const txt = await repo.searchContent(sha, 'ibis', { context: 2, limit: 2, accept: (p) => p.endsWith('.txt') });
    assert.deepEqual(txt.map((b) => [b.path, b.data]), [['z1.txt', 'ibis one\n'], ['z2.txt', 'ibis two\n']]);
    // Through the API: the negated filter leaves the .md files out before the page is counted.
    const user = await quickUser(t.app);
    const r = await get(`/projects/${project.id}/search`, user.token, { scope: 'blobs', search: 'ibis -extension:md', per_page: 1 });
    assert.deepEqual(r.body.map((b: any) => b.path), ['z1.txt']);
    assert.equal(r.headers['x-total'], '2');
  });

  test('an answer is read from git once per commit; a commit to the ref changes it', async () => {
    const user = await quickUser(t.app);
    const project = await makeProject(t.app, { visibility: 20 });
    await commitFiles(t.app, project, 'main', { 'a.txt': 'the walrus\n' }, { message: 'Walrus arrives' });
    const repo = repoFor(t.app.config, project);
    const url = `/projects/${project.id}/search`;
    const paths = async () => (await get(url, user.token, { scope: 'blobs', search: 'walrus' })).body.map((b: any) => b.path);
    const titles = async () => (await get(url, user.token, { scope: 'commits', search: 'walrus' })).body.map((c: any) => c.title);
    assert.deepEqual(await paths(), ['a.txt']);
    assert.deepEqual(await titles(), ['Walrus arrives']);
    const calls = gitInvocationCount(repo.path);
    assert.deepEqual(await paths(), ['a.txt']);
    assert.deepEqual(await titles(), ['Walrus arrives']);
    assert.equal(gitInvocationCount(repo.path) - calls, 0, 'the second reads spawn no git');
    await commitFiles(t.app, project, 'main', { 'b.txt': 'another walrus\n' }, { message: 'Second walrus' });
    assert.deepEqual(await paths(), ['a.txt', 'b.txt']);
    assert.deepEqual(await titles(), ['Second walrus', 'Walrus arrives']);
    // Another ref holds its own answer.
    await commitFiles(t.app, project, 'side', { 'c.txt': 'side walrus\n' }, { from: 'main', message: 'Side walrus' });
    assert.deepEqual((await get(url, user.token, { scope: 'blobs', search: 'walrus', ref: 'side' })).body.map((b: any) => [b.path, b.ref]),
      [['a.txt', 'side'], ['b.txt', 'side'], ['c.txt', 'side']]);
    assert.deepEqual(await paths(), ['a.txt', 'b.txt']);
  });
});

describe('search: projects through the names index', () => {
  test('finds what reading every project finds: _, %, any case, unicode, renamed projects and groups', async () => {
    const user = await quickUser(t.app);
    const group = await makeGroup(t.app, { visibility: 20 });
    const made: number[] = [];
    const named: Array<[string, string | null]> = [
      ['Snake_Case_Tool', null], ['snakeXcaseXtool', 'not a snake_case one'], ['Percent Tool', 'fifty% off'], ['fifty off', 'fifty off'],
      ['MiXeD CaSe', null], ['Crème Brûlée', 'dessert'], ['ÜBER Straße', 'Ünïcödé text'], ['über strasse', null],
    ];
    for (const [name, description] of named) {
      const p = await makeProject(t.app, { namespace: group, visibility: 20, description });
      await t.app.db.updateTable('projects').set({ name }).where('id', '=', p.id).execute();
      made.push(p.id);
    }
    const db = t.app.db;
    // The scan: every project of the group matched without any index, as the search's own condition reads.
    const scan = async (term: string) => (await db.selectFrom('projects').innerJoin('namespaces as sns', 'sns.id', 'projects.namespace_id')
      .select('projects.id').where('projects.id', 'in', made)
      .where((eb) => eb.or([containsText('projects.full_path', term), containsText(sql`sns.full_name || ' / ' || projects.name`, term), containsText('projects.description', term)]))
      .orderBy('projects.id', 'desc').execute()).map((r) => r.id);
    const search = async (term: string) => (await get(`/groups/${group.id}/search`, user.token, { scope: 'projects', search: `"${term}"`, per_page: 100 })).body.map((p: any) => p.id);
    const terms = ['snake_case', 'e_c', '_ca', 'fty%', '% o', 'mixed case', 'MIXED', 'ème', 'CRÈME', 'brûl', 'über', 'ÜBER', 'straße', 'ünïc', `${group.path} / perc`, `${group.path}/project`, 'p_r'];
    for (const term of terms) {
      const expected = await scan(term.toLowerCase());
      assert.deepEqual(await search(term), expected, term);
    }
    // Something is found at all (the comparison cannot pass on two empty answers everywhere).
    assert.equal((await search('snake_case')).length, 2);
    assert.equal((await search('fty%')).length, 1);
    // Renaming a project and its group: the index follows in the same transaction.
    await t.app.db.updateTable('projects').set({ name: 'Pelican Works' }).where('id', '=', made[0]).execute();
    // Written behind the server's back here: the kept pages are voided as a write through the API voids them.
    t.app.caches.voidAll();
    assert.deepEqual(await search('pelican'), [made[0]]);
    assert.deepEqual(await search('snake_case'), await scan('snake_case'));
    await t.app.db.updateTable('namespaces').set({ full_name: 'Cormorant Guild' }).where('id', '=', group.id).execute();
    t.app.caches.voidAll();
    assert.deepEqual(await search('cormorant guild / pelican'), [made[0]]);
    assert.deepEqual((await search('cormorant')).length, made.length);
  });
});
