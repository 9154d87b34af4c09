import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, CommaList, Enum, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateArray, paginateQuery } from '../../http/pagination.ts';
import { contentDisposition } from '../../http/content-disposition.ts';
import { requireUser } from '../../http/auth.ts';
import { NotFoundError, ParamError } from '../../platform/errors.ts';
import { callerOf, repoFor, setFileHeaders } from './repository.common.ts';
import { filePath, fileWithLastCommit, resolveRef } from './repository.service.ts';
import {
  ARCHIVE_EXTENSION, archiveFormat, archiveOf, blame, changeCommit, commitDiff, commitDiffLine, commitNoteable, commitSignature,
  contributors, findCommit, mergeBase, type ChangeMode,
} from './commits.service.ts';
import { createNote, notesQuery, type NoteScope } from '../notes/notes.service.ts';
import { commitNote, peopleOf, type NoteRow } from '../notes/notes.presenter.ts';
import { CommitNote } from '../notes/notes.schemas.ts';
import { usersByIds } from '../users/users.service.ts';
import { presentBlameRange, presentBlob, presentCommit, presentDiff, presentFile, presentSignature } from './repository.presenter.ts';
import { BasicRef, BlameRange, Blob, Commit, CommitSignature, Contributor, Diff, DryRun } from './repository.schemas.ts';

// Single commits (diff, refs, cherry-pick, revert, signature), merge bases, blame, contributors, blobs and archives.

const readRoute = { access: 'public' as const, scopes: ['read_repository'], project: { ability: 'download_code' as const } };
const repoOf = (req: ApiRequest<any>) => repoFor(req.server.config, req.project.project);

/** Blobs and archives above this size are not sent base64 in JSON. */
const BLOB_JSON_MAX = 64 * 1024 * 1024;
/** Raw blobs up to this size are read whole, to tell text from binary. */
const RAW_SNIFF_MAX = 8 * 1024 * 1024;

function changeRoute(mode: ChangeMode, url: string, summary: string, extra: Record<string, any>): RouteDef<any> {
  return {
    method: 'POST',
    url,
    summary,
    tags: ['commits'],
    response: Type.Union([Commit, DryRun]),
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath(), sha: Str(), branch: Str({ minLength: 1 }), dry_run: Opt(Bool({ default: false })), ...extra }),
    async handler(req, reply) {
      const ctx = req.project;
      const repo = repoOf(req);
      const i = req.input;
      const sha = await changeCommit(req.server, ctx.project, repo, callerOf(ctx, req.actor), requireUser(req.actor), mode, {
        sha: i.sha, branch: i.branch, dryRun: !!i.dry_run, message: i.message,
      });
      // A dry run answers 200, as the reference does; a change made answers 201.
      if (sha === null) return reply.code(200).send({ dry_run: 'success' });
      return presentCommit(req.server.config, ctx.project, (await repo.commit(sha))!);
    },
  };
}

async function sendArchive(req: ApiRequest<any>, reply: FastifyReply) {
  const repo = repoOf(req);
  const format = archiveFormat(req.input.format);
  const path = req.input.path !== undefined && req.input.path !== '' ? filePath(req.input.path, 'path') : undefined;
  const { commit, prefix } = await archiveOf(repo, req.project.project, req.input.sha, path);
  reply.header('content-disposition', contentDisposition(`${prefix}.${ARCHIVE_EXTENSION[format]}`, 'attachment', { plainWhenAscii: true }));
  reply.header('content-transfer-encoding', 'binary');
  reply.header('cache-control', 'private');
  reply.type(format === 'zip' ? 'application/zip' : 'application/octet-stream');
  return reply.send(repo.archive(commit, format, prefix, path));
}

const archiveInput = Input({ id: IdOrPath(), sha: Opt(Str()), format: Opt(Str()), path: Opt(Str()), include_lfs_blobs: Opt(Bool()), exclude_paths: Opt(CommaList(Str())) });

/** The commit a comment route names (404 Commit Not Found) as the noteable of the caller's notes. */
async function commentScope(req: ApiRequest<any>): Promise<{ scope: NoteScope; commit: Awaited<ReturnType<typeof findCommit>> }> {
  const commit = await findCommit(repoOf(req), req.project.project, req.input.sha);
  const scope = { noteable: commitNoteable(req.project.project, commit), project: req.project.project, level: req.project.level, actor: req.actor };
  return { scope, commit };
}

async function presentCommitNotes(req: ApiRequest<any>, rows: NoteRow[]) {
  const pres = { base: req.server.config.externalUrl, users: await usersByIds(req.server, peopleOf(rows)), noteableIid: null };
  return rows.map((r) => commitNote(r, pres));
}

export const commitRoutes: RouteDef<any>[] = [
  {
    method: 'GET',
    url: '/projects/:id/repository/commits/:sha/comments',
    summary: 'List the comments on a commit',
    tags: ['commits'],
    response: Type.Array(CommitNote),
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str(), ...PaginationParams }),
    async handler(req, reply) {
      const { scope } = await commentScope(req);
      const rows = await paginateQuery(req, reply, notesQuery(req.server.db, scope, { orderBy: 'created_at', sort: 'asc', filter: 'all_notes' }));
      return presentCommitNotes(req, rows);
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/repository/commits/:sha/comments',
    summary: 'Comment on a commit, or on a line of its diff',
    tags: ['commits'],
    response: CommitNote,
    access: 'authenticated', project: { ability: 'download_code' },
    input: Input({ id: IdOrPath(), sha: Str(), note: Str(), path: Opt(Str()), line: Opt(Int()), line_type: Opt(Enum(['new', 'old'] as const, { default: 'new' })) }),
    async handler(req) {
      const { path, line, line_type: lineType } = req.input;
      if (path !== undefined && line === undefined) throw ParamError.of('line', 'missing');
      const { scope, commit } = await commentScope(req);
      const diffLine = path === undefined ? null : await commitDiffLine(repoOf(req), commit, { path, line: line!, line_type: lineType ?? 'new' });
      const row = await createNote(req.server, scope, { body: req.input.note, diffLine: diffLine ?? undefined });
      return (await presentCommitNotes(req, [row]))[0];
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/commits/:sha/diff',
    summary: 'Get the diff of a commit against its first parent',
    tags: ['commits'],
    response: Type.Array(Diff),
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str(), unidiff: Opt(Bool({ default: false })), ...PaginationParams }),
    async handler(req, reply) {
      const repo = repoOf(req);
      const commit = await findCommit(repo, req.project.project, req.input.sha);
      return paginateArray(req, reply, await commitDiff(repo, commit)).map((d) => presentDiff(d, !!req.input.unidiff));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/commits/:sha/refs',
    summary: 'List the branches and tags that contain a commit',
    tags: ['commits'],
    response: Type.Array(BasicRef),
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str(), type: Opt(Enum(['branch', 'tag', 'all'] as const, { default: 'all' })), ...PaginationParams }),
    async handler(req, reply) {
      const repo = repoOf(req);
      const commit = await findCommit(repo, req.project.project, req.input.sha);
      return paginateArray(req, reply, await repo.refsContaining(commit.id, req.input.type ?? 'all'));
    },
  },
  changeRoute('cherry-pick', '/projects/:id/repository/commits/:sha/cherry_pick', 'Cherry-pick a commit onto a branch', { message: Opt(Str()) }),
  changeRoute('revert', '/projects/:id/repository/commits/:sha/revert', 'Revert a commit on a branch', {}),
  {
    method: 'GET',
    url: '/projects/:id/repository/commits/:sha/signature',
    summary: 'Get the signature of a commit',
    tags: ['commits'],
    response: CommitSignature,
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str() }),
    async handler(req) {
      const repo = repoOf(req);
      const commit = await findCommit(repo, req.project.project, req.input.sha);
      return presentSignature(await commitSignature(req.server, repo, commit));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/merge_base',
    summary: 'Get the common ancestor of two or more refs',
    tags: ['repository'],
    response: Commit,
    ...readRoute,
    input: Input({ id: IdOrPath(), refs: CommaList(Str()) }),
    async handler(req) {
      const commit = await mergeBase(repoOf(req), req.project.project, req.input.refs);
      return presentCommit(req.server.config, req.project.project, commit);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/contributors',
    summary: 'List the authors of the default branch (or a ref) with their commit counts',
    tags: ['repository'],
    response: Type.Array(Contributor),
    ...readRoute,
    input: Input({
      id: IdOrPath(), ref: Opt(Str()), order_by: Opt(Enum(['email', 'name', 'commits'] as const, { default: 'commits' })),
      sort: Opt(Enum(['asc', 'desc'] as const, { default: 'asc' })), ...PaginationParams,
    }),
    async handler(req, reply) {
      const list = await contributors(repoOf(req), req.project.project, req.input.ref, req.input.order_by ?? 'commits', req.input.sort ?? 'asc');
      return paginateArray(req, reply, list);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/files/:file_path/blame',
    summary: 'Get the blame of a file: runs of lines with the commit that last changed them',
    tags: ['repository'],
    response: Type.Array(BlameRange),
    ...readRoute,
    input: Input({
      id: IdOrPath(), file_path: Str(), ref: Str({ minLength: 1 }),
      range: Opt(Type.Object({ start: Int(), end: Int() })),
    }),
    async handler(req, reply) {
      const path = filePath(req.input.file_path);
      const range = req.input.range;
      if (range) {
        if (!(range.start > 0)) throw ParamError.of('range[start]', 'value');
        if (!(range.end > 0)) throw ParamError.of('range[end]', 'value');
      }
      const repo = repoOf(req);
      const commit = await resolveRef(repo, req.project.project, req.input.ref);
      if (!commit) throw new NotFoundError('Commit');
      const { blob, last } = await fileWithLastCommit(repo, commit, path);
      setFileHeaders(reply, presentFile(req.input.ref, commit, path, blob, last));
      return (await blame(repo, commit, path, range)).map(presentBlameRange);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/blobs/:sha',
    summary: 'Get a blob by its id, base64',
    tags: ['repository'],
    response: Blob,
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str() }),
    async handler(req) {
      const repo = repoOf(req);
      const info = await repo.blobInfo(req.input.sha);
      if (!info) throw new NotFoundError('Blob');
      return presentBlob({ ...info, content: await repo.blobContent(info.id, BLOB_JSON_MAX) });
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/blobs/:sha/raw',
    summary: 'Get the raw content of a blob by its id',
    tags: ['repository'],
    response: Type.String({ description: 'The blob as stored' }),
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str() }),
    async handler(req, reply) {
      const repo = repoOf(req);
      const info = await repo.blobInfo(req.input.sha);
      if (!info) throw new NotFoundError('Blob');
      reply.header('content-disposition', contentDisposition(null));
      reply.header('x-content-type-options', 'nosniff');
      // Large blobs stream as bytes; smaller ones are looked at first, to be sent as text when they are.
      if (info.size > RAW_SNIFF_MAX) return reply.type('application/octet-stream').send(repo.blobStream(info.id));
      const content = await repo.blobContent(info.id, Math.max(info.size, 1));
      reply.type(content.subarray(0, 8000).includes(0) ? 'application/octet-stream' : 'text/plain; charset=utf-8');
      return reply.send(content);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/archive',
    summary: 'Download an archive of the repository (tar.gz unless `format` says otherwise)',
    tags: ['repository'],
    response: Type.String({ description: 'The archive' }),
    ...readRoute,
    input: archiveInput,
    handler: sendArchive,
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/archive.:format',
    summary: 'Download an archive of the repository in the format the suffix names',
    tags: ['repository'],
    response: Type.String({ description: 'The archive' }),
    ...readRoute,
    input: archiveInput,
    handler: sendArchive,
  },
];
