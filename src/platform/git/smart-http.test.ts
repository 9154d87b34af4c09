import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { Repository } from './repository.ts';
import { runGit, GitError } from './command.ts';
import {
  advertiseRefs,
  advertisementContentType,
  decodeRequestBody,
  parseReceivePackCommands,
  pktLine,
  readReceivePackCommands,
  receivePackError,
  resultContentType,
  sanitizeGitProtocol,
  serviceRpc,
  type GitService,
} from './smart-http.ts';
import { RepositoryNotFoundError } from './errors.ts';

let root: string;
let repo: Repository;
let server: http.Server;
let base: string;
const REFUSAL = 'You are not allowed to push code to protected branches on this project.';

// The HTTP layer in miniature: route, then hand the streams to the helpers.
async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url!, 'http://localhost');
  const gitProtocol = req.headers['git-protocol'] as string | undefined;
  if (req.method === 'GET' && url.pathname === '/x.git/info/refs') {
    const service = url.searchParams.get('service')!.replace(/^git-/, '') as GitService;
    const body = await advertiseRefs(repo.path, service, gitProtocol);
    res.writeHead(200, { 'content-type': advertisementContentType(service), 'cache-control': 'no-cache' });
    return void body.pipe(res);
  }
  const m = /^\/x\.git\/git-(upload-pack|receive-pack)$/.exec(url.pathname);
  if (req.method !== 'POST' || !m) return void res.writeHead(404).end();
  const service = m[1] as GitService;
  const gzip = req.headers['content-encoding'] === 'gzip';
  if (service === 'upload-pack') {
    const { stdout } = serviceRpc(repo.path, service, req, { gzip, gitProtocol });
    res.writeHead(200, { 'content-type': resultContentType(service) });
    return void stdout.pipe(res);
  }
  const body = decodeRequestBody(req, gzip);
  const request = await readReceivePackCommands(body);
  res.writeHead(200, { 'content-type': resultContentType(service) });
  if (request.commands.some((c) => c.ref === 'refs/heads/protected')) {
    body.resume();
    await once(body, 'end');
    return void res.end(receivePackError(`GitLab: ${REFUSAL}`, request));
  }
  serviceRpc(repo.path, service, body, { prefix: request.head, gitProtocol }).stdout.pipe(res);
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'bellows-http-test-'));
  repo = await Repository.init(join(root, 'x.git'));
  await repo.createCommit({
    branch: 'main',
    message: 'Initial commit',
    author: { name: 'A', email: 'a@example.com' },
    actions: [{ action: 'create', file_path: 'README.md', content: 'hello\n' }],
  });
  server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) res.writeHead(e instanceof RepositoryNotFoundError ? 404 : 500);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.close();
  await rm(root, { recursive: true, force: true });
});

const client = (cwd: string, args: string[], okExitCodes: number[] = []) =>
  runGit(['-c', 'user.name=Client', '-c', 'user.email=client@example.com', ...args], { cwd, okExitCodes, timeoutMs: 20_000 });

test('git clone and git push over smart HTTP (protocol v2 and v0)', async () => {
  const v2 = join(root, 'clone-v2');
  await client(root, ['-c', 'protocol.version=2', 'clone', '--quiet', `${base}/x.git`, v2]);
  assert.equal((await client(v2, ['log', '--format=%s'])).stdout.toString(), 'Initial commit\n');

  const v0 = join(root, 'clone-v0');
  await client(root, ['-c', 'protocol.version=0', 'clone', '--quiet', `${base}/x.git`, v0]);

  await writeFile(join(v2, 'pushed.txt'), 'from the client\n');
  await client(v2, ['add', 'pushed.txt']);
  await client(v2, ['commit', '--quiet', '-m', 'Pushed over HTTP']);
  await repo.listBranches(); // warm the cache: the push must invalidate it
  await client(v2, ['push', '--quiet', 'origin', 'main']);
  const main = (await repo.listBranches()).find((b) => b.name === 'main')!;
  assert.equal(main.commit.title, 'Pushed over HTTP');
  assert.equal((await repo.readBlob('main', 'pushed.txt'))!.content.toString(), 'from the client\n');

  await client(v0, ['pull', '--quiet', '--ff-only']);
  assert.equal((await client(v0, ['log', '-1', '--format=%s'])).stdout.toString(), 'Pushed over HTTP\n');
});

test('a refused push shows the server message on git stderr and changes nothing', async () => {
  const dir = join(root, 'clone-refused');
  await client(root, ['clone', '--quiet', `${base}/x.git`, dir]);
  await writeFile(join(dir, 'nope.txt'), 'nope\n');
  await client(dir, ['add', 'nope.txt']);
  await client(dir, ['commit', '--quiet', '-m', 'Should not land']);
  const before = await repo.checksum();
  const r = await client(dir, ['push', 'origin', 'HEAD:refs/heads/protected'], [1]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`remote: GitLab: ${REFUSAL.replace(/\./g, '\\.')}`));
  assert.match(r.stderr, /! \[remote rejected\] HEAD -> protected \(pre-receive hook declined\)/);
  repo.invalidate();
  assert.equal(await repo.getBranch('protected'), null);
  assert.equal(await repo.checksum(), before);
});

test('serviceRpc accepts gzip bodies and GIT_PROTOCOL; advertiseRefs reports a missing repository early', async () => {
  const request = Buffer.concat([pktLine('command=ls-refs\n'), Buffer.from('0001'), pktLine('symrefs\n'), Buffer.from('0000')]);
  const { stdout, done } = serviceRpc(repo.path, 'upload-pack', Readable.from([gzipSync(request)]), {
    gzip: true,
    gitProtocol: 'version=2',
  });
  const chunks: Buffer[] = [];
  for await (const c of stdout) chunks.push(c as Buffer);
  assert.match(Buffer.concat(chunks).toString(), /[0-9a-f]{40} HEAD symref-target:refs\/heads\/main\n/);
  assert.equal((await done).code, 0);

  const adv = await advertiseRefs(repo.path, 'upload-pack', 'version=2');
  const text = (await adv.toArray()).map(String).join('');
  assert.match(text, /^000eversion 2\n/, 'no preamble under v2');
  const adv0 = (await (await advertiseRefs(repo.path, 'receive-pack', 'version=2')).toArray()).map(String).join('');
  assert.match(adv0, /^001f# service=git-receive-pack\n0000/);

  await assert.rejects(advertiseRefs(join(root, 'missing.git'), 'upload-pack'), RepositoryNotFoundError);
  await assert.rejects(advertiseRefs(join(root, 'clone-v2'), 'upload-pack'), RepositoryNotFoundError, 'a work tree');
  const broken = join(root, 'broken.git');
  await mkdir(join(broken, 'objects'), { recursive: true });
  await writeFile(join(broken, 'HEAD'), 'garbage\n');
  await assert.rejects(advertiseRefs(broken, 'upload-pack'), GitError);
});

test('parseReceivePackCommands reads the command list and capabilities', () => {
  const a = 'a'.repeat(40);
  const b = 'b'.repeat(40);
  const z = '0'.repeat(40);
  const body = Buffer.concat([
    pktLine(`${a} ${b} refs/heads/main\0report-status side-band-64k agent=git/2.39\n`),
    pktLine(`${z} ${b} refs/heads/new\n`),
    Buffer.from('0000'),
    Buffer.from('PACK....'),
  ]);
  const parsed = parseReceivePackCommands(body)!;
  assert.deepEqual(parsed.commands, [
    { oldSha: a, newSha: b, ref: 'refs/heads/main' },
    { oldSha: z, newSha: b, ref: 'refs/heads/new' },
  ]);
  assert.deepEqual(parsed.capabilities, ['report-status', 'side-band-64k', 'agent=git/2.39']);
  assert.equal(body.subarray(parsed.length).toString(), 'PACK....');
  assert.equal(parseReceivePackCommands(body.subarray(0, 30)), null, 'incomplete');
  assert.deepEqual(parseReceivePackCommands(Buffer.from('0000')), { commands: [], capabilities: [], length: 4 });
  assert.throws(() => parseReceivePackCommands(Buffer.from('zzzz')), /bad pkt-line/);

  // Without side-band the report is plain pkt-lines.
  const plain = receivePackError('no', { commands: parsed.commands, capabilities: ['report-status'] }, 'denied').toString();
  assert.equal(plain, `000eunpack ok\n001eng refs/heads/main denied\n001dng refs/heads/new denied\n0000`);
});

test('Git-Protocol values are passed on only when they are plain key=value pairs', () => {
  assert.equal(sanitizeGitProtocol('version=2'), 'version=2');
  assert.equal(sanitizeGitProtocol('version=2:object-format=sha1'), undefined);
  assert.equal(sanitizeGitProtocol('version=1:foo=bar'), 'version=1:foo=bar');
  for (const bad of ['version=2\nX=1', 'version=2 ', '$(id)', '', 'a=b;c', undefined]) {
    assert.equal(sanitizeGitProtocol(bad), undefined, String(bad));
  }
});
