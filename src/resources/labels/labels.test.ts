import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import {
  addMember, castGroupRoles, castRoles, makeGroup, makeIssue, makeProject, quickUser, Role, type RoleCast,
} from '../../../test/support/fixtures.ts';


let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const labelCount = async () => Number((await t.app.db.selectFrom('labels').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const PROJECT_FIELDS = ['id', 'name', 'color', 'description', 'description_html', 'text_color', 'remove_on_close', 'subscribed', 'priority', 'is_project_label'];

const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];

describe('labels: access', () => {
  // Labels need a signed-in caller; reading follows the project, managing needs Reporter.
  const table: Array<[string, number, string]> = [
    ['private project, list', 0, '401 404 200 200 200 200 200 200'],
    ['private project, create', 0, '401 404 403 201 201 201 201 201'],
    ['public project, list', 20, '401 200 200 200 200 200 200 200'],
    ['public project, create', 20, '401 403 403 201 201 201 201 201'],
  ];
  for (const [name, visibility, row] of table) {
    test(`${name}: ${row}`, async () => {
      const project = await makeProject(t.app, { visibility });
      const roles = await castRoles(t.app, project);
      const expected = row.split(' ').map(Number);
      for (const [i, role] of ROLES.entries()) {
        const token = roles[role]?.token;
        const before = await labelCount();
        const r = name.endsWith('list')
          ? await call(t.app, 'GET', `/projects/${project.id}/labels`, { token })
          : await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: `l-${role}`, color: '#FF0000' } });
        assert.equal(r.status, expected[i], `${role}: ${JSON.stringify(r.body)}`);
        if (r.status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
        if (r.status === 404) assert.deepEqual(r.body, { message: '404 Project Not Found' });
        if (r.status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
        assert.equal(await labelCount(), before + (r.status === 201 ? 1 : 0));
      }
    });
  }

  test('with issues and merge requests both disabled, labels are refused to everyone', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    await t.app.db.updateTable('projects').set({ issues_access_level: 0, merge_requests_access_level: 0 }).where('id', '=', project.id).execute();
    const roles = await castRoles(t.app, project);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/labels`, { token: roles.owner.token })).status, 403);
    const other = await makeProject(t.app, { visibility: 20 });
    await t.app.db.updateTable('projects').set({ issues_access_level: 0 }).where('id', '=', other.id).execute();
    assert.equal((await call(t.app, 'GET', `/projects/${other.id}/labels`, { token: roles.nonMember.token })).status, 200);
  });

  test('group labels: list by anyone reading the group, managed from Reporter', async () => {
    const group = await makeGroup(t.app, { visibility: 0 });
    const roles = await castGroupRoles(t.app, group);
    const list = [401, 404, 200, 200, 200, 200, 200, 200];
    const create = [401, 404, 403, 201, 201, 201, 201, 201];
    for (const [i, role] of ROLES.entries()) {
      const token = roles[role]?.token;
      assert.equal((await call(t.app, 'GET', `/groups/${group.id}/labels`, { token })).status, list[i], role);
      const r = await call(t.app, 'POST', `/groups/${group.id}/labels`, { token, body: { name: `g-${role}`, color: 'red' } });
      assert.equal(r.status, create[i], role);
      if (r.status === 404) assert.deepEqual(r.body, { message: '404 Group Not Found' });
    }
  });

  test('a project Reporter cannot change its group\'s labels through the project', async () => {
    const group = await makeGroup(t.app);
    const project = await makeProject(t.app, { namespace: group });
    const roles = await castRoles(t.app, project);
    const admin = roles.admin.token;
    const g = await call(t.app, 'POST', `/groups/${group.id}/labels`, { token: admin, body: { name: 'shared', color: '#00FF00' } });
    const r = await call(t.app, 'PUT', `/projects/${project.id}/labels/shared`, { token: roles.maintainer.token, body: { color: '#000000' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    const d = await call(t.app, 'DELETE', `/projects/${project.id}/labels/${g.body.id}`, { token: roles.maintainer.token });
    assert.equal(d.status, 403);
    // The priority is the project's own: a project Reporter sets it on a group label.
    const p = await call(t.app, 'PUT', `/projects/${project.id}/labels/shared`, { token: roles.reporter.token, body: { priority: 3 } });
    assert.deepEqual([p.status, p.body.priority, p.body.is_project_label, p.body.color], [200, 3, false, '#00FF00']);
    const gm = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, gm.user.id, Role.reporter);
    const ok = await call(t.app, 'PUT', `/projects/${project.id}/labels/shared`, { token: gm.token, body: { color: '#000000' } });
    assert.deepEqual([ok.status, ok.body.color], [200, '#000000']);
  });
});

describe('labels: project', () => {
  test('create, read by id or name, list, update, delete', async () => {
    const project = await makeProject(t.app);
    const roles = await castRoles(t.app, project);
    const token = roles.maintainer.token;
    const c = await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: ' bug ', color: '#d9534f', description: 'a <b>bug</b>', priority: 10 } });
    assert.equal(c.status, 201);
    assert.deepEqual(Object.keys(c.body), PROJECT_FIELDS);
    assert.deepEqual({ ...c.body, id: 0 }, {
      id: 0, name: 'bug', color: '#d9534f', description: 'a <b>bug</b>', description_html: 'a &lt;b&gt;bug&lt;/b&gt;', text_color: '#FFFFFF',
      remove_on_close: false, subscribed: false, priority: 10, is_project_label: true,
    });
    const byId = await call(t.app, 'GET', `/projects/${project.id}/labels/${c.body.id}`, { token: roles.guest.token });
    assert.deepEqual([byId.status, byId.body], [200, c.body]);
    const byName = await call(t.app, 'GET', `/projects/${project.id}/labels/bug`, { token: roles.guest.token });
    assert.deepEqual(byName.body, c.body);
    const missing = await call(t.app, 'GET', `/projects/${project.id}/labels/nope`, { token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Label Not Found' }]);

    const light = await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: 'Light', color: 'LightYellow' } });
    assert.deepEqual([light.body.color, light.body.text_color, light.body.priority, light.body.description, light.body.description_html], ['#FFFFE0', '#333333', null, null, null]);
    const short = await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, form: { name: 'Short', color: '#fff' } });
    assert.deepEqual([short.status, short.body.color, short.body.text_color], [201, '#fff', '#333333']);

    const list = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token });
    assert.deepEqual(list.body.map((l: any) => l.name), ['Light', 'Short', 'bug']);
    assert.equal(list.headers['x-total'], '3');
    const searched = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token, query: { search: '<B>' } });
    assert.deepEqual(searched.body.map((l: any) => l.name), ['bug']);

    // python-gitlab's form: PUT on the collection with `name`.
    const u = await call(t.app, 'PUT', `/projects/${project.id}/labels`, { token, body: { name: 'bug', new_name: 'defect', color: 'navy' } });
    assert.deepEqual([u.status, u.body.name, u.body.color, u.body.priority], [200, 'defect', '#000080', 10]);
    const noPriority = await call(t.app, 'PUT', `/projects/${project.id}/labels/defect`, { token, form: { priority: '' } });
    assert.deepEqual([noPriority.status, noPriority.body.priority], [200, null]);
    assert.equal((await t.app.db.selectFrom('label_priorities').selectAll().where('label_id', '=', c.body.id).execute()).length, 0);

    const del = await call(t.app, 'DELETE', `/projects/${project.id}/labels/defect`, { token });
    assert.deepEqual([del.status, del.text], [204, '']);
    const gone = await call(t.app, 'GET', `/projects/${project.id}/labels/${c.body.id}`, { token });
    assert.equal(gone.status, 404);
    const old = await call(t.app, 'DELETE', `/projects/${project.id}/labels`, { token, body: { label_id: light.body.id } });
    assert.equal(old.status, 204);
    assert.deepEqual((await call(t.app, 'GET', `/projects/${project.id}/labels`, { token })).body.map((l: any) => l.name), ['Short']);
  });

  test('bad input is refused and nothing changes', async () => {
    const project = await makeProject(t.app);
    const roles = await castRoles(t.app, project);
    const token = roles.maintainer.token;
    await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: 'taken', color: '#000' } });
    const cases: Array<[string, Record<string, unknown>, number, unknown]> = [
      ['no name', { color: '#fff' }, 400, { message: '400 (Bad request) "name" not given' }],
      ['no color', { name: 'x' }, 400, { message: '400 (Bad request) "color" not given' }],
      ['a bad color', { name: 'x', color: 'reddish' }, 400, { message: { color: ['must be a valid color code'] } }],
      ['a four-digit color', { name: 'x', color: '#abcd' }, 400, { message: { color: ['must be a valid color code'] } }],
      ['a blank name', { name: '  ', color: '#fff' }, 400, { message: { title: ["can't be blank", 'is invalid'] } }],
      ['a comma', { name: 'a,b', color: '#fff' }, 400, { message: { title: ['is invalid'] } }],
      ['a long name', { name: 'x'.repeat(256), color: '#fff' }, 400, { message: { title: ['is too long (maximum is 255 characters)'] } }],
      ['a negative priority', { name: 'x', color: '#fff', priority: -1 }, 400, { message: { priority: ['must be greater than or equal to 0'] } }],
      ['a priority not a number', { name: 'x', color: '#fff', priority: 'high' }, 400, { error: 'priority is invalid' }],
      ['a taken name', { name: 'taken', color: '#fff' }, 409, { message: 'Label already exists' }],
    ];
    for (const [what, body, status, answer] of cases) {
      const before = await labelCount();
      const r = await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body });
      assert.deepEqual([r.status, r.body], [status, answer], what);
      assert.equal(await labelCount(), before, what);
    }
    const none = await call(t.app, 'PUT', `/projects/${project.id}/labels/taken`, { token, body: {} });
    assert.deepEqual([none.status, none.body], [400, { error: 'new_name, color, description, priority are missing, at least one parameter must be provided' }]);
    const both = await call(t.app, 'PUT', `/projects/${project.id}/labels`, { token, body: { color: '#fff' } });
    assert.deepEqual([both.status, both.body], [400, { error: 'label_id, name are missing, exactly one parameter must be provided' }]);
    await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: 'other', color: '#000' } });
    const clash = await call(t.app, 'PUT', `/projects/${project.id}/labels/other`, { token, body: { new_name: 'taken' } });
    assert.deepEqual([clash.status, clash.body], [400, { message: { title: ['has already been taken'] } }]);
    const row = await t.app.db.selectFrom('labels').select('title').where('project_id', '=', project.id).orderBy('id').execute();
    assert.deepEqual(row.map((r) => r.title), ['taken', 'other']);
  });

  test('ancestor group labels are listed on projects and usable by name; include_ancestor_groups=false keeps the parent only', async () => {
    const top = await makeGroup(t.app, { visibility: 20 });
    const sub = await makeGroup(t.app, { parent: top, visibility: 20 });
    const project = await makeProject(t.app, { namespace: sub, visibility: 20 });
    const roles = await castRoles(t.app, project);
    const admin = roles.admin.token;
    await call(t.app, 'POST', `/groups/${top.id}/labels`, { token: admin, body: { name: 'top', color: '#111111' } });
    await call(t.app, 'POST', `/groups/${sub.id}/labels`, { token: admin, body: { name: 'sub', color: '#222222' } });
    await call(t.app, 'POST', `/projects/${project.id}/labels`, { token: admin, body: { name: 'own', color: '#333333' } });
    const other = await makeProject(t.app, { namespace: sub });
    await call(t.app, 'POST', `/projects/${other.id}/labels`, { token: admin, body: { name: 'elsewhere', color: '#333333' } });

    const all = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token: roles.guest.token });
    assert.deepEqual(all.body.map((l: any) => [l.name, l.is_project_label]), [['own', true], ['sub', false], ['top', false]]);
    const near = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token: roles.guest.token, query: { include_ancestor_groups: 'false' } });
    assert.deepEqual(near.body.map((l: any) => l.name), ['own', 'sub']);
    const groupList = await call(t.app, 'GET', `/groups/${sub.id}/labels`, { token: roles.guest.token });
    assert.deepEqual(groupList.body.map((l: any) => l.name), ['sub', 'top']);
    assert.deepEqual(Object.keys(groupList.body[0]), ['id', 'name', 'color', 'description', 'description_html', 'text_color', 'remove_on_close', 'subscribed']);
    const own = await call(t.app, 'GET', `/groups/${sub.id}/labels`, { token: roles.guest.token, query: { include_ancestor_groups: 'false' } });
    assert.deepEqual(own.body.map((l: any) => l.name), ['sub']);
    const down = await call(t.app, 'GET', `/groups/${top.id}/labels`, { token: roles.guest.token, query: { include_descendant_groups: 'true' } });
    assert.deepEqual(down.body.map((l: any) => l.name), ['sub', 'top']);

    // A project label may not take a title its groups hold; creating one reports the conflict.
    const dup = await call(t.app, 'POST', `/projects/${project.id}/labels`, { token: admin, body: { name: 'top', color: '#fff' } });
    assert.deepEqual([dup.status, dup.body], [409, { message: 'Label already exists' }]);
    const rename = await call(t.app, 'PUT', `/projects/${project.id}/labels/own`, { token: admin, body: { new_name: 'sub' } });
    assert.deepEqual([rename.status, rename.body], [400, { message: { title: [`already exists at group level for ${sub.name}. Please choose another one.`] } }]);
    // The top group's label is not the project's to change (it is read through ancestors only).
    const far = await call(t.app, 'PUT', `/projects/${project.id}/labels/top`, { token: admin, body: { color: '#fff' } });
    assert.deepEqual([far.status, far.body], [404, { message: '404 Label Not Found' }]);

    // A title held by the project and a group names the project's own label.
    await call(t.app, 'POST', `/groups/${top.id}/labels`, { token: admin, body: { name: 'own', color: '#444444' } });
    const mine = await call(t.app, 'GET', `/projects/${project.id}/labels/own`, { token: admin });
    assert.deepEqual([mine.body.is_project_label, mine.body.color], [true, '#333333']);
  });

  test('renaming keeps the label on its issues; with_counts counts what the caller may see', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const roles = await castRoles(t.app, project);
    const token = roles.maintainer.token;
    const l = (await call(t.app, 'POST', `/projects/${project.id}/labels`, { token, body: { name: 'keep', color: '#fff' } })).body;
    const issue = await makeIssue(t.app, project, { labels: [l.id] });
    await makeIssue(t.app, project, { labels: [l.id], state: 'closed' });
    await makeIssue(t.app, project, { labels: [l.id], confidential: true });
    await makeIssue(t.app, project, {});
    await call(t.app, 'PUT', `/projects/${project.id}/labels/keep`, { token, body: { new_name: 'kept' } });
    const links = await t.app.db.selectFrom('label_links').select('label_id').where('target_id', '=', issue.id).execute();
    assert.deepEqual(links, [{ label_id: l.id }]);
    const counts = async (tk: string) => {
      const r = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token: tk, query: { with_counts: 'true' } });
      const { open_issues_count, closed_issues_count, open_merge_requests_count } = r.body[0];
      return [open_issues_count, closed_issues_count, open_merge_requests_count];
    };
    assert.deepEqual(await counts(roles.reporter.token), [2, 1, 0]);
    assert.deepEqual(await counts(roles.guest.token), [1, 1, 0]);
    assert.deepEqual(await counts(roles.nonMember.token), [1, 1, 0]);
    assert.deepEqual(await counts(roles.admin.token), [2, 1, 0]);
    const plain = await call(t.app, 'GET', `/projects/${project.id}/labels`, { token });
    assert.equal('open_issues_count' in plain.body[0], false);
  });

  test('subscribe and unsubscribe: 201 with the label, 304 when nothing changes', async () => {
    const group = await makeGroup(t.app);
    const project = await makeProject(t.app, { namespace: group, visibility: 20 });
    const roles = await castRoles(t.app, project);
    const token = roles.nonMember.token;
    await call(t.app, 'POST', `/projects/${project.id}/labels`, { token: roles.admin.token, body: { name: 'watch', color: '#fff' } });
    await call(t.app, 'POST', `/groups/${group.id}/labels`, { token: roles.admin.token, body: { name: 'gwatch', color: '#fff' } });
    const s = await call(t.app, 'POST', `/projects/${project.id}/labels/watch/subscribe`, { token });
    assert.deepEqual([s.status, s.body.subscribed, Object.keys(s.body).includes('priority')], [201, true, false]);
    const again = await call(t.app, 'POST', `/projects/${project.id}/labels/watch/subscribe`, { token });
    assert.deepEqual([again.status, again.text], [304, '']);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/labels/watch`, { token })).body.subscribed, true);
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/labels/watch`, { token: roles.guest.token })).body.subscribed, false);
    // A group label subscribed within the project shows there; subscribed on the group, it shows everywhere.
    await call(t.app, 'POST', `/projects/${project.id}/labels/gwatch/subscribe`, { token });
    assert.equal((await call(t.app, 'GET', `/projects/${project.id}/labels/gwatch`, { token })).body.subscribed, true);
    assert.equal((await call(t.app, 'GET', `/groups/${group.id}/labels/gwatch`, { token })).body.subscribed, false);
    const u = await call(t.app, 'POST', `/projects/${project.id}/labels/watch/unsubscribe`, { token });
    assert.deepEqual([u.status, u.body.subscribed], [201, false]);
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/labels/watch/unsubscribe`, { token })).status, 304);
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/labels/nope/subscribe`, { token })).status, 404);
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/labels/watch/subscribe`)).status, 401);
  });
});

describe('labels: group counts', () => {
  test('a group label counts the issues of the group\'s projects the caller may read', async () => {
    const group = await makeGroup(t.app, { visibility: 20 });
    const open = await makeProject(t.app, { namespace: group, visibility: 20 });
    const hidden = await makeProject(t.app, { namespace: group, visibility: 0 });
    const noIssues = await makeProject(t.app, { namespace: group, visibility: 20 });
    await t.app.db.updateTable('projects').set({ issues_access_level: 0 }).where('id', '=', noIssues.id).execute();
    const sub = await makeGroup(t.app, { parent: group, visibility: 20 });
    const below = await makeProject(t.app, { namespace: sub, visibility: 20 });
    const roles = await castGroupRoles(t.app, group);
    const l = (await call(t.app, 'POST', `/groups/${group.id}/labels`, { token: roles.admin.token, body: { name: 'g', color: '#fff' } })).body;
    await makeIssue(t.app, open, { labels: [l.id] });
    await makeIssue(t.app, open, { labels: [l.id], state: 'closed' });
    await makeIssue(t.app, hidden, { labels: [l.id] });
    await makeIssue(t.app, noIssues, { labels: [l.id] });
    await makeIssue(t.app, below, { labels: [l.id] });
    const outsider = await quickUser(t.app);
    const counts = async (token: string) => {
      const r = await call(t.app, 'GET', `/groups/${group.id}/labels`, { token, query: { with_counts: 'true' } });
      return [r.body[0].open_issues_count, r.body[0].closed_issues_count];
    };
    assert.deepEqual(await counts(outsider.token), [1, 1]);
    assert.deepEqual(await counts(roles.guest.token), [2, 1]);
  });
});

describe('labels: promote', () => {
  test('a project label becomes its group\'s, taking over the same titles in the group and its projects', async () => {
    const group = await makeGroup(t.app);
    const a = await makeProject(t.app, { namespace: group });
    const b = await makeProject(t.app, { namespace: group });
    const roles = await castRoles(t.app, a);
    const admin = roles.admin.token;
    const la = (await call(t.app, 'POST', `/projects/${a.id}/labels`, { token: admin, body: { name: 'ux', color: '#123456', description: 'from a', priority: 4 } })).body;
    const lb = (await call(t.app, 'POST', `/projects/${b.id}/labels`, { token: admin, body: { name: 'ux', color: '#654321', priority: 1 } })).body;
    const ia = await makeIssue(t.app, a, { labels: [la.id] });
    const ib = await makeIssue(t.app, b, { labels: [lb.id] });
    const sub = await quickUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: group.id }, sub.user.id, Role.guest);
    await call(t.app, 'POST', `/projects/${a.id}/labels/ux/subscribe`, { token: sub.token });
    await call(t.app, 'POST', `/projects/${b.id}/labels/ux/subscribe`, { token: sub.token });

    const refused = await call(t.app, 'PUT', `/projects/${a.id}/labels/ux/promote`, { token: roles.maintainer.token });
    assert.deepEqual([refused.status, refused.body], [403, { message: '403 Forbidden' }]);
    const r = await call(t.app, 'PUT', `/projects/${a.id}/labels/ux/promote`, { token: admin });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual({ ...r.body, id: 0 }, {
      id: 0, name: 'ux', color: '#123456', description: 'from a', description_html: 'from a', text_color: '#FFFFFF', remove_on_close: false, subscribed: false,
    });
    const rows = await t.app.db.selectFrom('labels').select(['id', 'project_id', 'group_id']).where('title', '=', 'ux').where((eb) => eb.or([eb('group_id', '=', group.id), eb('project_id', 'in', [a.id, b.id])])).execute();
    assert.deepEqual(rows, [{ id: r.body.id, project_id: null, group_id: group.id }]);
    const links = await t.app.db.selectFrom('label_links').select(['target_id', 'label_id']).where('target_id', 'in', [ia.id, ib.id]).orderBy('target_id').execute();
    assert.deepEqual(links, [{ target_id: ia.id, label_id: r.body.id }, { target_id: ib.id, label_id: r.body.id }]);
    const inA = await call(t.app, 'GET', `/projects/${a.id}/labels/ux`, { token: sub.token });
    const inB = await call(t.app, 'GET', `/projects/${b.id}/labels/ux`, { token: sub.token });
    assert.deepEqual([inA.body.is_project_label, inA.body.priority, inB.body.priority], [false, 4, 1]);
    // One subscription per user survives (the latest, made within project b), still scoped to its project.
    assert.deepEqual([inA.body.subscribed, inB.body.subscribed], [false, true]);
    const subs = await t.app.db.selectFrom('subscriptions').select('subscribable_id').where('user_id', '=', sub.user.id).execute();
    assert.deepEqual(subs, [{ subscribable_id: r.body.id }]);

    const again = await call(t.app, 'PUT', `/projects/${a.id}/labels/promote`, { token: admin, body: { name: 'ux' } });
    assert.deepEqual([again.status, again.body], [400, { message: 'Failed to promote project label to group label' }]);
    const personal = await makeProject(t.app);
    await call(t.app, 'POST', `/projects/${personal.id}/labels`, { token: admin, body: { name: 'solo', color: '#fff' } });
    const alone = await call(t.app, 'PUT', `/projects/${personal.id}/labels/solo/promote`, { token: admin });
    assert.deepEqual([alone.status, alone.body], [400, { message: 'Failed to promote project label to group label' }]);
  });
});
