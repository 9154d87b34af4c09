import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { makeSnippet, makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { gitClient, makeProject, roleUsers, type RoleUsers } from '../repository/testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';

// Snippets over git smart HTTP: cloned and pushed at `<base>/snippets/<id>.git` and `<base>/<project>/snippets/<id>.git`
// with the credentials and rules of the API; a push is read back through the API at once.

let t: TestApp;
let host: string;
let project: ProjectRow;
let u: RoleUsers;
let alice: TestUser;
let bob: TestUser;
const g = gitClient();
const tok = (x: { token: string }) => `anyone:${x.token}`;
const at = (path: string, cred?: string) => `http://${cred ? `${cred}@` : ''}${host}/${path}`;

before(async () => {
  t = await buildTestApp();
  host = new URL(await listening(t)).host;
  const owner = await makeUser(t.app);
  project = await makeProject(t.app, owner.user, { visibility: 20 });
  u = await roleUsers(t.app, project, owner, (o) => makeUser(t.app, o));
  alice = await makeUser(t.app);
  bob = await makeUser(t.app);
});
after(async () => { await t.close(); });

let n = 0;
async function clone(url: string): Promise<{ code: number; dir: string; stderr: string }> {
  const dir = `c${++n}`;
  const r = await g.run(['clone', '--quiet', url, dir]);
  return { code: r.code, dir: join(g.home, dir), stderr: r.stderr };
}

async function commitAndPush(dir: string, file: string, content: string): Promise<{ code: number; stderr: string }> {
  writeFileSync(join(dir, file), content);
  await g.run(['add', '-A'], dir);
  await g.run(['commit', '-q', '-m', `edit ${file}`], dir);
  return g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
}

describe('personal snippet over HTTP', () => {
  test('the author clones, pushes, and the API reads the push at once', async () => {
    const s = await makeSnippet(t.app, alice.user, { visibility: 'private', files: [{ file_path: 'a.txt', content: 'one\n' }] });
    const c = await clone(at(`snippets/${s.id}.git`, tok(alice)));
    assert.equal(c.code, 0, c.stderr);
    assert.equal(readFileSync(join(c.dir, 'a.txt'), 'utf8'), 'one\n');
    const p = await commitAndPush(c.dir, 'b.txt', 'two\n');
    assert.equal(p.code, 0, p.stderr);
    const r = await call(t.app, 'GET', `/snippets/${s.id}`, { token: alice.token });
    assert.deepEqual(r.body.files.map((f: any) => f.path), ['a.txt', 'b.txt']);
    assert.equal((await call(t.app, 'GET', `/snippets/${s.id}/files/main/b.txt/raw`, { token: alice.token })).text, 'two\n');
    // And an API edit is seen by the next fetch.
    await call(t.app, 'PUT', `/snippets/${s.id}`, { token: alice.token, body: { files: [{ action: 'update', file_path: 'a.txt', content: 'uno\n' }] } });
    assert.equal((await g.run(['pull', '-q', 'origin', 'main'], c.dir)).code, 0);
    assert.equal(readFileSync(join(c.dir, 'a.txt'), 'utf8'), 'uno\n');
  });

  test('who may clone and push, by visibility', async () => {
    for (const [visibility, anonClone, otherClone] of [['public', 0, 0], ['internal', 128, 0], ['private', 128, 128]] as const) {
      const s = await makeSnippet(t.app, alice.user, { visibility });
      assert.equal((await clone(at(`snippets/${s.id}.git`))).code === 0 ? 0 : 128, anonClone, `anonymous clone ${visibility}`);
      const other = await clone(at(`snippets/${s.id}.git`, tok(bob)));
      assert.equal(other.code === 0 ? 0 : 128, otherClone, `other user clone ${visibility}`);
      if (other.code === 0) {
        const push = await commitAndPush(other.dir, 'x.txt', 'x');
        assert.notEqual(push.code, 0, `other user push ${visibility}`);
        assert.match(push.stderr, /You are not allowed to update this snippet/);
      }
      const admin = await clone(at(`snippets/${s.id}.git`, tok(u.admin)));
      assert.equal(admin.code, 0, admin.stderr);
    }
    // A read-only token clones but does not push.
    const s = await makeSnippet(t.app, alice.user, { visibility: 'private' });
    const ro = await makeToken(t.app, alice.user, ['read_repository']);
    const c = await clone(at(`snippets/${s.id}.git`, `x:${ro}`));
    assert.equal(c.code, 0, c.stderr);
    const push = await commitAndPush(c.dir, 'y.txt', 'y');
    assert.notEqual(push.code, 0);
  });

  test('a personal snippet is not found under a project path, nor a missing one', async () => {
    const s = await makeSnippet(t.app, alice.user, { visibility: 'public' });
    assert.notEqual((await clone(at(`${project.full_path}/snippets/${s.id}.git`, tok(alice)))).code, 0);
    assert.notEqual((await clone(at('snippets/999999.git', tok(alice)))).code, 0);
  });
});

describe('project snippet over HTTP', () => {
  test('roles: read by the snippet rules, push by the author or a Maintainer', async () => {
    const s = await makeSnippet(t.app, u.developer.user, { project, visibility: 'private', files: [{ file_path: 'p.txt', content: 'p' }] });
    const url = (who?: { token: string }) => at(`${project.full_path}/snippets/${s.id}.git`, who ? tok(who) : undefined);
    // clone / push per role: stranger and anonymous cannot see a private snippet; guest and reporter read only.
    const expect: Array<[string, { token: string } | undefined, boolean, boolean]> = [
      ['anonymous', undefined, false, false],
      ['stranger', u.stranger, false, false],
      ['guest', u.guest, true, false],
      ['reporter', u.reporter, true, false],
      ['developer (author)', u.developer, true, true],
      ['maintainer', u.maintainer, true, true],
      ['owner', u.owner, true, true],
      ['admin', u.admin, true, true],
    ];
    for (const [name, who, read, write] of expect) {
      const c = await clone(url(who));
      assert.equal(c.code === 0, read, `${name} clone: ${c.stderr}`);
      if (!read) continue;
      const push = await commitAndPush(c.dir, `${name.split(' ')[0]}.txt`, name);
      assert.equal(push.code === 0, write, `${name} push: ${push.stderr}`);
    }
    const r = await call(t.app, 'GET', `/projects/${project.id}/snippets/${s.id}`, { token: u.owner.token });
    assert.deepEqual(r.body.files.map((f: any) => f.path), ['admin.txt', 'developer.txt', 'maintainer.txt', 'owner.txt', 'p.txt']);
  });

  test('the snippet must be named under its own project', async () => {
    const other = await makeProject(t.app, u.owner.user, { visibility: 20 });
    const s = await makeSnippet(t.app, u.owner.user, { project, visibility: 'public' });
    assert.notEqual((await clone(at(`${other.full_path}/snippets/${s.id}.git`, tok(u.owner)))).code, 0);
    assert.notEqual((await clone(at(`snippets/${s.id}.git`, tok(u.owner)))).code, 0);
    assert.equal((await clone(at(`${project.full_path}/snippets/${s.id}.git`))).code, 0);
  });
});
