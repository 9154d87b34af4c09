import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, DateTime, Enum, IdOrPath, Input, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { type ProjectContext } from '../../http/access.ts';
import { paginateArray, pageParams, setOffsetHeaders } from '../../http/pagination.ts';
import { parseDateTime } from '../../http/params.ts';
import { contentDisposition } from '../../http/content-disposition.ts';
import { MissingParamError, NotFoundError } from '../../platform/errors.ts';
import type { CommitAction } from '../../platform/git/commit-writer.ts';
import { requireUser } from '../../http/auth.ts';
import { matching, loadTagRules } from './protection.ts';
import { callerOf, defaultBranchOf, repoFor, setFileHeaders } from './repository.common.ts';
import {
  commitFiles, commitStats, compare, createTag, deleteTag, filePath, fileWithLastCommit, resolveRef,
} from './repository.service.ts';
import { presentCommit, presentCommitDetail, presentComparison, presentFile, presentTag, presentTreeEntry } from './repository.presenter.ts';
import { Commit, CommitDetail, Compare, FileWritten, RepositoryFile, Tag, TreeEntry } from './repository.schemas.ts';

const readRoute = { access: 'public' as const, scopes: ['read_repository'], project: { ability: 'download_code' as const } };

// The routes declare download_code (reads) or push_code (writes); the project comes checked.
function readable(req: ApiRequest<any>): { ctx: ProjectContext; repo: ReturnType<typeof repoFor> } {
  return { ctx: req.project, repo: repoFor(req.server.config, req.project.project) };
}
const writable = readable;

function content(text: string, encoding: string | undefined): Buffer {
  return encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
}

const FileWrite = {
  id: IdOrPath(),
  file_path: Str({ description: 'URL-encoded path of the file' }),
  branch: Str(),
  start_branch: Opt(Str()),
  encoding: Opt(Enum(['text', 'base64'] as const)),
  author_email: Opt(Str()),
  author_name: Opt(Str()),
  content: Str(),
  commit_message: Str(),
  last_commit_id: Opt(Str()),
  execute_filemode: Opt(Bool()),
};

const ActionSchema = Type.Object({
  action: Enum(['create', 'delete', 'move', 'update', 'chmod'] as const),
  file_path: Str(),
  previous_path: Opt(Str()),
  content: Opt(Str()),
  encoding: Opt(Enum(['text', 'base64'] as const)),
  last_commit_id: Opt(Str()),
  execute_filemode: Opt(Bool()),
}, { additionalProperties: true });

function toActions(list: Array<Record<string, any>>): CommitAction[] {
  return list.map((a, i) => {
    const path = filePath(a.file_path, `actions[${i}][file_path]`);
    const body = () => {
      if (a.content === undefined) {
        if (a.action === 'create' || a.action === 'update') return Buffer.alloc(0);
        return undefined;
      }
      return content(a.content, a.encoding);
    };
    switch (a.action) {
      case 'create': return { action: 'create', file_path: path, content: body()!, executable: a.execute_filemode };
      case 'update': return { action: 'update', file_path: path, content: body()!, executable: a.execute_filemode, last_commit_id: a.last_commit_id };
      case 'delete': return { action: 'delete', file_path: path, last_commit_id: a.last_commit_id };
      case 'move': {
        if (!a.previous_path) throw new MissingParamError(`actions[${i}][previous_path]`);
        return { action: 'move', file_path: path, previous_path: filePath(a.previous_path, `actions[${i}][previous_path]`), content: body(), last_commit_id: a.last_commit_id };
      }
      default: return { action: 'chmod', file_path: path, executable: !!a.execute_filemode };
    }
  });
}

async function writeFile(req: ApiRequest<any>, action: 'create' | 'update') {
  const { ctx, repo } = await writable(req);
  const user = requireUser(req.actor);
  const path = filePath(req.input.file_path);
  const i = req.input;
  const fileAction: CommitAction = action === 'create'
    ? { action, file_path: path, content: content(i.content, i.encoding), executable: i.execute_filemode }
    : { action, file_path: path, content: content(i.content, i.encoding), executable: i.execute_filemode, last_commit_id: i.last_commit_id };
  await commitFiles(req.server, ctx.project, repo, callerOf(ctx, req.actor), user, {
    branch: i.branch, start_branch: i.start_branch, commit_message: i.commit_message,
    author_email: i.author_email, author_name: i.author_name, actions: [fileAction],
  });
  return { file_path: path, branch: i.branch };
}

export const repositoryRoutes: RouteDef<any>[] = [
  {
    method: 'GET',
    url: '/projects/:id/repository/tree',
    summary: 'List files and directories of a repository tree',
    tags: ['repository'],
    response: Type.Array(TreeEntry),
    ...readRoute,
    input: Input({ id: IdOrPath(), path: Opt(Str()), ref: Opt(Str()), recursive: Opt(Bool({ default: false })), ...PaginationParams }),
    async handler(req, reply) {
      const { ctx, repo } = await readable(req);
      const commit = await resolveRef(repo, ctx.project, req.input.ref);
      if (!commit) throw new NotFoundError('Tree');
      const path = req.input.path ? filePath(req.input.path, 'path') : null;
      const entries = await repo.tree(commit, path, !!req.input.recursive);
      if (!entries) throw new NotFoundError('Tree');
      return paginateArray(req, reply, entries).map(presentTreeEntry);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/files/:file_path',
    summary: 'Get a file with its metadata and base64 content',
    tags: ['repository'],
    response: RepositoryFile,
    ...readRoute,
    input: Input({ id: IdOrPath(), file_path: Str(), ref: Str() }),
    async handler(req, reply) {
      const { ctx, repo } = await readable(req);
      const path = filePath(req.input.file_path);
      const commit = await resolveRef(repo, ctx.project, req.input.ref);
      if (!commit) throw new NotFoundError('Commit');
      const { blob, last } = await fileWithLastCommit(repo, commit, path);
      const file = presentFile(req.input.ref, commit, path, blob, last);
      setFileHeaders(reply, file);
      return file;
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/files/:file_path/raw',
    summary: 'Get the raw content of a file',
    tags: ['repository'],
    response: Type.String({ description: 'The file as stored' }),
    ...readRoute,
    input: Input({ id: IdOrPath(), file_path: Str(), ref: Opt(Str()) }),
    async handler(req, reply: FastifyReply) {
      const { ctx, repo } = await readable(req);
      const path = filePath(req.input.file_path);
      const commit = await resolveRef(repo, ctx.project, req.input.ref);
      if (!commit) throw new NotFoundError('Commit');
      const { blob, last } = await fileWithLastCommit(repo, commit, path);
      setFileHeaders(reply, presentFile(req.input.ref ?? '', commit, path, blob, last));
      const binary = blob.content.subarray(0, 8000).includes(0);
      reply.type(binary ? 'application/octet-stream' : 'text/plain; charset=utf-8');
      reply.header('content-disposition', contentDisposition(path.split('/').pop()!));
      reply.header('x-content-type-options', 'nosniff');
      return reply.send(blob.content);
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/repository/files/:file_path',
    summary: 'Create a file in a new commit',
    tags: ['repository'],
    response: FileWritten,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input(FileWrite),
    handler: (req) => writeFile(req, 'create'),
  },
  {
    method: 'PUT',
    url: '/projects/:id/repository/files/:file_path',
    summary: 'Update a file in a new commit',
    tags: ['repository'],
    response: FileWritten,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input(FileWrite),
    handler: (req) => writeFile(req, 'update'),
  },
  {
    method: 'DELETE',
    url: '/projects/:id/repository/files/:file_path',
    summary: 'Delete a file in a new commit',
    tags: ['repository'],
    response: null,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({
      id: IdOrPath(), file_path: Str(), branch: Str(), start_branch: Opt(Str()), author_email: Opt(Str()), author_name: Opt(Str()),
      commit_message: Str(), last_commit_id: Opt(Str()),
    }),
    async handler(req) {
      const { ctx, repo } = await writable(req);
      const user = requireUser(req.actor);
      const i = req.input;
      await commitFiles(req.server, ctx.project, repo, callerOf(ctx, req.actor), user, {
        branch: i.branch, start_branch: i.start_branch, commit_message: i.commit_message, author_email: i.author_email, author_name: i.author_name,
        actions: [{ action: 'delete', file_path: filePath(i.file_path), last_commit_id: i.last_commit_id }],
      });
      return undefined;
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/commits',
    summary: 'List commits of a ref, newest first',
    tags: ['commits'],
    response: Type.Array(Commit),
    ...readRoute,
    input: Input({
      id: IdOrPath(), ref_name: Opt(Str()), since: Opt(DateTime()), until: Opt(DateTime()), path: Opt(Str()),
      all: Opt(Bool()), first_parent: Opt(Bool()), with_stats: Opt(Bool()), ...PaginationParams,
    }),
    async handler(req, reply) {
      const { ctx, repo } = await readable(req);
      const i = req.input;
      const p = pageParams(i);
      const name = i.ref_name ?? (await defaultBranchOf(ctx.project, repo));
      const commit = !i.all && name ? await resolveRef(repo, ctx.project, name) : null;
      if (!i.all && !commit) {
        setOffsetHeaders(req, reply, p, 0, false);
        return [];
      }
      const path = i.path ? filePath(i.path, 'path') : undefined;
      const since = i.since ? parseDateTime(i.since)! : undefined;
      const until = i.until ? parseDateTime(i.until)! : undefined;
      const list = await repo.history({ ref: commit ?? 'HEAD', all: !!i.all, path, since, until, skip: (p.page - 1) * p.perPage, limit: p.perPage + 1, firstParent: !!i.first_parent });
      const hasNext = list.length > p.perPage;
      if (hasNext) list.pop();
      // The total needs one more walk; it is capped like every other count.
      const countArgs = ['rev-list', '--count', ...(i.first_parent ? ['--first-parent'] : []),
        ...(since !== undefined ? [`--since=@${Math.floor(since / 1000)}`] : []), ...(until !== undefined ? [`--until=@${Math.floor(until / 1000)}`] : []),
        ...(i.all ? ['--all'] : [commit!]), '--', ...(path ? [path] : [])];
      const total = Number((await repo.git(countArgs)).stdout.toString().trim());
      setOffsetHeaders(req, reply, p, total > 10_000 ? null : total, hasNext);
      if (i.with_stats) return Promise.all(list.map(async (c) => ({ ...presentCommit(req.server.config, ctx.project, c), stats: await commitStats(repo, c) })));
      return list.map((c) => presentCommit(req.server.config, ctx.project, c));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/commits/:sha',
    summary: 'Get a single commit (by SHA, branch or tag name)',
    tags: ['commits'],
    response: CommitDetail,
    ...readRoute,
    input: Input({ id: IdOrPath(), sha: Str(), stats: Opt(Bool({ default: true })) }),
    async handler(req) {
      const { ctx, repo } = await readable(req);
      const sha = await resolveRef(repo, ctx.project, req.input.sha);
      const commit = sha ? await repo.commit(sha) : null;
      if (!commit) throw new NotFoundError('Commit');
      return presentCommitDetail(req.server.config, ctx.project, commit, req.input.stats !== false ? await commitStats(repo, commit) : undefined);
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/repository/commits',
    summary: 'Create a commit with several file actions',
    tags: ['commits'],
    response: CommitDetail,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({
      id: IdOrPath(), branch: Str(), commit_message: Str(), start_branch: Opt(Str()), start_sha: Opt(Str()),
      actions: Type.Array(ActionSchema), author_email: Opt(Str()), author_name: Opt(Str()), stats: Opt(Bool({ default: true })),
    }),
    async handler(req) {
      const { ctx, repo } = await writable(req);
      const user = requireUser(req.actor);
      const i = req.input;
      if (i.actions.length === 0) throw new MissingParamError('actions');
      const sha = await commitFiles(req.server, ctx.project, repo, callerOf(ctx, req.actor), user, {
        branch: i.branch, start_branch: i.start_branch, start_sha: i.start_sha, commit_message: i.commit_message,
        author_email: i.author_email, author_name: i.author_name, actions: toActions(i.actions),
      });
      const commit = (await repo.commit(sha))!;
      return presentCommitDetail(req.server.config, ctx.project, commit, i.stats !== false ? await commitStats(repo, commit) : undefined);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/compare',
    summary: 'Compare two branches, tags or commits',
    tags: ['repository'],
    response: Compare,
    ...readRoute,
    input: Input({ id: IdOrPath(), from: Str(), to: Str(), straight: Opt(Bool({ default: false })), from_project_id: Opt(Type.Integer()), unidiff: Opt(Bool({ default: false })) }),
    async handler(req) {
      const { ctx, repo } = await readable(req);
      const found = await compare(ctx.project, repo, req.input.from, req.input.to, !!req.input.straight);
      return presentComparison(req.server.config, ctx.project, req.input.from, req.input.to, found, !!req.input.unidiff);
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/tags',
    summary: 'List repository tags',
    tags: ['tags'],
    response: Type.Array(Tag),
    ...readRoute,
    input: Input({
      id: IdOrPath(), order_by: Opt(Enum(['name', 'updated', 'version'] as const)), sort: Opt(Enum(['asc', 'desc'] as const)),
      search: Opt(Str()), ...PaginationParams,
    }),
    async handler(req, reply) {
      const { ctx, repo } = await readable(req);
      const [snap, rules] = await Promise.all([repo.tags(), loadTagRules(req.server.db, ctx.project.id)]);
      let list = snap.list;
      const s = req.input.search?.toLowerCase();
      if (s) list = s.startsWith('^') ? list.filter((t) => t.lower.startsWith(s.slice(1))) : s.endsWith('$') ? list.filter((t) => t.lower.endsWith(s.slice(0, -1))) : list.filter((t) => t.lower.includes(s));
      const order = req.input.order_by ?? 'updated';
      const dir = (req.input.sort ?? 'desc') === 'asc' ? 1 : -1;
      const key = (t: (typeof list)[number]) => Date.parse(t.commit.committed_date);
      list = [...list].sort((a, b) => {
        if (order === 'updated') return dir * (key(a) - key(b)) || (a.name < b.name ? -1 : 1);
        if (order === 'version') return dir * a.name.localeCompare(b.name, 'en', { numeric: true });
        return dir * (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      });
      return paginateArray(req, reply, list).map((t) => presentTag(req.server.config, ctx.project, t, matching(rules, t.name).length > 0));
    },
  },
  {
    method: 'GET',
    url: '/projects/:id/repository/tags/:tag_name',
    summary: 'Get a single repository tag',
    tags: ['tags'],
    response: Tag,
    ...readRoute,
    input: Input({ id: IdOrPath(), tag_name: Str() }),
    async handler(req) {
      const { ctx, repo } = await readable(req);
      const tag = (await repo.tags()).byName.get(req.input.tag_name);
      if (!tag) throw new NotFoundError('Tag');
      const rules = await loadTagRules(req.server.db, ctx.project.id);
      return presentTag(req.server.config, ctx.project, tag, matching(rules, tag.name).length > 0);
    },
  },
  {
    method: 'POST',
    url: '/projects/:id/repository/tags',
    summary: 'Create a tag (annotated when a message is given)',
    tags: ['tags'],
    response: Tag,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath(), tag_name: Str(), ref: Str(), message: Opt(Str()) }),
    async handler(req) {
      const { ctx, repo } = await writable(req);
      const user = requireUser(req.actor);
      const tag = await createTag(req.server, ctx.project, repo, callerOf(ctx, req.actor), user, req.input.tag_name, req.input.ref, req.input.message);
      const rules = await loadTagRules(req.server.db, ctx.project.id);
      return presentTag(req.server.config, ctx.project, tag, matching(rules, tag.name).length > 0);
    },
  },
  {
    method: 'DELETE',
    url: '/projects/:id/repository/tags/:tag_name',
    summary: 'Delete a tag',
    tags: ['tags'],
    response: null,
    access: 'authenticated', project: { ability: 'push_code' },
    input: Input({ id: IdOrPath(), tag_name: Str() }),
    async handler(req) {
      const { ctx, repo } = await writable(req);
      await deleteTag(req.server, ctx.project, repo, callerOf(ctx, req.actor), req.input.tag_name);
      return undefined;
    },
  },
];

