// The transport-independent half of git access, shared by smart HTTP (git-http.routes.ts) and SSH (../git-ssh/):
// who may reach which repository for which service, in the reference's words, and serving a push (the push
// policy before any ref moves, receive-pack, then the project's bookkeeping). Transports only turn their
// credentials into a `GitIdentity` and a refusal into their own answer (an HTTP status, a message on an SSH
// client's terminal).
import { PassThrough, type Readable } from 'node:stream';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { deployKeyDenial, projectDenial, type Denial } from '../../platform/access/policy.ts';
import { AccessLevel, type ProjectRow } from '../../platform/membership.ts';
import { liveProjectByPath } from '../../platform/project-rows.ts';
import { refusedPushResponse, type PushHead } from '../../platform/git/pktline.ts';
import type { Repository } from '../../platform/git/repository.ts';
import { settled } from '../../platform/cache-bus.ts';
import { projectAccessFor } from '../../http/access.ts';
import { loadBranchRules, loadTagRules, type Caller } from '../repository/protection.ts';
import { afterRefsChanged, defaultBranchOf, repoFor } from '../repository/repository.common.ts';
import { decidePush, MESSAGES } from './push-policy.ts';
import { serverHooksDir } from './hooks.ts';

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

export interface GitTarget {
  project: ProjectRow;
  repo: Repository;
  caller: Caller;
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
export async function openGitTarget(deps: ServiceDeps, who: GitIdentity, fullPath: string, service: GitService): Promise<GitTarget> {
  const notFound = () => new GitRefusal('not_found', MESSAGES.notFound);
  if (!fullPath || fullPath.length > MAX_PATH || fullPath.includes('\0')) throw notFound();
  const push = service === 'git-receive-pack';
  // A push reads the row afresh: its policy and the bookkeeping after it work on the current settings.
  const project = await liveProjectByPath(deps, fullPath.toLowerCase(), !push);
  if (!project) throw notFound();
  let caller: Caller;
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
    if (projectDenial(actor, 'download_code', project, access.effective)) throw new GitRefusal('forbidden', MESSAGES.downloadCode);
    if (push) {
      if (!actor.user) throw new GitRefusal('sign_in', MESSAGES.pushCode);
      if (!hasScope(actor, ['api', 'write_repository'])) throw new GitRefusal('forbidden', MESSAGES.pushScope);
      const denial = projectDenial(actor, 'push_code', project, access.effective);
      if (denial) throw pushRefusal(denial, false);
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
  return { project, repo, caller };
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
  const [branchRules, tagRules, defaultBranch] = await Promise.all([
    loadBranchRules(deps.db, project.id), loadTagRules(deps.db, project.id), defaultBranchOf(project, repo),
  ]);
  const decision = await decidePush(deps.db, { commands: head.commands, caller, branchRules, tagRules, defaultBranch });
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
    afterRefsChanged(deps, project, repo, head.commands.map((c) => c.ref), caller.userId ?? null)
      .catch((err) => log(err, 'updating the project after a push failed'))
      .then(settled)
      .finally(() => out.end());
  });
  return out;
}
