import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, scratch, startServer, type Scratch, type Server } from '../../../test/core/processes.ts';
import { gitClient } from '../repository/testing.ts';
import { ensureHostKeys, hostKeyFile } from './host-keys.ts';
import { terminalMessage } from './ssh-command.ts';
import { MESSAGES } from '../git-http/push-policy.ts';

// `bellows serve` with its SSH server, and the OpenSSH helpers as processes: `bellows ssh authorized-keys` prints
// the line sshd's AuthorizedKeysCommand wants, and its forced command `bellows ssh shell` serves git through
// stdin and stdout as sshd would run it (a script stands for sshd here).

const ROOT = 'glpat-ssh-root-token-0123456789';
let s: Scratch;
let server: Server;
const dir = mkdtempSync(join(tmpdir(), 'bellows-openssh-'));
let key: { file: string; pub: string; b64: string; id: number };
let projectPath: string;

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${server.url}/api/v4${path}`, { method, headers: { 'private-token': ROOT, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  const json = await r.json();
  assert.ok(r.status < 300, JSON.stringify(json));
  return json;
}

before(async () => {
  s = await scratch();
  // One process starts fastest; serving SSH from several workers is exercised by the workers test.
  server = await startServer({ ...s.env, BELLOWS_ROOT_TOKEN: ROOT, BELLOWS_ROOT_PASSWORD: 'root-password-1', BELLOWS_WORKERS: '1' });
  const file = join(dir, 'id');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'root@test', '-f', file]);
  const pub = readFileSync(`${file}.pub`, 'utf8').trim();
  const created = await api('POST', '/user/keys', { title: 'laptop', key: pub });
  key = { file, pub, b64: pub.split(' ')[1]!, id: created.id };
  const project = await api('POST', '/projects', { name: 'over-ssh', initialize_with_readme: true });
  projectPath = project.path_with_namespace;
  assert.equal(project.ssh_url_to_repo, `ssh://git@127.0.0.1:${server.sshPort}/${projectPath}.git`);
});
after(async () => {
  await server?.stop();
  await s.cleanup();
});

test('serve: host keys are made at first start in the data directory, private, and kept', () => {
  for (const type of ['ed25519', 'rsa'] as const) {
    const st = statSync(hostKeyFile(s.dataDir, type));
    assert.equal(st.mode & 0o777, 0o600, type);
  }
  const before = [readFileSync(hostKeyFile(s.dataDir, 'ed25519')), readFileSync(hostKeyFile(s.dataDir, 'rsa'))];
  assert.deepEqual(ensureHostKeys(s.dataDir), before);
});

test('serve: ssh -T and a clone over the embedded SSH server, checked against its host keys', async () => {
  const knownHosts = join(dir, 'known_hosts');
  const [algo, blob] = readFileSync(`${hostKeyFile(s.dataDir, 'ed25519')}.pub`, 'utf8').trim().split(' ');
  writeFileSync(knownHosts, `[127.0.0.1]:${server.sshPort} ${algo} ${blob}\n`);
  const ssh = `ssh -F /dev/null -i ${key.file} -o IdentitiesOnly=yes -o UserKnownHostsFile=${knownHosts} -o StrictHostKeyChecking=yes -o BatchMode=yes -o LogLevel=ERROR`;
  const welcome = execFileSync('sh', ['-c', `${ssh} -p ${server.sshPort} -T git@127.0.0.1`], { encoding: 'utf8' });
  assert.equal(welcome, 'Welcome to Bellows, @root!\n');
  const g = gitClient({ GIT_SSH_COMMAND: ssh });
  const r = await g.run(['clone', '-q', `ssh://git@127.0.0.1:${server.sshPort}/${projectPath}.git`, 'embedded']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(readFileSync(join(g.home, 'embedded', 'README.md')));
});

test('ssh authorized-keys prints the forced-command line of a known key, nothing for others', () => {
  const r = runCli(['ssh', 'authorized-keys', 'ssh-ed25519', key.b64], s.env);
  assert.equal(r.status, 0, r.stderr);
  const m = /^command="([^"]+)",no-port-forwarding,no-X11-forwarding,no-agent-forwarding,no-pty ssh-ed25519 (\S+)\n$/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.equal(m![2], key.b64);
  assert.match(m![1]!, new RegExp(` ssh shell key-${key.id}$`));
  // The type must be the blob's; an unknown or malformed key prints nothing (sshd then refuses it).
  for (const args of [['ssh-rsa', key.b64], ['ssh-ed25519', 'AAAAC3NzaC1lZDI1NTE5AAAAIBm2TIQu2IVFOlVJD5b+Nal5r4YhaSnVkpVXFRF5nbhX'], ['ssh-ed25519', 'not base64!']]) {
    const none = runCli(['ssh', 'authorized-keys', ...args], s.env);
    assert.deepEqual([none.status, none.stdout], [0, ''], args.join(' '));
  }
});

test('ssh shell: the forced command serves clone and push through stdin and stdout, and greets a shell', async () => {
  const line = runCli(['ssh', 'authorized-keys', 'ssh-ed25519', key.b64], s.env).stdout;
  const forced = /^command="([^"]+)"/.exec(line)![1]!;
  // Stands for sshd: runs the forced command with the client's command in SSH_ORIGINAL_COMMAND.
  const sshd = join(dir, 'fake-sshd');
  writeFileSync(sshd, `#!/bin/sh\nfor last; do :; done\nSSH_ORIGINAL_COMMAND="$last" exec sh -c '${forced}'\n`);
  chmodSync(sshd, 0o755);
  const env = { ...s.env, GIT_SSH_COMMAND: sshd, GIT_SSH_VARIANT: 'ssh' };
  delete (env as Record<string, string>).HOME;
  const g = gitClient(env);
  let r = await g.run(['clone', '-q', `git@localhost:${projectPath}.git`, 'forced']);
  assert.equal(r.code, 0, r.stderr);
  const work = join(g.home, 'forced');
  await g.run(['commit', '--allow-empty', '-q', '-m', 'through sshd'], work);
  const sha = (await g.run(['rev-parse', 'HEAD'], work)).stdout.trim();
  r = await g.run(['push', '-q', 'origin', 'HEAD:refs/heads/from-sshd'], work);
  assert.equal(r.code, 0, r.stderr);
  const branch = await api('GET', `/projects/${encodeURIComponent(projectPath)}/repository/branches/from-sshd`);
  assert.equal(branch.commit.id, sha);
  r = await g.run(['ls-remote', `git@localhost:root/missing.git`]);
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes(terminalMessage(MESSAGES.notFound)), r.stderr);

  const shell = runCli(['ssh', 'shell', `key-${key.id}`], s.env);
  assert.deepEqual([shell.status, shell.stdout], [0, 'Welcome to Bellows, @root!\n']);
  const bad = runCli(['ssh', 'shell', 'key-x'], s.env);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /expected key-<id> or deploy-key-<id>/);
});
