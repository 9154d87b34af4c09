import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync, utimesSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser } from '../../../test/support/fixtures.ts';
import { gitClient, makeProject, reloadProject, roleUsers, type RoleUsers } from '../repository/testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { MESSAGES } from './push-policy.ts';
import { gitInvocationCount, runGit } from '../../platform/git/command.ts';
import { repoFor } from '../repository/repository.common.ts';

let t: TestApp;
let host: string;
let project: ProjectRow;
let publicProject: ProjectRow;
let u: RoleUsers;
const g = gitClient();

const url = (p: ProjectRow, cred?: string) => `http://${cred ? `${cred}@` : ''}${host}/${p.full_path}.git`;
const tok = (x: { token: string }) => `anyone:${x.token}`;

async function headOf(p: ProjectRow, ref: string): Promise<string | null> {
  const r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/${encodeURIComponent(ref)}`, { token: u.owner.token });
  return r.status === 200 ? r.body.commit.id : null;
}

/** A fresh clone of `p` as the owner, with one new commit on top of `branch`. */
async function workdir(p: ProjectRow, name: string): Promise<string> {
  const r = await g.run(['clone', '--quiet', url(p, tok(u.owner)), name]);
  assert.equal(r.code, 0, r.stderr);
  return join(g.home, name);
}

async function commit(dir: string, msg: string): Promise<string> {
  await g.run(['commit', '--allow-empty', '-q', '-m', msg], dir);
  return (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
}

before(async () => {
  t = await buildTestApp();
  host = new URL(await listening(t)).host;
  const owner = await makeUser(t.app, { password: 'secret-password-1' });
  project = await makeProject(t.app, owner.user, { visibility: 0 });
  publicProject = await makeProject(t.app, owner.user, { visibility: 20 });
  u = await roleUsers(t.app, project, owner, (o) => makeUser(t.app, o));
  // Seed both repositories with a first commit on main.
  for (const p of [project, publicProject]) {
    const dir = await workdir(p, `seed-${p.id}`);
    await commit(dir, 'initial');
    const r = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.equal(r.code, 0, r.stderr);
  }
});
after(async () => { await t.close(); });

describe('first push', () => {
  test('sets the default branch, clears empty_repo and records activity', async () => {
    const p = await makeProject(t.app, u.owner.user, { init: false });
    assert.equal(p.empty_repo, 1);
    (t.clock as any).advance?.(60_000);
    const dir = await workdir(p, 'first-push');
    await commit(dir, 'one');
    const r = await g.run(['push', 'origin', 'HEAD:trunk'], dir);
    assert.equal(r.code, 0, r.stderr);
    const after = await reloadProject(t.app, p.id);
    assert.equal(after.default_branch, 'trunk');
    assert.equal(after.empty_repo, 0);
    assert.ok(after.last_activity_at >= p.last_activity_at);
    const b = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/trunk`, { token: u.owner.token });
    assert.equal(b.body.default, true);
  });
});

describe('clone and fetch', () => {
  test('anonymous clone of a public project', async () => {
    const r = await g.run(['clone', '-q', url(publicProject), 'anon-public']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await g.run(['log', '--format=%s'], join(g.home, 'anon-public'))).stdout.trim(), 'initial');
  });

  test('anonymous clone of a private project asks for credentials (401)', async () => {
    const r = await g.run(['clone', '-q', url(project), 'anon-private']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /could not read Username|Authentication failed/);
    const res = await t.app.inject({ method: 'GET', url: `/${project.full_path}.git/info/refs?service=git-upload-pack` });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="Bellows"');
  });

  test('token, password and reporter clones of a private project; protocol v0 and v2', async () => {
    let r = await g.run(['clone', '-q', url(project, tok(u.reporter)), 'reporter-clone']);
    assert.equal(r.code, 0, r.stderr);
    r = await g.run(['-c', 'protocol.version=0', 'clone', '-q', url(project, tok(u.developer)), 'v0-clone']);
    assert.equal(r.code, 0, r.stderr);
    r = await g.run(['clone', '-q', url(project, `${u.owner.user.username}:secret-password-1`), 'password-clone']);
    assert.equal(r.code, 0, r.stderr);
    r = await g.run(['clone', '-q', url(project, `${u.owner.user.username}:wrong-password`), 'bad-password']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Authentication failed/);
  });

  test('a non-member gets 404 and a guest 403 on a private project', async () => {
    let r = await g.run(['clone', '-q', url(project, tok(u.stranger)), 'stranger']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /could not be found|not found/i);
    r = await g.run(['clone', '-q', url(project, tok(u.guest)), 'guest']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(MESSAGES.downloadCode));
  });

  test('a read_api token cannot clone; read_repository can', async () => {
    const readApi = await makeToken(t.app, u.developer.user, ['read_api']);
    let r = await g.run(['clone', '-q', url(project, `x:${readApi}`), 'read-api']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /read_repository/);
    const readRepo = await makeToken(t.app, u.developer.user, ['read_repository']);
    r = await g.run(['clone', '-q', url(project, `x:${readRepo}`), 'read-repo']);
    assert.equal(r.code, 0, r.stderr);
  });

  test('fetch sees a new commit', async () => {
    const reader = await workdir(project, 'fetcher');
    const writer = await workdir(project, 'fetch-writer');
    const sha = await commit(writer, 'for fetch');
    assert.equal((await g.run(['push', '-q', 'origin', 'HEAD:main'], writer)).code, 0);
    const r = await g.run(['fetch', '-q', 'origin'], reader);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await g.run(['rev-parse', 'origin/main'], reader)).stdout.trim(), sha);
  });

  test('gzip request bodies are accepted', async () => {
    const body = gzipSync(Buffer.from('0014command=ls-refs\n0001000csymrefs\n0000'));
    const res = await t.app.inject({
      method: 'POST', url: `/${publicProject.full_path}.git/git-upload-pack`, payload: body,
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip', 'git-protocol': 'version=2' },
    });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /refs\/heads\/main symref-target|refs\/heads\/main/);
    assert.ok(res.body.endsWith('0000'));
  });

  test('a v2 ref listing is answered without a git process, with the bytes git gives; other requests still reach git', async () => {
    const repo = repoFor(t.app.config, project);
    const auth = { authorization: `Basic ${Buffer.from(tok(u.reporter)).toString('base64')}` };
    const headers = { ...auth, 'content-type': 'application/x-git-upload-pack-request', 'git-protocol': 'version=2' };
    const pkt = (l: string) => `${(l.length + 5).toString(16).padStart(4, '0')}${l}\n`;
    const lsRefs = Buffer.from(['command=ls-refs', 'agent=git/2.39.5', 'object-format=sha1'].map(pkt).join('') + '0001' +
      ['peel', 'symrefs', 'unborn', 'ref-prefix HEAD', 'ref-prefix refs/heads/', 'ref-prefix refs/tags/'].map(pkt).join('') + '0000');
    const expected = (await runGit(['upload-pack', '--stateless-rpc', repo.path], { input: lsRefs, env: { GIT_PROTOCOL: 'version=2' } })).stdout;
    assert.match(expected.toString(), /symref-target:refs\/heads\/main\n/);
    // The repository's configuration is read (by git) once it is older than a moment, then kept while unchanged.
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(repo.path, 'config'), old, old);
    let res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: lsRefs, headers });
    assert.deepEqual(res.rawPayload, expected);
    const before = gitInvocationCount();
    res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: lsRefs, headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-git-upload-pack-result');
    assert.equal(res.headers['cache-control'], 'no-cache, max-age=0, must-revalidate');
    assert.deepEqual(res.rawPayload, expected);
    assert.equal(gitInvocationCount(), before, 'no git process');
    // The same listing for an anonymous caller of a private project is still a challenge, and a guest is refused.
    res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: lsRefs, headers: { 'content-type': headers['content-type'], 'git-protocol': 'version=2' } });
    assert.equal(res.statusCode, 401);
    res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: lsRefs, headers: { ...headers, authorization: `Basic ${Buffer.from(tok(u.guest)).toString('base64')}` } });
    assert.equal(res.statusCode, 403);
    // An argument git 2.39 does not know goes to git, which refuses it with an empty answer.
    const odd = Buffer.from(`${pkt('command=ls-refs')}0001${pkt('peel')}${pkt('whatever')}0000`);
    res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: odd, headers });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.equal(gitInvocationCount(), before + 1);
  });

  test('dumb HTTP and unknown projects', async () => {
    let res = await t.app.inject({ method: 'GET', url: `/${publicProject.full_path}.git/info/refs` });
    assert.equal(res.statusCode, 403);
    res = await t.app.inject({ method: 'GET', url: `/nobody/nothing.git/info/refs?service=git-upload-pack`, headers: { authorization: `Basic ${Buffer.from(tok(u.owner)).toString('base64')}` } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.body, `${MESSAGES.notFound}\n`);
  });
});

describe('paths below a project', () => {
  test('namespaces of 1 to 20 levels reach the project; no other depth is a route; other methods answer 405', async () => {
    const refs = (path: string) => t.app.inject({ method: 'GET', url: `${path}/info/refs?service=git-upload-pack` });
    // Repeated and trailing slashes are read as one.
    let res = await refs(`//${publicProject.full_path.replace('/', '//')}.git/`);
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /^001e# service=git-upload-pack\n0000/);
    // 21 segments (20 levels of groups, then the project) are asked for, as a project that may exist; 22 and 1 are no route.
    const segments = (n: number) => Array.from({ length: n }, (_, i) => `g${i}`).join('/');
    res = await refs(`/${segments(20)}/p.git`);
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['www-authenticate'], 'Basic realm="Bellows"');
    for (const path of [`/${segments(21)}/p.git`, `/${publicProject.full_path.replace('/', '%2F')}.git`]) {
      res = await refs(path);
      assert.equal(res.statusCode, 404, path);
      assert.deepEqual(res.json(), { error: '404 Not Found' });
    }
    // A project path longer than 2,000 characters is one too.
    res = await refs(`/${'a'.repeat(1500)}/${'b'.repeat(700)}.git`);
    assert.equal(res.statusCode, 401);
    res = await t.app.inject({ method: 'PUT', url: `/${publicProject.full_path}.git/info/refs` });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'OPTIONS, GET, HEAD');
    res = await t.app.inject({ method: 'GET', url: `/${publicProject.full_path}.git/git-upload-pack` });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'OPTIONS, POST');
  });
});

describe('push policy', () => {
  test('a developer may push a new branch with a URL-encodable name', async () => {
    const dir = await workdir(project, 'dev-branch');
    const sha = await commit(dir, 'feature work');
    await g.run(['remote', 'set-url', 'origin', url(project, tok(u.developer))], dir);
    const r = await g.run(['push', 'origin', 'HEAD:feature/login-page'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await headOf(project, 'feature/login-page'), sha);
  });

  test('a reporter may not push', async () => {
    const dir = await workdir(project, 'reporter-push');
    await commit(dir, 'nope');
    await g.run(['remote', 'set-url', 'origin', url(project, tok(u.reporter))], dir);
    const before = await headOf(project, 'main');
    const r = await g.run(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: You are not allowed to push code to this project\./);
    assert.equal(await headOf(project, 'main'), before);
  });

  test('a read_repository token may not push', async () => {
    const readOnlyToken = await makeToken(t.app, u.developer.user, ['read_repository']);
    const dir = await workdir(project, 'scope-push');
    await commit(dir, 'nope');
    await g.run(['remote', 'set-url', 'origin', url(project, `x:${readOnlyToken}`)], dir);
    const r = await g.run(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: Your access token does not allow pushing/);
    const writeToken = await makeToken(t.app, u.developer.user, ['write_repository']);
    await g.run(['remote', 'set-url', 'origin', url(project, `x:${writeToken}`)], dir);
    const ok = await g.run(['push', 'origin', 'HEAD:scoped-branch'], dir);
    assert.equal(ok.code, 0, ok.stderr);
  });

  test('a read-only project refuses every push with the temporary message', async () => {
    await t.app.db.updateTable('projects').set({ repository_read_only: 1 }).where('id', '=', project.id).execute();
    try {
      const dir = await workdir(project, 'ro-push');
      await commit(dir, 'nope');
      const r = await g.run(['push', 'origin', 'HEAD:main'], dir);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /remote: The repository is temporarily read-only\. Please try again later\./);
    } finally {
      await t.app.db.updateTable('projects').set({ repository_read_only: 0 }).where('id', '=', project.id).execute();
    }
  });

  test('protected branch: push, force push and deletion per the rule', async () => {
    let r0 = await call(t.app, 'POST', `/projects/${project.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'release/*', push_access_level: 40 } });
    assert.equal(r0.status, 201);
    // Create release/1 as the maintainer.
    const m = await workdir(project, 'prot-maint');
    await g.run(['remote', 'set-url', 'origin', url(project, tok(u.maintainer))], m);
    const base = await commit(m, 'release base');
    assert.equal((await g.run(['push', '-q', 'origin', 'HEAD:release/1'], m)).code, 0);

    // A developer is refused; the ref does not move.
    const d = await workdir(project, 'prot-dev');
    await g.run(['remote', 'set-url', 'origin', url(project, tok(u.developer))], d);
    await g.run(['reset', '-q', '--hard', 'origin/release/1'], d);
    await commit(d, 'dev change');
    let r = await g.run(['push', 'origin', 'HEAD:release/1'], d);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: You are not allowed to push code to protected branches on this project\./);
    assert.match(r.stderr, /\[remote rejected\] +HEAD -> release\/1 \(pre-receive hook declined\)/);
    assert.equal(await headOf(project, 'release/1'), base);

    // The maintainer may fast-forward but not force-push.
    const next = await commit(m, 'release next');
    assert.equal((await g.run(['push', '-q', 'origin', 'HEAD:release/1'], m)).code, 0);
    assert.equal(await headOf(project, 'release/1'), next);
    await g.run(['reset', '-q', '--hard', base], m);
    await commit(m, 'rewritten');
    r = await g.run(['push', '--force', 'origin', 'HEAD:release/1'], m);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: You are not allowed to force push code to a protected branch on this project\./);
    assert.equal(await headOf(project, 'release/1'), next);

    // Deletion over git is refused, for maintainers with the web-interface hint.
    r = await g.run(['push', 'origin', ':release/1'], m);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: You can only delete protected branches using the web interface\./);

    // With allow_force_push the same force push goes through.
    await call(t.app, 'DELETE', `/projects/${project.id}/protected_branches/${encodeURIComponent('release/*')}`, { token: u.maintainer.token });
    r0 = await call(t.app, 'POST', `/projects/${project.id}/protected_branches`, { token: u.maintainer.token, body: { name: 'release/*', push_access_level: 40, allow_force_push: true } });
    assert.equal(r0.status, 201);
    r = await g.run(['push', '--force', 'origin', 'HEAD:release/1'], m);
    assert.equal(r.code, 0, r.stderr);
    await call(t.app, 'DELETE', `/projects/${project.id}/protected_branches/${encodeURIComponent('release/*')}`, { token: u.maintainer.token });
  });

  test('the default branch cannot be deleted by a push', async () => {
    const dir = await workdir(project, 'del-default');
    const r = await g.run(['push', 'origin', ':main'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: The default branch of a project cannot be deleted\./);
  });

  test('protected tags: creation per create_access_levels', async () => {
    const r0 = await call(t.app, 'POST', `/projects/${project.id}/protected_tags`, { token: u.maintainer.token, body: { name: 'v*', allowed_to_create: [{ user_id: u.developer.user.id }] } });
    assert.equal(r0.status, 201);
    const owner = await workdir(project, 'tag-owner');
    // The owner is not in the list (only the developer is): refused.
    let r = await g.run(['tag', 'v1.0'], owner);
    r = await g.run(['push', 'origin', 'v1.0'], owner);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: You are not allowed to create this tag as it is protected\./);
    // The developer named in allowed_to_create may create it; unprotected tags are free for developers.
    await g.run(['remote', 'set-url', 'origin', url(project, tok(u.developer))], owner);
    r = await g.run(['push', 'origin', 'v1.0', 'refs/tags/v1.0:refs/tags/other-tag'], owner);
    assert.equal(r.code, 0, r.stderr);
    // Updating a protected tag is refused.
    await commit(owner, 'moved');
    await g.run(['tag', '-f', 'v1.0'], owner);
    r = await g.run(['push', '--force', 'origin', 'v1.0'], owner);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /remote: Protected tags cannot be updated\./);
    const tags = await call(t.app, 'GET', `/projects/${project.id}/repository/tags`, { token: u.developer.token });
    assert.deepEqual(tags.body.map((x: any) => [x.name, x.protected]).sort(), [['other-tag', false], ['v1.0', true]]);
  });
});

describe('credentials and request shapes', () => {
  test('user oauth2 with a token from a registered resolver (the OAuth provider plugs in the same way)', async () => {
    t.app.auth.addResolver(async (secret) => secret === 'oauth-access-token-for-tests'
      ? { kind: 'oauth', id: 1, userId: u.reporter.user.id, scopes: ['read_repository'], expiresAt: null, revoked: false }
      : null);
    const r = await g.run(['clone', '-q', url(project, 'oauth2:oauth-access-token-for-tests'), 'oauth-clone']);
    assert.equal(r.code, 0, r.stderr);
    const res = await t.app.inject({ method: 'GET', url: `/${project.full_path}.git/info/refs?service=git-receive-pack`, headers: { authorization: `Basic ${Buffer.from('oauth2:oauth-access-token-for-tests').toString('base64')}` } });
    assert.equal(res.statusCode, 403);
    assert.equal(res.body, `${MESSAGES.pushScope}\n`);
  });

  test('wrong passwords are throttled as on the sign-in page', async () => {
    const bad = { authorization: `Basic ${Buffer.from(`${u.guest.user.username}:not-the-password`).toString('base64')}` };
    const path = `/${publicProject.full_path}.git/info/refs?service=git-upload-pack`;
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: path, headers: bad });
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers['www-authenticate'], 'Basic realm="Bellows"');
    }
    const res = await t.app.inject({ method: 'GET', url: path, headers: bad });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.body, 'Too many failed sign-in attempts. Try again in 1 seconds.\n');
  });

  test('a body that is not a git request is refused, nothing crashes', async () => {
    const auth = { authorization: `Basic ${Buffer.from(tok(u.owner)).toString('base64')}` };
    let res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-upload-pack`, payload: { a: 1 }, headers: auth });
    assert.equal(res.statusCode, 415);
    res = await t.app.inject({ method: 'POST', url: `/${project.full_path}.git/git-receive-pack`, payload: 'garbage', headers: { ...auth, 'content-type': 'application/x-git-receive-pack-request' } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.body, 'The push request is not well formed.\n');
  });

  test('a large push streams through (chunked request body)', async () => {
    const dir = await workdir(project, 'big-push');
    const { writeFileSync } = await import('node:fs');
    const { randomBytes } = await import('node:crypto');
    writeFileSync(join(dir, 'blob.bin'), randomBytes(3 * 1024 * 1024));
    await g.run(['add', 'blob.bin'], dir);
    const sha = await commit(dir, 'big file');
    const r = await g.run(['push', 'origin', 'HEAD:big-branch'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await headOf(project, 'big-branch'), sha);
  });
});

describe('with the credential cache on', () => {
  test('a push shows on the project at once, whatever the read caches hold', async () => {
    const c = await buildTestApp({ config: { authCacheMs: 60_000 } });
    try {
      await c.app.listen({ port: 0, host: '127.0.0.1' });
      const at = `127.0.0.1:${(c.app.server.address() as any).port}`;
      const owner = await makeUser(c.app);
      const p = await makeProject(c.app, owner.user, { init: false, visibility: 20 });
      const get = async () => (await call(c.app, 'GET', `/projects/${p.id}`, { token: owner.token })).body;
      assert.deepEqual([(await get()).empty_repo, (await get()).empty_repo], [true, true]);
      const dir = join(g.home, `cached-push-${p.id}`);
      assert.equal((await g.run(['init', '-q', dir])).code, 0);
      await commit(dir, 'one');
      const r = await g.run(['push', '-q', `http://x:${owner.token}@${at}/${p.full_path}.git`, 'HEAD:main'], dir);
      assert.equal(r.code, 0, r.stderr);
      const after = await get();
      assert.deepEqual([after.empty_repo, after.default_branch], [false, 'main']);
    } finally {
      await c.close();
    }
  });

  test('project rows are reused between requests, and any API write makes the next request see the change', async () => {
    const c = await buildTestApp({ config: { authCacheMs: 60_000 } });
    try {
      const owner = await makeUser(c.app);
      const ownerToken = { token: owner.token };
      const p = await makeProject(c.app, owner.user, { visibility: 20 });
      const member = await makeUser(c.app);
      const memberToken = { token: await makeToken(c.app, member.user, ['read_repository']) };
      const adv = (auth?: string) => c.app.inject({
        method: 'GET', url: `/${p.full_path}.git/info/refs?service=git-upload-pack`,
        headers: { 'git-protocol': 'version=2', ...(auth ? { authorization: `Basic ${Buffer.from(`x:${auth}`).toString('base64')}` } : {}) },
      });
      assert.equal((await adv()).statusCode, 200);
      assert.equal((await adv(memberToken.token)).statusCode, 200);
      // A write behind the API's back is not seen within the window (this is what the cache saves)...
      await c.app.db.updateTable('projects').set({ visibility_level: 0 }).where('id', '=', p.id).execute();
      assert.equal((await adv()).statusCode, 200);
      // ...but any state-changing request voids it at once.
      const r = await call(c.app, 'PUT', `/projects/${p.id}`, { token: ownerToken.token, body: { visibility: 'private' } });
      assert.equal(r.status, 200);
      assert.equal((await adv()).statusCode, 401);
      assert.equal((await adv(memberToken.token)).statusCode, 404);
      assert.equal((await adv(ownerToken.token)).statusCode, 200);
      const d = await call(c.app, 'DELETE', `/projects/${p.id}`, { token: ownerToken.token });
      assert.equal(d.status, 202);
      assert.equal((await adv(ownerToken.token)).statusCode, 404);
    } finally {
      await c.close();
    }
  });
});

describe('repositories of projects created through the API', () => {
  async function created(name: string): Promise<ProjectRow> {
    const r = await call(t.app, 'POST', '/projects', { token: u.owner.token, body: { name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return reloadProject(t.app, r.body.id);
  }

  test('a push is fsck-checked: a malformed commit is refused and no ref moves', async () => {
    const p = await created('fsck-checked');
    const dir = await workdir(p, 'fsck-push');
    const tree = (await g.run(['mktree'], dir, '')).stdout.trim();
    // An author without an email: fsck's missingEmail, which git itself never writes.
    const bad = `tree ${tree}\nauthor Nobody 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nbad\n`;
    const sha = (await g.run(['hash-object', '-t', 'commit', '-w', '--literally', '--stdin'], dir, bad)).stdout.trim();
    assert.match(sha, /^[0-9a-f]{40}$/);
    const r = await g.run(['push', 'origin', `${sha}:refs/heads/main`], dir);
    assert.notEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /fsck|unpack/i);
    assert.equal(await headOf(p, 'main'), null);
  });

  test('a repository cut short while being made clones as an empty repository and takes a push', async () => {
    const p = await created('half-made');
    const path = repoFor(t.app.config, p).path;
    for (const d of ['objects', 'refs']) rmSync(join(path, d), { recursive: true, force: true });
    const r = await g.run(['clone', url(p, tok(u.owner)), 'half-made-clone']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /empty repository/);
    const dir = join(g.home, 'half-made-clone');
    const sha = await commit(dir, 'first');
    const push = await g.run(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.equal(await headOf(p, 'main'), sha);
  });
});
