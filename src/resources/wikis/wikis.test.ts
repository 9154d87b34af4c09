import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, makeUser, type RoleCast } from '../../../test/support/fixtures.ts';
import { gitClient } from '../repository/testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { wikiRepo } from './wikis.service.ts';

let t: TestApp;
let host: string;
const g = gitClient();
before(async () => {
  t = await buildTestApp();
  host = new URL(await listening(t)).host;
});
after(async () => { await t.close(); });

const roles = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;

async function projectWith(visibility: number, wiki = 'enabled'): Promise<{ p: ProjectRow; cast: RoleCast }> {
  const project = await makeProject(t.app, { visibility });
  await t.app.db.updateTable('projects').set({ settings: JSON.stringify({ wiki_access_level: wiki }) }).where('id', '=', project.id).execute();
  const cast = await castRoles(t.app, project);
  return { p: await t.app.db.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow(), cast };
}
const tokenOf = (cast: RoleCast, r: (typeof roles)[number]) => (r === 'anonymous' ? undefined : cast[r].token);

describe('wiki pages through the API', () => {
  test('render_html: Markdown rendered safely (raw HTML escaped, no script links); other formats escaped', async () => {
    const { p, cast } = await projectWith(20);
    const attacks = '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[a](javascript:alert(1)) [b](JAVASCRIPT:x) [c](data:text/html,x) [ok](Other-page)';
    await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.developer.token, body: { title: 'Evil', content: attacks } });
    const html = await call(t.app, 'GET', `/projects/${p.id}/wikis/Evil`, { query: { render_html: 'true' } });
    assert.equal(html.status, 200);
    assert.equal(html.body.content, '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n<p>&lt;img src=x onerror=alert(1)&gt;</p>\n'
      + '<p>[a](javascript:alert(1)) [b](JAVASCRIPT:x) [c](data:text/html,x) <a href="Other-page" rel="nofollow noreferrer noopener">ok</a></p>');
    // Without render_html the page is the text as stored.
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/wikis/Evil`)).body.content, attacks);
    await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.developer.token, body: { title: 'Org', content: '* <b>x</b>', format: 'org' } });
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/wikis/Org`, { query: { render_html: 'true' } })).body.content,
      '<pre class="plain-readme">* &lt;b&gt;x&lt;/b&gt;</pre>');
  });

  test('the repository is made on the first write; create, read, list, edit, rename, delete', async () => {
    const { p, cast } = await projectWith(20);
    const repo = wikiRepo(t.app, p);
    assert.equal(repo.exists(), false);
    assert.deepEqual((await call(t.app, 'GET', `/projects/${p.id}/wikis`)).body, []);
    const c = await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.developer.token, body: { title: 'Home page', content: '---\ntitle: x\n---\n# Hello' } });
    assert.equal(c.status, 201);
    assert.deepEqual(c.body, { format: 'markdown', slug: 'Home-page', title: 'Home page', content: '---\ntitle: x\n---\n# Hello', encoding: 'UTF-8' });
    assert.equal(repo.exists(), true);
    assert.equal(repo.path.endsWith('.wiki.git'), true);

    const nested = await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.developer.token, body: { title: 'docs/Getting started', content: '= Start', format: 'asciidoc' } });
    assert.equal(nested.status, 201);
    assert.deepEqual(nested.body, { format: 'asciidoc', slug: 'docs/Getting-started', title: 'Getting started', content: '= Start', encoding: 'UTF-8' });
    const dup = await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.developer.token, body: { title: 'Home page', content: 'again' } });
    assert.equal(dup.status, 400);
    assert.deepEqual(dup.body, { message: 'Duplicate page: A page with that title already exists' });

    const list = await call(t.app, 'GET', `/projects/${p.id}/wikis`);
    assert.deepEqual(list.body, [
      { format: 'markdown', slug: 'Home-page', title: 'Home page' },
      { format: 'asciidoc', slug: 'docs/Getting-started', title: 'Getting started' },
    ]);
    const full = await call(t.app, 'GET', `/projects/${p.id}/wikis`, { query: { with_content: 'true' } });
    assert.equal(full.body[1].content, '= Start');

    const one = await call(t.app, 'GET', `/projects/${p.id}/wikis/docs%2FGetting-started`);
    assert.equal(one.status, 200);
    assert.equal(one.body.title, 'Getting started');
    const html = await call(t.app, 'GET', `/projects/${p.id}/wikis/Home-page`, { query: { render_html: 'true' } });
    assert.equal(html.status, 200);
    assert.deepEqual(html.body, {
      format: 'markdown', slug: 'Home-page', title: 'Home page',
      content: '<pre class="front-matter" lang="yaml"><code>title: x</code></pre>\n<h1>Hello</h1>', encoding: 'UTF-8',
    });
    const asciidoc = await call(t.app, 'GET', `/projects/${p.id}/wikis/docs%2FGetting-started`, { query: { render_html: 'true' } });
    assert.equal(asciidoc.body.content, '<pre class="plain-readme">= Start</pre>');

    const firstVersion = (await repo.log({ ref: 'main' })).at(-1)!.id;
    const u = await call(t.app, 'PUT', `/projects/${p.id}/wikis/Home-page`, { token: cast.developer.token, body: { content: 'changed', format: 'org' } });
    assert.equal(u.status, 200);
    assert.deepEqual(u.body, { format: 'org', slug: 'Home-page', title: 'Home page', content: 'changed', encoding: 'UTF-8' });
    const old = await call(t.app, 'GET', `/projects/${p.id}/wikis/Home-page`, { query: { version: firstVersion } });
    assert.equal(old.body.content, '---\ntitle: x\n---\n# Hello');
    assert.equal(old.body.format, 'markdown');
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/wikis/Home-page`, { query: { version: 'deadbeef' } })).status, 404);

    const renamed = await call(t.app, 'PUT', `/projects/${p.id}/wikis/Home-page`, { token: cast.developer.token, body: { title: 'Start here' } });
    assert.equal(renamed.body.slug, 'Start-here');
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/wikis/Home-page`)).status, 404);
    const none = await call(t.app, 'PUT', `/projects/${p.id}/wikis/Start-here`, { token: cast.developer.token, body: {} });
    assert.equal(none.status, 400);
    assert.deepEqual(none.body, { error: 'content, title, format are missing, at least one parameter must be provided' });

    assert.equal((await call(t.app, 'DELETE', `/projects/${p.id}/wikis/Start-here`, { token: cast.developer.token })).status, 403);
    assert.equal((await call(t.app, 'DELETE', `/projects/${p.id}/wikis/Start-here`, { token: cast.maintainer.token })).status, 204);
    const missing = await call(t.app, 'GET', `/projects/${p.id}/wikis/Start-here`);
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: '404 Wiki Page Not Found' });
    assert.equal((await repo.log({ ref: 'main' })).length, 5);
  });

  test('bad input: 400 and nothing written', async () => {
    const { p, cast } = await projectWith(20);
    for (const [body, expected] of [
      [{ content: 'x' }, { message: '400 (Bad request) "title" not given' }],
      [{ title: 'x' }, { message: '400 (Bad request) "content" not given' }],
      [{ title: 'x', content: 'y', format: 'html' }, { error: 'format does not have a valid value' }],
      [{ title: '../up', content: 'y' }, { message: { title: ['is invalid'] } }],
    ] as const) {
      const r = await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.owner.token, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.body, expected, JSON.stringify(r.body));
    }
    assert.equal(wikiRepo(t.app, p).exists(), false);
  });

  test('attachments are committed under uploads/ and are not pages', async () => {
    const { p, cast } = await projectWith(0);
    const r = await call(t.app, 'POST', `/projects/${p.id}/wikis/attachments`, {
      token: cast.developer.token, multipart: { file: { filename: 'pic one.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]), type: 'image/png' } },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.file_name, 'pic_one.png');
    assert.match(r.body.file_path, /^uploads\/[0-9a-f]{32}\/pic_one\.png$/);
    assert.equal(r.body.branch, 'main');
    assert.deepEqual(r.body.link, { url: r.body.file_path, markdown: `![pic_one.png](${r.body.file_path})` });
    const blob = await wikiRepo(t.app, p).readBlob('main', r.body.file_path);
    assert.deepEqual([...blob!.content], [0x89, 0x50, 0x4e, 0x47]);
    assert.deepEqual((await call(t.app, 'GET', `/projects/${p.id}/wikis`, { token: cast.guest.token })).body, []);
    const refused = await call(t.app, 'POST', `/projects/${p.id}/wikis/attachments`, {
      token: cast.reporter.token, multipart: { file: { filename: 'a.txt', content: Buffer.from('a'), type: 'text/plain' } },
    });
    assert.equal(refused.status, 403);
  });

  // Per role: read a page, create a page.
  const table: Array<[string, number, string, number[], number[]]> = [
    ['public project', 20, 'enabled', [200, 200, 200, 200, 200, 200, 200, 200], [401, 403, 403, 403, 201, 201, 201, 201]],
    ['internal project', 10, 'enabled', [404, 200, 200, 200, 200, 200, 200, 200], [401, 403, 403, 403, 201, 201, 201, 201]],
    ['private project', 0, 'enabled', [404, 404, 200, 200, 200, 200, 200, 200], [401, 404, 403, 403, 201, 201, 201, 201]],
    ['public project, wiki for members', 20, 'private', [403, 403, 200, 200, 200, 200, 200, 200], [401, 403, 403, 403, 201, 201, 201, 201]],
    ['public project, wiki disabled', 20, 'disabled', [403, 403, 403, 403, 403, 403, 403, 403], [401, 403, 403, 403, 403, 403, 403, 403]],
  ];
  for (const [name, visibility, level, read, create] of table) {
    test(`${name}: read and write by role`, async () => {
      const { p, cast } = await projectWith(visibility, level);
      if (level !== 'disabled') {
        assert.equal((await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.owner.token, body: { title: 'home', content: 'x' } })).status, 201);
      }
      for (let i = 0; i < roles.length; i++) {
        const token = tokenOf(cast, roles[i]);
        const r = await call(t.app, 'GET', `/projects/${p.id}/wikis/home`, { token });
        assert.equal(r.status, read[i], `read ${roles[i]}`);
        const c = await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token, body: { title: `page ${roles[i]}`, content: 'x' } });
        assert.equal(c.status, create[i], `create ${roles[i]}`);
      }
    });
  }

  test('content that is not UTF-8 is given byte for byte with its encoding', async () => {
    const { p, cast } = await projectWith(20);
    await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.owner.token, body: { title: 'seed', content: 'x' } });
    await wikiRepo(t.app, p).createCommit({
      branch: 'main', actions: [{ action: 'create', file_path: 'latin.md', content: Buffer.from([0x63, 0x61, 0x66, 0xe9]) }],
      message: 'latin-1', author: { name: 'a', email: 'a@example.com' },
    });
    const r = await call(t.app, 'GET', `/projects/${p.id}/wikis/latin`);
    assert.equal(r.body.encoding, 'ASCII-8BIT');
    assert.equal(r.body.content, 'caf\u00e9');
  });
});

describe('wiki over git HTTP', () => {
  let n = 0;
  const url = (p: ProjectRow, token?: string) => `http://${token ? `x:${token}@` : ''}${host}/${p.full_path}.wiki.git`;
  async function clone(u: string) {
    const dir = `w${++n}`;
    const r = await g.run(['clone', '--quiet', u, dir]);
    return { ...r, dir: join(g.home, dir) };
  }

  test('a page pushed by git is served by the API at once; an API edit is fetched', async () => {
    const owner = await makeUser(t.app);
    const p = await makeProject(t.app, { owner: owner.user, visibility: 0 });
    // Cloning a wiki never written finds an empty repository.
    const c = await clone(url(p, owner.token));
    assert.equal(c.code, 0, c.stderr);
    mkdirSync(join(c.dir, 'guides'));
    writeFileSync(join(c.dir, 'guides', 'Deploy now.md'), '# deploy');
    writeFileSync(join(c.dir, 'notes.txt'), 'not a page');
    await g.run(['add', '-A'], c.dir);
    await g.run(['commit', '-q', '-m', 'pages'], c.dir);
    const push = await g.run(['push', '-q', 'origin', 'HEAD:main'], c.dir);
    assert.equal(push.code, 0, push.stderr);
    const list = await call(t.app, 'GET', `/projects/${p.id}/wikis`, { token: owner.token });
    assert.deepEqual(list.body, [{ format: 'markdown', slug: 'guides/Deploy now', title: 'Deploy now' }]);
    const page = await call(t.app, 'GET', `/projects/${p.id}/wikis/${encodeURIComponent('guides/Deploy now')}`, { token: owner.token });
    assert.equal(page.body.content, '# deploy');

    await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: owner.token, body: { title: 'From API', content: 'api' } });
    assert.equal((await g.run(['pull', '-q', 'origin', 'main'], c.dir)).code, 0);
    assert.equal(readFileSync(join(c.dir, 'From-API.md'), 'utf8'), 'api');
  });

  test('clone and push by role follow wiki_access_level', async () => {
    const { p, cast } = await projectWith(20, 'private');
    await call(t.app, 'POST', `/projects/${p.id}/wikis`, { token: cast.owner.token, body: { title: 'home', content: 'x' } });
    // clone / push: members read a members-only wiki, Developers and up write it.
    const expect: Record<string, [boolean, boolean]> = {
      anonymous: [false, false], nonMember: [false, false], guest: [true, false], reporter: [true, false],
      developer: [true, true], maintainer: [true, true], owner: [true, true], admin: [true, true],
    };
    for (const role of roles) {
      const token = tokenOf(cast, role);
      const c = await clone(url(p, token));
      assert.equal(c.code === 0, expect[role][0], `${role} clone ${c.stderr}`);
      if (c.code !== 0) continue;
      writeFileSync(join(c.dir, `${role}.md`), role);
      await g.run(['add', '-A'], c.dir);
      await g.run(['commit', '-q', '-m', role], c.dir);
      const push = await g.run(['push', '-q', 'origin', 'HEAD:main'], c.dir);
      assert.equal(push.code === 0, expect[role][1], `${role} push ${push.stderr}`);
    }
    const slugs = (await call(t.app, 'GET', `/projects/${p.id}/wikis`, { token: cast.owner.token })).body.map((x: any) => x.slug);
    assert.deepEqual(slugs, ['admin', 'developer', 'home', 'maintainer', 'owner']);
    // A disabled wiki is refused even to its owner.
    await t.app.db.updateTable('projects').set({ settings: JSON.stringify({ wiki_access_level: 'disabled' }) }).where('id', '=', p.id).execute();
    const c = await clone(url(p, cast.owner.token));
    assert.notEqual(c.code, 0);
  });
});
