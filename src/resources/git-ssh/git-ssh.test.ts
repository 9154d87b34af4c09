import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import {
  addMember, commitFiles, makeDeployKey, makeFork, makeMergeRequest, makeProject as makeFixtureProject, makeSshKey, makeUser, quickUser,
} from '../../../test/support/fixtures.ts';
import { gitClient, makeProject, reloadProject, roleUsers, type RoleUsers } from '../repository/testing.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { MESSAGES } from '../git-http/push-policy.ts';
import { sshUrlToRepo } from '../../http/format.ts';
import { createSshServer, type SshServer } from './ssh-server.ts';
import { ensureHostKeys, hostKeyFile } from './host-keys.ts';
import { SSH_MESSAGES } from './git-ssh.service.ts';
import { parseSshCommand, terminalMessage } from './ssh-command.ts';

// Git over SSH with the real OpenSSH client and git: user keys acting as their users (the role table), deploy keys
// acting for their projects, refusals in the reference's words, the welcome, and the server's limits.

let t: TestApp;
let server: SshServer;
let port: number;
let project: ProjectRow;
let u: RoleUsers;
const keysDir = mkdtempSync(join(tmpdir(), 'bellows-ssh-keys-'));
const knownHosts = join(keysDir, 'known_hosts');
const silent = { info() {}, warn() {}, error() {} };

function newKey(name: string): { file: string; pub: string } {
  const file = join(keysDir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  return { file, pub: readFileSync(`${file}.pub`, 'utf8').trim() };
}

function sshCommand(keyFile: string): string {
  return ['ssh', '-F', '/dev/null', '-i', keyFile, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${knownHosts}`,
    '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=20'].join(' ');
}

const clients = new Map<string, ReturnType<typeof gitClient>>();
function gitAs(keyFile: string) {
  let c = clients.get(keyFile);
  if (!c) clients.set(keyFile, (c = gitClient({ GIT_SSH_COMMAND: sshCommand(keyFile) })));
  return c;
}

const url = (p: ProjectRow) => `ssh://git@127.0.0.1:${port}/${p.full_path}.git`;

/** Runs the ssh client itself with a key; resolves with its exit status and output. */
function ssh(keyFile: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [cmd, ...opts] = sshCommand(keyFile).split(' ');
    const child = spawn(cmd!, [...opts, '-p', String(port), ...args], { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] }) as ChildProcessWithoutNullStreams;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    if (input !== undefined) child.stdin!.end(input);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const keys: Record<string, { file: string; pub: string }> = {};

async function headOf(p: ProjectRow, ref: string): Promise<string | null> {
  const r = await call(t.app, 'GET', `/projects/${p.id}/repository/branches/${encodeURIComponent(ref)}`, { token: u.owner.token });
  return r.status === 200 ? r.body.commit.id : null;
}

/** A clone by `keyFile` with one new commit on top; null (and the failed clone's output) when it cannot clone. */
async function cloneWithCommit(keyFile: string, p: ProjectRow, name: string): Promise<{ dir: string; sha: string }> {
  const g = gitAs(keyFile);
  const r = await g.run(['clone', '-q', url(p), name]);
  assert.equal(r.code, 0, r.stderr);
  const dir = join(g.home, name);
  await g.run(['commit', '--allow-empty', '-q', '-m', name], dir);
  return { dir, sha: (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim() };
}

before(async () => {
  t = await buildTestApp();
  const hostKeys = ensureHostKeys(t.dataDir);
  server = createSshServer(t.app, { hostKeys, log: silent, loginGraceMs: 1500, maxSessionsPerKey: 2 });
  port = await server.listen(0, '127.0.0.1');
  const lines = ['ed25519', 'rsa'].map((type) => {
    const [algo, blob] = readFileSync(`${hostKeyFile(t.dataDir, type as 'rsa')}.pub`, 'utf8').trim().split(' ');
    return `[127.0.0.1]:${port} ${algo} ${blob}`;
  });
  writeFileSync(knownHosts, lines.join('\n') + '\n');
  const owner = await makeUser(t.app);
  project = await makeProject(t.app, owner.user, { visibility: 0 });
  u = await roleUsers(t.app, project, owner, (o) => makeUser(t.app, o));
  for (const role of ['owner', 'maintainer', 'developer', 'reporter', 'guest', 'stranger', 'admin'] as const) {
    keys[role] = newKey(role);
    await makeSshKey(t.app, u[role].user.id, keys[role]!.pub);
  }
  // Seed the repository with a first commit on main, which Maintainers alone may push to.
  const seed = await cloneWithCommit(keys.owner!.file, project, 'seed');
  const r = await gitAs(keys.owner!.file).run(['push', '-q', 'origin', 'HEAD:main'], seed.dir);
  assert.equal(r.code, 0, r.stderr);
  const rule = await call(t.app, 'POST', `/projects/${project.id}/protected_branches`, { token: u.owner.token, body: { name: 'main', push_access_level: 40 } });
  assert.equal(rule.status, 201, JSON.stringify(rule.body));
});
after(async () => {
  await server.close(0);
  await t.close();
});

describe('user keys', () => {
  test('clone, fetch and push with protocol v2 and v0; the project records the push', async () => {
    const before = await reloadProject(t.app, project.id);
    (t.clock as any).advance(60_000);
    const { dir, sha } = await cloneWithCommit(keys.developer!.file, project, 'dev-clone');
    const g = gitAs(keys.developer!.file);
    let r = await g.run(['push', 'origin', 'HEAD:refs/heads/feature-ssh'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await headOf(project, 'feature-ssh'), sha);
    const after = await reloadProject(t.app, project.id);
    assert.ok(after.last_activity_at > before.last_activity_at, 'activity recorded');
    r = await g.run(['-c', 'protocol.version=0', 'fetch', '-q', 'origin'], dir);
    assert.equal(r.code, 0, r.stderr);
    r = await g.run(['-c', 'protocol.version=0', 'clone', '-q', url(project), 'v0-clone']);
    assert.equal(r.code, 0, r.stderr);
    r = await g.run(['ls-remote', url(project), 'refs/heads/feature-ssh']);
    assert.equal(r.stdout.trim(), `${sha}\trefs/heads/feature-ssh`);
    // Protocol v2 is asked for through the GIT_PROTOCOL variable, and answered.
    const traced = await gitClient({ GIT_SSH_COMMAND: sshCommand(keys.developer!.file), GIT_TRACE_PACKET: '1' }).run(['ls-remote', url(project), 'refs/heads/main']);
    assert.equal(traced.code, 0, traced.stderr);
    assert.match(traced.stderr, /packet: +ls-remote< version 2/);
    assert.match(traced.stderr, /packet: +ls-remote> command=ls-refs/);
    // The key records its use.
    const key = await t.app.db.selectFrom('ssh_keys').select('last_used_at').where('user_id', '=', u.developer.user.id).executeTakeFirstOrThrow();
    assert.equal(key.last_used_at, t.clock.now());
  });

  test('role table: who clones and who pushes a private project', async () => {
    // [role, clones, pushes to a new branch]
    const table = [
      ['stranger', MESSAGES.notFound, MESSAGES.notFound],
      ['guest', MESSAGES.downloadCode, MESSAGES.downloadCode],
      ['reporter', true, MESSAGES.pushCode],
      ['developer', true, true],
      ['maintainer', true, true],
      ['owner', true, true],
      ['admin', true, true],
    ] as const;
    for (const [role, clones, pushes] of table) {
      const g = gitAs(keys[role]!.file);
      const clone = await g.run(['ls-remote', url(project)]);
      if (clones === true) assert.equal(clone.code, 0, `${role}: ${clone.stderr}`);
      else {
        assert.notEqual(clone.code, 0, role);
        assert.ok(clone.stderr.includes(terminalMessage(clones)), `${role}: ${clone.stderr}`);
      }
      const dir = join(g.home, `role-${role}`);
      await g.run(['init', '-q', dir]);
      await g.run(['commit', '--allow-empty', '-q', '-m', role], dir);
      const push = await g.run(['push', url(project), `HEAD:refs/heads/role-${role}`], dir);
      if (pushes === true) {
        assert.equal(push.code, 0, `${role}: ${push.stderr}`);
        assert.ok(await headOf(project, `role-${role}`), role);
      } else {
        assert.notEqual(push.code, 0, role);
        assert.ok(push.stderr.includes(terminalMessage(pushes)), `${role}: ${push.stderr}`);
        assert.equal(await headOf(project, `role-${role}`), null, role);
      }
    }
  });

  test('a protected branch refuses a developer with the reason on the terminal', async () => {
    const { dir } = await cloneWithCommit(keys.developer!.file, project, 'dev-main');
    const r = await gitAs(keys.developer!.file).run(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`remote: ${MESSAGES.protectedPush}`));
  });

  test('scp-like URLs and paths without .git or with a leading slash reach the project', async () => {
    const g = gitClient({ GIT_SSH_COMMAND: `${sshCommand(keys.owner!.file)} -p ${port}` });
    for (const path of [`${project.full_path}.git`, project.full_path, `/${project.full_path}`]) {
      const r = await g.run(['ls-remote', `git@127.0.0.1:${path}`, 'refs/heads/main']);
      assert.equal(r.code, 0, `${path}: ${r.stderr}`);
      assert.match(r.stdout, /\trefs\/heads\/main\n$/);
    }
  });

  test('git archive --remote runs upload-archive', async () => {
    const g = gitAs(keys.reporter!.file);
    const r = await g.run(['archive', '--format=tar', `--remote=${url(project)}`, '-o', join(g.home, 'a.tar'), 'main']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(join(g.home, 'a.tar')).length >= 512);
  });

  test('an archived project is read-only', async () => {
    const p = await makeProject(t.app, u.owner.user, { visibility: 0 });
    const { dir } = await cloneWithCommit(keys.owner!.file, p, 'archived');
    await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', p.id).execute();
    t.app.caches.voidAll();
    const r = await gitAs(keys.owner!.file).run(['push', 'origin', 'HEAD:refs/heads/x'], dir);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(terminalMessage(MESSAGES.archived)), r.stderr);
    assert.equal((await gitAs(keys.owner!.file).run(['fetch', '-q', 'origin'], dir)).code, 0);
  });

  test('an unknown key, a blocked user, an expired key', async () => {
    const unknown = newKey('unknown');
    let r = await gitAs(unknown.file).run(['ls-remote', url(project)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Permission denied \(publickey\)/);

    const blocked = await makeUser(t.app);
    keys.blocked = newKey('blocked');
    await makeSshKey(t.app, blocked.user.id, keys.blocked.pub);
    await t.app.db.updateTable('users').set({ state: 'blocked' }).where('id', '=', blocked.user.id).execute();
    r = await gitAs(keys.blocked.file).run(['ls-remote', url(project)]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(terminalMessage(SSH_MESSAGES.blocked)), r.stderr);
    const shell = await ssh(keys.blocked.file, ['-T', 'git@127.0.0.1']);
    assert.equal(shell.code, 1);
    assert.equal(shell.stdout, '');

    const expiring = newKey('expiring');
    await makeSshKey(t.app, u.owner.user.id, expiring.pub, { expiresAt: t.clock.now() + 60_000 });
    assert.equal((await gitAs(expiring.file).run(['ls-remote', url(project)])).code, 0);
    (t.clock as any).advance(60_000);
    r = await gitAs(expiring.file).run(['ls-remote', url(project)]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(terminalMessage(SSH_MESSAGES.expired)), r.stderr);

    // A key for signing commits only is no key for signing in.
    const signing = newKey('signing');
    await makeSshKey(t.app, u.owner.user.id, signing.pub, { usageType: 'signing' });
    r = await gitAs(signing.file).run(['ls-remote', url(project)]);
    assert.match(r.stderr, /Permission denied \(publickey\)/);
  });
});

describe('deploy keys', () => {
  let readOnly: { file: string; pub: string };
  let writer: { file: string; pub: string };
  let writerId: number;
  before(async () => {
    readOnly = newKey('deploy-ro');
    writer = newKey('deploy-rw');
    await makeDeployKey(t.app, project.id, readOnly.pub);
    writerId = (await makeDeployKey(t.app, project.id, writer.pub, { canPush: true })).key.id;
  });

  test('a read-only key clones and cannot push', async () => {
    const { dir } = await cloneWithCommit(readOnly.file, project, 'ro');
    const r = await gitAs(readOnly.file).run(['push', 'origin', 'HEAD:refs/heads/ro'], dir);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(terminalMessage(MESSAGES.deployKeyPush)), r.stderr);
    assert.equal(await headOf(project, 'ro'), null);
  });

  test('a key that can push pushes to unprotected branches; a protected branch needs an entry naming it', async () => {
    const { dir, sha } = await cloneWithCommit(writer.file, project, 'rw');
    const g = gitAs(writer.file);
    let r = await g.run(['push', 'origin', 'HEAD:refs/heads/deployed'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await headOf(project, 'deployed'), sha);
    r = await g.run(['push', 'origin', 'HEAD:main'], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`remote: ${MESSAGES.protectedPush}`));
    assert.notEqual(await headOf(project, 'main'), sha);

    const rule = await call(t.app, 'POST', `/projects/${project.id}/protected_branches`, {
      token: u.owner.token, body: { name: 'release', allowed_to_push: [{ deploy_key_id: writerId }] },
    });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    r = await g.run(['push', 'origin', 'HEAD:refs/heads/release'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await headOf(project, 'release'), sha);
    // The same rule keeps a developer out.
    const dev = await cloneWithCommit(keys.developer!.file, project, 'dev-release');
    r = await gitAs(keys.developer!.file).run(['push', 'origin', 'HEAD:refs/heads/release'], dev.dir);
    assert.notEqual(r.code, 0);
  });

  test('a key reaches only the projects it is enabled on, public ones included', async () => {
    const other = await makeProject(t.app, u.owner.user, { visibility: 20 });
    const r = await gitAs(writer.file).run(['ls-remote', url(other)]);
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(terminalMessage(MESSAGES.notFound)), r.stderr);
  });

  test('ssh -T greets a deploy key as Anonymous', async () => {
    const r = await ssh(readOnly.file, ['-T', 'git@127.0.0.1']);
    assert.deepEqual([r.code, r.stdout], [0, 'Welcome to Bellows, Anonymous!\n']);
  });
});

describe('the shell and other commands', () => {
  test('ssh -T and any other command get the welcome and run nothing', async () => {
    let r = await ssh(keys.owner!.file, ['-T', 'git@127.0.0.1']);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, `Welcome to Bellows, @${u.owner.user.username}!\n`, '']);
    r = await ssh(keys.owner!.file, ['git@127.0.0.1', 'touch', join(keysDir, 'ran')]);
    assert.deepEqual([r.code, r.stdout], [0, `Welcome to Bellows, @${u.owner.user.username}!\n`]);
    assert.throws(() => readFileSync(join(keysDir, 'ran')));
  });

  test('a user other than git is refused', async () => {
    const r = await ssh(keys.owner!.file, ['-T', 'root@127.0.0.1']);
    assert.equal(r.code, 255);
    assert.match(r.stderr, /Permission denied \(publickey\)/);
  });

  test('parseSshCommand: quoting, service names and paths', () => {
    assert.deepEqual(parseSshCommand("git-upload-pack 'g/p.git'"), { kind: 'git', service: 'git-upload-pack', path: 'g/p' });
    assert.deepEqual(parseSshCommand("git upload-pack '/g/p.git/'"), { kind: 'git', service: 'git-upload-pack', path: 'g/p' });
    assert.deepEqual(parseSshCommand("git-receive-pack 'it'\\''s/p'"), { kind: 'git', service: 'git-receive-pack', path: "it's/p" });
    assert.deepEqual(parseSshCommand('git-upload-archive g/p'), { kind: 'git', service: 'git-upload-archive', path: 'g/p' });
    assert.deepEqual(parseSshCommand("git-upload-pack 'a' 'b'"), { kind: 'git', service: 'git-upload-pack', path: '' });
    assert.deepEqual(parseSshCommand("git-upload-pack 'unclosed"), { kind: 'welcome' });
    assert.deepEqual(parseSshCommand('sh -c id'), { kind: 'welcome' });
    assert.deepEqual(parseSshCommand(undefined), { kind: 'welcome' });
  });

  test('ssh_url_to_repo: scp-like on port 22, ssh:// with the port otherwise', async () => {
    assert.equal(sshUrlToRepo({ sshHost: 'h.example', sshPort: 22 }, 'g/p'), 'git@h.example:g/p.git');
    assert.equal(sshUrlToRepo({ sshHost: 'h.example', sshPort: 2222 }, 'g/p'), 'ssh://git@h.example:2222/g/p.git');
    assert.equal(sshUrlToRepo({ sshHost: '::1', sshPort: 2222 }, 'g/p'), 'ssh://git@[::1]:2222/g/p.git');
    const r = await call(t.app, 'GET', `/projects/${project.id}`, { token: u.owner.token });
    assert.equal(r.body.ssh_url_to_repo, `ssh://git@bellows.test:2222/${project.full_path}.git`);
  });
});

describe('limits', () => {
  test('no password or keyboard-interactive methods', async () => {
    const r = await ssh(keys.owner!.file, ['-o', 'PreferredAuthentications=password,keyboard-interactive', '-T', 'git@127.0.0.1']);
    assert.equal(r.code, 255);
    assert.match(r.stderr, /Permission denied \(publickey\)/);
  });

  test('a connection that does not sign in is closed after the grace time', async () => {
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.on('data', () => {});
      s.on('error', () => {});
      s.on('close', () => resolve());
    });
    const took = Date.now() - started;
    assert.ok(took >= 1400 && took < 10_000, `closed after ${took} ms`);
  });

  function client(keyFile: string): Promise<InstanceType<typeof ssh2.Client>> {
    return new Promise((resolve, reject) => {
      const c = new ssh2.Client();
      c.on('ready', () => resolve(c)).on('error', reject);
      c.connect({ host: '127.0.0.1', port, username: 'git', privateKey: readFileSync(keyFile) });
    });
  }

  test('no port forwarding; at most maxSessionsPerKey commands at once for a key', async () => {
    const c = await client(keys.maintainer!.file);
    try {
      const forward = await new Promise<Error | null>((resolve) => c.forwardOut('127.0.0.1', 1, '127.0.0.1', 22, (err) => resolve(err ?? null)));
      assert.ok(forward, 'direct-tcpip refused');
      const remote = await new Promise<Error | null>((resolve) => c.forwardIn('127.0.0.1', 0, (err) => resolve(err ?? null)));
      assert.ok(remote, 'tcpip-forward refused');
      // upload-pack waits for the client after its advertisement: two stay open, the third is refused.
      const exec = () => new Promise<{ stream: any; first: Promise<string> }>((resolve, reject) => c.exec(`git-upload-pack '${project.full_path}.git'`, (err, stream) => {
        if (err) return reject(err);
        const first = new Promise<string>((res) => {
          let out = '';
          stream.on('data', (d: Buffer) => { out += d; if (out.length > 4) res(out); });
          stream.stderr.on('data', (d: Buffer) => { out += d; });
          stream.on('close', () => res(out));
        });
        resolve({ stream, first });
      }));
      const a = await exec();
      const b = await exec();
      assert.match(await a.first, /^[0-9a-f]{4}/);
      assert.match(await b.first, /^[0-9a-f]{4}/);
      const third = await exec();
      assert.ok((await third.first).includes(SSH_MESSAGES.tooManySessions));
      assert.equal(server.running.get(`user:${(await t.app.db.selectFrom('ssh_keys').select('id').where('user_id', '=', u.maintainer.user.id).executeTakeFirstOrThrow()).id}`), 2);
      a.stream.end('0000');
      b.stream.end('0000');
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      c.end();
    }
  });
});

describe('a collaborator on a merge request from a fork', () => {
  test('pushes to its source branch over SSH, and only there; a Reporter upstream does not', async () => {
    const upstream = await makeFixtureProject(t.app, { visibility: 20, repository: true });
    await commitFiles(t.app, upstream, 'main', { 'README.md': 'one\n' });
    await addMember(t.app, { type: 'Project', id: upstream.id }, u.developer.user.id, 30);
    await addMember(t.app, { type: 'Project', id: upstream.id }, u.reporter.user.id, 20);
    const author = await quickUser(t.app);
    const fork = await makeFork(t.app, upstream, author.user, 'fix', { 'fix.txt': 'fixed\n' });
    await makeMergeRequest(t.app, author.token, fork, { source_branch: 'fix', target_branch: 'main', title: 'Fix', target_project_id: upstream.id, allow_collaboration: true });
    const before = await headOf(fork, 'fix');
    const attempt = async (role: 'developer' | 'reporter', refspec: string) => {
      const g = gitAs(keys[role]!.file);
      const dir = join(g.home, `collab-${role}-${refspec.replace(/\W/g, '')}`);
      assert.equal((await g.run(['clone', '-q', '-b', 'fix', url(fork), dir])).code, 0);
      await g.run(['commit', '--allow-empty', '-q', '-m', `by ${role}`], dir);
      const sha = (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
      return { sha, push: await g.run(['push', 'origin', refspec], dir) };
    };
    const refused = await attempt('reporter', 'HEAD:fix');
    assert.notEqual(refused.push.code, 0);
    assert.ok(refused.push.stderr.includes(terminalMessage(MESSAGES.pushCode)), refused.push.stderr);
    const other = await attempt('developer', 'HEAD:refs/heads/other');
    assert.notEqual(other.push.code, 0);
    assert.ok(other.push.stderr.includes(MESSAGES.pushCode), other.push.stderr);
    assert.equal(await headOf(fork, 'other'), null);
    assert.equal(await headOf(fork, 'fix'), before);
    const ok = await attempt('developer', 'HEAD:fix');
    assert.equal(ok.push.code, 0, ok.push.stderr);
    assert.equal(await headOf(fork, 'fix'), ok.sha);
  });
});
