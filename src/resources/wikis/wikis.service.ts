import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../platform/access/actor.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { NotFoundError, ParamError, RuleError } from '../../platform/errors.ts';
import { Repository, type CommitAction } from '../../platform/git/index.ts';
import type { UploadedFile } from '../../platform/storage/uploads.ts';
import { emitEvent } from '../../platform/events.ts';
import { wikiRepositoryPath } from '../projects/repository.ts';

// A project's wiki is its own bare repository beside the project's (`<hash>.wiki.git` on the project's shard),
// made on the first write. A page is a file of the default branch whose extension names its format; its slug is
// the path without the extension, its title the last part of the slug with hyphens read as spaces. Pages are read
// from the repository on every request, so a page pushed over HTTP is served at once.

export const WIKI_BRANCH = 'main';

export type WikiFormat = 'markdown' | 'rdoc' | 'asciidoc' | 'org';
export const WIKI_FORMATS = ['markdown', 'rdoc', 'asciidoc', 'org'] as const;

/** The extension a page is written with, per format. */
const EXTENSION: Record<WikiFormat, string> = { markdown: 'md', rdoc: 'rdoc', asciidoc: 'asciidoc', org: 'org' };
/** Extensions read as pages (pushed files may use any of these). */
const FORMAT_OF: Record<string, WikiFormat> = {
  md: 'markdown', markdown: 'markdown', mdown: 'markdown', mkd: 'markdown', mkdn: 'markdown',
  rdoc: 'rdoc', asciidoc: 'asciidoc', adoc: 'asciidoc', org: 'org',
};

const MAX_TITLE = 245;
const MAX_CONTENT = 5 * 1024 * 1024;
const MAX_ATTACHMENT = 10 * 1024 * 1024;

export interface WikiPage {
  format: WikiFormat;
  slug: string;
  title: string;
  /** The file in the repository. */
  path: string;
  content?: Buffer;
}

export function wikiRepo(deps: ServiceDeps, project: Pick<ProjectRow, 'id' | 'repository_storage'>): Repository {
  return new Repository(wikiRepositoryPath(deps.config, project.repository_storage, project.id));
}

function pageOf(path: string): WikiPage | null {
  const dot = path.lastIndexOf('.');
  if (dot <= path.lastIndexOf('/') + 1) return null;
  const format = FORMAT_OF[path.slice(dot + 1).toLowerCase()];
  if (!format) return null;
  const slug = path.slice(0, dot);
  return { format, slug, title: slug.slice(slug.lastIndexOf('/') + 1).replace(/-/g, ' '), path };
}

/** A title as the reference stores it: spaces become hyphens; `/` makes directories; no empty or dot parts. */
export function slugOf(title: string): string {
  const parts = title.trim().replace(/\s+/g, '-').split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.startsWith('-') || p.toLowerCase() === '.git' || /[\0\n\r]/.test(p))) {
    throw new RuleError('bad_request', { title: ['is invalid'] });
  }
  return parts.join('/');
}

async function head(repo: Repository): Promise<string | null> {
  return repo.exists() ? repo.resolveCommit(WIKI_BRANCH) : null;
}

/** Every page of the wiki in slug order, with its content when asked. */
export async function listPages(deps: ServiceDeps, project: ProjectRow, withContent: boolean): Promise<WikiPage[]> {
  const repo = wikiRepo(deps, project);
  const commit = await head(repo);
  if (!commit) return [];
  const entries = await repo.readTree(commit, '', { recursive: true });
  const pages = (entries ?? []).filter((e) => e.type === 'blob' && !e.path.startsWith('uploads/')).map((e) => pageOf(e.path)).filter((p): p is WikiPage => !!p);
  pages.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  if (withContent) await Promise.all(pages.map(async (p) => (p.content = (await repo.readBlob(commit, p.path))?.content ?? Buffer.alloc(0))));
  return pages;
}

async function findPage(repo: Repository, commit: string, slug: string): Promise<WikiPage | null> {
  const dir = slug.includes('/') ? slug.slice(0, slug.lastIndexOf('/')) : '';
  const entries = await repo.readTree(commit, dir).catch(() => null);
  for (const e of entries ?? []) {
    if (e.type !== 'blob') continue;
    const p = pageOf(e.path);
    if (p && p.slug === slug) return p;
  }
  return null;
}

/** One page by slug, at `version` (a commit) when given; 404 Wiki Page otherwise. */
export async function getPage(deps: ServiceDeps, project: ProjectRow, slug: string, version?: string): Promise<WikiPage> {
  const repo = wikiRepo(deps, project);
  let commit = await head(repo);
  if (commit && version !== undefined) {
    commit = /^[0-9a-f]{4,64}$/i.test(version) ? await repo.resolveCommit(version) : null;
  }
  const page = commit && !slug.startsWith('-') ? await findPage(repo, commit, slug) : null;
  if (!page) throw new NotFoundError('Wiki Page');
  page.content = (await repo.readBlob(commit!, page.path))?.content ?? Buffer.alloc(0);
  return page;
}

function checkTitle(title: string | undefined): string {
  const t = (title ?? '').trim();
  if (!t) throw new RuleError('bad_request', { title: ["can't be blank"] });
  if (t.length > MAX_TITLE) throw new RuleError('bad_request', { title: [`is too long (maximum is ${MAX_TITLE} characters)`] });
  return t;
}

function checkContent(content: string | undefined): string {
  if (content === undefined || content === '') throw new RuleError('bad_request', { content: ["can't be blank"] });
  if (Buffer.byteLength(content) > MAX_CONTENT) throw new RuleError('bad_request', { content: [`is too long (maximum is ${MAX_CONTENT} bytes)`] });
  return content;
}

const author = (actor: Actor) => ({ name: actor.user!.name, email: actor.user!.email });

/** One commit on the wiki's branch, making the repository on the first write. */
async function commit(deps: ServiceDeps, project: ProjectRow, actor: Actor, actions: CommitAction[], message: string): Promise<Repository> {
  const repo = wikiRepo(deps, project);
  await repo.ensure(WIKI_BRANCH);
  await repo.createCommit({ branch: WIKI_BRANCH, actions, message, author: { ...author(actor), date: new Date(deps.clock.now()) } });
  return repo;
}

export async function createPage(deps: ServiceDeps, actor: Actor, project: ProjectRow, input: { title?: string; content?: string; format?: WikiFormat }): Promise<WikiPage> {
  const title = checkTitle(input.title);
  const content = checkContent(input.content);
  const slug = slugOf(title);
  const format = input.format ?? 'markdown';
  const repo = wikiRepo(deps, project);
  const current = await head(repo);
  if (current && (await findPage(repo, current, slug))) {
    throw new RuleError('bad_request', 'Duplicate page: A page with that title already exists');
  }
  const repo2 = await commit(deps, project, actor, [{ action: 'create', file_path: `${slug}.${EXTENSION[format]}`, content }], `Create ${title}`);
  await wikiEvent(deps, actor, project, repo2, 'create', slug, title);
  return getPage(deps, project, slug);
}

export async function updatePage(deps: ServiceDeps, actor: Actor, project: ProjectRow, slug: string, input: { title?: string; content?: string; format?: WikiFormat }): Promise<WikiPage> {
  if (input.title === undefined && input.content === undefined && input.format === undefined) {
    throw ParamError.of('content, title, format', 'at_least_one');
  }
  const page = await getPage(deps, project, slug);
  const newSlug = input.title !== undefined ? slugOf(checkTitle(input.title)) : page.slug;
  const format = input.format ?? page.format;
  const content = input.content !== undefined ? checkContent(input.content) : undefined;
  const path = newSlug === page.slug && format === page.format ? page.path : `${newSlug}.${EXTENSION[format]}`;
  if (newSlug !== page.slug) {
    const repo = wikiRepo(deps, project);
    if (await findPage(repo, (await head(repo))!, newSlug)) throw new RuleError('bad_request', 'Duplicate page: A page with that title already exists');
  }
  const action: CommitAction = path === page.path
    ? { action: 'update', file_path: path, content: content ?? page.content! }
    : { action: 'move', file_path: path, previous_path: page.path, ...(content !== undefined ? { content } : {}) };
  const repo = await commit(deps, project, actor, [action], `Update ${input.title?.trim() ?? page.title}`);
  await wikiEvent(deps, actor, project, repo, 'update', newSlug, input.title?.trim() ?? page.title);
  return getPage(deps, project, newSlug);
}

export async function deletePage(deps: ServiceDeps, actor: Actor, project: ProjectRow, slug: string): Promise<void> {
  const page = await getPage(deps, project, slug);
  const repo = await commit(deps, project, actor, [{ action: 'delete', file_path: page.path }], `Delete ${page.title}`);
  await wikiEvent(deps, actor, project, repo, 'delete', page.slug, page.title);
}

/** The domain event of a wiki change, once its commit is on the wiki's branch. */
async function wikiEvent(deps: ServiceDeps, actor: Actor, project: ProjectRow, repo: Repository, action: 'create' | 'update' | 'delete', slug: string, title: string): Promise<void> {
  if (!actor.user) return;
  const sha = (await repo.resolveCommit(`refs/heads/${WIKI_BRANCH}`)) ?? undefined;
  await deps.db.transaction().execute(async (trx) => {
    await emitEvent(deps, trx, { type: 'wiki_page', action, projectId: project.id, slug, title, actorId: actor.user!.id, sha });
  });
}

/** Stores an attachment in the wiki repository under `uploads/<random>/<name>` and says where. */
export async function uploadAttachment(deps: ServiceDeps, actor: Actor, project: ProjectRow, file: UploadedFile, branch?: string) {
  if (branch !== undefined && branch !== WIKI_BRANCH) throw new RuleError('bad_request', { branch: ['does not exist'] });
  if (file.size > MAX_ATTACHMENT) throw new RuleError('bad_request', { file: [`is too big (maximum is ${MAX_ATTACHMENT / 1024 / 1024} MB)`] });
  const name = (file.filename.split(/[\\/]/).pop() ?? '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.-]+/, '') || 'file';
  const path = `uploads/${randomBytes(16).toString('hex')}/${name}`;
  await commit(deps, project, actor, [{ action: 'create', file_path: path, content: await readFile(file.path) }], `Upload attachment ${name}`);
  return { file_name: name, file_path: path, branch: WIKI_BRANCH };
}
