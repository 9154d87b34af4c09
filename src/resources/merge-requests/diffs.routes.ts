import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Input, Int, Opt, PaginationParams } from '../../http/schemas.ts';
import { paginateArray, paginateQuery } from '../../http/pagination.ts';
import { Diff } from '../repository/repository.schemas.ts';
import { presentDiff } from '../repository/repository.presenter.ts';
import { findMergeRequest, latestDiff, repoFor } from './merge-requests.service.ts';
import { MergeRequestKey, mergeRequestPath, presentOne, scopeOf } from './merge-requests.routes.ts';
import { diffFrom, findVersion, limitedFiles, versionCommits, versionFiles, versionsQuery } from './diffs.service.ts';
import { versionEntity, versionFullEntity } from './diffs.presenter.ts';
import { MergeRequestChanges, MergeRequestDiff, MergeRequestDiffFull } from './diffs.schemas.ts';
import { placeDiffNote } from './positions.ts';
import { noteRoutes, type NoteableKind } from '../notes/notes.routes.ts';
import { draftSuggestions, noteSuggestions, writeSuggestions } from '../suggestions/suggestions.service.ts';
import { suggestionEntity } from '../suggestions/suggestions.presenter.ts';

// A merge request's diffs and diff versions, each computed by git from the version's commits.

const tags = ['merge_requests'];
const project = { ability: 'read_merge_request' as const };

async function latest(req: ApiRequest<any>) {
  const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid);
  const repo = repoFor(req.server.config, req.project.project);
  return { mr, repo, version: await latestDiff(req.server.db, mr) };
}

/**
 * Merge requests as noteables: their notes and threads are the generic ones, with threads on diff lines
 * (`position`, checked against the diff at its commits) and resolvable threads.
 */
export const mergeRequestNoteKind: NoteableKind = {
  segment: 'merge_requests', param: 'merge_request_iid', type: 'MergeRequest', ability: 'read_merge_request', resolvable: true,
  async find(req, iid) {
    const mr = await findMergeRequest(req.server, scopeOf(req), iid);
    return { type: 'MergeRequest', id: mr.id, iid: mr.iid, projectId: mr.target_project_id, locked: !!mr.discussion_locked, authorId: mr.author_id };
  },
  async placeOnDiff(req, _s, position, commitId) {
    const placed = await placeDiffNote(req.server, repoFor(req.server.config, req.project.project), position);
    return { ...placed, commitId: commitId ?? null };
  },
  async derive(req, body, position) {
    const drafts = await draftSuggestions(repoFor(req.server.config, req.project.project), body, position);
    const now = req.server.clock.now();
    return (trx, note) => writeSuggestions(trx, note.id, drafts, now);
  },
  async suggestions(req, s, notes) {
    const views = await noteSuggestions(req.server, s.noteable.id, notes);
    return new Map([...views].map(([id, list]) => [id, list.map(suggestionEntity)]));
  },
};

export const diffRoutes: RouteDef<any>[] = [
  ...noteRoutes(mergeRequestNoteKind),
  {
    method: 'GET', url: `${mergeRequestPath}/diffs`, summary: 'The changed files of a merge request\'s latest version, a page at a time', tags, access: 'public', project,
    response: Type.Array(Diff),
    input: Input({ ...MergeRequestKey, unidiff: Opt(Bool({ default: false })), ...PaginationParams }),
    handler: async (req, reply) => {
      const { repo, version } = await latest(req);
      const files = version ? await versionFiles(req.server, repo, version) : [];
      return paginateArray(req, reply, files as typeof files[number][]).map((f) => presentDiff(f, !!req.input.unidiff));
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/changes`, summary: 'A merge request with its changed files (deprecated: use /diffs)', tags, access: 'public', project,
    response: MergeRequestChanges,
    input: Input({ ...MergeRequestKey, access_raw_diffs: Opt(Bool({ default: false })), unidiff: Opt(Bool({ default: false })) }),
    handler: async (req) => {
      const { mr, repo, version } = await latest(req);
      const all = version ? await versionFiles(req.server, repo, version) : [];
      const { files, overflow } = req.input.access_raw_diffs ? { files: all, overflow: false } : limitedFiles(all);
      return { ...(await presentOne(req, mr)), changes: files.map((f) => presentDiff(f, !!req.input.unidiff)), overflow: overflow || version?.state === 'overflow' };
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/raw_diffs`, summary: 'The merge request\'s diff as plain git diff text', tags, access: 'public', project,
    response: Type.String({ description: 'git diff output' }),
    input: Input({ ...MergeRequestKey }),
    handler: async (req, reply) => {
      const { repo, version } = await latest(req);
      const from = version && diffFrom(version);
      const text = from && version.head_commit_sha ? await repo.rawDiff(from, version.head_commit_sha) : Buffer.alloc(0);
      reply.type('text/plain; charset=utf-8');
      return reply.send(text);
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/versions`, summary: 'The diff versions of a merge request, newest first', tags, access: 'authenticated', project,
    response: Type.Array(MergeRequestDiff),
    input: Input({ ...MergeRequestKey, ...PaginationParams }),
    handler: async (req, reply) => {
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid);
      return (await paginateQuery(req, reply, versionsQuery(req.server.db, mr))).map(versionEntity);
    },
  },
  {
    method: 'GET', url: `${mergeRequestPath}/versions/:version_id`, summary: 'One diff version of a merge request with its commits and diffs', tags, access: 'authenticated', project,
    response: MergeRequestDiffFull,
    input: Input({ ...MergeRequestKey, version_id: Int(), unidiff: Opt(Bool({ default: false })) }),
    handler: async (req) => {
      const mr = await findMergeRequest(req.server, scopeOf(req), req.input.merge_request_iid);
      const version = await findVersion(req.server.db, mr, req.input.version_id);
      const repo = repoFor(req.server.config, req.project.project);
      const [commits, files] = await Promise.all([versionCommits(repo, version), versionFiles(req.server, repo, version)]);
      return versionFullEntity(req.server.config, req.project.project, version, commits, files, !!req.input.unidiff);
    },
  },
];
