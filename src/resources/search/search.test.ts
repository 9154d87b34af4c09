import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import {
  addMember, commitFiles, makeGroup, makeIssue, makeMergeRequest, makeMilestone, makeNote, makeProject, makeSnippet, quickUser, Role,
} from '../../../test/support/fixtures.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const get = (url: string, token: string | undefined, query: Record<string, unknown>) =>
  call(t.app, 'GET', url, { token, query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });
async function setFeatures(projectId: number, token: string, body: Record<string, string>) {
  const r = await call(t.app, 'PUT', `/projects/${projectId}`, { token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}
const ids = (r: { body: any[] }) => r.body.map((x: any) => x.id).sort((a: number, b: number) => a - b);

/**
 * The instance of the scope tests: a public group with a public project (open to all, issues confidential and not),
 * a private project in it (its members only), and people: a member of both (Reporter), a guest of the public
 * project, an outsider and an administrator. Every searched record holds the word of its test.
 */
async function world() {
  const group = await makeGroup(t.app, { visibility: 20 });
  const open = await makeProject(t.app, { namespace: group, visibility: 20 });
  const hidden = await makeProject(t.app, { namespace: group, visibility: 0 });
  const reporter = await quickUser(t.app);
  const guest = await quickUser(t.app);
  const outsider = await quickUser(t.app);
  const admin = await quickUser(t.app, { admin: true });
  await addMember(t.app, { type: 'Project', id: open.id }, reporter.user.id, Role.reporter);
  await addMember(t.app, { type: 'Project', id: hidden.id }, reporter.user.id, Role.reporter);
  await addMember(t.app, { type: 'Project', id: open.id }, guest.user.id, Role.guest);
  return { group, open, hidden, reporter, guest, outsider, admin };
}

describe('search: parameters and rules', () => {
  test('authentication is required at every level: 401', async () => {
    const p = await makeProject(t.app, { visibility: 20 });
    const g = await makeGroup(t.app, { visibility: 20 });
    for (const url of ['/search', `/groups/${g.id}/search`, `/projects/${p.id}/search`]) {
      const r = await get(url, undefined, { scope: 'issues', search: 'x' });
      assert.equal(r.status, 401, url);
      assert.deepEqual(r.body, { message: '401 Unauthorized' });
    }
  });

  test('parameter errors, combined in declaration order', async () => {
    const u = await quickUser(t.app);
    const p = await makeProject(t.app, { visibility: 20 });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['/search', {}, 'search is missing, scope is missing, scope does not have a valid value'],
      ['/search', { scope: 'issues' }, 'search is missing'],
      ['/search', { search: 'x' }, 'scope is missing, scope does not have a valid value'],
      ['/search', { search: 'x', scope: 'blobs' }, 'scope does not have a valid value'],
      ['/search', { search: 'x', scope: 'nope', state: 'weird' }, 'scope does not have a valid value, state does not have a valid value'],
      ['/search', { search: 'x', scope: 'issues', state: 'weird' }, 'state does not have a valid value'],
      ['/search', { search: 'x', scope: 'issues', confidential: 'maybe' }, 'confidential is invalid'],
      [`/projects/${p.id}/search`, { search: 'x', scope: 'snippet_titles' }, 'scope does not have a valid value'],
      [`/projects/${p.id}/search`, { search: 'x', scope: 'projects' }, 'scope does not have a valid value'],
    ];
    for (const [url, query, text] of cases) {
      const r = await get(url, u.token, query);
      assert.equal(r.status, 400, JSON.stringify(query));
      assert.deepEqual(r.body, { error: text }, JSON.stringify(query));
    }
  });

  test('a group or project the caller cannot see is 404', async () => {
    const u = await quickUser(t.app);
    const g = await makeGroup(t.app, { visibility: 0 });
    const p = await makeProject(t.app, { visibility: 0 });
    const rg = await get(`/groups/${g.id}/search`, u.token, { scope: 'issues', search: 'x' });
    assert.equal(rg.status, 404);
    assert.deepEqual(rg.body, { message: '404 Group Not Found' });
    const rp = await get(`/projects/${p.id}/search`, u.token, { scope: 'issues', search: 'x' });
    assert.equal(rp.status, 404);
    assert.deepEqual(rp.body, { message: '404 Project Not Found' });
  });

  test('abuse rules answer an empty list; headers say basic search', async () => {
    const w = await world();
    await makeIssue(t.app, w.open, { title: 'a the zz ' + 'q'.repeat(101) });
    const abusive: Array<Record<string, unknown>> = [
      { search: 'a' }, { search: 'the' }, { search: 'q'.repeat(101) }, { search: 'aa|bb|cc|dd|ee|ff' }, { search: 'x'.repeat(4097) },
    ];
    for (const q of abusive) {
      const r = await get('/search', w.admin.token, { scope: 'issues', ...q });
      assert.equal(r.status, 200, JSON.stringify(q).slice(0, 40));
      assert.deepEqual(r.body, [], JSON.stringify(q).slice(0, 40));
    }
    // The same issue is found with a fair query.
    const ok = await get('/search', w.admin.token, { scope: 'issues', search: 'zz' });
    assert.equal(ok.body.length, 1);
    assert.equal(ok.headers['x-search-type'], 'basic');
    assert.equal(ok.headers['content-transfer-encoding'], 'binary');
    // Without counts: no X-Total, X-Total-Pages, nor rel="last".
    assert.equal(ok.headers['x-total'], undefined);
    assert.equal(ok.headers['x-total-pages'], undefined);
    assert.equal(ok.headers['x-page'], '1');
    assert.doesNotMatch(String(ok.headers.link), /rel="last"/);
    // A ref with characters outside the allowed set.
    await commitFiles(t.app, w.open, 'main', { 'a.txt': 'zz top\n' });
    const bad = await get(`/projects/${w.open.id}/search`, w.admin.token, { scope: 'blobs', search: 'zz', ref: 'main;x' });
    assert.deepEqual(bad.body, []);
    const good = await get(`/projects/${w.open.id}/search`, w.admin.token, { scope: 'blobs', search: 'zz', ref: 'main' });
    assert.equal(good.body.length, 1);
    assert.equal(good.headers['x-search-type'], 'basic');
    assert.equal(good.headers['content-transfer-encoding'], undefined);
  });
});

describe('search: scopes', () => {
  test('issues: a confidential one only for those who may read it, at every level; filters, #iid, order', async () => {
    const w = await world();
    const pub = await makeIssue(t.app, w.open, { title: 'Kettle whistles', description: null });
    const secret = await makeIssue(t.app, w.open, { title: 'kettle secret', confidential: true });
    const closed = await makeIssue(t.app, w.open, { title: 'old KETTLE', state: 'closed' });
    const priv = await makeIssue(t.app, w.hidden, { title: 'kettle in private' });
    await makeIssue(t.app, w.open, { title: 'unrelated' });
    for (const [url, all] of [['/search', true], [`/groups/${w.group.id}/search`, true], [`/projects/${w.open.id}/search`, false]] as const) {
      const q = { scope: 'issues', search: 'kettle' };
      assert.deepEqual(ids(await get(url, w.outsider.token, q)), [pub.id, closed.id], url);
      assert.deepEqual(ids(await get(url, w.guest.token, q)), [pub.id, closed.id], url);
      assert.deepEqual(ids(await get(url, w.reporter.token, q)), all ? [pub.id, secret.id, closed.id, priv.id] : [pub.id, secret.id, closed.id], url);
      assert.deepEqual(ids(await get(url, w.admin.token, q)), all ? [pub.id, secret.id, closed.id, priv.id] : [pub.id, secret.id, closed.id], url);
    }
    const r = await get('/search', w.reporter.token, { scope: 'issues', search: 'kettle' });
    // created_at desc, then id desc.
    assert.deepEqual(r.body.map((i: any) => i.id), [priv.id, closed.id, secret.id, pub.id]);
    assert.equal(r.body.find((i: any) => i.id === pub.id).title, 'Kettle whistles');
    assert.deepEqual(ids(await get('/search', w.reporter.token, { scope: 'issues', search: 'kettle', confidential: true })), [secret.id]);
    assert.deepEqual(ids(await get('/search', w.reporter.token, { scope: 'issues', search: 'kettle', confidential: false })), [pub.id, closed.id, priv.id]);
    assert.deepEqual(ids(await get('/search', w.reporter.token, { scope: 'issues', search: 'kettle', state: 'closed' })), [closed.id]);
    const asc = await get('/search', w.reporter.token, { scope: 'issues', search: 'kettle', order_by: 'created_at', sort: 'asc' });
    assert.deepEqual(asc.body.map((i: any) => i.id), [pub.id, secret.id, closed.id, priv.id]);
    // "#<iid>" looks the iid up in the project.
    const byIid = await get(`/projects/${w.open.id}/search`, w.outsider.token, { scope: 'issues', search: `#${secret.iid}` });
    assert.deepEqual(byIid.body, []);
    const mine = await get(`/projects/${w.open.id}/search`, w.reporter.token, { scope: 'issues', search: `#${secret.iid}` });
    assert.deepEqual(ids(mine), [secret.id]);
    // Issues private to members: a non-member of the public project gets [], not an error.
    await setFeatures(w.open.id, w.admin.token, { issues_access_level: 'private' });
    const off = await get(`/projects/${w.open.id}/search`, w.outsider.token, { scope: 'issues', search: 'kettle' });
    assert.equal(off.status, 200);
    assert.deepEqual(off.body, []);
    assert.deepEqual(ids(await get('/search', w.outsider.token, { scope: 'issues', search: 'kettle' })), []);
  });

  test('issues: an archived project is left out of global and group search unless include_archived', async () => {
    const w = await world();
    const issue = await makeIssue(t.app, w.open, { title: 'archived teapot' });
    await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', w.open.id).execute();
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'teapot' })), []);
    assert.deepEqual(ids(await get(`/groups/${w.group.id}/search`, w.admin.token, { scope: 'issues', search: 'teapot' })), []);
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'teapot', include_archived: true })), [issue.id]);
    assert.deepEqual(ids(await get(`/projects/${w.open.id}/search`, w.admin.token, { scope: 'issues', search: 'teapot' })), [issue.id]);
  });

  test('merge requests: a private project\'s only for its members; state and #iid', async () => {
    const w = await world();
    const mrs: any[] = [];
    for (const p of [w.open, w.hidden]) {
      await commitFiles(t.app, p, 'main', { 'README.md': 'hello\n' });
      await commitFiles(t.app, p, 'feature', { 'f.txt': 'f\n' }, { from: 'main' });
      mrs.push(await makeMergeRequest(t.app, w.admin.token, p, { source_branch: 'feature', target_branch: 'main', title: 'Add the saucepan' }));
    }
    const [open, hidden] = mrs;
    const q = { scope: 'merge_requests', search: 'saucepan' };
    assert.deepEqual(ids(await get('/search', w.outsider.token, q)), [open.id]);
    assert.deepEqual(ids(await get(`/groups/${w.group.id}/search`, w.outsider.token, q)), [open.id]);
    assert.deepEqual(ids(await get('/search', w.reporter.token, q)), [open.id, hidden.id]);
    assert.deepEqual(ids(await get(`/groups/${w.group.id}/search`, w.reporter.token, q)), [open.id, hidden.id]);
    assert.deepEqual(ids(await get(`/projects/${w.hidden.id}/search`, w.reporter.token, q)), [hidden.id]);
    assert.equal((await get(`/projects/${w.hidden.id}/search`, w.outsider.token, q)).status, 404);
    assert.deepEqual(ids(await get('/search', w.reporter.token, { ...q, state: 'merged' })), []);
    assert.deepEqual(ids(await get('/search', w.reporter.token, { ...q, state: 'opened' })), [open.id, hidden.id]);
    assert.deepEqual(ids(await get(`/projects/${w.open.id}/search`, w.outsider.token, { scope: 'merge_requests', search: `#${open.iid}` })), [open.id]);
    const r = await get(`/projects/${w.open.id}/search`, w.outsider.token, q);
    assert.equal(r.body[0].title, 'Add the saucepan');
    assert.equal(r.body[0].source_branch, 'feature');
  });

  test('milestones: those of projects the caller reads; group milestones at group level', async () => {
    const w = await world();
    const a = await makeMilestone(t.app, { projectId: w.open.id, title: 'Ladle one' });
    const b = await makeMilestone(t.app, { projectId: w.hidden.id, title: 'Ladle two' });
    const g = await makeMilestone(t.app, { groupId: w.group.id, title: 'Ladle group' });
    const q = { scope: 'milestones', search: 'ladle' };
    assert.deepEqual(ids(await get('/search', w.outsider.token, q)), [a.id]);
    assert.deepEqual(ids(await get('/search', w.reporter.token, q)), [a.id, b.id]);
    assert.deepEqual(ids(await get(`/groups/${w.group.id}/search`, w.outsider.token, q)), [a.id, g.id]);
    assert.deepEqual(ids(await get(`/groups/${w.group.id}/search`, w.reporter.token, q)), [a.id, b.id, g.id]);
    assert.deepEqual(ids(await get(`/projects/${w.open.id}/search`, w.outsider.token, q)), [a.id]);
    const r = await get(`/projects/${w.open.id}/search`, w.outsider.token, q);
    assert.equal(r.body[0].title, 'Ladle one');
  });

  test('projects: visible ones only; archived left out; group search covers subgroups', async () => {
    const w = await world();
    const sub = await makeGroup(t.app, { visibility: 20, parent: w.group as any });
    const inSub = await makeProject(t.app, { namespace: sub, visibility: 20, path: `spatula-sub-${sub.id}` });
    const other = await makeProject(t.app, { visibility: 20, path: `spatula-other-${sub.id}` });
    const hidden = await makeProject(t.app, { namespace: w.group, visibility: 0, path: `spatula-hidden-${sub.id}` });
    await addMember(t.app, { type: 'Project', id: hidden.id }, w.reporter.user.id, Role.reporter);
    const archived = await makeProject(t.app, { namespace: w.group, visibility: 20, path: `spatula-archived-${sub.id}` });
    await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', archived.id).execute();
    const q = { scope: 'projects', search: `spatula` };
    const mine = (r: any) => ids(r).filter((id: number) => [inSub.id, other.id, hidden.id, archived.id].includes(id));
    assert.deepEqual(mine(await get('/search', w.outsider.token, q)), [inSub.id, other.id]);
    assert.deepEqual(mine(await get('/search', w.reporter.token, q)), [inSub.id, other.id, hidden.id]);
    assert.deepEqual(mine(await get('/search', w.reporter.token, { ...q, include_archived: true })), [inSub.id, other.id, hidden.id, archived.id]);
    assert.deepEqual(mine(await get(`/groups/${w.group.id}/search`, w.outsider.token, q)), [inSub.id]);
    const r = await get(`/groups/${w.group.id}/search`, w.outsider.token, q);
    assert.equal(r.body[0].path_with_namespace, inSub.full_path);
  });

  test('snippet titles: public and own, never another\'s private one; with totals', async () => {
    const w = await world();
    const author = await quickUser(t.app);
    const pub = await makeSnippet(t.app, author.user, { visibility: 'public', title: 'Whisk public' });
    const priv = await makeSnippet(t.app, author.user, { visibility: 'private', title: 'Whisk private' });
    const inHidden = await makeSnippet(t.app, w.admin.user, { project: w.hidden, visibility: 'private', title: 'Whisk in project' });
    const q = { scope: 'snippet_titles', search: 'whisk' };
    assert.deepEqual(ids(await get('/search', w.outsider.token, q)), [pub.id]);
    assert.deepEqual(ids(await get('/search', author.token, q)), [pub.id, priv.id]);
    assert.deepEqual(ids(await get('/search', w.reporter.token, q)), [pub.id, inHidden.id]);
    const r = await get('/search', w.outsider.token, q);
    assert.equal(r.headers['x-total'], '1');
    assert.equal(r.body[0].title, 'Whisk public');
  });

  test('users: by name or username; group and project level hold their members only', async () => {
    const w = await world();
    const r = await get('/search', w.outsider.token, { scope: 'users', search: `@${w.reporter.user.username}` });
    assert.deepEqual(r.body.map((u: any) => u.id), [w.reporter.user.id]);
    assert.deepEqual(Object.keys(r.body[0]), ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url']);
    const member = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: w.group.id }, member.user.id, Role.developer);
    const g = await get(`/groups/${w.group.id}/search`, w.outsider.token, { scope: 'users', search: member.user.username });
    assert.deepEqual(g.body.map((u: any) => u.id), [member.user.id]);
    const g2 = await get(`/groups/${w.group.id}/search`, w.outsider.token, { scope: 'users', search: w.outsider.user.username });
    assert.deepEqual(g2.body, []);
    // Project level: direct members and those of its groups.
    const p = await get(`/projects/${w.open.id}/search`, w.outsider.token, { scope: 'users', search: member.user.username });
    assert.deepEqual(p.body.map((u: any) => u.id), [member.user.id]);
    const p2 = await get(`/projects/${w.open.id}/search`, w.outsider.token, { scope: 'users', search: w.outsider.user.username });
    assert.deepEqual(p2.body, []);
    assert.equal(p2.headers['x-total'], '0');
  });

  test('notes: comments only, never on a confidential issue or private snippet the caller cannot read, nor internal ones', async () => {
    const w = await world();
    const pub = await makeIssue(t.app, w.open, {});
    const secret = await makeIssue(t.app, w.open, { confidential: true });
    const n1 = await makeNote(t.app, { projectId: w.open.id, noteableType: 'Issue', noteableId: pub.id, body: 'the colander leaks', authorId: w.admin.user.id });
    const n2 = await makeNote(t.app, { projectId: w.open.id, noteableType: 'Issue', noteableId: secret.id, body: 'colander secret' });
    const n3 = await makeNote(t.app, { projectId: w.open.id, noteableType: 'Issue', noteableId: pub.id, body: 'colander internal', internal: true });
    await makeNote(t.app, { projectId: w.open.id, noteableType: 'Issue', noteableId: pub.id, body: 'colander system', system: true });
    const snip = await makeSnippet(t.app, w.admin.user, { project: w.open, visibility: 'private', title: 'kitchen' });
    const n4 = await makeNote(t.app, { projectId: w.open.id, noteableType: 'Snippet', noteableId: snip.id, body: 'colander on a private snippet' });
    const url = `/projects/${w.open.id}/search`;
    const q = { scope: 'notes', search: 'colander' };
    assert.deepEqual(ids(await get(url, w.outsider.token, q)), [n1.id]);
    assert.deepEqual(ids(await get(url, w.guest.token, q)), [n1.id, n4.id]);
    assert.deepEqual(ids(await get(url, w.reporter.token, q)), [n1.id, n2.id, n3.id, n4.id]);
    const r = await get(url, w.outsider.token, q);
    assert.equal(r.headers['x-total'], '1');
    assert.equal(r.body[0].noteable_iid, pub.iid);
    assert.equal(r.body[0].author.id, w.admin.user.id);
    assert.equal(r.body[0].system, false);
  });

  test('blobs: file names then content with two lines of context; filters; a private repository is []', async () => {
    const w = await world();
    const lines = ['# Process', 'mon first', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'mon second', 'end'];
    await commitFiles(t.app, w.open, 'main', { 'PROCESS.md': lines.join('\n') + '\n', 'docs/monitor.txt': 'nothing here\n', 'other.md': 'mon other\n' });
    const url = `/projects/${w.open.id}/search`;
    const r = await get(url, w.outsider.token, { scope: 'blobs', search: 'mon filename:PROCESS.md' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((b: any) => [b.path, b.filename, b.startline]), [['PROCESS.md', 'PROCESS.md', 1], ['PROCESS.md', 'PROCESS.md', 8]]);
    assert.deepEqual(r.body[0], {
      basename: 'PROCESS', data: '# Process\nmon first\na\nb\n', path: 'PROCESS.md', filename: 'PROCESS.md', id: null, ref: 'main', startline: 1, project_id: w.open.id,
    });
    assert.equal(r.body[1].data, 'f\ng\nmon second\nend\n');
    const all = await get(url, w.outsider.token, { scope: 'blobs', search: 'mon' });
    // The file whose name matches first, then the content blocks.
    assert.deepEqual(all.body.map((b: any) => [b.path, b.startline]), [['docs/monitor.txt', 1], ['PROCESS.md', 1], ['PROCESS.md', 8], ['other.md', 1]]);
    assert.equal(all.body[0].data, 'nothing here\n');
    assert.match(all.body[0].id, /^[0-9a-f]{40}$/);
    const negated = await get(url, w.outsider.token, { scope: 'blobs', search: 'mon -extension:md' });
    assert.deepEqual(negated.body.map((b: any) => b.path), ['docs/monitor.txt']);
    const byPath = await get(url, w.outsider.token, { scope: 'blobs', search: 'mon path:doc*' });
    assert.deepEqual(byPath.body.map((b: any) => b.path), ['docs/monitor.txt']);
    // A query that would be an option to git is only text.
    assert.deepEqual((await get(url, w.outsider.token, { scope: 'blobs', search: '--output=/tmp/x' })).body, []);
    // Repository private to members: a non-member of the public project gets [].
    await setFeatures(w.open.id, w.admin.token, { repository_access_level: 'private', merge_requests_access_level: 'private' });
    assert.deepEqual((await get(url, w.outsider.token, { scope: 'blobs', search: 'mon' })).body, []);
    assert.deepEqual((await get(url, w.outsider.token, { scope: 'commits', search: 'change' })).body, []);
    assert.equal((await get(url, w.guest.token, { scope: 'blobs', search: 'mon' })).body.length, 4);
  });

  test('commits: message search on the ref, and the commit a SHA names', async () => {
    const w = await world();
    const first = await commitFiles(t.app, w.open, 'main', { 'a.txt': 'a\n' }, { message: 'Fix the toaster' });
    const second = await commitFiles(t.app, w.open, 'main', { 'b.txt': 'b\n' }, { message: 'Polish the kettle' });
    await commitFiles(t.app, w.open, 'side', { 'c.txt': 'c\n' }, { from: 'main', message: 'Toaster on a side branch' });
    const url = `/projects/${w.open.id}/search`;
    const r = await get(url, w.outsider.token, { scope: 'commits', search: 'toaster' });
    assert.deepEqual(r.body.map((c: any) => c.id), [first]);
    assert.equal(r.body[0].title, 'Fix the toaster');
    assert.equal(r.body[0].project_id, w.open.id);
    const side = await get(url, w.outsider.token, { scope: 'commits', search: 'toaster', ref: 'side' });
    assert.equal(side.body.length, 2);
    const sha = await get(url, w.outsider.token, { scope: 'commits', search: second.slice(0, 12) });
    assert.deepEqual(sha.body.map((c: any) => c.id), [second]);
    assert.deepEqual((await get(url, w.outsider.token, { scope: 'commits', search: 'toaster', ref: 'nope' })).body, []);
  });

  test('wiki blobs: the wiki repository\'s default branch; [] when the wiki is private to members', async () => {
    const w = await world();
    const made = await call(t.app, 'POST', `/projects/${w.open.id}/wikis`, { token: w.admin.token, body: { title: 'Home', content: 'The grater lives here' } });
    assert.equal(made.status, 201);
    const url = `/projects/${w.open.id}/search`;
    const r = await get(url, w.outsider.token, { scope: 'wiki_blobs', search: 'grater' });
    assert.equal(r.body.length, 1);
    assert.deepEqual({ ...r.body[0], ref: 'x' }, {
      basename: 'Home', data: 'The grater lives here\n', path: 'Home.md', filename: 'Home.md', id: null, ref: 'x', startline: 1, project_id: w.open.id, group_id: null,
    });
    await setFeatures(w.open.id, w.admin.token, { wiki_access_level: 'private' });
    assert.deepEqual((await get(url, w.outsider.token, { scope: 'wiki_blobs', search: 'grater' })).body, []);
  });

  test('the index follows writes: an edited title is found by its new words only', async () => {
    const w = await world();
    const r = await call(t.app, 'POST', `/projects/${w.open.id}/issues`, { token: w.admin.token, body: { title: 'Sieve broken' } });
    assert.equal(r.status, 201);
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'sieve' })), [r.body.id]);
    await call(t.app, 'PUT', `/projects/${w.open.id}/issues/${r.body.iid}`, { token: w.admin.token, body: { title: 'Strainer broken' } });
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'sieve' })), []);
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'strainer' })), [r.body.id]);
    await call(t.app, 'DELETE', `/projects/${w.open.id}/issues/${r.body.iid}`, { token: w.admin.token });
    assert.deepEqual(ids(await get('/search', w.admin.token, { scope: 'issues', search: 'strainer' })), []);
  });
});

test('python-gitlab: gl.search, group.search, project.search', { skip: pythonSkip }, async () => {
  const w = await world();
  const issue = await makeIssue(t.app, w.open, { title: 'Mortar and pestle' });
  await makeIssue(t.app, w.open, { title: 'mortar secret', confidential: true });
  await commitFiles(t.app, w.open, 'main', { 'PROCESS.md': 'mortar\n' });
  const base = await listening(t);
  const out = await pythonGitlab(base, w.outsider.token, `
out["global"] = [i["id"] for i in gl.search("issues", "mortar")]
out["group"] = [i["id"] for i in gl.groups.get(${w.group.id}).search("issues", "mortar")]
p = gl.projects.get(${w.open.id})
out["project"] = [i["id"] for i in p.search("issues", "mortar")]
out["blobs"] = [b["path"] for b in p.search("blobs", "mortar")]
out["bad"] = attempt(lambda: gl.search("nope", "mortar"))
`);
  assert.deepEqual(out, { global: [issue.id], group: [issue.id], project: [issue.id], blobs: ['PROCESS.md'], bad: [400, 'scope does not have a valid value'] });
});
