// Benchmark data: users with personal namespaces, groups with memberships, projects (rows only: a project
// whose repository is not on disk reads as empty and gets one on first write), topics, stars, statistics.
//
//   npm run bench:seed -- --projects 1000000 --users 10000 [--groups 1000] [--data-dir /work/bench-data]
//   npm run bench:seed -- --projects 100000 --issues 1000000 --notes 5000000   (planning data, see seedPlanning)
//
// Uses BELLOWS_DATA_DIR / DATABASE_URL like the server. Writes <data dir>/bench-token (a personal access
// token of the user `bench`, who belongs to some groups and owns some projects) and a root token.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { digest } from '../src/platform/crypto/tokens.ts';
import { batchInserts, randomSequence } from './insert.ts';

const { values: args } = parseArgs({
  options: {
    projects: { type: 'string', default: '100000' },
    users: { type: 'string', default: '1000' },
    groups: { type: 'string', default: '' },
    issues: { type: 'string', default: '0' },
    notes: { type: 'string', default: '0' },
    'data-dir': { type: 'string' },
  },
});
if (args['data-dir']) process.env.BELLOWS_DATA_DIR = args['data-dir'];
const PROJECTS = Number(args.projects);
const USERS = Number(args.users);
const GROUPS = Number(args.groups || Math.max(10, Math.round(USERS / 10)));
const TOPICS = 200;
const ISSUES = Number(args.issues);
const NOTES = Number(args.notes);
/** Planning data lives in the first ISSUE_PROJECTS projects; BIG_PROJECT (owned by bench) holds a tenth of it. */
const ISSUE_PROJECTS = Math.min(PROJECTS, 10_000);
const BIG_PROJECT = Math.min(PROJECTS, 1000);

const config = loadConfig();
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
const db = database.db as any;

const { rand, pick } = randomSequence(0x2545f491);

const { insertAll, stream } = batchInserts(db);

async function main(): Promise<void> {
  const t0 = Date.now();
  await database.migrate();
  const have = await db.selectFrom('projects').select(sql`count(*)`.as('n')).executeTakeFirst();
  if (Number(have.n) > 0) {
    console.error(`the database already has ${have.n} projects; seed into an empty data dir`);
    process.exit(1);
  }
  const now = Date.now();
  const day = 86_400_000;

  // Users 1..USERS (user 1 is root, user 2 is bench), namespaces 1..USERS are their personal namespaces.
  const users = Array.from({ length: USERS }, (_, k) => {
    const id = k + 1;
    const username = id === 1 ? 'root' : id === 2 ? 'bench' : `user${id}`;
    return {
      id, username, name: id === 1 ? 'Administrator' : `User ${id}`, email: `${username}@example.com`, public_email: null, password_digest: null,
      state: 'active', admin: id === 1 ? 1 : 0, user_type: 'human', bio: '', location: '', website_url: '', organization: '', job_title: '',
      private_profile: 0, can_create_group: 1, projects_limit: 100000, external: 0, note: null, created_at: now - 400 * day, updated_at: now - 400 * day,
      last_activity_on: null, current_sign_in_at: null, confirmed_at: now - 400 * day,
    };
  });
  await insertAll('users', users, 500);
  await insertAll('namespaces', users.map((u) => ({
    id: u.id, name: u.name, path: u.username, kind: 'user', parent_id: null, owner_id: u.id, visibility_level: 20, description: '',
    full_path: u.username, full_path_lower: u.username, full_name: u.name, traversal: `/${u.id}/`, request_access_enabled: 1,
    project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: u.created_at, updated_at: u.created_at,
  })), 500);
  // Groups: namespaces USERS+1..USERS+GROUPS, each with a few members; bench belongs to 20 of them.
  const groups = Array.from({ length: GROUPS }, (_, k) => {
    const id = USERS + k + 1;
    return {
      id, name: `Group ${k + 1}`, path: `group${k + 1}`, kind: 'group', parent_id: null, owner_id: null, visibility_level: [0, 10, 20][k % 3],
      description: '', full_path: `group${k + 1}`, full_path_lower: `group${k + 1}`, full_name: `Group ${k + 1}`, traversal: `/${id}/`,
      request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now - 300 * day, updated_at: now - 300 * day,
    };
  });
  await insertAll('namespaces', groups, 500);
  const members: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const g of groups) {
    for (let m = 0; m < 5; m++) {
      const user = 3 + pick(USERS - 2);
      if (seen.has(`${g.id}:${user}`)) continue;
      seen.add(`${g.id}:${user}`);
      members.push({ source_type: 'Namespace', source_id: g.id, user_id: user, access_level: [10, 20, 30, 40, 50][pick(5)], expires_at: null, created_by_id: null, created_at: now, updated_at: now });
    }
  }
  for (let k = 0; k < Math.min(20, GROUPS); k++) members.push({ source_type: 'Namespace', source_id: groups[k * Math.floor(GROUPS / 20)].id, user_id: 2, access_level: 30, expires_at: null, created_by_id: null, created_at: now, updated_at: now });
  await insertAll('members', members, 500);

  await insertAll('topics', Array.from({ length: TOPICS }, (_, k) => ({
    id: k + 1, name: `topic${k + 1}`, name_lower: `topic${k + 1}`, title: `Topic ${k + 1}`, description: null, total_projects_count: 0, created_at: now, updated_at: now,
  })), 200);

  // Projects: 60% public, 25% internal, 15% private; 80% in personal namespaces; bench owns every 1000th.
  const nsOf = new Int32Array(PROJECTS + 1);
  const fullPaths: string[] = [];
  await stream('projects', PROJECTS, (k) => {
    const id = k + 1;
    const inGroup = rand() < 0.2;
    const ns = id % 1000 === 0 ? users[1] : inGroup ? null : users[pick(USERS)];
    const g = inGroup && id % 1000 !== 0 ? groups[pick(GROUPS)] : null;
    const nsId = g ? g.id : ns!.id;
    nsOf[id] = nsId;
    const r = rand();
    let vis = r < 0.6 ? 20 : r < 0.85 ? 10 : 0;
    if (g && vis > g.visibility_level) vis = g.visibility_level;
    const path = `project-${id}`;
    const full = `${g ? g.full_path : ns!.username}/${path}`;
    if (id <= 10) fullPaths.push(full);
    const created = now - 365 * day + Math.floor((id / PROJECTS) * 360 * day);
    return {
      id, namespace_id: nsId, name: `Project ${id} ${['alpha', 'beta', 'gamma', 'delta', 'omega'][id % 5]}`, path, full_path: full,
      full_path_lower: full, description: id % 3 === 0 ? `Benchmark project number ${id}` : null, visibility_level: vis,
      creator_id: g ? 3 + pick(USERS - 2) : ns!.id, archived: id % 50 === 0 && !(ISSUES && id === BIG_PROJECT) ? 1 : 0, default_branch: 'main', repository_storage: 'default',
      repository_read_only: 0, empty_repo: 1, pending_delete: 0, created_at: created, updated_at: created + pick(5 * day),
      last_activity_at: created + pick(30 * day), star_count: pick(10) === 0 ? pick(100) : 0, forks_count: 0, forked_from_project_id: null,
      issues_access_level: 20, merge_requests_access_level: 20, repository_access_level: 20, forking_access_level: 20,
      import_url: null, import_type: null, import_status: 'none', import_error: null, readme_path: null, marked_for_deletion_at: null,
      runners_token_digest: null, settings: '{}',
    };
  }, 500);

  await stream('project_statistics', PROJECTS, (k) => {
    const size = pick(50_000_000);
    return { project_id: k + 1, commit_count: pick(5000), storage_size: size, repository_size: size, wiki_size: 0, lfs_objects_size: 0, job_artifacts_size: 0, pipeline_artifacts_size: 0, packages_size: 0, snippets_size: 0, uploads_size: 0, updated_at: now };
  }, 1000);

  // One project in three has one or two topics.
  const topicRows: Array<{ project_id: number; topic_id: number }> = [];
  const topicCounts = new Int32Array(TOPICS + 1);
  for (let id = 3; id <= PROJECTS; id += 3) {
    const a = 1 + pick(TOPICS);
    topicRows.push({ project_id: id, topic_id: a });
    topicCounts[a]++;
    if (id % 2 === 0) {
      const b = 1 + ((a + 1 + pick(TOPICS - 1)) % TOPICS);
      if (b !== a) {
        topicRows.push({ project_id: id, topic_id: b });
        topicCounts[b]++;
      }
    }
  }
  await stream('project_topics', topicRows.length, (k) => topicRows[k], 2000, 'project_topics');
  for (let k = 1; k <= TOPICS; k++) await db.updateTable('topics').set({ total_projects_count: topicCounts[k] }).where('id', '=', k).execute();

  // Direct project memberships for bench (a few hundred), the usual size for an active user.
  const projectMembers: Record<string, unknown>[] = [];
  for (let k = 0; k < 300; k++) {
    const pid = 1 + pick(ISSUES ? ISSUE_PROJECTS : PROJECTS);
    if (nsOf[pid] === 2) continue;
    projectMembers.push({ source_type: 'Project', source_id: pid, user_id: 2, access_level: 30, expires_at: null, created_by_id: null, created_at: now, updated_at: now });
  }
  const uniq = [...new Map(projectMembers.map((m) => [m.source_id, m])).values()];
  await insertAll('members', uniq, 500);
  for (let id = 1000; id <= PROJECTS; id += 1000) {
    await db.insertInto('members').values({ source_type: 'Project', source_id: id, user_id: 2, access_level: 50, expires_at: null, created_by_id: null, created_at: now, updated_at: now }).execute();
    if (id > 20000) break;
  }

  if (ISSUES) await seedPlanning(now, day, USERS);

  const benchToken = 'bench-token-0123456789abcdef';
  const rootToken = 'root-token-0123456789abcdef';
  for (const [userId, token, scopes] of [[2, benchToken, 'api read_api'], [1, rootToken, 'api read_api sudo admin_mode']] as const) {
    await db.insertInto('personal_access_tokens').values({
      user_id: userId, name: 'bench', description: null, token_digest: digest(token), scopes, impersonation: 0, revoked: 0, expires_at: null,
      last_used_at: null, created_at: now, updated_at: now,
    }).execute();
  }
  if (database.dialect === 'postgres') {
    for (const table of ['users', 'namespaces', 'projects', 'topics', 'members', 'personal_access_tokens', 'labels', 'milestones', 'issues', 'notes']) {
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(db);
    }
    await sql`analyze`.execute(db);
  } else {
    await sql`analyze`.execute(db);
  }
  // On PostgreSQL nothing else has made the data dir yet.
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(join(config.dataDir, 'bench-token'), `${benchToken}\n`);
  writeFileSync(join(config.dataDir, 'root-token'), `${rootToken}\n`);
  if (ISSUES) writeFileSync(join(config.dataDir, 'bench-big-project'), `${BIG_PROJECT}\n`);
  console.log(`seeded ${USERS} users, ${GROUPS} groups, ${PROJECTS} projects, ${topicRows.length} topic links in ${Math.round((Date.now() - t0) / 1000)} s (${database.dialect}); tokens in ${config.dataDir}`);
  console.log(`sample paths: ${fullPaths.slice(0, 3).join(', ')}`);
  await database.close();
}

/**
 * Planning data: ISSUES issues over the first ISSUE_PROJECTS projects (a tenth of them in BIG_PROJECT), 20 labels and
 * 5 milestones per project, 0-3 labels, an assignee for half, a milestone for a third, 5 % confidential, 30 % closed;
 * NOTES notes spread over the issues, one in five a system note. Ids are assigned here so links need no lookups.
 */
async function seedPlanning(now: number, day: number, users: number): Promise<void> {
  const LABELS_PER = 20;
  const MILESTONES_PER = 5;
  const words = ['crash', 'login', 'slow', 'page', 'button', 'export', 'search', 'cache', 'timeout', 'layout', 'api', 'token', 'import', 'merge', 'branch'];
  const colors = ['#FF0000', '#428BCA', '#44AD8E', '#A8D695', '#5CB85C', '#69D100', '#004E00', '#34495E', '#7F8C8D', '#A295D6'];
  await stream('labels', ISSUE_PROJECTS * LABELS_PER, (k) => ({
    id: k + 1, title: `label-${k % LABELS_PER}`, color: colors[k % colors.length], description: null,
    project_id: Math.floor(k / LABELS_PER) + 1, group_id: null, created_at: now - 200 * day, updated_at: now - 200 * day,
  }), 1000);
  await stream('milestones', ISSUE_PROJECTS * MILESTONES_PER, (k) => {
    const m = k % MILESTONES_PER;
    return {
      id: k + 1, iid: m + 1, project_id: Math.floor(k / MILESTONES_PER) + 1, group_id: null, title: `v${m + 1}.0`, description: null,
      state: m < 2 ? 'closed' : 'active', start_date: now - (100 - m * 30) * day - ((now - (100 - m * 30) * day) % day),
      due_date: now - (70 - m * 30) * day - ((now - (70 - m * 30) * day) % day), created_at: now - 200 * day, updated_at: now - 200 * day,
    };
  }, 1000);
  const projectOf = (k: number) => (k % 10 === 0 ? BIG_PROJECT : 1 + (k % ISSUE_PROJECTS));
  const iids = new Int32Array(ISSUE_PROJECTS + 1);
  const issueIid = new Int32Array(ISSUES + 1);
  for (let k = 0; k < ISSUES; k++) issueIid[k + 1] = ++iids[projectOf(k)];
  await stream('issues', ISSUES, (k) => {
    const id = k + 1;
    const pid = projectOf(k);
    const created = now - 365 * day + Math.floor((k / ISSUES) * 360 * day);
    const closed = rand() < 0.3;
    return {
      id, project_id: pid, iid: issueIid[id], title: `Issue ${id}: ${words[pick(words.length)]} ${words[pick(words.length)]} fails`,
      description: `Steps to reproduce issue ${id}.\n\n- [x] open the ${words[pick(words.length)]}\n- [ ] see the ${words[pick(words.length)]}`,
      state: closed ? 'closed' : 'opened', issue_type: 'issue', author_id: 2 + pick(users - 1), closed_by_id: closed ? 2 : null,
      closed_at: closed ? created + day : null, milestone_id: rand() < 0.33 ? (pid - 1) * MILESTONES_PER + 1 + pick(MILESTONES_PER) : null,
      iteration_id: null, confidential: rand() < 0.05 ? 1 : 0, discussion_locked: null, due_date: null, weight: null, time_estimate: 0,
      relative_position: id * 512, moved_to_id: null, duplicated_to_id: null, last_edited_at: null, last_edited_by_id: null,
      created_at: created, updated_at: created + pick(10 * day),
    };
  }, 500);
  const counters: Record<string, unknown>[] = [];
  for (let p = 1; p <= ISSUE_PROJECTS; p++) {
    if (iids[p]) counters.push({ usage: 'issues', owner_id: p, last_value: iids[p] });
    counters.push({ usage: 'project_milestones', owner_id: p, last_value: MILESTONES_PER });
  }
  await insertAll('internal_ids', counters, 1000);
  // Labels: 0-3 distinct per issue, from its project's own.
  const linkOf = (k: number) => {
    const n = k % 4;
    const pid = projectOf(k);
    const first = pick(LABELS_PER);
    return Array.from({ length: n }, (_, j) => ({ label_id: (pid - 1) * LABELS_PER + 1 + ((first + j * 7) % LABELS_PER), target_type: 'Issue', target_id: k + 1, created_at: now }));
  };
  const links: Record<string, unknown>[] = [];
  for (let k = 0; k < ISSUES; k++) links.push(...linkOf(k));
  await stream('label_links', links.length, (k) => links[k], 1000, 'label_links');
  links.length = 0;
  await stream('issue_assignees', Math.floor(ISSUES / 2), (k) => ({ issue_id: 2 * k + 1, user_id: 2 + ((k * 7919) % (users - 1)) }), 1000, 'issue_assignees');
  await stream('notes', NOTES, (k) => {
    const issue = 1 + (k % ISSUES);
    const system = k % 5 === 4;
    const at = now - 300 * day + Math.floor((k / NOTES) * 300 * day);
    return {
      id: k + 1, noteable_type: 'Issue', noteable_id: issue, project_id: projectOf(issue - 1), author_id: 2 + pick(users - 1),
      body: system ? 'changed the description' : `Comment ${k + 1} on the ${words[pick(words.length)]} problem, with some detail.`,
      type: null, system: system ? 1 : 0, internal: 0, discussion_id: (k + 1).toString(16).padStart(40, '0'), position: null, commit_id: null,
      resolvable: 0, resolved_at: null, resolved_by_id: null, created_at: at, updated_at: at,
    };
  }, 500);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
