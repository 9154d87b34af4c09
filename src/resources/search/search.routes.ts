import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { applicationSettings } from '../../platform/application-settings.ts';
import { Bool, IdOrPath, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { pageParams, paginateArray, paginateQuery, setOffsetHeaders } from '../../http/pagination.ts';
import { cachedAnswer } from '../../http/answer-cache.ts';
import { canProject, type ProjectAbility } from '../../platform/access/policy.ts';
import { repoFor, defaultBranchOf } from '../repository/repository.common.ts';
import { presentCommitDetail } from '../repository/repository.presenter.ts';
import { wikiRepo } from '../wikis/wikis.service.ts';
import { loadIssuePresentation, type IssueRow } from '../issues/issues.service.ts';
import { issueBasicEntity } from '../issues/issues.presenter.ts';
import { loadMergeRequestPresentation, type MergeRequestRow } from '../merge-requests/merge-requests.service.ts';
import { mergeRequestBasicEntity } from '../merge-requests/merge-requests.presenter.ts';
import { milestone } from '../milestones/milestones.presenter.ts';
import { ownerPaths } from '../milestones/milestones.service.ts';
import { snippetEntity } from '../snippets/snippets.presenter.ts';
import { snippetFiles } from '../snippets/snippets.service.ts';
import { userBasic } from '../users/users.presenter.ts';
import { usersByIds } from '../users/users.service.ts';
import { note, peopleOf } from '../notes/notes.presenter.ts';
import { loadPresentation, simpleProject } from '../projects/projects.presenter.ts';
import {
  blobLimit, blobsSearch, checkSearchParams, commitsSearch, searchedCommit, searchQuery, isAbusive, issuesSearch, mergeRequestsSearch, milestonesSearch, notesSearch,
  projectsSearch, snippetsSearch, usersSearch, type Scope, type SearchLevel, type SearchQuery,
} from './search.service.ts';
import { foundBlob, foundWikiBlob } from './search.presenter.ts';
import { SearchResults } from './search.schemas.ts';

const tags = ['search'];

const params = {
  search: Opt(Str({ description: 'the query' })),
  scope: Opt(Str({ description: 'what to search' })),
  state: Opt(Str({ description: 'all, opened, closed or merged (issues and merge requests)' })),
  confidential: Opt(Bool({ description: 'confidential issues only, or public ones only' })),
  include_archived: Opt(Bool({ description: 'include archived projects (global and group search)' })),
  order_by: Opt(Str({ description: 'created_at' })),
  sort: Opt(Str({ description: 'asc or desc' })),
  ...PaginationParams,
};

/** Scopes answered with totals; the others page without counting (the reference's `without_count`). */
function counted(level: SearchLevel['kind'], scope: Scope): boolean {
  return scope === 'snippet_titles' || (level === 'project' && (scope === 'notes' || scope === 'users'));
}

/** Project search: what the caller must be able to do in the project for the scope; without it the answer is `[]`. */
const PROJECT_ABILITY: Record<string, ProjectAbility> = {
  issues: 'read_issue', merge_requests: 'read_merge_request', milestones: 'read_milestone', notes: 'read_project',
  wiki_blobs: 'read_wiki', commits: 'download_code', blobs: 'download_code', users: 'read_project',
};

async function search(req: ApiRequest<any>, reply: FastifyReply, level: SearchLevel) {
  const q = searchQuery(req.input);
  reply.header('x-search-type', 'basic');
  if (level.kind === 'global') reply.header('content-transfer-encoding', 'binary');
  const empty = () => {
    setOffsetHeaders(req, reply, pageParams(req.input), counted(level.kind, q.scope) ? 0 : null, false);
    return [];
  };
  if (isAbusive(q)) return empty();
  if (level.kind === 'project' && !canProject(req.actor, PROJECT_ABILITY[q.scope], level.project, level.level)) return empty();
  const withCount = counted(level.kind, q.scope);
  const deps = req.server;
  const actor = req.actor;
  const from = level.kind === 'project' ? { projectId: level.project.id } : level.kind === 'group' ? { groupId: level.group.id } : {};
  switch (q.scope) {
    case 'projects': {
      const p = pageParams(req.input);
      const found = await projectsSearch(deps, actor, level, q, p);
      if (!found) return empty();
      const rows = found.rows;
      setOffsetHeaders(req, reply, p, null, found.hasNext);
      const pres = await loadPresentation(deps, actor, rows as any[], { full: false });
      return (rows as any[]).map((p) => simpleProject(p, pres));
    }
    // As the issue and merge request lists: the same caller's same search within the read-cache window is answered
    // from the cache (http/answer-cache.ts; any write voids it).
    case 'issues': return cachedAnswer(req, reply, 'search-issues', async () => {
      const rows = (await paginateQuery(req, reply, (await issuesSearch(deps, actor, level, q)) as any, { withCount })) as IssueRow[];
      const pres = await loadIssuePresentation(deps, actor, rows, { from });
      return rows.map((r) => issueBasicEntity(r, pres));
    });
    case 'merge_requests': return cachedAnswer(req, reply, 'search-merge-requests', async () => {
      const rows = (await paginateQuery(req, reply, (await mergeRequestsSearch(deps, actor, level, q)) as any, { withCount })) as MergeRequestRow[];
      const pres = await loadMergeRequestPresentation(deps, actor, rows, { from });
      return rows.map((r) => mergeRequestBasicEntity(r, pres));
    });
    case 'milestones': {
      const rows = await paginateQuery(req, reply, await milestonesSearch(deps, actor, level, q), { withCount });
      const paths = await ownerPaths(deps.db, rows);
      const ctx = { base: deps.config.externalUrl, now: deps.clock.now(), projectPath: (id: number) => paths.projects.get(id), groupPath: (id: number) => paths.groups.get(id) };
      return rows.map((m) => milestone(m, ctx));
    }
    case 'snippet_titles': {
      const rows = await paginateQuery(req, reply, await snippetsSearch(deps, actor, q), { withCount });
      const users = await usersByIds(deps, [...new Set(rows.map((r) => r.author_id))]);
      const ids = [...new Set(rows.map((r) => r.project_id).filter((x): x is number => x !== null))];
      const projects = ids.length ? await deps.db.selectFrom('projects').select(['id', 'full_path']).where('id', 'in', ids).execute() : [];
      const paths = new Map(projects.map((p) => [p.id, p.full_path]));
      return Promise.all(rows.map(async (row) => snippetEntity(row, {
        base: deps.config.externalUrl, author: users.get(row.author_id)!, projectPath: row.project_id === null ? null : paths.get(row.project_id) ?? null,
        files: await snippetFiles(deps, row),
      })));
    }
    case 'users': {
      const rows = await paginateQuery(req, reply, await usersSearch(deps, actor, level, q), { withCount });
      return rows.map((u) => userBasic(u, deps.config.externalUrl));
    }
    case 'notes': {
      if (level.kind !== 'project') return empty();
      const rows = await paginateQuery(req, reply, await notesSearch(deps, actor, level, q), { withCount });
      const users = await usersByIds(deps, peopleOf(rows));
      const iids = await noteableIids(req, rows);
      return rows.map((n) => note(n, { base: deps.config.externalUrl, users, noteableIid: iids.get(`${n.noteable_type}:${n.noteable_id}`) ?? null }));
    }
    case 'blobs':
    case 'wiki_blobs':
    case 'commits': {
      if (level.kind !== 'project') return empty();
      const project = level.project;
      const wiki = q.scope === 'wiki_blobs';
      const repo = wiki ? wikiRepo(deps, project) : repoFor(deps.config, project);
      const at = await searchedCommit(repo, q.ref, () => (wiki ? repo.defaultBranch() : defaultBranchOf(project, repo)));
      if (!at) return empty();
      const p = pageParams(req.input);
      const limit = blobLimit(p.page, p.perPage);
      if (q.scope === 'commits') {
        const found = await commitsSearch(deps, repo, at, q.search, limit);
        return paginateArray(req, reply, found).map((c) => presentCommitDetail(deps.config, project, c));
      }
      const found = await blobsSearch(deps, repo, at, q.search, limit, wiki ? undefined : { projectId: project.id });
      return paginateArray(req, reply, found).map((b) => (wiki ? foundWikiBlob(b, project.id) : foundBlob(b, project.id)));
    }
  }
}

/** The iids of the issues and merge requests the notes are on. */
async function noteableIids(req: ApiRequest<any>, rows: Array<{ noteable_type: string; noteable_id: number }>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const db = req.server.db;
  const of = (type: string) => [...new Set(rows.filter((r) => r.noteable_type === type).map((r) => r.noteable_id))];
  const issues = of('Issue');
  const mrs = of('MergeRequest');
  if (issues.length) for (const r of await db.selectFrom('issues').select(['id', 'iid']).where('id', 'in', issues).execute()) out.set(`Issue:${r.id}`, r.iid);
  if (mrs.length) for (const r of await db.selectFrom('merge_requests').select(['id', 'iid']).where('id', 'in', mrs).execute()) out.set(`MergeRequest:${r.id}`, r.iid);
  return out;
}

/**
 * The reference's `search_rate_limit`: per user (`current_user`: the impersonated user under sudo), whatever the level, scope or
 * outcome, except the usernames of `search_rate_limit_allowlist`. Search needs a signed-in caller, so
 * `search_rate_limit_unauthenticated` has nothing to count here.
 */
async function searchRateLimit(req: FastifyRequest, actor: Actor) {
  const st = await applicationSettings(req.server);
  const user = actor.user!;
  const allow = st.search_rate_limit_allowlist;
  if (allow.length && allow.some((u) => u.toLowerCase() === user.username.toLowerCase())) return null;
  return { name: 'search_rate_limit', subject: String(user.id), limit: st.search_rate_limit };
}

const limits = (kind: SearchLevel['kind']) => ({
  rateLimit: searchRateLimit,
  // Parameter errors come before the group or project is looked up (Grape validates before the endpoint runs).
  checks: (input: any) => checkSearchParams(kind, input),
});

export const searchRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/search', summary: 'Search the whole instance', tags, access: 'authenticated', ...limits('global'),
    response: SearchResults,
    input: Input(params),
    handler: async (req, reply) => search(req, reply, { kind: 'global' }),
  },
  ...['/groups/:id/search', '/groups/:id/-/search'].map((url): RouteDef<any> => ({
    method: 'GET', url, summary: 'Search a group and its subgroups', tags, access: 'authenticated', group: { ability: 'read_group' }, ...limits('group'),
    response: SearchResults,
    input: Input({ id: IdOrPath(), ...params }),
    handler: async (req, reply) => search(req, reply, { kind: 'group', group: req.group.group }),
  })),
  ...['/projects/:id/search', '/projects/:id/-/search'].map((url): RouteDef<any> => ({
    method: 'GET', url, summary: 'Search a project', tags, access: 'authenticated', project: { ability: 'read_project' }, ...limits('project'),
    response: SearchResults,
    input: Input({ id: IdOrPath(), ...params, ref: Opt(Str({ description: 'branch or tag (blobs, commits, wiki blobs)' })) }),
    handler: async (req, reply) => search(req, reply, { kind: 'project', project: req.project.project, level: req.project.level }),
  })),
];
