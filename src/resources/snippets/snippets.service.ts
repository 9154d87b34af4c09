import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { SnippetsTable } from '../../platform/db/schema.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { snippetDenial, type SnippetAbility } from '../../platform/access/policy.ts';
import { ForbiddenError, NotFoundError, RuleError, ValidationError } from '../../platform/errors.ts';
import { dialectOf, fitsIntColumn } from '../../platform/db/dialect.ts';
import { readableSnippetsExpr } from '../../platform/access/queries.ts';
import { sql, type SqlBool } from 'kysely';
import { Visibility, userAuthorization, type ProjectRow } from '../../platform/membership.ts';
import { Repository, type CommitAction } from '../../platform/git/index.ts';
import { FileExistsError, FileNotFoundError, InvalidPathError } from '../../platform/git/errors.ts';
import { pickStorage, placeRepository, removeRepository, snippetRepositoryPath, stagingPath } from '../projects/repository.ts';
import { projectAccessFor } from '../../http/access.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { checkSpam } from '../../platform/spam/spam-check.ts';
import { usersByIds, type User } from '../users/users.service.ts';

// Snippets: personal (no project) and project snippets. Each snippet's files are the tree of the default branch of
// its own bare repository; every write through the API is one commit there, and pushes over HTTP write the same
// branch. The row keeps the title, description, visibility and the first file's name for listings.

export type SnippetRow = Selectable<SnippetsTable>;

export const SNIPPET_BRANCH = 'main';
const MAX_FILES = 10;
const MAX_CONTENT = 50 * 1024 * 1024;
const MAX_TITLE = 255;

export interface SnippetFileInput {
  file_path?: string;
  content?: string;
  action?: 'create' | 'update' | 'delete' | 'move';
  previous_path?: string;
}

export interface SnippetInput {
  title?: string;
  description?: string;
  visibility?: 'private' | 'internal' | 'public';
  file_name?: string;
  content?: string;
  files?: SnippetFileInput[];
}

/** A snippet as one caller sees it: the row, and its project with the caller's role there (null: personal). */
export interface SnippetScope {
  row: SnippetRow;
  project: ProjectRow | null;
  level: number;
}

export function snippetRepo(deps: ServiceDeps, row: Pick<SnippetRow, 'id' | 'repository_storage'>): Repository {
  return new Repository(snippetRepositoryPath(deps.config, row.repository_storage, row.id));
}

const fail = (text: string) => new RuleError('bad_request', { error: text });

/** The caller's standing on a snippet through the one policy: 404 when hidden, 403 when seen but refused. */
export function demandSnippet(actor: Actor, ability: SnippetAbility, s: SnippetScope): void {
  const denial = snippetDenial(actor, ability, s.row, s.project, s.level);
  if (denial === 'not_found') throw new NotFoundError('Snippet');
  if (denial === 'read_only') throw new RuleError('bad_request', 'The repository is temporarily read-only. Please try again later.');
  if (denial) throw new ForbiddenError();
}

export async function snippetRow(deps: ServiceDeps, id: number): Promise<SnippetRow | undefined> {
  if (!fitsIntColumn(id)) return undefined;
  return deps.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A personal snippet by id (`/snippets/:id`), held to `ability`. */
export async function findPersonalSnippet(deps: ServiceDeps, actor: Actor, id: number, ability: SnippetAbility): Promise<SnippetScope> {
  const row = await snippetRow(deps, id);
  if (!row || row.project_id !== null) throw new NotFoundError('Snippet');
  const s = { row, project: null, level: 0 };
  demandSnippet(actor, ability, s);
  return s;
}

/** A snippet of this project (the route has checked the project), held to `ability`. */
export async function findProjectSnippet(deps: ServiceDeps, actor: Actor, project: ProjectRow, level: number, id: number, ability: SnippetAbility): Promise<SnippetScope> {
  const row = await snippetRow(deps, id);
  if (!row || row.project_id !== project.id) throw new NotFoundError('Snippet');
  const s = { row, project, level };
  demandSnippet(actor, ability, s);
  return s;
}

/** Any snippet by id with the caller's standing (git over HTTP); null when there is none or its project is gone. */
export async function snippetScopeFor(deps: ServiceDeps, actor: Actor, id: number): Promise<SnippetScope | null> {
  const row = await snippetRow(deps, id);
  if (!row) return null;
  if (row.project_id === null) return { row, project: null, level: 0 };
  const project = await liveProjectById(deps, row.project_id);
  if (!project) return null;
  return { row, project, level: (await projectAccessFor(deps, actor, project)).effective };
}

// ---- listings --------------------------------------------------------------------------------------------------

/** The reference's listing filters: creation time bounds (epoch ms, inclusive) and, for administrators, the shard. */
export interface SnippetFilters {
  created_after?: number;
  created_before?: number;
  repository_storage?: string;
}

function filtered<Q extends { where: (...args: any[]) => any }>(q: Q, actor: Actor, f: SnippetFilters): Q {
  if (f.created_after !== undefined) q = q.where('snippets.created_at', '>=', f.created_after);
  if (f.created_before !== undefined) q = q.where('snippets.created_at', '<=', f.created_before);
  // Only administrators filter by shard (the reference ignores the parameter for others).
  if (f.repository_storage !== undefined && actor.admin) q = q.where('snippets.repository_storage', '=', f.repository_storage);
  return q;
}

/** `GET /snippets`: the caller's own personal snippets, newest first. */
export function ownSnippetsQuery(deps: ServiceDeps, actor: Actor, f: SnippetFilters = {}) {
  const q = deps.db.selectFrom('snippets').selectAll().where('author_id', '=', actor.user!.id).where('project_id', 'is', null);
  return filtered(q, actor, { ...f, repository_storage: undefined }).orderBy('id', 'desc');
}

/** `GET /snippets/public`: every public personal snippet. */
export function publicSnippetsQuery(deps: ServiceDeps, actor: Actor, f: SnippetFilters = {}) {
  const q = deps.db.selectFrom('snippets').selectAll().where('project_id', 'is', null).where('visibility_level', '=', Visibility.public);
  return filtered(q, actor, { ...f, repository_storage: undefined }).orderBy('id', 'desc');
}

/** `GET /projects/:id/snippets`: the route decided `read_snippet` on the project; each snippet's own rule remains. */
export function projectSnippetsQuery(deps: ServiceDeps, actor: Actor, project: ProjectRow, level: number) {
  const q = deps.db.selectFrom('snippets').selectAll().where('project_id', '=', project.id);
  return q.where((eb) => readableSnippetsExpr(eb, actor, null, deps.clock.now(), dialectOf(deps.db), level) ?? sql<SqlBool>`1 = 1`).orderBy('id', 'desc');
}

/**
 * `GET /snippets/all`: every personal and project snippet the policy lets the caller read, filtered in the database
 * (`readableSnippetsExpr`), newest first.
 */
export async function allSnippetsQuery(deps: ServiceDeps, actor: Actor, f: SnippetFilters = {}) {
  const now = deps.clock.now();
  const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
  const q = deps.db.selectFrom('snippets').leftJoin('projects', 'projects.id', 'snippets.project_id').selectAll('snippets')
    .where((eb) => readableSnippetsExpr(eb, actor, a, now, dialectOf(deps.db)) ?? sql<SqlBool>`1 = 1`);
  return filtered(q, actor, f).orderBy('snippets.id', 'desc');
}

/** Snippets by id with their authors and their projects' paths, for presenting them inside other entities. */
export async function snippetsWithContext(deps: ServiceDeps, ids: number[]): Promise<Map<number, { row: SnippetRow; author: User; projectPath: string | null }>> {
  const unique = [...new Set(ids)];
  const rows = unique.length ? await deps.db.selectFrom('snippets').selectAll().where('id', 'in', unique).execute() : [];
  const users = await usersByIds(deps, [...new Set(rows.map((r) => r.author_id))]);
  const projectIds = [...new Set(rows.map((r) => r.project_id).filter((x): x is number => x !== null))];
  const projects = projectIds.length ? await deps.db.selectFrom('projects').select(['id', 'full_path']).where('id', 'in', projectIds).execute() : [];
  const paths = new Map(projects.map((p) => [p.id, p.full_path]));
  return new Map(rows.map((row) => [row.id, { row, author: users.get(row.author_id)!, projectPath: row.project_id === null ? null : paths.get(row.project_id) ?? null }]));
}

// ---- files -----------------------------------------------------------------------------------------------------

export interface SnippetFile {
  path: string;
}

/** The files of the snippet's default branch, in tree order; none for an empty repository. */
export async function snippetFiles(deps: ServiceDeps, row: Pick<SnippetRow, 'id' | 'repository_storage'>): Promise<string[]> {
  const repo = snippetRepo(deps, row);
  if (!repo.exists()) return [];
  const head = await repo.resolveCommit(SNIPPET_BRANCH);
  if (!head) return [];
  const entries = await repo.readTree(head, '', { recursive: true });
  return (entries ?? []).filter((e) => e.type === 'blob').map((e) => e.path);
}

/** One file's bytes at `ref` (default: the default branch); 404 File when missing. */
export async function snippetFileContent(deps: ServiceDeps, row: SnippetRow, path: string | null, ref = SNIPPET_BRANCH): Promise<{ path: string; content: Buffer }> {
  const repo = snippetRepo(deps, row);
  const head = repo.exists() ? await repo.resolveCommit(ref) : null;
  let p = path;
  if (p === null) p = (await snippetFiles(deps, row))[0] ?? null;
  if (!head || p === null) throw new NotFoundError(path === null ? 'Snippet' : 'File');
  const blob = await repo.readBlob(head, p).catch(() => null);
  if (!blob) throw new NotFoundError('File');
  return { path: p, content: blob.content };
}

// ---- writes ----------------------------------------------------------------------------------------------------

function checkCommon(input: SnippetInput, errors: Record<string, string[]>, creating: boolean): void {
  if (creating || input.title !== undefined) {
    const title = (input.title ?? '').trim();
    if (!title) (errors.title ??= []).push("can't be blank");
    else if (title.length > MAX_TITLE) (errors.title ??= []).push(`is too long (maximum is ${MAX_TITLE} characters)`);
  }
}

function checkPath(path: string | undefined, param: string): string {
  const p = (path ?? '').trim();
  if (!p) throw fail(`${param} can't be blank`);
  if (p.length > 255 || p.startsWith('-') || p.split('/').some((x) => x === '.' || x === '..' || x === '' || x.toLowerCase() === '.git') || /[\0\n\r]/.test(p)) {
    throw fail(`${param} '${p}' is invalid`);
  }
  return p;
}

function checkContent(content: string | undefined): string {
  if (content === undefined || content === '') throw fail("content can't be blank");
  if (Buffer.byteLength(content) > MAX_CONTENT) throw fail('content is too big');
  return content;
}

/** The actions of a create: `files[]` (each a new file) or the single `file_name` + `content`. */
function createActions(input: SnippetInput): CommitAction[] {
  if (input.files !== undefined && (input.content !== undefined || input.file_name !== undefined)) {
    throw fail('files and content, file_name are mutually exclusive');
  }
  if (input.files !== undefined) {
    if (input.files.length === 0) throw fail("files can't be empty");
    if (input.files.length > MAX_FILES) throw fail(`Snippet files count exceeded the limit of ${MAX_FILES}`);
    const seen = new Set<string>();
    return input.files.map((f) => {
      if (f.action !== undefined && f.action !== 'create') throw fail(`files action '${f.action}' is not allowed when creating a snippet`);
      const path = checkPath(f.file_path, 'file_path');
      if (seen.has(path)) throw fail(`Snippet file ${path} is duplicated`);
      seen.add(path);
      return { action: 'create', file_path: path, content: checkContent(f.content) };
    });
  }
  if (input.content === undefined) throw fail('content or files must be given');
  const path = input.file_name ? checkPath(input.file_name, 'file_name') : 'snippetfile1.txt';
  return [{ action: 'create', file_path: path, content: checkContent(input.content) }];
}

/** The actions of an update: `files[]` with their actions, or the single-file form replacing the one file. */
async function updateActions(deps: ServiceDeps, row: SnippetRow, input: SnippetInput): Promise<CommitAction[]> {
  if (input.files !== undefined && (input.content !== undefined || input.file_name !== undefined)) {
    throw fail('files and content, file_name are mutually exclusive');
  }
  const current = await snippetFiles(deps, row);
  if (input.files !== undefined) {
    if (input.files.length === 0) throw fail("files can't be empty");
    const actions = input.files.map((f): CommitAction => {
      const action = f.action ?? 'update';
      switch (action) {
        case 'create':
          return { action, file_path: checkPath(f.file_path, 'file_path'), content: checkContent(f.content) };
        case 'update':
          return { action, file_path: checkPath(f.file_path, 'file_path'), content: checkContent(f.content) };
        case 'delete':
          return { action, file_path: checkPath(f.file_path, 'file_path') };
        case 'move':
          return {
            action, file_path: checkPath(f.file_path, 'file_path'), previous_path: checkPath(f.previous_path, 'previous_path'),
            ...(f.content !== undefined ? { content: checkContent(f.content) } : {}),
          };
        default:
          throw fail(`files action '${String(action)}' is invalid`);
      }
    });
    const created = actions.filter((a) => a.action === 'create').length;
    const deleted = actions.filter((a) => a.action === 'delete').length;
    if (current.length + created - deleted > MAX_FILES) throw fail(`Snippet files count exceeded the limit of ${MAX_FILES}`);
    if (current.length + created - deleted < 1) throw fail('Snippet must have at least one file');
    return actions;
  }
  if (input.content === undefined && input.file_name === undefined) return [];
  if (current.length > 1) throw fail('To update Snippets with multiple files, you must use the `files` parameter');
  const old = current[0];
  const name = input.file_name !== undefined ? checkPath(input.file_name, 'file_name') : old ?? 'snippetfile1.txt';
  const content = input.content !== undefined ? checkContent(input.content) : undefined;
  if (!old) return [{ action: 'create', file_path: name, content: content ?? '' }];
  if (name !== old) return [{ action: 'move', file_path: name, previous_path: old, ...(content !== undefined ? { content } : {}) }];
  return content === undefined ? [] : [{ action: 'update', file_path: name, content }];
}

function gitFailure(e: unknown): never {
  if (e instanceof FileExistsError) throw fail(`A file with this name already exists: ${e.path}`);
  if (e instanceof FileNotFoundError) throw fail(`A file with this name doesn't exist: ${e.path}`);
  if (e instanceof InvalidPathError) throw fail('file_path is invalid');
  throw e;
}

const identity = (actor: Actor, when: number) => ({ name: actor.user!.name, email: actor.user!.email, date: new Date(when) });

/**
 * Creates a snippet whole or not at all: its repository is built on a staging path with the first commit, then the
 * row is inserted and the repository takes its place in the same transaction (a stop leaves only a staged leftover).
 */
export async function createSnippet(
  deps: ServiceDeps, actor: Actor, project: ProjectRow | null, input: SnippetInput, request: { userAgent: string | null; ip: string | null },
): Promise<SnippetRow> {
  const errors: Record<string, string[]> = {};
  checkCommon(input, errors, true);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const actions = createActions(input);
  await checkSpam(deps, actor, { kind: 'Snippet', project, level: project ? (await projectAccessFor(deps, actor, project)).effective : 0, before: null, change: input, contents: actions.map((a) => ('content' in a && a.content !== undefined ? String(a.content) : undefined)) });
  const now = deps.clock.now();
  const shard = pickStorage(deps.config);
  const staged = stagingPath(deps.config, shard);
  let placed: string | null = null;
  try {
    const repo = await Repository.init(staged, { defaultBranch: SNIPPET_BRANCH });
    await repo.createCommit({ branch: SNIPPET_BRANCH, actions, message: 'Initial commit', author: identity(actor, now) }).catch(gitFailure);
    return await deps.db.transaction().execute(async (trx) => {
      const row = await trx.insertInto('snippets').values({
        title: input.title!.trim(), description: input.description ?? null, author_id: actor.user!.id, project_id: project?.id ?? null,
        visibility_level: Visibility[input.visibility ?? 'private'], file_name: actions[0].file_path, repository_storage: shard,
        user_agent: request.userAgent?.slice(0, 255) ?? null, ip_address: request.ip?.slice(0, 64) ?? null, created_at: now, updated_at: now,
      }).returningAll().executeTakeFirstOrThrow();
      placed = snippetRepositoryPath(deps.config, shard, row.id);
      await placeRepository(deps.config, staged, placed);
      return row;
    });
  } catch (e) {
    await removeRepository(staged).catch(() => {});
    if (placed) await removeRepository(placed).catch(() => {});
    throw e;
  }
}

/** Every file's text as stored (what the spam check reads when an edit makes the snippet public). */
async function storedContents(deps: ServiceDeps, row: SnippetRow): Promise<string[]> {
  return Promise.all((await snippetFiles(deps, row)).map(async (path) => (await snippetFileContent(deps, row, path)).content.toString('utf8')));
}

/** Edits the row and, when files change, commits them; nothing is written when any check fails. */
export async function updateSnippet(deps: ServiceDeps, actor: Actor, s: SnippetScope, input: SnippetInput): Promise<SnippetRow> {
  const errors: Record<string, string[]> = {};
  checkCommon(input, errors, false);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const row = s.row;
  const actions = await updateActions(deps, row, input);
  await checkSpam(deps, actor, { kind: 'Snippet', project: s.project, level: s.level, before: row, change: input, contents: actions.map((a) => ('content' in a && a.content !== undefined ? String(a.content) : undefined)), stored: () => storedContents(deps, row) });
  const now = deps.clock.now();
  if (actions.length) {
    const repo = snippetRepo(deps, row);
    await repo.ensure(SNIPPET_BRANCH);
    await repo.createCommit({ branch: SNIPPET_BRANCH, actions, message: 'Update snippet', author: identity(actor, now) }).catch(gitFailure);
  }
  const files = await snippetFiles(deps, row);
  const set: Partial<SnippetRow> = { updated_at: now, file_name: files[0] ?? row.file_name };
  if (input.title !== undefined) set.title = input.title.trim();
  if (input.description !== undefined) set.description = input.description;
  if (input.visibility !== undefined) set.visibility_level = Visibility[input.visibility];
  return deps.db.updateTable('snippets').set(set).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
}

/** After a push: the files may have changed; the row follows the repository. */
export async function afterSnippetPush(deps: ServiceDeps, row: SnippetRow): Promise<void> {
  snippetRepo(deps, row).invalidate();
  const files = await snippetFiles(deps, row);
  await deps.db.updateTable('snippets').set({ updated_at: deps.clock.now(), file_name: files[0] ?? row.file_name }).where('id', '=', row.id).execute();
}

/** Removes the snippet's repository, then its rows with its notes and award emoji. */
export async function deleteSnippet(deps: ServiceDeps, row: SnippetRow): Promise<void> {
  await removeRepository(snippetRepositoryPath(deps.config, row.repository_storage, row.id));
  await deps.db.transaction().execute(async (trx) => {
    const noteIds = trx.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', row.id);
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute();
    await trx.deleteFrom('notes').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', row.id).execute();
    await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Snippet').where('awardable_id', '=', row.id).execute();
    await trx.deleteFrom('snippets').where('id', '=', row.id).execute();
  });
}
