import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config, StorageShard } from '../../config/index.ts';
import { runGit } from '../../platform/git/command.ts';
import { isValidRefName } from '../../platform/git/refs.ts';

// A project's bare repository: where it lives (derived from the project id, so renames and transfers
// never move it), and the few whole-repository operations the project lifecycle needs.

/** A shard chosen at random in proportion to its weight. */
export function pickStorage(shards: readonly StorageShard[], rand = Math.random()): StorageShard {
  const total = shards.reduce((s, x) => s + x.weight, 0);
  let r = rand * total;
  for (const s of shards) {
    if (s.weight <= 0) continue;
    if (r < s.weight) return s;
    r -= s.weight;
  }
  return shards.filter((s) => s.weight > 0).at(-1)!;
}

export function shardOf(config: Config, name: string): StorageShard {
  return config.storage.find((s) => s.name === name) ?? config.storage[0];
}

/** `<shard>/@hashed/ab/cd/<sha256 of id>.git`: spreads repositories over directories, independent of names. */
export function repositoryPath(config: Config, storage: string, projectId: number): string {
  const h = createHash('sha256').update(String(projectId)).digest('hex');
  return join(shardOf(config, storage).path, '@hashed', h.slice(0, 2), h.slice(2, 4), `${h}.git`);
}

export function repositoryExists(path: string): boolean {
  return existsSync(join(path, 'HEAD'));
}

export async function initRepository(path: string, defaultBranch: string): Promise<void> {
  if (repositoryExists(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const branch = isValidRefName(defaultBranch) ? defaultBranch : 'main';
  await runGit(['init', '--bare', '--quiet', `--initial-branch=${branch}`, path]);
}

/** A full copy (every ref) for a fork; an absent source (rows seeded without repositories) gives an empty one. */
export async function copyRepository(from: string, to: string, defaultBranch: string): Promise<void> {
  if (!repositoryExists(from)) return initRepository(to, defaultBranch);
  mkdirSync(dirname(to), { recursive: true });
  await runGit(['clone', '--mirror', '--quiet', '--no-hardlinks', '--', from, to]);
}

export function removeRepository(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/** Moves HEAD (the default branch) of an existing repository. */
export async function setHead(path: string, branch: string): Promise<void> {
  if (!repositoryExists(path) || !isValidRefName(branch)) return;
  await runGit(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: path });
}

/** One commit adding README.md on `branch` (project creation with initialize_with_readme). */
export async function commitReadme(path: string, branch: string, content: string, author: { name: string; email: string }, when: number): Promise<void> {
  const blob = (await runGit(['hash-object', '-w', '--stdin'], { gitDir: path, input: content })).stdout.toString().trim();
  const tree = (await runGit(['mktree'], { gitDir: path, input: `100644 blob ${blob}\tREADME.md\n` })).stdout.toString().trim();
  const date = `${Math.floor(when / 1000)} +0000`;
  const env = {
    GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email, GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: author.name, GIT_COMMITTER_EMAIL: author.email, GIT_COMMITTER_DATE: date,
  };
  const commit = (await runGit(['commit-tree', tree, '-m', 'Initial commit'], { gitDir: path, env })).stdout.toString().trim();
  await runGit(['update-ref', `refs/heads/${branch}`, commit, ''], { gitDir: path });
}

const LANGUAGES: Record<string, string> = {
  ts: 'TypeScript', tsx: 'TypeScript', js: 'JavaScript', mjs: 'JavaScript', cjs: 'JavaScript', jsx: 'JavaScript',
  rb: 'Ruby', py: 'Python', go: 'Go', rs: 'Rust', java: 'Java', kt: 'Kotlin', c: 'C', h: 'C', cc: 'C++', cpp: 'C++',
  hpp: 'C++', cs: 'C#', php: 'PHP', swift: 'Swift', scala: 'Scala', sh: 'Shell', bash: 'Shell', html: 'HTML',
  css: 'CSS', scss: 'SCSS', vue: 'Vue', ex: 'Elixir', exs: 'Elixir', erl: 'Erlang', hs: 'Haskell', lua: 'Lua',
  pl: 'Perl', r: 'R', sql: 'SQL', dart: 'Dart', clj: 'Clojure', ml: 'OCaml', zig: 'Zig', m: 'Objective-C',
};

export interface RepositoryFacts {
  empty: boolean;
  readmePath: string | null;
  /** Language name -> percentage of the default branch's bytes in recognised files. */
  languages: Array<{ name: string; share: number }>;
  commitCount: number;
  size: number;
}

function diskSize(path: string): number {
  let total = 0;
  const walk = (p: string) => {
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const full = join(p, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) total += statSync(full).size;
    }
  };
  if (existsSync(path)) walk(path);
  return total;
}

/** What the project record keeps about its repository: read from the default branch in three git calls. */
export async function readRepositoryFacts(path: string, branch: string | null): Promise<RepositoryFacts> {
  const none: RepositoryFacts = { empty: true, readmePath: null, languages: [], commitCount: 0, size: diskSize(path) };
  if (!repositoryExists(path)) return none;
  const refs = (await runGit(['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/'], { gitDir: path })).stdout.toString().trim();
  if (!refs) return none;
  if (!branch || !isValidRefName(branch)) return { ...none, empty: false };
  const ref = `refs/heads/${branch}`;
  const head = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { gitDir: path, okExitCodes: [1] });
  if (head.code !== 0) return { ...none, empty: false };
  const [tree, count] = await Promise.all([
    runGit(['ls-tree', '-r', '-l', '-z', ref], { gitDir: path }),
    runGit(['rev-list', '--count', ref], { gitDir: path }),
  ]);
  let readmePath: string | null = null;
  const bytes = new Map<string, number>();
  let total = 0;
  for (const entry of tree.stdout.toString('utf8').split('\0')) {
    const m = /^\d+ blob [0-9a-f]+\s+(\d+|-)\t(.*)$/s.exec(entry);
    if (!m) continue;
    const size = m[1] === '-' ? 0 : Number(m[1]);
    const file = m[2];
    if (!file.includes('/') && /^readme(\.[a-z0-9]+)?$/i.test(file) && (readmePath === null || file.length < readmePath.length)) readmePath = file;
    const ext = /\.([A-Za-z0-9+]+)$/.exec(file)?.[1]?.toLowerCase();
    const lang = ext ? LANGUAGES[ext] : undefined;
    if (lang) {
      bytes.set(lang, (bytes.get(lang) ?? 0) + size);
      total += size;
    }
  }
  const languages = [...bytes.entries()].map(([name, b]) => ({ name, share: total ? Math.round((b / total) * 10000) / 100 : 0 }))
    .sort((a, b) => b.share - a.share || a.name.localeCompare(b.name));
  return { empty: false, readmePath, languages, commitCount: Number(count.stdout.toString().trim()) || 0, size: diskSize(path) };
}
