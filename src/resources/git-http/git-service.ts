// The transport-independent half of git access, shared by smart HTTP (git-http.routes.ts) and SSH (../git-ssh/):
// who may reach which repository for which service, in the reference's words, and serving a push (the push
// policy before any ref moves, receive-pack, then the project's bookkeeping). Transports only turn their
// credentials into a `GitIdentity` and a refusal into their own answer (an HTTP status, a message on an SSH
// client's terminal).
import { PassThrough, type Readable } from 'node:stream';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { deployKeyDenial, projectDenial, snippetDenial, type Denial } from '../../platform/access/policy.ts';
import { AccessLevel, type ProjectRow } from '../../platform/membership.ts';
import { liveProjectByPath } from '../../platform/project-rows.ts';
import { refusedPushResponse, type PushHead } from '../../platform/git/pktline.ts';
import { Repository } from '../../platform/git/repository.ts';
import { announceCacheVoid, settled } from '../../platform/cache-bus.ts';
import { projectAccessFor } from '../../http/access.ts';
import { loadBranchRules, loadTagRules, type Caller } from '../repository/protection.ts';
import { afterRefsChanged, defaultBranchOf, emitRefEvents, repoFor } from '../repository/repository.common.ts';
import { decidePush, MESSAGES } from './push-policy.ts';
import { serverHooksDir } from './hooks.ts';
import { wikiRepositoryPath } from '../projects/repository.ts';
import { afterSnippetPush, snippetRepo, snippetScopeFor, SNIPPET_BRANCH } from '../snippets/snippets.service.ts';
import { WIKI_BRANCH } from '../wikis/wikis.service.ts';
import { collaborativeBranches } from '../merge-requests/collaboration.ts';

export type GitService = 'git-upload-pack' | 'git-receive-pack' | 'git-upload-archive';

/** Who asks: a user (anonymous when `actor.user` is null), or a deploy key (over SSH). */
export type GitIdentity = { kind: 'user'; actor: Actor } | { kind: 'deploy_key'; keyId: number };

/**
 * Why a request is refused: the project cannot be seen (`not_found`), the caller must sign in first (`sign_in`,
 * HTTP's challenge), or it is seen but the service is refused (`forbidden`). `message` is the reference's text.
 */
export class GitRefusal extends Error {
  constructor(readonly reason: 'not_found' | 'sign_in' | 'forbidden', message: string) {
    super(message);
  }
}

/**
 * What a path names: a project's repository, its wiki (`<path>.wiki`), or a snippet's (`snippets/<id>`,
 * `<path>/snippets/<id>`). Wikis and snippets take pushes to any branch or tag; only project repositories have
 * protected refs.
 */
export interface GitTarget {
  kind: 'project' | 'wiki' | 'snippet';
  /** The project (null for a personal snippet). */
  project: ProjectRow | null;
  repo: Repository;
  caller: Caller;
  /**
   * Set when the caller may not push to the project but collaborates on merge requests from it: the only branches
   * the push may update (their source branches, see ../merge-requests/collaboration.ts).
   */
  collaboration?: ReadonlySet<string>;
  /** The bookkeeping after a push (the project's facts, the snippet's row); the refs moved are named. */
  afterPush(refs: string[], userId: number | null): Promise<void>;
}

// A project path is at most 21 segments of at most 255 characters.
const MAX_PATH = 21 * 256;

const hasScope = (actor: Actor, scopes: string[]) => !actor.token || scopes.some((s) => actor.token!.scopes.includes(s));

function pushRefusal(denial: Denial, deployKey: boolean): GitRefusal {
  if (denial === 'archived') return new GitRefusal('forbidden', MESSAGES.archived);
  if (denial === 'read_only') return new GitRefusal('forbidden', MESSAGES.readOnly);
  return new GitRefusal('forbidden', deployKey ? MESSAGES.deployKeyPush : MESSAGES.pushCode);
}

/**
 * The project at `fullPath` (without `.git`), held to the access policy for `service`, with its repository (made
 * on first use by a current row). Throws GitRefusal when refused.
 */
export async function openGitTarget(deps: ServiceDeps, who: GitIdentity, path: string, service: GitService): Promise<GitTarget> {
  const notFound = () => new GitRefusal('not_found', MESSAGES.notFound);
  if (!path || path.length > MAX_PATH || path.includes('\0')) throw notFound();
  const push = service === 'git-receive-pack';
  const snippet = /^(?:(.+)\/)?snippets\/([1-9]\d{0,9})$/.exec(path);
  if (snippet) {
    // Deploy keys reach project repositories only.
    if (who.kind === 'deploy_key') throw notFound();
    return openSnippet(deps, who.actor, Number(snippet[2]), snippet[1] ?? '', push);
  }
  const wiki = path.endsWith('.wiki') && path !== '.wiki';
  if (wiki && who.kind === 'deploy_key') throw notFound();
  const fullPath = wiki ? path.slice(0, -'.wiki'.length) : path;
  // A push reads the row afresh: its policy and the bookkeeping after it work on the current settings.
  const project = await liveProjectByPath(deps, fullPath.toLowerCase(), !push);
  if (!project) throw notFound();
  let caller: Caller;
  let collaboration: Set<string> | undefined;
  if (who.kind === 'deploy_key') {
    const link = await deps.db.selectFrom('deploy_keys_projects').select('can_push')
      .where('deploy_key_id', '=', who.keyId).where('project_id', '=', project.id).executeTakeFirst();
    const read = deployKeyDenial('download_code', project, link ?? null);
    if (read === 'not_found') throw notFound();
    if (read) throw new GitRefusal('forbidden', MESSAGES.downloadCode);
    const denial = push ? deployKeyDenial('push_code', project, link ?? null) : null;
    if (denial) throw pushRefusal(denial, true);
    caller = { userId: null, level: 0, admin: false, deployKeyId: who.keyId };
  } else {
    const { actor } = who;
    const access = await projectAccessFor(deps, actor, project);
    if (projectDenial(actor, 'read_project', project, access.effective)) throw notFound();
    if (!hasScope(actor, ['api', 'read_repository', 'write_repository'])) throw new GitRefusal('forbidden', MESSAGES.readScope);
    if (wiki) return openWiki(deps, actor, project, access.effective, push);
    if (projectDenial(actor, 'download_code', project, access.effective)) throw new GitRefusal('forbidden', MESSAGES.downloadCode);
    if (push) {
      if (!actor.user) throw new GitRefusal('sign_in', MESSAGES.pushCode);
      if (!hasScope(actor, ['api', 'write_repository'])) throw new GitRefusal('forbidden', MESSAGES.pushScope);
      const denial = projectDenial(actor, 'push_code', project, access.effective);
      if (denial) {
        // Not a writer: perhaps a collaborator on a merge request from this fork, then only to its source branch.
        if (denial === 'forbidden') collaboration = await collaborativeBranches(deps, actor, project);
        if (!collaboration?.size) throw pushRefusal(denial, false);
      }
    }
    const level = actor.admin ? AccessLevel.OWNER : access.effective;
    caller = { userId: actor.user?.id ?? null, level: actor.user ? level : 0, admin: actor.admin };
  }
  const repo = repoFor(deps.config, project);
  if (!repo.exists()) {
    // Only a current row may bring a repository into being (a remembered one may belong to a deleted project).
    const current = await liveProjectByPath(deps, project.full_path_lower, false);
    if (current?.id !== project.id) throw notFound();
    await repo.ensure(current.default_branch ?? 'main');
  }
  return { kind: 'project', project, repo, caller, collaboration, afterPush: (refs, userId) => afterRefsChanged(deps, project, repo, refs, userId) };
}

/** The caller as the push policy sees it, at `level` in the project (an administrator as Owner). */
function userCaller(actor: Actor, level: number): Caller {
  return { userId: actor.user?.id ?? null, level: actor.user ? (actor.admin ? AccessLevel.OWNER : level) : 0, admin: actor.admin };
}

/** A push needs a signed-in caller whose token may write repositories. */
function checkWriter(actor: Actor, refusal: string): void {
  if (!actor.user) throw new GitRefusal('sign_in', refusal);
  if (!hasScope(actor, ['api', 'write_repository'])) throw new GitRefusal('forbidden', MESSAGES.pushScope);
}

/** A project's wiki: read with `read_wiki`, pushed with `create_wiki`; made on first use (a clone finds it empty). */
async function openWiki(deps: ServiceDeps, actor: Actor, project: ProjectRow, level: number, push: boolean): Promise<GitTarget> {
  if (projectDenial(actor, 'read_wiki', project, level)) {
    // A client sends its credentials only when challenged: an anonymous refusal asks for them.
    throw new GitRefusal(actor.user ? 'forbidden' : 'sign_in', MESSAGES.readWiki);
  }
  if (push) {
    checkWriter(actor, MESSAGES.pushWiki);
    const denial = projectDenial(actor, 'create_wiki', project, level);
    if (denial) throw new GitRefusal('forbidden', denial === 'archived' ? MESSAGES.archived : MESSAGES.pushWiki);
  }
  const repo = new Repository(wikiRepositoryPath(deps.config, project.repository_storage, project.id));
  await repo.ensure(WIKI_BRANCH);
  return {
    kind: 'wiki', project, repo, caller: userCaller(actor, level),
    afterPush: async () => {
      repo.invalidate();
      announceCacheVoid('all');
    },
  };
}

/** A snippet's repository: read with `read_snippet`, pushed with `update_snippet`, at the path where it lives. */
async function openSnippet(deps: ServiceDeps, actor: Actor, id: number, projectPath: string, push: boolean): Promise<GitTarget> {
  const notFound = () => new GitRefusal('not_found', MESSAGES.notFound);
  const scope = await snippetScopeFor(deps, actor, id);
  if (!scope) throw notFound();
  // The path must name the snippet where it lives: its project's path, or none for a personal snippet.
  if ((scope.project?.full_path_lower ?? '') !== projectPath.toLowerCase()) throw notFound();
  if (snippetDenial(actor, 'read_snippet', scope.row, scope.project, scope.level)) throw notFound();
  if (!hasScope(actor, ['api', 'read_repository', 'write_repository'])) throw new GitRefusal('forbidden', MESSAGES.readScope);
  if (push) {
    checkWriter(actor, MESSAGES.pushSnippet);
    const denial = snippetDenial(actor, 'update_snippet', scope.row, scope.project, scope.level);
    if (denial) throw new GitRefusal('forbidden', denial === 'archived' ? MESSAGES.archived : denial === 'read_only' ? MESSAGES.readOnly : MESSAGES.pushSnippet);
  }
  const repo = snippetRepo(deps, scope.row);
  await repo.ensure(SNIPPET_BRANCH);
  return { kind: 'snippet', project: scope.project, repo, caller: userCaller(actor, scope.level), afterPush: () => afterSnippetPush(deps, scope.row) };
}

const GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

/** The client's protocol request (HTTP's Git-Protocol header, SSH's GIT_PROTOCOL variable) as git's environment, when well formed. */
export function gitProtocolEnv(value: unknown): Record<string, string> {
  return typeof value === 'string' && value.length <= 256 && GIT_PROTOCOL.test(value) ? { GIT_PROTOCOL: value } : {};
}

/** Reads the rest of a request nobody will process, so the client is not left writing into a closed pipe. */
export function drain(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    // The end may already have been seen while the command list was read.
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.on('end', resolve);
    stream.on('error', () => resolve());
    stream.resume();
  });
}

/**
 * Serves one push whose command list (`head`) has been read from `body`: decides it by the project's protected
 * branches and tags; a refused push answers with the reasons and every ref declined, nothing run; an allowed one
 * runs receive-pack on the bytes read and the rest of `body`. The answer ends only after the project is brought
 * up to date (activity, statistics, the default branch of a first push) and every worker has dropped its caches,
 * so a client that reads the API right after its push sees the new refs.
 */
export async function servePush(deps: ServiceDeps, target: GitTarget, head: PushHead, body: Readable, log: (err: unknown, msg: string) => void): Promise<Readable | Buffer> {
  const { project, repo, caller } = target;
  const [branchRules, tagRules, defaultBranch] = target.kind === 'project' && project
    ? await Promise.all([loadBranchRules(deps.db, project.id), loadTagRules(deps.db, project.id), defaultBranchOf(project, repo)])
    : [[], [], await repo.defaultBranch()];
  const decision = await decidePush(deps.db, { commands: head.commands, caller, branchRules, tagRules, defaultBranch, onlyBranches: target.collaboration });
  if (decision.refused.length) {
    await drain(body);
    return refusedPushResponse(head.commands, head.capabilities, decision.refused);
  }
  const child = repo.serve('receive-pack', {
    hooksDir: serverHooksDir(deps.config.dataDir),
    env: { BELLOWS_NO_FORCE_REFS: decision.noForce.join('\n'), BELLOWS_USER_ID: String(caller.userId ?? '') },
  });
  child.stdin!.on('error', () => {});
  body.on('error', () => child.kill('SIGKILL'));
  child.stdin!.write(head.consumed);
  // A small push may have arrived whole with the command list; then there is nothing left to pipe.
  if (body.readableEnded) child.stdin!.end();
  else body.pipe(child.stdin!);
  const out = new PassThrough();
  child.stdout!.pipe(out, { end: false });
  child.on('close', () => {
    target.afterPush(head.commands.map((c) => c.ref), caller.userId ?? null)
      .then(() => target.kind === 'project' && project
        ? emitRefEvents(deps, project, repo, caller.userId ?? null, head.commands.map((c) => ({ ref: c.ref, before: c.oldSha, after: c.newSha })))
        : undefined)
      .catch((err) => log(err, 'updating the project after a push failed'))
      .then(settled)
      .finally(() => out.end());
  });
  return out;
}
