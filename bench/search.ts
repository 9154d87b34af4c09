// Search benchmark data, added to a data dir seeded with planning data by bench/seed.ts:
//
//   npm run bench:seed -- --projects 10000 --users 1000 --issues 1000000 --notes 5000000 --data-dir D
//   node --import tsx bench/search.ts --data-dir D [--merge-requests 1000000] [--files 20000] [--repo-mb 100] [--commits 10000]
//   npm run bench -- --set search --data-dir D --workers 2
//
// It adds: a rare word ("zephyr") to 0.1 % of the issue titles (the substring indexes follow through their
// triggers), merge requests over the issue projects (a tenth in the largest one; the rows bench/run.ts --set
// merge-requests lists), a repository the size of a real one in the largest project
// (generated with git fast-import: files of text lines, then single-file commits; some lines hold the word
// "quasar"), and a user `sparse` who is a member of 1 % of the issue projects, which are made private, so that
// user sees 1 % of the instance. Writes <data dir>/bench-search.json for `bench/run.ts --set search`.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { digest } from '../src/platform/crypto/tokens.ts';
import { Repository } from '../src/platform/git/index.ts';
import { repositoryPath } from '../src/resources/projects/repository.ts';
import { batchInserts, randomSequence } from './insert.ts';

const { values: args } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    'merge-requests': { type: 'string', default: '1000000' },
    files: { type: 'string', default: '20000' },
    'repo-mb': { type: 'string', default: '100' },
    commits: { type: 'string', default: '10000' },
  },
});
if (args['data-dir']) process.env.BELLOWS_DATA_DIR = args['data-dir'];
const MRS = Number(args['merge-requests']);
const FILES = Number(args.files);
const REPO_BYTES = Number(args['repo-mb']) * 1024 * 1024;
const COMMITS = Number(args.commits);

const config = loadConfig();
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const db = database.db as any;

const { pick } = randomSequence(0x1f2e3d4c);
const WORDS = ['alpha', 'buffer', 'cache', 'delta', 'event', 'fetch', 'graph', 'handle', 'index', 'join', 'kernel', 'layout', 'merge', 'node',
  'option', 'parse', 'query', 'route', 'stream', 'token', 'update', 'value', 'worker', 'yield'];

const { stream } = batchInserts(db);

/** A repository of FILES files (REPO_BYTES in all) and COMMITS commits, written by one `git fast-import`. */
async function generateRepository(path: string): Promise<void> {
  await Repository.init(path, { defaultBranch: 'main' });
  const child = spawn('git', ['--git-dir', path, 'fast-import', '--quiet'], { stdio: ['pipe', 'inherit', 'inherit'] });
  const done = new Promise<void>((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`)))));
  const write = (s: string | Buffer) => new Promise<void>((resolve) => (child.stdin.write(s) ? resolve() : child.stdin.once('drain', resolve)));
  const perFile = Math.max(64, Math.floor(REPO_BYTES / Math.max(1, FILES)));
  const fileText = (n: number, version: number) => {
    const lines: string[] = [];
    let size = 0;
    for (let l = 0; size < perFile; l++) {
      const rare = (n * 31 + l + version) % 5000 === 0 ? ' quasar' : '';
      const line = `${WORDS[pick(WORDS.length)]}_${n}(${WORDS[pick(WORDS.length)]}, ${l}) -> ${WORDS[pick(WORDS.length)]}${rare}`;
      lines.push(line);
      size += line.length + 1;
    }
    return `${lines.join('\n')}\n`;
  };
  const name = (n: number) => `src/${WORDS[n % WORDS.length]}/${Math.floor(n / 100)}/file_${n}.${['ts', 'md', 'py', 'go'][n % 4]}`;
  let t = 1_600_000_000;
  const commit = async (message: string, files: number[], version: number, first: boolean) => {
    await write(`commit refs/heads/main\ncommitter Bench <bench@example.com> ${t++} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`);
    for (const n of files) {
      const body = Buffer.from(fileText(n, version));
      await write(`M 100644 inline ${name(n)}\ndata ${body.length}\n`);
      await write(body);
      await write('\n');
    }
  };
  await commit('Initial import', Array.from({ length: FILES }, (_, n) => n), 0, true);
  for (let c = 1; c < COMMITS; c++) {
    const msg = `${WORDS[pick(WORDS.length)]}: change ${c}${c % 1000 === 0 ? ' (nebula release)' : ''}`;
    await commit(msg, [pick(FILES)], c, false);
    if (c % 1000 === 0) process.stdout.write(`\rcommits: ${c}/${COMMITS}   `);
  }
  child.stdin.end();
  await done;
  process.stdout.write('\n');
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const now = Date.now();
  // The largest project of the planning data (bench/seed.ts writes its id).
  const big = Number(readFileSync(join(config.dataDir, 'bench-big-project'), 'utf8'));
  const projects = Number((await db.selectFrom('projects').select(sql`count(*)`.as('n')).executeTakeFirst()).n);
  const issueProjects = Number((await db.selectFrom('issues').select(sql`max(project_id)`.as('m')).executeTakeFirst()).m ?? 0);
  // Each step is skipped when an earlier run made it, so a failed run can be repeated.
  const has = async (q: any) => !!(await q.limit(1).executeTakeFirst());
  // The rare word in 0.1 % of issue titles.
  if (!(await has(db.selectFrom('issues').select('id').where('title', 'like', '% zephyr')))) await db.updateTable('issues').set({ title: sql`title || ' zephyr'` }).where(sql`id % 1000`, '=', 7).execute();
  console.log(`issues: rare word added (${Math.round((Date.now() - t0) / 1000)} s)`);
  // Merge requests over the issue projects (rows only: searching and listing read no git for them), a tenth of them
  // in the largest project as for issues: 60 % opened, 25 % merged, 15 % closed, authors spread over the users, an
  // iid per target project (counter rows below), each from its own `feature-<iid>` branch into main.
  const users = Number((await db.selectFrom('users').select(sql`max(id)`.as('m')).executeTakeFirst()).m);
  const iids = new Map<number, number>();
  const mrProject = (k: number) => (k % 10 === 0 ? big : 1 + (k % Math.max(1, issueProjects)));
  if (!(await has(db.selectFrom('merge_requests').select('id')))) await stream('merge_requests', MRS, (k) => {
    const pid = mrProject(k);
    const iid = (iids.get(pid) ?? 0) + 1;
    iids.set(pid, iid);
    const created = now - 300 * 86_400_000 + k * 10;
    const state = k % 20 < 12 ? 'opened' : k % 20 < 17 ? 'merged' : 'closed';
    const done = created + 86_400_000;
    return {
      target_project_id: pid, iid, target_branch: 'main', source_project_id: pid, source_branch: `feature-${iid}`,
      title: `${WORDS[pick(WORDS.length)]}: ${WORDS[pick(WORDS.length)]} ${WORDS[pick(WORDS.length)]}${k % 1000 === 7 ? ' zephyr' : ''}`,
      description: null, state, draft: 0, author_id: 2 + ((k * 7919) % Math.max(1, users - 1)), milestone_id: null, sha: null, squash: 0,
      force_remove_source_branch: null, allow_collaboration: 0, merge_status: state === 'merged' ? 'can_be_merged' : 'unchecked',
      merged_by_id: state === 'merged' ? 2 : null, merged_at: state === 'merged' ? done : null,
      closed_by_id: state === 'closed' ? 2 : null, closed_at: state === 'closed' ? done : null,
      created_at: created, updated_at: state === 'opened' ? created : done,
    };
  }, 500);
  if (iids.size) await db.insertInto('internal_ids').values([...iids].map(([owner_id, last_value]) => ({ usage: 'merge_requests', owner_id, last_value })))
    .onConflict((oc: any) => oc.columns(['usage', 'owner_id']).doUpdateSet({ last_value: (eb: any) => eb.ref('excluded.last_value') })).execute();
  // The sparse user: a member of 1 % of the issue projects, which are made private.
  await db.updateTable('projects').set({ visibility_level: 0 }).where('id', '<=', issueProjects).execute();
  await db.deleteFrom('users').where('username', '=', 'sparse').execute();
  const sparse = await db.insertInto('users').values({
    username: 'sparse', name: 'Sparse Reader', email: 'sparse@example.com', public_email: null, password_digest: null, state: 'active', admin: 0,
    user_type: 'human', bio: '', location: '', website_url: '', organization: '', job_title: '', private_profile: 0, can_create_group: 1,
    projects_limit: 100000, external: 0, note: null, created_at: now, updated_at: now, last_activity_on: null, current_sign_in_at: null, confirmed_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  const memberOf = Array.from({ length: Math.max(1, Math.floor(issueProjects / 100)) }, (_, k) => 1 + k * 100);
  await db.insertInto('members').values(memberOf.map((pid) => ({
    source_type: 'Project', source_id: pid, user_id: sparse.id, access_level: 30, expires_at: null, created_by_id: null, created_at: now, updated_at: now,
  }))).execute();
  const sparseToken = 'sparse-token-0123456789abcdef';
  await db.insertInto('personal_access_tokens').values({
    user_id: sparse.id, name: 'bench', description: null, token_digest: digest(sparseToken), scopes: 'api read_api', impersonation: 0, revoked: 0,
    expires_at: null, last_used_at: null, created_at: now, updated_at: now,
  }).execute();
  // The bench measures searching, not the per-user search limit (30 a minute by default): off.
  await db.insertInto('application_settings').values({ name: 'search_rate_limit', value: '0', updated_at: now })
    .onConflict((oc: any) => oc.column('name').doUpdateSet({ value: '0', updated_at: now })).execute();
  // The repository.
  const project = await db.selectFrom('projects').select(['id', 'repository_storage']).where('id', '=', big).executeTakeFirstOrThrow();
  const path = repositoryPath(config, project.repository_storage, project.id);
  const r0 = Date.now();
  rmSync(path, { recursive: true, force: true });
  await generateRepository(path);
  await new Repository(path).git(['gc', '--quiet']);
  await db.updateTable('projects').set({ default_branch: 'main', empty_repo: 0 }).where('id', '=', big).execute();
  console.log(`repository: ${FILES} files, ${COMMITS} commits in ${Math.round((Date.now() - r0) / 1000)} s`);
  await sql`analyze`.execute(db);
  writeFileSync(join(config.dataDir, 'bench-search.json'), `${JSON.stringify({ bigProject: big, sparseToken, projects, mergeRequests: MRS, files: FILES, repoMb: REPO_BYTES / 2 ** 20, commits: COMMITS })}\n`);
  console.log(`search data added in ${Math.round((Date.now() - t0) / 1000)} s (${database.dialect})`);
  await database.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
