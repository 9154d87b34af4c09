import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gitInvocationCount, runGit } from './command.ts';
import { answerLsRefs, parseLsRefsRequest, readLsRefsRequest, refFiles, type LsRefsArgs } from './ls-refs.ts';
import { invalidateRefCache } from './ref-cache.ts';

let root: string;
const repos: Record<string, string> = {};
const IDENT = { GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com', GIT_AUTHOR_DATE: '@1700000000 +0000', GIT_COMMITTER_DATE: '@1700000000 +0000' };

async function git(repo: string, args: string[], input?: string): Promise<string> {
  return (await runGit(args, { gitDir: repo, input, env: IDENT })).stdout.toString().trim();
}

async function init(name: string, branch = 'main'): Promise<string> {
  const path = join(root, `${name}.git`);
  await runGit(['init', '--bare', '--quiet', `--initial-branch=${branch}`, path]);
  repos[name] = path;
  return path;
}

async function commit(repo: string, msg: string, parent?: string): Promise<string> {
  const tree = await git(repo, ['mktree'], '');
  return git(repo, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', msg]);
}

const pktStr = (line: string) => Buffer.from((Buffer.byteLength(line) + 4).toString(16).padStart(4, '0') + line);

function request(opts: { args?: string[]; keys?: string[]; delim?: boolean; newline?: boolean; trailer?: string } = {}): Buffer {
  const nl = opts.newline === false ? '' : '\n';
  const keys = opts.keys ?? ['command=ls-refs', 'agent=git/2.39.5', 'object-format=sha1'];
  const args = opts.args ?? [];
  return Buffer.concat([
    ...keys.map((k) => pktStr(`${k}${nl}`)),
    ...(opts.delim === false ? [] : [Buffer.from('0001')]),
    ...args.map((a) => pktStr(`${a}${nl}`)),
    Buffer.from('0000'),
    Buffer.from(opts.trailer ?? ''),
  ]);
}

/** What `git upload-pack --stateless-rpc` answers to the same request. */
async function gitAnswer(repo: string, body: Buffer): Promise<string> {
  const r = await runGit(['upload-pack', '--stateless-rpc', repo], { input: body, env: { GIT_PROTOCOL: 'version=2' }, okExitCodes: [128] });
  return r.stdout.toString('latin1');
}

async function ours(repo: string, body: Buffer): Promise<string | null> {
  const parsed = parseLsRefsRequest(body);
  if (parsed.state !== 'ls-refs') return null;
  const answer = await answerLsRefs(repo, parsed.args);
  return answer ? answer.toString('latin1') : null;
}

/** Our bytes must exist and equal git's. */
async function same(repo: string, body: Buffer, what: string): Promise<string> {
  const expected = await gitAnswer(repo, body);
  const got = await ours(repo, body);
  assert.notEqual(got, null, `${what}: answered by git instead`);
  assert.equal(got, expected, what);
  return got!;
}

/** Sets every file and directory under the repository's refs (and HEAD, packed-refs) back in time. */
async function age(repo: string): Promise<void> {
  const old = new Date(Date.now() - 60_000);
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      await utimes(join(dir, e.name), old, old);
    }
    await utimes(dir, old, old);
  };
  await walk(join(repo, 'refs'));
  for (const f of ['HEAD', 'packed-refs', 'config']) await utimes(join(repo, f), old, old).catch(() => undefined);
}

const PREFIX_SETS: string[][] = [
  [],
  ['HEAD'],
  ['H'],
  [''],
  ['refs/heads/'],
  ['refs/tags/'],
  ['refs/heads/feature/', 'refs/tags/v'],
  ['refs/heads/main', 'refs/refs/heads/main', 'refs/tags/refs/heads/main', 'refs/heads/refs/heads/main', 'refs/remotes/refs/heads/main', 'refs/remotes/refs/heads/main/HEAD', 'refs/tags/'],
  ['refs/heads/feature/a', 'refs/heads/feature', 'refs/heads/feature/a'],
  ['refs/heads/*'],
  ['refs/heads/zeta', 'refs/heads/zeta'],
  ['refs/tags/', 'HEAD', 'refs/heads/'],
  ['nothing/here'],
  ['refs/merge-requests/'],
];

function combos(): Array<{ flags: string[]; prefixes: string[] }> {
  const out: Array<{ flags: string[]; prefixes: string[] }> = [];
  const flagSets = [[], ['peel'], ['symrefs'], ['unborn'], ['peel', 'symrefs'], ['symrefs', 'unborn'], ['peel', 'symrefs', 'unborn'], ['unborn', 'peel', 'peel', 'symrefs']];
  for (const flags of flagSets) for (const prefixes of PREFIX_SETS) out.push({ flags, prefixes });
  return out;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'bellows-ls-refs-'));
  await init('empty');

  const one = await init('one');
  await git(one, ['update-ref', 'refs/heads/main', await commit(one, 'first')]);

  const many = await init('many');
  let prev = await commit(many, 'root');
  await git(many, ['update-ref', 'refs/heads/main', prev]);
  const names = ['feature/a', 'feature/a-b', 'feature/ab/c', 'feature/a.b', 'release/1.0', 'zeta', 'a', 'feature-x', 'Upper/Case'];
  for (const n of names) {
    prev = await commit(many, n, prev);
    await git(many, ['update-ref', `refs/heads/${n}`, prev]);
  }
  await git(many, ['update-ref', 'refs/merge-requests/1/head', prev]);
  await git(many, ['update-ref', `refs/keep-around/${prev}`, prev]);
  // Some refs packed, then some of them moved (loose over packed) and one deleted from the packed file.
  await git(many, ['pack-refs', '--all']);
  prev = await commit(many, 'after pack', prev);
  await git(many, ['update-ref', 'refs/heads/zeta', prev]);
  await git(many, ['update-ref', 'refs/heads/feature/new', prev]);
  await git(many, ['update-ref', '-d', 'refs/heads/a']);

  const tags = await init('tags');
  const c1 = await commit(tags, 'one');
  const c2 = await commit(tags, 'two', c1);
  await git(tags, ['update-ref', 'refs/heads/main', c2]);
  await git(tags, ['tag', 'light', c1]);
  await git(tags, ['tag', '-a', '-m', 'annotated', 'v1.0', c1]);
  await git(tags, ['tag', '-a', '-m', 'nested', 'v1.0-nested', 'v1.0']);
  await git(tags, ['tag', '-a', '-m', 'tree', 'tree-tag', `${c2}^{tree}`]);
  await git(tags, ['pack-refs', '--all']);
  // Loose tags after packing: their peeled values come from the objects, not from packed-refs.
  await git(tags, ['tag', '-a', '-m', 'loose', 'v2.0', c2]);
  await git(tags, ['tag', 'light2', c2]);
  await git(tags, ['tag', '-a', '-m', 'loose nested', 'v2.0-nested', 'v2.0']);
  // A ref outside refs/tags pointing at a tag object.
  await git(tags, ['update-ref', 'refs/keep/at-tag', await git(tags, ['rev-parse', 'v2.0'])]);

  const orphan = await init('orphan-head');
  await git(orphan, ['update-ref', 'refs/heads/other', await commit(orphan, 'x')]);
  await git(orphan, ['symbolic-ref', 'HEAD', 'refs/heads/missing']);
});

after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('ls-refs from the repository files', () => {
  for (const name of ['empty', 'one', 'many', 'tags', 'orphan-head']) {
    test(`${name}: every argument combination gives git's bytes`, async () => {
      const repo = repos[name];
      for (const { flags, prefixes } of combos()) {
        const args = [...flags, ...prefixes.map((p) => `ref-prefix ${p}`)];
        await same(repo, request({ args }), `${name} ${JSON.stringify(args)}`);
      }
    });
  }

  test('request shapes: keys, no delimiter, no newlines, bytes after the flush', async () => {
    const repo = repos.tags;
    const args = ['peel', 'symrefs', 'ref-prefix refs/tags/v', 'ref-prefix HEAD'];
    await same(repo, request({ args, keys: ['command=ls-refs'] }), 'command only');
    await same(repo, request({ args, keys: ['agent=x/1', 'command=ls-refs', 'server-option=a=b', 'server-option', 'agent'] }), 'keys in any order');
    await same(repo, request({ delim: false }), 'no arguments at all');
    await same(repo, request({ args, newline: false }), 'lines without newline');
    await same(repo, request({ args, trailer: '0009peel\n0000garbage' }), 'bytes after the request');
  });

  test('lsrefs.unborn=ignore drops the unborn HEAD line as git does', async () => {
    const repo = await init('unborn-ignore');
    await git(repo, ['config', 'lsrefs.unborn', 'ignore']);
    const got = await same(repo, request({ args: ['symrefs', 'unborn', 'ref-prefix HEAD'] }), 'ignore');
    assert.equal(got, '0000');
    await git(repo, ['config', 'lsrefs.unborn', 'allow']);
    assert.equal(await same(repo, request({ args: ['symrefs', 'unborn'] }), 'allow'), '002eunborn HEAD symref-target:refs/heads/main\n0000');
  });

  test('the answer for the tags repository is what a client needs', async () => {
    const got = await same(repos.tags, request({ args: ['peel', 'symrefs', 'ref-prefix refs/tags/v1'] }), 'v1');
    const c1 = await git(repos.tags, ['rev-parse', 'v1.0^{}']);
    assert.match(got, new RegExp(`refs/tags/v1\\.0 peeled:${c1}\n`));
    assert.match(got, new RegExp(`refs/tags/v1\\.0-nested peeled:${c1}\n`));
  });

  test('anything not fully understood is left to git', async () => {
    const other = (b: Buffer) => assert.equal(parseLsRefsRequest(b).state, 'other', b.toString('latin1'));
    other(request({ args: ['peel', 'unknown-argument'] }));
    other(request({ keys: ['command=fetch'] }));
    other(request({ keys: ['command=ls-refs', 'command=ls-refs'] }));
    other(request({ keys: ['command=ls-refs', 'session-id=abc'] }));
    other(request({ keys: ['command=ls-refs', 'object-format=sha256'] }));
    other(request({ keys: ['agent=x'] }));
    other(request({ args: ['ref-prefix refs/heads/\0x'] }));
    other(Buffer.concat([pktStr('command=ls-refs\n'), Buffer.from('0001'), Buffer.from('0001'), Buffer.from('0000')]));
    other(Buffer.concat([pktStr('command=ls-refs\n'), Buffer.from('0001'), Buffer.from('0004'), Buffer.from('0000')]));
    other(Buffer.from('0000'));
    other(Buffer.from('zzzz'));
    assert.equal(parseLsRefsRequest(request().subarray(0, 10)).state, 'more');

    const hidden = await init('hidden');
    await git(hidden, ['update-ref', 'refs/heads/main', await commit(hidden, 'x')]);
    await git(hidden, ['config', 'uploadpack.hideRefs', 'refs/heads/secret']);
    assert.equal(await ours(hidden, request({ args: ['peel'] })), null, 'hidden refs');

    const sym = await init('symref');
    await git(sym, ['update-ref', 'refs/heads/main', await commit(sym, 'x')]);
    await git(sym, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    assert.equal(await ours(sym, request({ args: ['symrefs'] })), null, 'a symbolic ref under refs/');

    const broken = await init('broken-config');
    await git(broken, ['update-ref', 'refs/heads/main', await commit(broken, 'x')]);
    await writeFile(join(broken, 'config'), '[core\n\tbare = true\n');
    await assert.rejects(answerLsRefs(broken, { peel: false, symrefs: false, unborn: false, prefixes: [] }), 'a configuration git cannot read is not guessed at');

    const big = await init('big');
    const c0 = await commit(big, 'x');
    await git(big, ['update-ref', '--stdin'], Array.from({ length: 2100 }, (_, i) => `create refs/heads/b${i} ${c0}\n`).join(''));
    await git(big, ['pack-refs', '--all']);
    const many = Array.from({ length: 1000 }, (_, i) => `refs/heads/b${i}`);
    assert.equal(await answerLsRefs(big, { peel: false, symrefs: false, unborn: false, prefixes: many }), null, 'too much matching work');
    await same(big, request({ args: many.slice(0, 5).map((p) => `ref-prefix ${p}`) }), 'a few prefixes on the same repository');

    const detached = await init('detached');
    const c = await commit(detached, 'x');
    await git(detached, ['update-ref', 'refs/heads/main', c]);
    await writeFile(join(detached, 'HEAD'), `${c}\n`);
    assert.equal(await ours(detached, request({ args: ['symrefs'] })), null, 'a detached HEAD');
  });

  test('refs moved behind the server are seen at once; unchanged refs are read once', async () => {
    const repo = await init('moving');
    let tip = await commit(repo, 'one');
    await git(repo, ['update-ref', 'refs/heads/main', tip]);
    await git(repo, ['pack-refs', '--all']);
    await age(repo);
    invalidateRefCache(repo);
    const body = request({ args: ['peel', 'symrefs', 'unborn', 'ref-prefix HEAD', 'ref-prefix refs/heads/'] });
    await same(repo, body, 'before');
    const first = refFiles(repo);
    assert.ok(first?.reusable, 'an old enough snapshot is kept');
    assert.equal(refFiles(repo), first, 'and used again while nothing changed');
    const calls = gitInvocationCount();
    assert.notEqual(await ours(repo, body), null);
    assert.equal(gitInvocationCount(), calls, 'no git process for a repeated listing');

    for (let i = 0; i < 5; i++) {
      tip = await commit(repo, `next ${i}`, tip);
      // Straight into the repository, as another process would: no invalidation.
      await git(repo, ['update-ref', i % 2 ? 'refs/heads/main' : `refs/heads/side/${i}`, tip]);
      const got = await same(repo, body, `after change ${i}`);
      assert.match(got, new RegExp(tip));
    }
    // A ref file rewritten in place (no rename, so its directory keeps its time) after the refs were kept.
    await age(repo);
    invalidateRefCache(repo);
    await same(repo, body, 'aged again');
    assert.ok(refFiles(repo)?.reusable);
    const older = await commit(repo, 'written in place', tip);
    await writeFile(join(repo, 'refs', 'heads', 'side', '0'), `${older}\n`);
    assert.match(await same(repo, body, 'rewritten in place'), new RegExp(`${older} refs/heads/side/0\n`));
    await git(repo, ['symbolic-ref', 'HEAD', 'refs/heads/side/0']);
    await same(repo, body, 'HEAD moved');
    await git(repo, ['pack-refs', '--all']);
    await same(repo, body, 'repacked');
    await git(repo, ['update-ref', '-d', 'refs/heads/side/0']);
    assert.match(await same(repo, body, 'HEAD target deleted'), /unborn HEAD/);
  });

  test('the request is read from a stream up to its end, and the rest is left unread', async () => {
    const body = request({ args: ['peel'] });
    const stream = Readable.from([body.subarray(0, 7), body.subarray(7), Buffer.from('0000tail')]);
    const head = await readLsRefsRequest(stream);
    assert.equal(head.parse.state, 'ls-refs');
    assert.deepEqual((head.parse as { args: LsRefsArgs }).args, { peel: true, symrefs: false, unborn: false, prefixes: [] });
    const fetch = request({ keys: ['command=fetch', 'agent=x'] });
    const r2 = await readLsRefsRequest(Readable.from([fetch]));
    assert.equal(r2.parse.state, 'other');
    assert.deepEqual(r2.consumed, fetch);
  });
});
