import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, makeSnippet, quickUser, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import { snippetFiles, snippetRepo } from './snippets.service.ts';

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;
let external: TestUser;
before(async () => {
  t = await buildTestApp();
  alice = await quickUser(t.app);
  bob = await quickUser(t.app);
  admin = await quickUser(t.app, { admin: true });
  external = await quickUser(t.app);
  await t.app.db.updateTable('users').set({ external: 1 }).where('id', '=', external.user.id).execute();
});
after(async () => { await t.close(); });

const base = () => t.app.config.externalUrl;
const count = async () => Number((await t.app.db.selectFrom('snippets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

describe('personal snippets: create, read, edit, delete', () => {
  test('single-file create answers the reference entity and commits the file', async () => {
    const r = await call(t.app, 'POST', '/snippets', {
      token: alice.token, body: { title: 'Hello', description: 'd', visibility: 'internal', file_name: 'a.rb', content: 'puts 1\n' },
      headers: { 'user-agent': 'agent/1.0' },
    });
    assert.equal(r.status, 201);
    const id = r.body.id;
    assert.deepEqual(Object.keys(r.body), ['id', 'title', 'description', 'visibility', 'updated_at', 'created_at', 'project_id', 'web_url', 'raw_url',
      'ssh_url_to_repo', 'http_url_to_repo', 'author', 'file_name', 'files']);
    assert.equal(r.body.title, 'Hello');
    assert.equal(r.body.visibility, 'internal');
    assert.equal(r.body.project_id, null);
    assert.equal(r.body.author.id, alice.user.id);
    assert.equal(r.body.web_url, `${base()}/-/snippets/${id}`);
    assert.equal(r.body.raw_url, `${base()}/-/snippets/${id}/raw`);
    assert.equal(r.body.http_url_to_repo, `${base()}/snippets/${id}.git`);
    assert.equal(r.body.file_name, 'a.rb');
    assert.deepEqual(r.body.files, [{ path: 'a.rb', raw_url: `${base()}/-/snippets/${id}/raw/main/a.rb` }]);
    const row = await t.app.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.user_agent, 'agent/1.0');
    const repo = snippetRepo(t.app, row);
    assert.equal((await repo.log({ ref: 'main' })).length, 1);

    const raw = await call(t.app, 'GET', `/snippets/${id}/raw`, { token: bob.token });
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'puts 1\n');
    assert.match(String(raw.headers['content-type']), /^text\/plain/);
    const file = await call(t.app, 'GET', `/snippets/${id}/files/main/a.rb/raw`, { token: bob.token });
    assert.equal(file.text, 'puts 1\n');
    assert.equal((await call(t.app, 'GET', `/snippets/${id}/files/main/missing.rb/raw`, { token: bob.token })).body.message, '404 File Not Found');
  });

  test('multi-file create, then update with create/update/delete/move actions: one commit each', async () => {
    const r = await call(t.app, 'POST', '/snippets', {
      token: alice.token, body: { title: 'Multi', files: [{ file_path: 'one.txt', content: '1' }, { file_path: 'dir/two.txt', content: '2' }] },
    });
    assert.equal(r.status, 201);
    assert.equal(r.body.visibility, 'private');
    assert.deepEqual(r.body.files.map((f: any) => f.path), ['dir/two.txt', 'one.txt']);
    const id = r.body.id;
    const u = await call(t.app, 'PUT', `/snippets/${id}`, {
      token: alice.token, body: {
        title: 'Renamed', files: [
          { action: 'update', file_path: 'one.txt', content: 'uno' },
          { action: 'move', previous_path: 'dir/two.txt', file_path: 'two.txt' },
          { action: 'create', file_path: 'three.txt', content: '3' },
        ],
      },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    assert.equal(u.body.title, 'Renamed');
    assert.deepEqual(u.body.files.map((f: any) => f.path), ['one.txt', 'three.txt', 'two.txt']);
    assert.equal((await call(t.app, 'GET', `/snippets/${id}/files/main/one.txt/raw`, { token: alice.token })).text, 'uno');
    const d = await call(t.app, 'PUT', `/snippets/${id}`, { token: alice.token, body: { files: [{ action: 'delete', file_path: 'three.txt' }] } });
    assert.equal(d.status, 200);
    assert.deepEqual(d.body.files.map((f: any) => f.path), ['one.txt', 'two.txt']);
    const row = await t.app.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal((await snippetRepo(t.app, row).log({ ref: 'main' })).length, 3);
  });

  test('bad input is a 400 and changes nothing', async () => {
    const before = await count();
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{ content: 'x' }, { message: '400 (Bad request) "title" not given' }],
      [{ title: 't' }, { message: { error: 'content or files must be given' } }],
      [{ title: 't', content: 'x', files: [{ file_path: 'a', content: 'b' }] }, { message: { error: 'files and content, file_name are mutually exclusive' } }],
      [{ title: 't', files: [{ file_path: '../a', content: 'b' }] }, { message: { error: "file_path '../a' is invalid" } }],
      [{ title: 't', files: [{ file_path: 'a', content: '' }] }, { message: { error: "content can't be blank" } }],
      [{ title: ' ', content: 'x' }, { message: { title: ["can't be blank"] } }],
      [{ title: 't', content: 'x', visibility: 'secret' }, { error: 'visibility does not have a valid value' }],
    ];
    for (const [body, expected] of cases) {
      const r = await call(t.app, 'POST', '/snippets', { token: alice.token, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.body, expected, JSON.stringify(body));
    }
    assert.equal(await count(), before);

    const s = await makeSnippet(t.app, alice.user, { files: [{ file_path: 'a.txt', content: 'a' }] });
    const bad = await call(t.app, 'PUT', `/snippets/${s.id}`, { token: alice.token, body: { title: 'x', files: [{ action: 'update', file_path: 'nope.txt', content: 'z' }] } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { message: { error: "A file with this name doesn't exist: nope.txt" } });
    const after = await t.app.db.selectFrom('snippets').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.equal(after.title, s.title);
    assert.deepEqual(await snippetFiles(t.app, after), ['a.txt']);
  });

  test('delete answers 204 and removes the row and its repository', async () => {
    const s = await makeSnippet(t.app, alice.user);
    const repo = snippetRepo(t.app, s);
    assert.ok(repo.exists());
    assert.equal((await call(t.app, 'DELETE', `/snippets/${s.id}`, { token: bob.token })).status, 404);
    const r = await call(t.app, 'DELETE', `/snippets/${s.id}`, { token: alice.token });
    assert.equal(r.status, 204);
    assert.equal(await t.app.db.selectFrom('snippets').select('id').where('id', '=', s.id).executeTakeFirst(), undefined);
    assert.equal(repo.exists(), false);
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}`, { token: alice.token })).status, 404);
  });

  test('deleting a user takes their snippets, notes and repositories along', async () => {
    const gone = await quickUser(t.app);
    const project = await makeProject(t.app, { visibility: 20 });
    const personal = await makeSnippet(t.app, gone.user, { visibility: 'public' });
    const inProject = await makeSnippet(t.app, gone.user, { project, visibility: 'public' });
    await t.app.db.insertInto('members').values({ source_type: 'Project', source_id: project.id, user_id: gone.user.id, access_level: 20, expires_at: null, created_by_id: null, created_at: 0, updated_at: 0 }).execute();
    assert.equal((await call(t.app, 'POST', `/projects/${project.id}/snippets/${inProject.id}/notes`, { token: bob.token, body: { body: 'n' } })).status, 201);
    const r = await call(t.app, 'DELETE', `/users/${gone.user.id}`, { token: admin.token });
    assert.equal(r.status, 204);
    await t.app.jobs.drain();
    for (const s of [personal, inProject]) {
      assert.equal(await t.app.db.selectFrom('snippets').select('id').where('id', '=', s.id).executeTakeFirst(), undefined);
      assert.equal(snippetRepo(t.app, s).exists(), false);
    }
    assert.equal((await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', inProject.id).execute()).length, 0);
  });

  test('user_agent_detail is for administrators', async () => {
    const s = await makeSnippet(t.app, alice.user, { visibility: 'public' });
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/user_agent_detail`, { token: alice.token })).status, 403);
    const r = await call(t.app, 'GET', `/snippets/${s.id}/user_agent_detail`, { token: admin.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { user_agent: 'fixture', ip_address: '127.0.0.1', akismet_submitted: false });
  });
});

describe('personal snippets: visibility x caller', () => {
  // anonymous, other user, external user, author, admin: read / edit / delete.
  const table: Array<[string, string, string, string]> = [
    ['public', 'YYYYY', 'FFFYY', 'FFFYY'],
    ['internal', 'NYNYY', 'NFNYY', 'NFNYY'],
    ['private', 'NNNYY', 'NNNYY', 'NNNYY'],
  ];
  for (const [visibility, read, edit, del] of table) {
    test(`${visibility} snippet`, async () => {
      const callers = [null, bob, external, alice, admin];
      for (let i = 0; i < callers.length; i++) {
        const s = await makeSnippet(t.app, alice.user, { visibility: visibility as any });
        const token = callers[i]?.token;
        const g = await call(t.app, 'GET', `/snippets/${s.id}`, { token });
        assert.equal(g.status, read[i] === 'Y' ? 200 : 404, `read ${visibility} #${i}`);
        const raw = await call(t.app, 'GET', `/snippets/${s.id}/raw`, { token });
        assert.equal(raw.status, read[i] === 'Y' ? 200 : 404, `raw ${visibility} #${i}`);
        const p = await call(t.app, 'PUT', `/snippets/${s.id}`, { token, body: { title: 'changed' } });
        const expectEdit = token === undefined ? 401 : edit[i] === 'Y' ? 200 : edit[i] === 'F' ? 403 : 404;
        assert.equal(p.status, expectEdit, `edit ${visibility} #${i}`);
        const d = await call(t.app, 'DELETE', `/snippets/${s.id}`, { token });
        const expectDel = token === undefined ? 401 : del[i] === 'Y' ? 204 : del[i] === 'F' ? 403 : 404;
        assert.equal(d.status, expectDel, `delete ${visibility} #${i}`);
      }
    });
  }

  test('listings: own, public, all', async () => {
    const carol = await quickUser(t.app);
    const mine = await makeSnippet(t.app, carol.user, { visibility: 'private' });
    const pub = await makeSnippet(t.app, bob.user, { visibility: 'public' });
    const priv = await makeSnippet(t.app, bob.user, { visibility: 'private' });
    const own = await call(t.app, 'GET', '/snippets', { token: carol.token });
    assert.deepEqual(own.body.map((s: any) => s.id), [mine.id]);
    const publics = await call(t.app, 'GET', '/snippets/public', { token: carol.token, query: { per_page: '100' } });
    assert.ok(publics.body.some((s: any) => s.id === pub.id));
    assert.ok(publics.body.every((s: any) => s.visibility === 'public' && s.project_id === null));
    const all = await call(t.app, 'GET', '/snippets/all', { token: carol.token, query: { per_page: '100' } });
    const ids = all.body.map((s: any) => s.id);
    assert.ok(ids.includes(mine.id) && ids.includes(pub.id) && !ids.includes(priv.id));
    const allAdmin = await call(t.app, 'GET', '/snippets/all', { token: admin.token, query: { per_page: '100' } });
    assert.ok(allAdmin.body.some((s: any) => s.id === priv.id));
    assert.equal((await call(t.app, 'GET', '/snippets')).status, 401);
  });
});

describe('project snippets', () => {
  let cast: RoleCast;
  const roles = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
  const tokenOf = (r: (typeof roles)[number]) => (r === 'anonymous' ? undefined : cast[r].token);

  async function projectWith(visibility: number, snippets = 'enabled') {
    const project = await makeProject(t.app, { visibility });
    await t.app.db.updateTable('projects').set({ settings: JSON.stringify({ snippets_access_level: snippets }) }).where('id', '=', project.id).execute();
    cast = await castRoles(t.app, project);
    return (await t.app.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow());
  }

  // Per role (anonymous … admin): the status of GET list, POST create.
  const table: Array<[string, number, string, number[], number[]]> = [
    ['public project', 20, 'enabled', [200, 200, 200, 200, 200, 200, 200, 200], [401, 403, 403, 201, 201, 201, 201, 201]],
    ['private project', 0, 'enabled', [404, 404, 200, 200, 200, 200, 200, 200], [401, 404, 403, 201, 201, 201, 201, 201]],
    ['public project, snippets for members', 20, 'private', [403, 403, 200, 200, 200, 200, 200, 200], [401, 403, 403, 201, 201, 201, 201, 201]],
    ['public project, snippets disabled', 20, 'disabled', [403, 403, 403, 403, 403, 403, 403, 403], [401, 403, 403, 403, 403, 403, 403, 403]],
  ];
  for (const [name, visibility, level, list, create] of table) {
    test(`${name}: list and create by role`, async () => {
      const p = await projectWith(visibility, level);
      for (let i = 0; i < roles.length; i++) {
        const token = tokenOf(roles[i]);
        const l = await call(t.app, 'GET', `/projects/${p.id}/snippets`, { token });
        assert.equal(l.status, list[i], `list ${roles[i]}`);
        const c = await call(t.app, 'POST', `/projects/${p.id}/snippets`, { token, body: { title: 't', file_name: 'f.txt', content: 'c', visibility: 'private' } });
        assert.equal(c.status, create[i], `create ${roles[i]} ${JSON.stringify(c.body)}`);
      }
    });
  }

  test('snippet visibility inside a public project, and who edits and deletes', async () => {
    const p = await projectWith(20);
    const author = cast.reporter.user;
    // read of a private / internal / public snippet; edit and delete of the reporter's private snippet.
    const expect: Record<string, [number, number, number, number, number]> = {
      anonymous: [404, 404, 200, 401, 401],
      nonMember: [404, 200, 200, 404, 404],
      guest: [200, 200, 200, 403, 403],
      reporter: [200, 200, 200, 200, 204],
      developer: [200, 200, 200, 403, 403],
      maintainer: [200, 200, 200, 200, 204],
      owner: [200, 200, 200, 200, 204],
      admin: [200, 200, 200, 200, 204],
    };
    for (const role of roles) {
      const [priv, int, pub] = await Promise.all((['private', 'internal', 'public'] as const).map((v) => makeSnippet(t.app, author, { project: p, visibility: v })));
      const token = tokenOf(role);
      const e = expect[role];
      assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${priv.id}`, { token })).status, e[0], `${role} private`);
      assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${int.id}`, { token })).status, e[1], `${role} internal`);
      assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${pub.id}`, { token })).status, e[2], `${role} public`);
      const list = await call(t.app, 'GET', `/projects/${p.id}/snippets`, { token, query: { per_page: '100' } });
      const ids = list.body.map((s: any) => s.id);
      assert.equal(ids.includes(priv.id), e[0] === 200, `${role} lists private`);
      assert.equal(ids.includes(int.id), e[1] === 200, `${role} lists internal`);
      assert.equal((await call(t.app, 'PUT', `/projects/${p.id}/snippets/${priv.id}`, { token, body: { title: 'x' } })).status, e[3], `${role} edit`);
      assert.equal((await call(t.app, 'DELETE', `/projects/${p.id}/snippets/${priv.id}`, { token })).status, e[4], `${role} delete`);
    }
  });

  test('entity urls, raw, a snippet of another project is 404', async () => {
    const p = await projectWith(20);
    const other = await projectWith(20);
    const s = await makeSnippet(t.app, cast.owner.user, { project: p, visibility: 'public', files: [{ file_path: 'x.md', content: '# x' }] });
    const r = await call(t.app, 'GET', `/projects/${p.id}/snippets/${s.id}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.project_id, p.id);
    assert.equal(r.body.web_url, `${base()}/${p.full_path}/-/snippets/${s.id}`);
    assert.equal(r.body.http_url_to_repo, `${base()}/${p.full_path}/snippets/${s.id}.git`);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${s.id}/raw`)).text, '# x');
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${s.id}/files/main/x.md/raw`)).text, '# x');
    assert.equal((await call(t.app, 'GET', `/projects/${other.id}/snippets/${s.id}`)).status, 404);
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}`)).status, 404);
  });

  test('notes and award emoji on a project snippet', async () => {
    const p = await projectWith(20);
    const s = await makeSnippet(t.app, cast.owner.user, { project: p, visibility: 'public' });
    const n = await call(t.app, 'POST', `/projects/${p.id}/snippets/${s.id}/notes`, { token: cast.guest.token, body: { body: 'nice' } });
    assert.equal(n.status, 201);
    assert.equal(n.body.noteable_type, 'Snippet');
    assert.equal(n.body.noteable_id, s.id);
    const l = await call(t.app, 'GET', `/projects/${p.id}/snippets/${s.id}/notes`);
    assert.deepEqual(l.body.map((x: any) => x.body), ['nice']);
    const a = await call(t.app, 'POST', `/projects/${p.id}/snippets/${s.id}/award_emoji`, { token: cast.guest.token, body: { name: 'thumbsup' } });
    assert.equal(a.status, 201);
    assert.equal(a.body.awardable_type, 'Snippet');
    const priv = await makeSnippet(t.app, cast.owner.user, { project: p, visibility: 'private' });
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/snippets/${priv.id}/notes`, { token: cast.nonMember.token })).status, 404);
    assert.equal((await call(t.app, 'POST', `/projects/${p.id}/snippets/${priv.id}/award_emoji`, { token: cast.nonMember.token, body: { name: 'thumbsup' } })).status, 404);
    // Deleting the snippet takes its notes and awards along.
    assert.equal((await call(t.app, 'DELETE', `/projects/${p.id}/snippets/${s.id}`, { token: cast.owner.token })).status, 204);
    assert.equal((await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', s.id).execute()).length, 0);
    assert.equal((await t.app.db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'Snippet').where('awardable_id', '=', s.id).execute()).length, 0);
  });
});
