import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, commitFiles, makeGroup, makeIssue, makeMergeRequest, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';
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

describe('search: issues and merge requests with the caller\'s project and group lists bound as parameters', () => {
  /**
   * A private group with a private project (the user a Developer of the group), private projects where the user is a
   * Guest, a Reporter and nothing, and a public project; an issue holding the word in each (and confidential ones),
   * a merge request in each.
   */
  async function instance(word: string) {
    const admin = await quickUser(t.app, { admin: true });
    const user = await quickUser(t.app);
    const nobody = await quickUser(t.app);
    const group = await makeGroup(t.app, { visibility: 0 });
    const inGroup = await makeProject(t.app, { namespace: group, visibility: 0 });
    const asGuest = await makeProject(t.app, { visibility: 0 });
    const asReporter = await makeProject(t.app, { visibility: 0 });
    const foreign = await makeProject(t.app, { visibility: 0 });
    const open = await makeProject(t.app, { visibility: 20 });
    await addMember(t.app, { type: 'Namespace', id: group.id }, user.user.id, Role.developer);
    await addMember(t.app, { type: 'Project', id: asGuest.id }, user.user.id, Role.guest);
    await addMember(t.app, { type: 'Project', id: asReporter.id }, user.user.id, Role.reporter);
    const issue = (p: { id: number }, confidential = false) => makeIssue(t.app, p, { title: `The ${word} ${confidential ? 'secret' : 'note'}`, confidential });
    const issues = {
      groupSecret: await issue(inGroup, true), guestPlain: await issue(asGuest), guestSecret: await issue(asGuest, true),
      reporterSecret: await issue(asReporter, true), foreign: await issue(foreign), open: await issue(open), openSecret: await issue(open, true),
    };
    const mrs: Record<string, any> = {};
    for (const [name, p] of Object.entries({ inGroup, asGuest, asReporter, foreign, open })) {
      await commitFiles(t.app, p, 'main', { 'README.md': 'hello\n' });
      await commitFiles(t.app, p, 'feature', { 'f.txt': 'f\n' }, { from: 'main' });
      mrs[name] = await makeMergeRequest(t.app, admin.token, p, { source_branch: 'feature', target_branch: 'main', title: `Add the ${word}` });
    }
    return { admin, user, nobody, group, inGroup, asGuest, asReporter, foreign, open, issues, mrs };
  }

  test('each caller finds what the policy lets them read, nothing else; pages without totals', async () => {
    const w = await instance('marmot');
    const { issues: i, mrs } = w;
    const q = { scope: 'issues', search: 'marmot' };
    const byId = (r: { body: any[] }) => r.body.map((x: any) => x.id);
    // Developer of the group: its confidential issue; Guest: the plain issue only; Reporter: the confidential one;
    // nothing of the project without a membership nor the public project's confidential issue.
    const mine = await get('/search', w.user.token, q);
    assert.equal(mine.status, 200);
    assert.deepEqual(byId(mine), [i.open.id, i.reporterSecret.id, i.guestPlain.id, i.groupSecret.id]);
    // The same URL for another caller is that caller's own answer.
    assert.deepEqual(byId(await get('/search', w.nobody.token, q)), [i.open.id]);
    assert.deepEqual(byId(await get('/search', w.admin.token, q)).sort((a: number, b: number) => a - b), Object.values(i).map((x) => x.id).sort((a, b) => a - b));
    assert.deepEqual(byId(await get(`/groups/${w.group.id}/search`, w.user.token, q)), [i.groupSecret.id]);
    // Merge requests: the private projects' only from Reporter up (a Guest of a private project reads none).
    const mq = { scope: 'merge_requests', search: 'marmot' };
    assert.deepEqual(byId(await get('/search', w.user.token, mq)), [mrs.open.id, mrs.asReporter.id, mrs.inGroup.id]);
    assert.deepEqual(byId(await get('/search', w.nobody.token, mq)), [mrs.open.id]);
    assert.equal((await get(`/groups/${w.group.id}/search`, w.nobody.token, mq)).status, 404);
    // Pages: created_at then id, newest first; the next page from one extra row; no totals.
    const pages = [];
    for (const page of [1, 2, 3]) pages.push(await get('/search', w.user.token, { ...q, per_page: 2, page }));
    assert.deepEqual(pages.map(byId), [[i.open.id, i.reporterSecret.id], [i.guestPlain.id, i.groupSecret.id], []]);
    assert.deepEqual(pages.map((r) => [r.headers['x-page'], r.headers['x-next-page'], r.headers['x-prev-page'], r.headers['x-total'], r.headers['x-total-pages']]),
      [['1', '2', '', undefined, undefined], ['2', '', '1', undefined, undefined], ['3', '', '2', undefined, undefined]]);
    const mp = await get('/search', w.user.token, { ...mq, per_page: 1, page: 3 });
    assert.deepEqual(byId(mp), [mrs.inGroup.id]);
    assert.deepEqual([mp.headers['x-next-page'], mp.headers['x-prev-page'], mp.headers['x-total']], ['', '2', undefined]);
  });

  test('an answer read again is the same; a write through the server is seen at once', async () => {
    const w = await instance('wombat');
    const q = { scope: 'issues', search: 'wombat' };
    const first = await get('/search', w.user.token, q);
    const again = await get('/search', w.user.token, q);
    assert.deepEqual(again.body, first.body);
    assert.deepEqual([again.headers['x-next-page'], again.headers['x-search-type'], again.headers['content-type']],
      [first.headers['x-next-page'], 'basic', first.headers['content-type']]);
    // A new issue and a membership taken away, both through the API.
    const made = await call(t.app, 'POST', `/projects/${w.open.id}/issues`, { token: w.admin.token, body: { title: 'A wombat appears' } });
    assert.equal(made.status, 201);
    assert.deepEqual((await get('/search', w.user.token, q)).body.map((x: any) => x.id),
      [made.body.id, w.issues.open.id, w.issues.reporterSecret.id, w.issues.guestPlain.id, w.issues.groupSecret.id]);
    const removed = await call(t.app, 'DELETE', `/projects/${w.asReporter.id}/members/${w.user.user.id}`, { token: w.admin.token });
    assert.equal(removed.status, 204);
    assert.deepEqual((await get('/search', w.user.token, q)).body.map((x: any) => x.id),
      [made.body.id, w.issues.open.id, w.issues.guestPlain.id, w.issues.groupSecret.id]);
    const mq = { scope: 'merge_requests', search: 'wombat' };
    assert.deepEqual((await get('/search', w.user.token, mq)).body.map((x: any) => x.id), [w.mrs.open.id, w.mrs.inGroup.id]);
  });
});
