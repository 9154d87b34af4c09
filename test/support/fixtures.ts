import type { FastifyInstance } from 'fastify';
import { createUser } from '../../src/resources/users/users.service.ts';
import { createPersonalAccessToken } from '../../src/resources/access-tokens/access-tokens.service.ts';
import type { UserRow } from '../../src/http/auth.ts';
import { call } from './app.ts';
import type { ProjectRow } from '../../src/platform/membership.ts';
import { repoFor } from '../../src/resources/repository/repository.common.ts';
import { nextIid } from '../../src/platform/db/internal-ids.ts';
import { createSnippet } from '../../src/resources/snippets/snippets.service.ts';

// The one set of test fixtures: users, groups, projects and memberships, written straight to the database so that
// every area can be tested on its own, and the role cast of the role × status tables.


let seq = 0;
const next = () => `${process.pid}x${++seq}`;

export interface TestUser {
  user: UserRow;
  token: string;
}

/** A user with a personal access token (all scopes but sudo/admin_mode unless asked). */
export async function makeUser(app: FastifyInstance, o: { username?: string; admin?: boolean; scopes?: string[]; password?: string; state?: 'blocked' } = {}): Promise<TestUser> {
  const username = o.username ?? `user${next()}`;
  const user = await createUser(app, { username, name: `User ${username}`, email: `${username}@example.com`, password: o.password ?? 'password123', admin: o.admin });
  const { token } = await createPersonalAccessToken(app, user, { name: 'test', scopes: o.scopes ?? ['api', 'read_user', 'read_repository', 'write_repository', ...(o.admin ? ['sudo'] : [])], expiresAt: null });
  if (o.state) await app.db.updateTable('users').set({ state: o.state }).where('id', '=', user.id).execute();
  return { user, token };
}

export async function makeToken(app: FastifyInstance, user: { id: number }, scopes: string[], extra: { impersonation?: boolean; expiresAt?: string } = {}): Promise<string> {
  const { token } = await createPersonalAccessToken(app, user, { name: 'extra', scopes, expiresAt: extra.expiresAt ?? null, impersonation: extra.impersonation });
  return token;
}

/** A user with an `api` token and no password (hashing one per user would slow role matrices down). */
export async function quickUser(app: FastifyInstance, o: { admin?: boolean; scopes?: string[]; username?: string } = {}): Promise<TestUser> {
  const username = o.username ?? `u${next()}`;
  const user = await createUser(app, { username, name: `User ${username}`, email: `${username}@example.com`, admin: o.admin });
  const { token } = await createPersonalAccessToken(app, user, { name: 'test', scopes: o.scopes ?? ['api'], expiresAt: null });
  return { user, token };
}

export const Role = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type RoleName = keyof typeof Role;

export async function makeGroup(app: FastifyInstance, o: { path?: string; visibility?: number; parent?: { id: number; traversal: string; full_path: string; full_name?: string } } = {}) {
  const path = o.path ?? `group${next()}`;
  const now = app.clock.now();
  const fullPath = o.parent ? `${o.parent.full_path}/${path}` : path;
  const fullName = o.parent ? `${o.parent.full_name ?? o.parent.full_path} / ${path}` : path;
  const ns = await app.db.insertInto('namespaces').values({
    name: path, path, kind: 'group', parent_id: o.parent?.id ?? null, owner_id: null, visibility_level: o.visibility ?? 20,
    description: '', full_path: fullPath, full_path_lower: fullPath.toLowerCase(), full_name: fullName, traversal: '/',
    request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer', created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  const traversal = `${o.parent?.traversal ?? '/'}${ns.id}/`;
  await app.db.updateTable('namespaces').set({ traversal }).where('id', '=', ns.id).execute();
  return { ...ns, traversal };
}

/** A user's personal namespace. */
export async function userNamespace(app: FastifyInstance, userId: number): Promise<{ id: number; full_path: string }> {
  return app.db.selectFrom('namespaces').select(['id', 'full_path']).where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirstOrThrow();
}

/**
 * A project in a group or in a user's personal namespace (`visibility` 0 private, 10 internal, 20 public);
 * `repository: true` also makes its bare repository with an unborn `main`.
 */
export async function makeProject(app: FastifyInstance, o: { namespace?: { id: number; full_path: string }; owner?: { id: number }; path?: string; visibility?: number; description?: string | null; creatorId?: number | null; repository?: boolean; protectOnFirstCommit?: boolean } = {}): Promise<ProjectRow> {
  let ns = o.namespace;
  if (!ns) {
    const owner = o.owner ?? (await quickUser(app)).user;
    ns = await userNamespace(app, owner.id);
  }
  const path = o.path ?? `project${next()}`;
  const now = app.clock.now();
  const fullPath = `${ns.full_path}/${path}`;
  const row = await app.db.insertInto('projects').values({
    namespace_id: ns.id, name: path, path, full_path: fullPath, full_path_lower: fullPath.toLowerCase(),
    description: o.description === undefined ? null : o.description, visibility_level: o.visibility ?? 0, creator_id: o.creatorId ?? null, archived: 0,
    default_branch: null, repository_storage: 'default', repository_read_only: 0, empty_repo: 1, pending_delete: 0,
    created_at: now, updated_at: now, last_activity_at: now,
    // A fixture project stands for an existing one: its default branch protection counts as settled (nothing is
    // protected) unless the test asks for the first-commit rule of a new project.
    default_branch_protection_applied: o.protectOnFirstCommit ? 0 : 1,
  }).returningAll().executeTakeFirstOrThrow();
  if (o.repository) await repoFor(app.config, row).ensure('main');
  return row;
}

export async function reloadProject(app: FastifyInstance, id: number): Promise<ProjectRow> {
  return app.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function addMember(app: FastifyInstance, source: { type: 'Project' | 'Namespace'; id: number }, userId: number, level: number, expiresAt: number | null = null) {
  const now = app.clock.now();
  await app.db.insertInto('members').values({
    source_type: source.type, source_id: source.id, user_id: userId, access_level: level, expires_at: expiresAt, created_by_id: null, created_at: now, updated_at: now,
  }).execute();
}

export interface RoleCast {
  anonymous: null;
  nonMember: TestUser;
  guest: TestUser;
  reporter: TestUser;
  developer: TestUser;
  maintainer: TestUser;
  owner: TestUser;
  admin: TestUser;
}

/** One user per role on the project, plus a non-member and an administrator. */
export async function castRoles(app: FastifyInstance, project: { id: number }): Promise<RoleCast> {
  const cast: Record<string, TestUser | null> = { anonymous: null, nonMember: await quickUser(app), admin: await quickUser(app, { admin: true }) };
  for (const [name, level] of Object.entries(Role)) {
    const u = await quickUser(app);
    await addMember(app, { type: 'Project', id: project.id }, u.user.id, level);
    cast[name] = u;
  }
  return cast as unknown as RoleCast;
}

/** One user per role on the group, plus a non-member and an administrator. */
export async function castGroupRoles(app: FastifyInstance, group: { id: number }): Promise<RoleCast> {
  const cast: Record<string, TestUser | null> = { anonymous: null, nonMember: await quickUser(app), admin: await quickUser(app, { admin: true }) };
  for (const [name, level] of Object.entries(Role)) {
    const u = await quickUser(app);
    await addMember(app, { type: 'Namespace', id: group.id }, u.user.id, level);
    cast[name] = u;
  }
  return cast as unknown as RoleCast;
}

/** An issue written straight to the database with the project's next iid, its labels and assignees. */
export async function makeIssue(app: FastifyInstance, project: { id: number }, o: {
  title?: string; description?: string | null; authorId?: number | null; confidential?: boolean; state?: 'opened' | 'closed';
  labels?: number[]; assigneeIds?: number[]; milestoneId?: number | null; iterationId?: number | null; dueDate?: number | null;
} = {}) {
  const now = app.clock.now();
  return app.db.transaction().execute(async (trx) => {
    const iid = await nextIid(trx, 'issues', project.id);
    const issue = await trx.insertInto('issues').values({
      project_id: project.id, iid, title: o.title ?? `Issue ${iid}`, description: o.description ?? null, author_id: o.authorId ?? null,
      confidential: o.confidential ? 1 : 0, state: o.state ?? 'opened', closed_at: o.state === 'closed' ? now : null,
      milestone_id: o.milestoneId ?? null, iteration_id: o.iterationId ?? null, due_date: o.dueDate ?? null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    if (o.labels?.length) await trx.insertInto('label_links').values(o.labels.map((label_id) => ({ label_id, target_type: 'Issue', target_id: issue.id, created_at: now }))).execute();
    if (o.assigneeIds?.length) await trx.insertInto('issue_assignees').values(o.assigneeIds.map((user_id) => ({ issue_id: issue.id, user_id }))).execute();
    return issue;
  });
}

/** A project label (`projectId`) or a group label (`groupId`). */
export async function makeLabel(app: FastifyInstance, o: { projectId?: number; groupId?: number; title?: string; color?: string; description?: string | null }) {
  const now = app.clock.now();
  return app.db.insertInto('labels').values({
    title: o.title ?? `label${next()}`, color: o.color ?? '#6699cc', description: o.description ?? null,
    project_id: o.projectId ?? null, group_id: o.groupId ?? null, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** A project milestone (`projectId`) or a group milestone (`groupId`), with the owner's next milestone iid. */
export async function makeMilestone(app: FastifyInstance, o: { projectId?: number; groupId?: number; title?: string; startDate?: number | null; dueDate?: number | null; state?: 'active' | 'closed' }) {
  const now = app.clock.now();
  return app.db.transaction().execute(async (trx) => {
    const iid = o.projectId !== undefined ? await nextIid(trx, 'project_milestones', o.projectId) : await nextIid(trx, 'group_milestones', o.groupId!);
    return trx.insertInto('milestones').values({
      iid, project_id: o.projectId ?? null, group_id: o.groupId ?? null, title: o.title ?? `milestone${next()}`, description: null,
      state: o.state ?? 'active', start_date: o.startDate ?? null, due_date: o.dueDate ?? null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

/** A group iteration (and a manual cadence for it when none is given), dates as epoch milliseconds of their days. */
export async function makeIteration(app: FastifyInstance, o: { groupId: number; cadenceId?: number; title?: string | null; startDate: number; dueDate: number }) {
  const now = app.clock.now();
  return app.db.transaction().execute(async (trx) => {
    const cadenceId = o.cadenceId ?? (await trx.insertInto('iteration_cadences').values({
      group_id: o.groupId, title: `cadence${next()}`, description: null, automatic: 0, start_date: null, duration_in_weeks: null,
      iterations_in_advance: null, roll_over: 0, last_run_date: null, created_at: now, updated_at: now,
    }).returning('id').executeTakeFirstOrThrow()).id;
    const iid = await nextIid(trx, 'iterations', o.groupId);
    return trx.insertInto('iterations').values({
      iid, group_id: o.groupId, cadence_id: cadenceId, sequence: iid, title: o.title === undefined ? `iteration${next()}` : o.title, description: null,
      start_date: o.startDate, due_date: o.dueDate, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

/** A group made through the API by `token`; throws unless it answers 201. */
export async function createGroup(app: FastifyInstance, token: string, body: Record<string, unknown>): Promise<any> {
  const r = await call(app, 'POST', '/groups', { token, body });
  if (r.status !== 201) throw new Error(`group create failed: ${r.status} ${r.text}`);
  return r.body;
}

/** A project made through the API by `token`; throws unless it answers 201. */
export async function createProject(app: FastifyInstance, token: string, body: Record<string, unknown>) {
  const r = await call(app, 'POST', '/projects', { token, body });
  if (r.status !== 201) throw new Error(`project create failed: ${r.status} ${r.text}`);
  return r.body as { id: number; path_with_namespace: string; [k: string]: any };
}

/** Turns an instance feature gate on. */
export async function enableFeature(app: FastifyInstance, name: string) {
  const now = Date.now();
  await app.db.insertInto('feature_gates').values({ feature_key: name, key: 'boolean', value: 'true', created_at: now, updated_at: now }).execute();
}

/** An alert written straight to the database with the project's next alert iid (as an integration would raise it). */
export async function makeAlert(app: FastifyInstance, project: { id: number }, o: {
  title?: string; severity?: string; status?: string; startedAt?: number; fingerprint?: string | null; service?: string | null; description?: string | null;
} = {}) {
  const now = app.clock.now();
  return app.db.transaction().execute(async (trx) => {
    const iid = await nextIid(trx, 'alert_management_alerts', project.id);
    return trx.insertInto('alert_management_alerts').values({
      project_id: project.id, iid, integration_id: null, issue_id: null, title: o.title ?? `Alert ${iid}`, description: o.description ?? null,
      severity: o.severity ?? 'critical', status: o.status ?? 'triggered', started_at: o.startedAt ?? now, ended_at: o.status === 'resolved' ? now : null,
      events: 1, monitoring_tool: null, service: o.service ?? null, hosts: '[]', fingerprint: o.fingerprint ?? null, environment_name: null,
      payload: '{}', created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
  });
}

/**
 * One commit on `branch` of the project's repository (made when missing), writing `files` (path → content; null
 * deletes; `moves`: new path → old path, renamed), started from `from` when the branch is new. Sets the default branch on the first commit. Returns the sha.
 */
export async function commitFiles(app: FastifyInstance, project: ProjectRow, branch: string, files: Record<string, string | Buffer | null>, o: { from?: string; message?: string; moves?: Record<string, string> } = {}): Promise<string> {
  const repo = repoFor(app.config, project);
  await repo.ensure('main');
  const start = (await repo.resolveCommit(`refs/heads/${branch}`)) ?? (o.from ? await repo.resolveCommit(`refs/heads/${o.from}`) : null);
  const exists = async (p: string) => (start ? repo.pathExists(start, p) : false);
  const actions = [];
  // `moves`: new path → old path, the file renamed (with `files[new path]` as its content when given).
  for (const [file_path, previous_path] of Object.entries(o.moves ?? {})) {
    const content = files[file_path];
    actions.push({ action: 'move' as const, file_path, previous_path, ...(typeof content === 'string' || Buffer.isBuffer(content) ? { content } : {}) });
  }
  for (const [file_path, content] of Object.entries(files)) {
    if (o.moves?.[file_path]) continue;
    if (content === null) actions.push({ action: 'delete' as const, file_path });
    else actions.push({ action: (await exists(file_path)) ? 'update' as const : 'create' as const, file_path, content });
  }
  const r = await repo.createCommit({
    branch, startBranch: o.from, actions, message: o.message ?? `Change ${Object.keys(files).join(', ')}`,
    author: { name: 'Fixture', email: 'fixture@example.com', date: new Date(app.clock.now()) },
  });
  if (!project.default_branch) {
    await app.db.updateTable('projects').set({ default_branch: branch, empty_repo: 0 }).where('id', '=', project.id).execute();
    project.default_branch = branch;
    project.empty_repo = 0;
  }
  return r.sha;
}

/** A merge request made through the API (so it has its head ref and first diff version), by `token`. */
export async function makeMergeRequest(app: FastifyInstance, token: string, project: { id: number }, body: Record<string, unknown>): Promise<any> {
  const r = await call(app, 'POST', `/projects/${project.id}/merge_requests`, { token, body: { title: 'A change', ...body } });
  if (r.status !== 201) throw new Error(`merge request: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * A commit of many new or changed files on a new `branch` started from `from`, in one `git fast-import` (for the
 * large diffs the commit writer would take minutes to build file by file). Returns the sha.
 */
export async function bulkCommit(app: FastifyInstance, project: ProjectRow, branch: string, from: string, files: Record<string, string>): Promise<string> {
  const repo = repoFor(app.config, project);
  const parent = (await repo.resolveCommit(`refs/heads/${from}`))!;
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const parts = [`commit refs/heads/${branch}\n`, 'committer Fixture <fixture@example.com> 1700000000 +0000\n', data('Many files'), `from ${parent}\n`];
  for (const [path, content] of Object.entries(files)) parts.push(`M 100644 inline ${path}\n`, data(content));
  await repo.git(['fast-import', '--quiet'], { input: parts.join('') });
  repo.invalidate();
  return (await repo.resolveCommit(`refs/heads/${branch}`))!;
}

/** A user's SSH key from its OpenSSH public key text, through the keys' own validation. */
export async function makeSshKey(app: FastifyInstance, userId: number, publicKey: string, o: { expiresAt?: number | null; usageType?: 'auth' | 'signing' | 'auth_and_signing' } = {}) {
  const { createUserKey } = await import('../../src/resources/ssh-keys/ssh-keys.service.ts');
  return createUserKey(app, userId, { key: publicKey, title: `key ${next()}`, expiresAt: o.expiresAt ?? null, usageType: o.usageType ?? 'auth_and_signing' });
}

/** A deploy key enabled on a project (pushing when `canPush`), created as an administrator would. */
export async function makeDeployKey(app: FastifyInstance, projectId: number, publicKey: string, o: { canPush?: boolean; expiresAt?: number | null } = {}) {
  const { addProjectKey } = await import('../../src/resources/deploy-keys/deploy-keys.service.ts');
  return addProjectKey(app, { userId: null, admin: true }, projectId, { key: publicKey, title: `deploy ${next()}`, expiresAt: o.expiresAt ?? null, canPush: !!o.canPush });
}

/**
 * A snippet made through the snippets service (its repository holds the files): personal unless `project` is given,
 * private unless `visibility` says otherwise.
 */
export async function makeSnippet(app: FastifyInstance, author: UserRow, o: {
  project?: ProjectRow; visibility?: 'private' | 'internal' | 'public'; title?: string; files?: Array<{ file_path: string; content: string }>;
} = {}) {
  const actor = { user: author, admin: !!author.admin, token: null, via: 'token' as const, sudo: false };
  return createSnippet(app, actor, o.project ?? null, {
    title: o.title ?? `snippet ${next()}`, visibility: o.visibility ?? 'private', files: o.files ?? [{ file_path: 'hello.txt', content: 'hello\n' }],
  }, { userAgent: 'fixture', ip: '127.0.0.1' });
}

/** A comment (or, with `system`, a system note) written straight to the database on an issue, merge request, snippet or commit. */
export async function makeNote(app: FastifyInstance, o: {
  projectId: number | null; noteableType: 'Issue' | 'MergeRequest' | 'Snippet' | 'Commit'; noteableId: number; body: string;
  authorId?: number | null; system?: boolean; internal?: boolean; commitId?: string | null;
}) {
  const now = app.clock.now();
  return app.db.insertInto('notes').values({
    noteable_type: o.noteableType, noteable_id: o.noteableId, project_id: o.projectId, author_id: o.authorId ?? null, body: o.body, type: null,
    system: o.system ? 1 : 0, internal: o.internal ? 1 : 0, discussion_id: `${next()}`.padEnd(40, '0'), position: null, commit_id: o.commitId ?? null,
    resolvable: 0, resolved_at: null, resolved_by_id: null, created_at: now, updated_at: now, original_position: null, change_position: null, line_code: null,
  }).returningAll().executeTakeFirstOrThrow();
}

/**
 * A fork of `upstream` owned by `owner`: a public project recorded as forked from it, with upstream's `main` fetched
 * and a branch `branch` of its own on top (one commit writing `file`).
 */
export async function makeFork(app: FastifyInstance, upstream: ProjectRow, owner: { id: number }, branch: string, file: Record<string, string>): Promise<ProjectRow> {
  const fork = await makeProject(app, { owner, visibility: 20, repository: true });
  await app.db.updateTable('projects').set({ forked_from_project_id: upstream.id, default_branch: 'main', empty_repo: 0 }).where('id', '=', fork.id).execute();
  await repoFor(app.config, fork).fetchBranchInto(repoFor(app.config, upstream).path, 'main', 'refs/heads/main');
  const row = await reloadProject(app, fork.id);
  await commitFiles(app, row, branch, file, { from: 'main' });
  return row;
}

/** What a stand-in for the external spam services received: the form fields of each request, by endpoint. */
export interface SpamStandIns {
  url: string;
  akismet: Array<Record<string, string>>;
  recaptcha: Array<Record<string, string>>;
  /** The forms posted to Akismet's `submit-ham`. */
  ham: Array<Record<string, string>>;
  /** 'ok' answers as the services do; 'error' answers 500; 'drop' closes the connection without an answer. */
  mode: 'ok' | 'error' | 'drop';
  close(): Promise<void>;
}

/**
 * Loopback stand-ins for Akismet (`POST /1.1/comment-check`: "true" when the comment contains "akismet-spam",
 * "invalid" for the key "bad-key", else "false"; `POST /1.1/submit-ham`: Akismet's thanks) and the reCAPTCHA verify endpoint (`POST /siteverify`: success for
 * the response "solved" with the secret "recaptcha-secret").
 */
export async function startSpamStandIns(): Promise<SpamStandIns> {
  const { createServer } = await import('node:http');
  const state = { akismet: [] as Array<Record<string, string>>, recaptcha: [] as Array<Record<string, string>>, ham: [] as Array<Record<string, string>>, mode: 'ok' as SpamStandIns['mode'] };
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(data));
      if (state.mode === 'drop') return void req.socket.destroy();
      if (state.mode === 'error') return void res.writeHead(500).end('oops');
      if (req.method === 'POST' && req.url === '/1.1/comment-check') {
        state.akismet.push(form);
        const answer = form.api_key === 'bad-key' ? 'invalid' : (form.comment_content ?? '').includes('akismet-spam') ? 'true' : 'false';
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
      }
      if (req.method === 'POST' && req.url === '/1.1/submit-ham') {
        state.ham.push(form);
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(form.api_key === 'bad-key' ? 'invalid' : 'Thanks for making the web a better place.');
      }
      if (req.method === 'POST' && req.url === '/siteverify') {
        state.recaptcha.push(form);
        const success = form.secret === 'recaptcha-secret' && form.response === 'solved';
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(success ? { success } : { success, 'error-codes': ['invalid-input-response'] }));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  }) as SpamStandIns;
}

/** A spam log row as the spam check writes it (platform/spam/spam-check.ts). */
export async function makeSpamLog(app: FastifyInstance, o: {
  userId: number | null; noteableType?: string; title?: string | null; description?: string | null; sourceIp?: string | null; userAgent?: string | null;
  recaptchaVerified?: boolean; submittedAsHam?: boolean; createdAt?: number;
}) {
  const at = o.createdAt ?? app.clock.now();
  return app.db.insertInto('spam_logs').values({
    user_id: o.userId, source_ip: o.sourceIp === undefined ? '192.0.2.7' : o.sourceIp, user_agent: o.userAgent === undefined ? 'spam-bot/1.0' : o.userAgent,
    via_api: 1, noteable_type: o.noteableType ?? 'Issue', title: o.title === undefined ? 'casino' : o.title, description: o.description ?? null,
    recaptcha_verified: o.recaptchaVerified ? 1 : 0, submitted_as_ham: o.submittedAsHam ? 1 : 0, created_at: at, updated_at: at,
  }).returningAll().executeTakeFirstOrThrow();
}
