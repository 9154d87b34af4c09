import { sql, type SqlBool } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { ParamError, type ParamProblem } from '../../platform/errors.ts';
import { AccessLevel, ancestorIds, userAuthorization, type NamespaceRow, type ProjectRow } from '../../platform/membership.ts';
import { readableFeatureExpr, readableGroups, readableIssuesExpr, readableSnippetsExpr } from '../../platform/access/queries.ts';
import { canProject } from '../../platform/access/policy.ts';
import { containsText, dialectOf, fitsIntColumn, indexedContains } from '../../platform/db/dialect.ts';
import type { CommitInfo, Repository } from '../../platform/git/index.ts';
import { issuesListQuery, type IssueListContext } from '../issues/issues.finder.ts';
import { mergeRequestsListQuery } from '../merge-requests/merge-requests.finder.ts';
import { buildListQuery, cachedPage } from '../projects/projects.list.ts';
import { projectRows } from '../../platform/project-rows.ts';
import type { PageParams } from '../../http/pagination.ts';
import { searchWords } from '../feature-flag-user-lists/feature-flag-user-lists.service.ts';
import { MAX_CANDIDATES, candidatePaths, indexFile, queueBlobIndex, readBlobIndex, type BlobIndex } from './blob-index.ts';

// The search API (GET /search, /groups/:id/search, /projects/:id/search): the parameter rules, the reference's
// abuse rules, and one query per scope. Records from the database are matched through the substring indexes of
// migration 0025 and filtered by the access policy's SQL conditions in the same query; blobs, wiki blobs and
// commits come from git on one ref.

export type SearchLevel =
  | { kind: 'global' }
  | { kind: 'group'; group: NamespaceRow }
  | { kind: 'project'; project: ProjectRow; level: number };

export const SCOPES = {
  global: ['projects', 'issues', 'merge_requests', 'milestones', 'snippet_titles', 'users'],
  group: ['projects', 'issues', 'merge_requests', 'milestones', 'users'],
  project: ['issues', 'merge_requests', 'milestones', 'notes', 'wiki_blobs', 'commits', 'blobs', 'users'],
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES][number];

const STATES = ['all', 'opened', 'closed', 'merged'] as const;
type State = (typeof STATES)[number];

export interface SearchInput {
  search?: string;
  scope?: string;
  state?: string;
  confidential?: boolean;
  include_archived?: boolean;
  order_by?: string;
  sort?: string;
  ref?: string;
}

export interface SearchQuery {
  search: string;
  scope: Scope;
  state?: State;
  confidential?: boolean;
  includeArchived: boolean;
  orderBy?: string;
  sort?: string;
  ref?: string;
}

/**
 * The parameter rules, every problem at once in declaration order (search, scope, state), as the reference words
 * them. The routes run them once, before the group or project is looked up; the handler then reads the input as
 * `searchQuery` has it.
 */
export function checkSearchParams(level: SearchLevel['kind'], i: SearchInput): void {
  const problems: Array<{ param: string; problem: ParamProblem }> = [];
  if (i.search === undefined) problems.push({ param: 'search', problem: 'missing' });
  const scopes: readonly string[] = SCOPES[level];
  if (i.scope === undefined) problems.push({ param: 'scope', problem: 'missing' }, { param: 'scope', problem: 'value' });
  else if (!scopes.includes(i.scope)) problems.push({ param: 'scope', problem: 'value' });
  if (i.state !== undefined && !(STATES as readonly string[]).includes(i.state)) problems.push({ param: 'state', problem: 'value' });
  if (problems.length) throw new ParamError(problems);
}

/** The query of input that passed `checkSearchParams`. */
export function searchQuery(i: SearchInput): SearchQuery {
  return {
    search: i.search!, scope: i.scope as Scope, state: i.state as State | undefined, confidential: i.confidential,
    includeArchived: !!i.include_archived, orderBy: i.order_by, sort: i.sort, ref: i.ref,
  };
}

const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of', 'on',
  'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with']);

/**
 * The reference's abuse rules: such a search answers an empty list. A query under two characters (but `*`), only
 * a stop word, a term over 100 characters (200 for a URL), more than five `|` alternatives, over 4096 characters
 * or 64 terms, or a `ref` holding characters outside `[A-Za-z0-9_-+/.!]`.
 */
export function isAbusive(q: SearchQuery): boolean {
  const s = q.search;
  if (s.length > 4096) return true;
  const trimmed = s.trim();
  if (trimmed !== '*' && trimmed.length < 2) return true;
  if (STOP_WORDS.has(trimmed.toLowerCase())) return true;
  const terms = trimmed.split(/\s+/).filter(Boolean);
  if (terms.length > 64) return true;
  if (terms.some((t) => t.length > (/^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? 200 : 100))) return true;
  if (s.split('|').length > 5) return true;
  if (q.ref !== undefined && !/^[A-Za-z0-9_\-+/.!]*$/.test(q.ref)) return true;
  return false;
}

/** Issues and merge requests: `created_at`, `updated_at` or `popularity` with `asc` or `desc`; anything else is created_at desc. */
function issueOrder(q: SearchQuery): { order_by: 'created_at' | 'updated_at' | 'popularity'; sort: 'asc' | 'desc' } {
  const by = q.orderBy === 'updated_at' || q.orderBy === 'popularity' || q.orderBy === 'created_at' ? q.orderBy : undefined;
  const sort = q.sort === 'asc' || q.sort === 'desc' ? q.sort : undefined;
  if (!by || !sort) return { order_by: 'created_at', sort: 'desc' };
  return { order_by: by, sort };
}

/** A query ending with `#<digits>` looks that iid up. */
function iidLookup(search: string): number | null {
  const m = /#(\d+)$/.exec(search.trim());
  if (!m) return null;
  const n = Number(m[1]);
  return fitsIntColumn(n) ? n : -1;
}

function listContext(level: SearchLevel): IssueListContext {
  if (level.kind === 'project') return { kind: 'project', projectId: level.project.id, level: level.level };
  if (level.kind === 'group') return { kind: 'group', group: level.group };
  return { kind: 'global' };
}

/** The ids of the group and its subgroups (the traversal range of the group). */
function subtree(deps: ServiceDeps, g: Pick<NamespaceRow, 'traversal'>) {
  return deps.db.selectFrom('namespaces').select('namespaces.id')
    .where('namespaces.traversal', '>=', g.traversal).where('namespaces.traversal', '<', `${g.traversal.slice(0, -1)}0`);
}

export async function issuesSearch(deps: ServiceDeps, actor: Actor, level: SearchLevel, q: SearchQuery) {
  const iid = iidLookup(q.search);
  return issuesListQuery(deps, actor, listContext(level), {
    ...(iid !== null ? { iids: [iid] } : { search: q.search }),
    state: q.state === 'merged' ? undefined : q.state,
    confidential: q.confidential,
    non_archived: level.kind === 'project' ? undefined : !q.includeArchived,
    ...issueOrder(q),
  });
}

export async function mergeRequestsSearch(deps: ServiceDeps, actor: Actor, level: SearchLevel, q: SearchQuery) {
  const iid = iidLookup(q.search);
  return mergeRequestsListQuery(deps, actor, listContext(level), {
    ...(iid !== null ? { iids: [iid] } : { search: q.search }),
    state: q.state,
    non_archived: level.kind === 'project' ? undefined : !q.includeArchived,
    ...issueOrder(q),
  } as any);
}

/**
 * One page of projects (rows and whether another follows; null when nothing can match), matched through the
 * project names index (migration 0032) and filtered by visibility in the query. Which projects a page holds is kept
 * as the project listing keeps its pages (`cachedPage`: per caller and query, voided by any write); the rows are
 * read by their versions.
 */
export async function projectsSearch(deps: ServiceDeps, actor: Actor, level: SearchLevel, q: SearchQuery, p: PageParams): Promise<{ rows: ProjectRow[]; hasNext: boolean } | null> {
  const scope = level.kind === 'group'
    ? { group: { namespaceIds: (await subtree(deps, level.group).execute()).map((r) => r.id) } }
    : {};
  const sort = q.sort === 'asc' && q.orderBy === 'created_at' ? 'asc' : 'desc';
  const built = await buildListQuery(deps, actor, {
    search: q.search, search_namespaces: true, archived: q.includeArchived ? undefined : false, order_by: 'created_at', sort,
  }, scope);
  if (built.empty) return null;
  const key = JSON.stringify(['search', actor.user?.id ?? 0, actor.admin, level.kind === 'group' ? level.group.id : 0, q.search, q.includeArchived, sort, p.page, p.perPage]);
  const page = await cachedPage(deps, key, async () => ({
    keys: await built.query.clearSelect().select(['projects.id', 'projects.row_version']).limit(p.perPage + 1).offset((p.page - 1) * p.perPage).execute(),
    total: null,
  }));
  const rows = await projectRows(deps, page.keys);
  const hasNext = rows.length > p.perPage;
  if (hasNext) rows.pop();
  return { rows: rows as ProjectRow[], hasNext };
}

/**
 * Milestones of the projects where the caller reads issues or merge requests (`read_milestone`), and at group
 * level those of the group's hierarchy too; newest update first, `order_by`/`sort` ignored.
 */
export async function milestonesSearch(deps: ServiceDeps, actor: Actor, level: SearchLevel, q: SearchQuery) {
  const now = deps.clock.now();
  const db = deps.db;
  let query = db.selectFrom('milestones').leftJoin('projects', 'projects.id', 'milestones.project_id').selectAll('milestones');
  if (level.kind === 'project') {
    query = query.where('milestones.project_id', '=', level.project.id);
  } else {
    const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
    const inProjects = (eb: any) => {
      const parts = [eb('milestones.project_id', 'is not', null), eb('projects.pending_delete', '=', 0),
        eb.or([readableFeatureExpr(eb, db, actor, a, now, 'issues'), readableFeatureExpr(eb, db, actor, a, now, 'merge_requests')])];
      if (!q.includeArchived) parts.push(eb('projects.archived', '=', 0));
      if (level.kind === 'group') parts.push(eb('projects.namespace_id', 'in', subtree(deps, level.group)));
      return eb.and(parts);
    };
    if (level.kind === 'group') {
      const groups = subtree(deps, level.group).where(readableGroups(actor, now));
      query = query.where((eb) => eb.or([inProjects(eb), eb('milestones.group_id', 'in', groups)]));
    } else query = query.where(inProjects);
  }
  for (const word of searchWords(q.search).slice(0, 10)) query = query.where(indexedContains(db, { table: 'milestones', columns: ['title', 'description'] }, word));
  return query.orderBy('milestones.updated_at', 'desc').orderBy('milestones.id', 'desc');
}

/** Snippets the caller may read whose title, description or file name holds every word; newest update first. */
export async function snippetsSearch(deps: ServiceDeps, actor: Actor, q: SearchQuery) {
  const now = deps.clock.now();
  const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
  let query = deps.db.selectFrom('snippets').leftJoin('projects', 'projects.id', 'snippets.project_id').selectAll('snippets')
    .where((eb) => readableSnippetsExpr(eb, actor, a, now, dialectOf(deps.db))!);
  for (const word of searchWords(q.search).slice(0, 10)) {
    query = query.where(indexedContains(deps.db, { table: 'snippets', columns: ['title', 'description', 'file_name'] }, word));
  }
  return query.orderBy('snippets.updated_at', 'desc').orderBy('snippets.id', 'desc');
}

/**
 * Users: the query without a leading `@` matches name or username (substring, any case) or the exact public
 * email; ordered exact public email, exact username, exact name, then the rest, by name and id. Global: every
 * active user (administrators: all); group: the members of the group's hierarchy in groups the caller reads;
 * project: its members, direct and inherited.
 */
export async function usersSearch(deps: ServiceDeps, actor: Actor, level: SearchLevel, q: SearchQuery) {
  const now = deps.clock.now();
  const db = deps.db;
  const term = q.search.trim().replace(/^@/, '').toLowerCase();
  let query = db.selectFrom('users').selectAll('users')
    .where((eb) => eb.or([indexedContains(db, { table: 'users', columns: ['name', 'username'] }, term), eb(sql`lower(users.public_email)`, '=', term)]));
  if (!actor.admin) query = query.where('users.state', '=', 'active');
  const active = (eb: any) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', now)]);
  if (level.kind === 'group') {
    const groups = (eb: any) => eb.or([
      eb('members.source_id', 'in', ancestorIds(level.group)),
      eb('members.source_id', 'in', subtree(deps, level.group).where(readableGroups(actor, now))),
    ]);
    query = query.where('users.id', 'in', db.selectFrom('members').select('members.user_id')
      .where('members.source_type', '=', 'Namespace').where(groups).where(active));
  } else if (level.kind === 'project') {
    const p = level.project;
    const ns = await db.selectFrom('namespaces').select(['kind', 'traversal']).where('id', '=', p.namespace_id).executeTakeFirst();
    const groups = ns && ns.kind === 'group' ? ancestorIds(ns) : [];
    query = query.where('users.id', 'in', db.selectFrom('members').select('members.user_id').where(active).where((eb) => eb.or([
      eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', p.id)]),
      ...(groups.length ? [eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', groups)])] : []),
    ])));
  }
  return query
    .orderBy(sql`case when lower(users.public_email) = ${term} then 0 when lower(users.username) = ${term} then 1 when lower(users.name) = ${term} then 2 else 3 end`)
    .orderBy('users.name', 'asc').orderBy('users.id', 'asc');
}

/**
 * Notes of the project holding every word: comments only (no system notes), on what the caller reads there —
 * issues (a confidential one only for whom policy.ts lets read it), merge requests, snippets (a private one only
 * for whom policy.ts lets read it), commits —
 * internal ones for Reporters and up; newest update first.
 */
export async function notesSearch(deps: ServiceDeps, actor: Actor, level: Extract<SearchLevel, { kind: 'project' }>, q: SearchQuery) {
  const now = deps.clock.now();
  const db = deps.db;
  const { project, level: role } = level;
  const can = (ability: Parameters<typeof canProject>[1]) => canProject(actor, ability, project, role);
  const types: string[] = [];
  if (can('read_merge_request')) types.push('MergeRequest');
  if (can('download_code')) types.push('Commit');
  let query = db.selectFrom('notes').selectAll('notes').where('notes.project_id', '=', project.id).where('notes.system', '=', 0);
  if (!actor.admin && role < AccessLevel.REPORTER) query = query.where('notes.internal', '=', 0);
  const a = actor.user && !actor.admin ? await userAuthorization(deps, actor.user.id, now) : null;
  query = query.where((eb) => eb.or([
    ...(types.length ? [eb('notes.noteable_type', 'in', types)] : []),
    ...(can('read_issue') ? [eb.and([eb('notes.noteable_type', '=', 'Issue'), eb('notes.noteable_id', 'in',
      eb.selectFrom('issues').innerJoin('projects', 'projects.id', 'issues.project_id').select('issues.id')
        .where('issues.project_id', '=', project.id).where((e: any) => readableIssuesExpr(e, actor, a, now, role) ?? sql<SqlBool>`1 = 1`))])] : []),
    // A snippet's notes with the snippet: a private one's only for its project's members and its author.
    ...(can('read_snippet') ? [eb.and([eb('notes.noteable_type', '=', 'Snippet'), eb('notes.noteable_id', 'in',
      eb.selectFrom('snippets').innerJoin('projects', 'projects.id', 'snippets.project_id').select('snippets.id')
        .where('snippets.project_id', '=', project.id).where((e: any) => readableSnippetsExpr(e, actor, a, now, dialectOf(db))!))])] : []),
    sql<SqlBool>`1 = 0`,
  ]));
  for (const word of searchWords(q.search).slice(0, 10)) query = query.where(indexedContains(db, { table: 'notes', columns: ['body'] }, word));
  return query.orderBy('notes.updated_at', 'desc').orderBy('notes.id', 'desc');
}

// ---- git -------------------------------------------------------------------------------------------------------

export interface FoundBlob {
  basename: string;
  data: string;
  path: string;
  filename: string;
  id: string | null;
  ref: string;
  startline: number;
}

interface BlobFilter { kind: 'filename' | 'path' | 'extension'; negated: boolean; matcher: RegExp }

/**
 * The filters of a blob query: `filename:X` (the path ends with X), `path:X` (contains X), `extension:X` (ends
 * with `.X`); `*` is a wildcard, a leading `-` negates, values may be quoted and compare without case. What is
 * left is the term; only filters make the term `*`.
 */
export function parseBlobQuery(search: string): { term: string; filters: BlobFilter[] } {
  const filters: BlobFilter[] = [];
  const re = /(^|\s)(-?)(filename|path|extension):(?:"([^"]*)"|(\S+))/gi;
  const term = search.replace(re, (_m, lead: string, neg: string, kind: string, quoted: string | undefined, bare: string | undefined) => {
    const value = (quoted ?? bare ?? '').toLowerCase();
    const body = value.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?');
    const k = kind.toLowerCase() as BlobFilter['kind'];
    const pattern = k === 'filename' ? `${body}$` : k === 'extension' ? `\\.${body}$` : body;
    filters.push({ kind: k, negated: neg === '-', matcher: new RegExp(pattern, 'i') });
    return lead;
  }).trim();
  return { term: term || (filters.length ? '*' : ''), filters };
}

const keep = (filters: BlobFilter[]) => (path: string) => filters.every((f) => f.matcher.test(path) !== f.negated);

/** The name without its last extension, as the reference's `basename` (directories kept). */
const baseOf = (path: string) => path.replace(/\.[^./]*$/, '');

/** How many results git is asked for: the reference fetches `100 + offset`. */
export const blobLimit = (page: number, perPage: number) => 100 + (page - 1) * perPage;

/** The ref a git search reads (its name, as the results show it) and the commit it named when the request came. */
export interface SearchedCommit { ref: string; commit: string }

/**
 * The ref searched: the one asked for, else the default branch; null when it names no commit (nothing to find).
 * Branches and tags come from the repository's ref cache; anything else (a sha) is asked of git.
 */
export async function searchedCommit(repo: Repository, asked: string | undefined, defaultBranch: () => Promise<string | null>): Promise<SearchedCommit | null> {
  if (!repo.exists()) return null;
  const ref = asked || (await defaultBranch());
  if (!ref) return null;
  const commit = (await repo.branches()).byName.get(ref)?.commit.id ?? (await repo.tags()).byName.get(ref)?.commit.id ?? (await repo.resolveCommit(ref));
  return commit ? { ref, commit } : null;
}

/** Whether an answer is small enough to keep: file-name matches carry whole files. */
const keptSize = 2 * 1024 * 1024;
const sizeOf = (found: ReadonlyArray<FoundBlob | { message?: string }>) =>
  found.reduce((n, f) => n + ('data' in f ? f.data.length : 1024), 0);

/**
 * A git search's answer for one commit, query and bound: read once, then served from the read cache for as long
 * as it is kept (the commit id in the key makes the answer final; a push moves the ref to another commit, so
 * another key).
 */
async function cachedGitSearch<V extends FoundBlob | CommitInfo>(
  deps: ServiceDeps, repo: Repository, at: SearchedCommit, what: string, limit: number, load: () => Promise<V[]>,
): Promise<V[]> {
  const key = `${repo.path}\0${at.commit}\0${at.ref}\0${what}\0${limit}`;
  return deps.caches.define<string, V[]>('git-search', { max: 1_000, immutable: true, keep: (v) => sizeOf(v) <= keptSize }).get(key, load);
}

/**
 * The blob search index of the searched commit's tree (blob-index.ts), read once per process; null when none is
 * built, and then its build is queued (`projectId`; wiki repositories have none).
 */
async function blobIndexOf(deps: ServiceDeps, repo: Repository, commit: string, projectId: number): Promise<BlobIndex | null> {
  const tree = await deps.caches.define<string, string | null>('commit-tree', { max: 10_000, immutable: true, keep: (v) => v !== null })
    .get(`${repo.path}\0${commit}`, () => repo.treeOf(commit));
  if (!tree) return null;
  const index = await deps.caches.define<string, BlobIndex | null>('blob-index', { max: 16, immutable: true, keep: (v) => v !== null })
    .get(indexFile(repo, tree), () => readBlobIndex(repo, tree));
  // The build is asked for again by the next search if this one cannot queue it (a busy database, a read-only
  // standby): the index only narrows what git grep reads, so its absence never fails a search.
  if (!index) await queueBlobIndex(deps, deps.db, projectId, tree).catch(() => undefined);
  return index;
}

/**
 * Blobs at the searched commit: the files whose path holds the term first (with their content), then the blocks
 * of lines holding it with two lines of context either side, all narrowed by the query's filters; at most
 * `limit`, git stopped once that many are read. With the index of the commit's tree (`indexed`: the project's
 * repository), the paths come from it and `git grep` reads only the files holding every trigram of the term (when
 * they are few); the answer is the same.
 */
export function blobsSearch(deps: ServiceDeps, repo: Repository, at: SearchedCommit, search: string, limit: number, indexed?: { projectId: number }): Promise<FoundBlob[]> {
  return cachedGitSearch(deps, repo, at, `blobs\0${search}`, limit, async () => {
    const { term, filters } = parseBlobQuery(search);
    if (!term) return [];
    const accept = keep(filters);
    const { ref, commit } = at;
    const index = indexed ? await blobIndexOf(deps, repo, commit, indexed.projectId) : null;
    let paths: string[] | undefined;
    if (index && term !== '*') {
      const candidates = (await candidatePaths(index, term))?.filter(accept);
      if (candidates && candidates.length <= MAX_CANDIDATES) paths = candidates;
    }
    const needle = term.toLowerCase();
    const out: FoundBlob[] = [];
    // Names and content are read side by side (the content search is bounded by the page either way).
    const [names, blocks] = await Promise.all([
      (index ? Promise.resolve(index.paths.filter((_, i) => term === '*' || index.lowerPaths[i]!.includes(needle)).slice(0, 100_000)) : repo.searchPaths(commit, term, 100_000))
        .then((found) => found.filter(accept).slice(0, limit)),
      term === '*' ? [] : repo.searchContent(commit, term, { context: 2, limit, accept, paths }),
    ]);
    for (const path of names) {
      const blob = await repo.readBlob(commit, path, { maxBytes: 1024 * 1024 }).catch(() => null);
      out.push({ basename: baseOf(path), data: blob ? blob.content.toString('utf8') : '', path, filename: path, id: blob?.id ?? null, ref, startline: 1 });
    }
    for (const b of blocks.slice(0, limit - out.length)) {
      out.push({ basename: baseOf(b.path), data: b.data, path: b.path, filename: b.path, id: null, ref, startline: b.startline });
    }
    return out;
  });
}

/** Commits reachable from the searched commit whose message holds the query, and the commit the query names when it is a SHA. */
export function commitsSearch(deps: ServiceDeps, repo: Repository, at: SearchedCommit, search: string, limit: number): Promise<CommitInfo[]> {
  return cachedGitSearch(deps, repo, at, `commits\0${search}`, limit, async () => {
    const term = search.trim();
    const found = await repo.searchMessages(at.commit, term, { limit });
    if (/^[0-9a-f]{7,40}$/i.test(term) && !found.some((c) => c.id.startsWith(term.toLowerCase()))) {
      const sha = await repo.resolveCommit(term).catch(() => null);
      const commit = sha ? await repo.commit(sha) : null;
      if (commit) found.unshift(commit);
    }
    return found.slice(0, limit);
  });
}
