// Merge request benchmark data, added to a data dir that has the search data (bench/seed.ts, then bench/search.ts,
// which writes the 1,000,000 merge request rows and the repository of the largest project):
//
//   node --import tsx bench/merge-requests.ts --data-dir D [--files 1000] [--ahead 1000]
//   npm run bench -- --set merge-requests --data-dir D --workers 2
//
// It adds, in the largest project (the one with the generated repository), two merge requests created through the
// API in process, so their diff versions and rows are the server's own:
//   - `bench-files-<files>` into main: one commit changing <files> files (70 % modified, 20 % added, 10 % deleted);
//   - `bench-long-<ahead>` into `bench-long-base-<ahead>` (a branch made at main): <ahead> commits, one file each.
// The branches are written with git fast-import through the Repository object. Each step is skipped when an earlier
// run made it (the branch exists; an open merge request has it as its source), so the command can be repeated.
// Writes <data dir>/bench-merge-requests.json for `bench/run.ts --set merge-requests`.
//
// `prepareWork` (used by bench/run.ts before it starts the server) writes the branches that the creation and merge
// rows consume: one commit each, on its own new branch off main.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Repository } from '../src/platform/git/index.ts';

export interface MergeRequestFacts {
  project: number;
  repoPath: string;
  /** The 1,000-file merge request: its iid and how many files its diff holds. */
  filesIid: number;
  files: number;
  /** The merge request whose source is `ahead` commits ahead of its target, and its target branch. */
  longIid: number;
  ahead: number;
  longTarget: string;
}

const factsFile = (dataDir: string) => join(dataDir, 'bench-merge-requests.json');

export function readFacts(dataDir: string): MergeRequestFacts {
  const file = factsFile(dataDir);
  if (!existsSync(file)) throw new Error(`${file} is missing: run bench/merge-requests.ts on this data dir first`);
  const facts = JSON.parse(readFileSync(file, 'utf8')) as MergeRequestFacts;
  // The repository of this data dir, also when the dir is a copy of the one the facts were written in.
  const at = facts.repoPath.lastIndexOf('/repositories/');
  if (at >= 0) facts.repoPath = join(dataDir, facts.repoPath.slice(at + 1));
  return facts;
}

const COMMITTER = 'committer Bench <bench@example.com>';

function commitHeader(ref: string, message: string, time: number, from?: string): string {
  return `commit ${ref}\n${COMMITTER} ${time} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n${from ? `from ${from}\n` : ''}`;
}

function inline(path: string, body: string): string {
  return `M 100644 inline ${path}\ndata ${Buffer.byteLength(body)}\n${body}\n`;
}

/** Runs one fast-import stream (bounded by 10 minutes: the full-size data is a few megabytes). */
async function fastImport(repo: Repository, input: string): Promise<void> {
  await repo.git(['fast-import', '--quiet'], { input, timeoutMs: 600_000, maxBuffer: 16 * 1024 * 1024 });
  repo.invalidate();
}

async function head(repo: Repository, branch: string): Promise<string | null> {
  return repo.resolveCommit(`refs/heads/${branch}`);
}

/** The blobs of `paths` at `rev`, by one `cat-file --batch`. */
async function blobs(repo: Repository, rev: string, paths: string[]): Promise<string[]> {
  const out = (await repo.git(['cat-file', '--batch'], { input: paths.map((p) => `${rev}:${p}\n`).join(''), maxBuffer: 1024 * 1024 * 1024 })).stdout;
  const texts: string[] = [];
  let at = 0;
  for (let i = 0; i < paths.length; i++) {
    const nl = out.indexOf(10, at);
    const size = Number(out.subarray(at, nl).toString().split(' ')[2]);
    texts.push(out.subarray(nl + 1, nl + 1 + size).toString());
    at = nl + 1 + size + 1;
  }
  return texts;
}

/** One commit on `branch` (new, off `base`) changing `files` files of the tree: 70 % modified, 20 % added, 10 % deleted. */
async function writeFilesBranch(repo: Repository, branch: string, base: string, files: number): Promise<void> {
  const tree = (await repo.git(['ls-tree', '-r', '--name-only', '-z', base], { maxBuffer: 256 * 1024 * 1024 })).stdout.toString().split('\0').filter(Boolean);
  const deleted = Math.floor(files / 10);
  const modified = Math.min(tree.length - deleted, Math.floor((files * 7) / 10));
  const added = files - deleted - modified;
  // Spread over the tree, so the diff's files lie in many directories.
  const step = Math.max(1, Math.floor(tree.length / (modified + deleted)));
  const picked = Array.from({ length: modified + deleted }, (_, k) => tree[(k * step) % tree.length]);
  const toModify = picked.slice(0, modified);
  const texts = await blobs(repo, base, toModify);
  let s = commitHeader(`refs/heads/${branch}`, `Change ${files} files`, 1_700_000_000, base);
  toModify.forEach((path, k) => {
    const lines = texts[k].split('\n');
    lines.splice(Math.min(2, lines.length), 0, `// changed by the benchmark (${k})`);
    if (lines.length > 8) lines[lines.length - 3] = `${lines[lines.length - 3]} /* edited */`;
    s += inline(path, lines.join('\n'));
  });
  for (const path of picked.slice(modified)) s += `D ${path}\n`;
  for (let k = 0; k < added; k++) {
    s += inline(`bench/added/${Math.floor(k / 50)}/file_${k}.ts`, Array.from({ length: 30 }, (_, l) => `export const value_${k}_${l} = ${l};`).join('\n') + '\n');
  }
  await fastImport(repo, `${s}\n`);
}

/** `target` at `base`, and `branch` off `base` with `ahead` commits, each adding its own file. */
async function writeLongBranch(repo: Repository, branch: string, target: string, base: string, ahead: number): Promise<void> {
  let s = `reset refs/heads/${target}\nfrom ${base}\n\n`;
  for (let i = 0; i < ahead; i++) {
    s += commitHeader(`refs/heads/${branch}`, `Long change ${i + 1}`, 1_700_000_000 + i, i === 0 ? base : undefined);
    s += inline(`bench/long/${Math.floor(i / 100)}/change_${i}.txt`, `change ${i}\n`);
    s += '\n';
  }
  await fastImport(repo, s);
}

/**
 * `count` new branches `<prefix><n>` off main, each one commit ahead adding its own file (no two conflict, and each
 * still merges cleanly after the others). Returns the branch names.
 */
export async function prepareWork(repoPath: string, prefix: string, count: number): Promise<string[]> {
  const repo = new Repository(repoPath);
  const main = await head(repo, 'main');
  if (!main) throw new Error(`${repoPath} has no main branch`);
  const names = Array.from({ length: count }, (_, n) => `${prefix}${n}`);
  // Dated from now on, as a pushed commit is dated after the main it starts from. An older date would make every
  // merge base read all of main's commits dated after it (the merges of earlier runs), as a date-ordered walk must.
  const now = Math.floor(Date.now() / 1000);
  let s = '';
  names.forEach((name, n) => {
    s += commitHeader(`refs/heads/${name}`, `Work ${name}`, now + n, main);
    s += inline(`bench/work/${name}.txt`, `${name}\n`);
    s += '\n';
  });
  await fastImport(repo, s);
  return names;
}

/** `count` new branches `<prefix><n>` at main: the targets of the spread merge row. Returns the branch names. */
export async function prepareTargets(repoPath: string, prefix: string, count: number): Promise<string[]> {
  const repo = new Repository(repoPath);
  const main = await head(repo, 'main');
  if (!main) throw new Error(`${repoPath} has no main branch`);
  const names = Array.from({ length: count }, (_, n) => `${prefix}${n}`);
  await repo.git(['update-ref', '--stdin'], { input: names.map((n) => `create refs/heads/${n} ${main}\n`).join('') });
  repo.invalidate();
  return names;
}

/** Deletes the branches left by earlier runs' creation and merge rows (those named `<prefix>...`). */
export async function dropWork(repoPath: string, prefix: string): Promise<number> {
  const repo = new Repository(repoPath);
  const refs = (await repo.git(['for-each-ref', '--format=%(refname)', `refs/heads/${prefix}*`])).stdout.toString().split('\n').filter(Boolean);
  if (refs.length) await repo.git(['update-ref', '--stdin'], { input: refs.map((r) => `delete ${r}\n`).join('') });
  repo.invalidate();
  return refs.length;
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: { 'data-dir': { type: 'string' }, files: { type: 'string', default: '1000' }, ahead: { type: 'string', default: '1000' } },
  });
  if (args['data-dir']) process.env.BELLOWS_DATA_DIR = args['data-dir'];
  const FILES = Number(args.files);
  const AHEAD = Number(args.ahead);
  const { loadConfig } = await import('../src/config/index.ts');
  const { openDatabase } = await import('../src/platform/db/index.ts');
  const { buildApp } = await import('../src/app.ts');
  const { repositoryPath } = await import('../src/resources/projects/repository.ts');
  const t0 = Date.now();
  const config = loadConfig({ ...process.env, BELLOWS_LOG_LEVEL: 'silent' });
  const search = join(config.dataDir, 'bench-search.json');
  if (!existsSync(search)) throw new Error(`${search} is missing: run bench/search.ts on this data dir first`);
  const big = Number(JSON.parse(readFileSync(search, 'utf8')).bigProject);
  const token = readFileSync(join(config.dataDir, 'bench-token'), 'utf8').trim();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.migrate();
  const project = await (database.db as any).selectFrom('projects').select(['id', 'repository_storage']).where('id', '=', big).executeTakeFirstOrThrow();
  const repoPath = repositoryPath(config, project.repository_storage, project.id);
  const repo = new Repository(repoPath);
  const base = await head(repo, 'main');
  if (!base) throw new Error(`project ${big} has no main branch in ${repoPath}`);

  // The branches first (before the application reads any ref), then the merge requests through the API.
  const filesBranch = `bench-files-${FILES}`;
  const longBranch = `bench-long-${AHEAD}`;
  const longTarget = `bench-long-base-${AHEAD}`;
  if (!(await head(repo, filesBranch))) await writeFilesBranch(repo, filesBranch, base, FILES);
  if (!(await head(repo, longBranch))) await writeLongBranch(repo, longBranch, longTarget, base, AHEAD);
  console.log(`branches ${filesBranch} and ${longBranch} written (${Math.round((Date.now() - t0) / 1000)} s)`);

  const app = await buildApp({ config, database, logger: false });
  const api = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const r = await app.inject({ method, url: `/api/v4${url}`, headers: { 'private-token': token }, ...(body ? { payload: body as any } : {}) });
    if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
    return { body: r.json(), headers: r.headers };
  };
  const openFrom = async (source: string, target: string, title: string): Promise<number> => {
    const found = (await api('GET', `/projects/${big}/merge_requests?state=opened&source_branch=${encodeURIComponent(source)}`)).body as Array<{ iid: number }>;
    if (found.length) return found[0].iid;
    const t = Date.now();
    const created = (await api('POST', `/projects/${big}/merge_requests`, { source_branch: source, target_branch: target, title })).body as { iid: number };
    console.log(`created !${created.iid} from ${source} in ${Date.now() - t} ms`);
    return created.iid;
  };
  const filesIid = await openFrom(filesBranch, 'main', `Change ${FILES} files`);
  const longIid = await openFrom(longBranch, longTarget, `${AHEAD} commits ahead`);
  // Check what the rows will read.
  const diffs = await api('GET', `/projects/${big}/merge_requests/${filesIid}/diffs?per_page=20`);
  const files = Number(diffs.headers['x-total']);
  if (files !== FILES) throw new Error(`!${filesIid} has ${files} files in its diff, not ${FILES}`);
  const long = (await api('GET', `/projects/${big}/merge_requests/${longIid}?include_diverged_commits_count=true`)).body;
  const commits = (await api('GET', `/projects/${big}/merge_requests/${longIid}/commits?per_page=1`)).headers['x-total'];
  console.log(`!${longIid}: ${long.detailed_merge_status}, ${commits} commits`);
  await app.close();
  await database.close();
  const facts: MergeRequestFacts = { project: big, repoPath, filesIid, files, longIid, ahead: AHEAD, longTarget };
  writeFileSync(factsFile(config.dataDir), `${JSON.stringify(facts)}\n`);
  console.log(`merge request data added in ${Math.round((Date.now() - t0) / 1000)} s (${database.dialect}): ${JSON.stringify(facts)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
