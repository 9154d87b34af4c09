// Git smart HTTP: {base}/<namespace>/<project>.git/info/refs, /git-upload-pack, /git-receive-pack; the same for
// a project's wiki (`<project>.wiki.git`) and for snippets (`snippets/<id>.git`, `<project>/snippets/<id>.git`).
// Bodies stream straight between the client and `git upload-pack` / `git receive-pack --stateless-rpc`;
// nothing buffers a whole pack. Pushes are checked against the project's rules before any ref moves.
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { spawnGit } from '../../platform/git/command.ts';
import { answerLsRefs, readLsRefsRequest } from '../../platform/git/ls-refs.ts';
import { FLUSH, pkt, readPushHead, refusedPushResponse } from '../../platform/git/pktline.ts';
import { projectAccessFor } from '../../http/access.ts';
import { projectDenial, snippetDenial } from '../../platform/access/policy.ts';
import { anonymous, type Actor } from '../../http/auth.ts';
import { checkSignIn } from '../../platform/sign-in.ts';
import { ForbiddenError, InvalidTokenError, UnauthorizedError } from '../../platform/errors.ts';
import { AccessLevel, type ProjectRow } from '../../platform/membership.ts';
import { liveProjectByPath } from '../../platform/project-rows.ts';
import { Repository } from '../../platform/git/repository.ts';
import { announceCacheVoid } from '../../platform/cache-bus.ts';
import { wikiRepositoryPath } from '../projects/repository.ts';
import { afterSnippetPush, snippetRepo, snippetScopeFor, SNIPPET_BRANCH } from '../snippets/snippets.service.ts';
import { WIKI_BRANCH } from '../wikis/wikis.service.ts';
import { loadBranchRules, loadTagRules, type Caller } from '../repository/protection.ts';
import { afterRefsChanged, defaultBranchOf, repoFor } from '../repository/repository.common.ts';
import { decidePush, MESSAGES } from './push-policy.ts';
import { settled } from '../../platform/cache-bus.ts';
import { serverHooksDir } from './hooks.ts';

type Service = 'git-upload-pack' | 'git-receive-pack';

const MAX_DEPTH = 21;
const REALM = 'Basic realm="Bellows"';
const GIT_PROTOCOL = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(:[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;
// A clone of a large repository may take a while; a stuck client must not hold a process forever.
const RPC_TIMEOUT_MS = 30 * 60 * 1000;

/**
 * What a URL names: a project's repository, its wiki (`<path>.wiki.git`), or a snippet's (`snippets/<id>.git`,
 * `<path>/snippets/<id>.git`). Wikis and snippets take pushes to any branch or tag; only project repositories have
 * protected refs.
 */
interface Target {
  kind: 'project' | 'wiki' | 'snippet';
  project: ProjectRow | null;
  repo: Repository;
  actor: Actor;
  caller: Caller;
  /** The bookkeeping after a push (the project's facts, the snippet's row); refs moved are named. */
  afterPush(refs: string[]): Promise<void>;
}

class GitHttpRefusal extends Error {
  constructor(readonly status: number, readonly text: string, readonly challenge = false, readonly headers: Record<string, string> = {}) {
    super(text);
  }
}

function refuse(reply: FastifyReply, r: GitHttpRefusal): FastifyReply {
  reply.code(r.status).type('text/plain; charset=utf-8');
  if (r.challenge) reply.header('www-authenticate', REALM);
  for (const [k, v] of Object.entries(r.headers)) reply.header(k, v);
  return reply.send(`${r.text}\n`);
}

/** HTTP Basic: a token of any kind (through the same resolvers as the API) or the user's password. */
async function gitActor(app: FastifyInstance, req: FastifyRequest): Promise<Actor> {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^basic\s+/i.test(header)) return anonymous;
  const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new GitHttpRefusal(401, 'HTTP Basic: Access denied', true);
  const login = decoded.slice(0, colon);
  const secret = decoded.slice(colon + 1);
  // Built only when needed: an error object records a stack, which no successful request should pay for.
  const denied = () => new GitHttpRefusal(401, 'HTTP Basic: Access denied. If a password was provided, check it; a personal access token with the read_repository or write_repository scope also works.', true);
  if (!secret) throw denied();
  try {
    const fake = { headers: { authorization: `Bearer ${secret}` }, method: 'GET', cookies: {} } as unknown as FastifyRequest;
    return await app.auth.authenticate(fake, {});
  } catch (e) {
    if (e instanceof InvalidTokenError) throw denied();
    if (e instanceof ForbiddenError) throw new GitHttpRefusal(403, e.reason ?? 'Forbidden');
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  if (login === 'oauth2' || !login) throw denied();
  // Passwords go through the sign-in checks: the same brute-force throttle per login and address as the web page.
  const result = await checkSignIn(app, login, secret, req.ip);
  if (!result.ok) {
    if (result.reason === 'blocked') throw new GitHttpRefusal(403, 'Your account has been blocked.');
    if (result.reason === 'invalid') throw denied();
    if (result.reason === 'throttled' || result.reason === 'locked') throw new GitHttpRefusal(429, `Too many failed sign-in attempts. Try again in ${result.retryAfterSeconds} seconds.`, false, { 'retry-after': String(result.retryAfterSeconds) });
    throw denied();
  }
  const user = result.user;
  return { user, admin: !!user.admin, token: null, via: 'session', sudo: false };
}

const hasScope = (actor: Actor, scopes: string[]) => !actor.token || scopes.some((s) => actor.token!.scopes.includes(s));

async function resolveTarget(app: FastifyInstance, req: FastifyRequest, service: Service): Promise<Target> {
  const actor = await gitActor(app, req);
  const segments = (req.params as Record<string, string>);
  const parts = Object.keys(segments).filter((k) => /^s\d+$/.test(k)).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))).map((k) => segments[k]);
  const last = parts[parts.length - 1] ?? '';
  const challengeOrMissing = () => new GitHttpRefusal(actor.user ? 404 : 401, actor.user ? MESSAGES.notFound : 'HTTP Basic: Access denied', !actor.user);
  if (parts.length < 2 || !last.endsWith('.git') || last === '.git') throw challengeOrMissing();
  const checkReadScope = () => {
    if (!hasScope(actor, ['api', 'read_repository', 'write_repository'])) throw new GitHttpRefusal(403, MESSAGES.readScope);
  };
  const write = service === 'git-receive-pack';
  const checkWriter = () => {
    if (!actor.user) throw new GitHttpRefusal(401, 'HTTP Basic: Access denied', true);
    if (!hasScope(actor, ['api', 'write_repository'])) throw new GitHttpRefusal(403, MESSAGES.pushScope);
  };
  const snippetId = parts[parts.length - 2] === 'snippets' && /^[1-9]\d{0,9}\.git$/.test(last) ? Number(last.slice(0, -4)) : null;
  if (snippetId !== null) return snippetTarget(app, actor, snippetId, parts.slice(0, -2).join('/'), write, challengeOrMissing, checkReadScope, checkWriter);
  const wiki = last.endsWith('.wiki.git') && last !== '.wiki.git';
  const fullPath = [...parts.slice(0, -1), last.slice(0, wiki ? -9 : -4)].join('/');
  // A push reads the row afresh: its policy and the bookkeeping after it work on the current settings.
  const project = await liveProjectByPath(app, fullPath.toLowerCase(), service === 'git-upload-pack');
  if (!project) throw challengeOrMissing();
  const access = await projectAccessFor(app, actor, project);
  if (projectDenial(actor, 'read_project', project, access.effective)) throw challengeOrMissing();
  const level = actor.admin ? AccessLevel.OWNER : access.effective;
  const caller: Caller = { userId: actor.user?.id ?? null, level: actor.user ? level : 0, admin: actor.admin };
  checkReadScope();

  if (wiki) {
    if (projectDenial(actor, 'read_wiki', project, access.effective)) {
      // A client sends its credentials only when challenged: an anonymous refusal asks for them.
      if (!actor.user) throw new GitHttpRefusal(401, 'HTTP Basic: Access denied', true);
      throw new GitHttpRefusal(403, MESSAGES.readWiki);
    }
    if (write) {
      checkWriter();
      const denial = projectDenial(actor, 'create_wiki', project, access.effective);
      if (denial) throw new GitHttpRefusal(403, denial === 'archived' ? MESSAGES.archived : MESSAGES.pushWiki);
    }
    const repo = new Repository(wikiRepositoryPath(app.config, project.repository_storage, project.id));
    // The wiki is made on its first write; a clone of a wiki never written finds an empty repository.
    await repo.ensure(WIKI_BRANCH);
    return { kind: 'wiki', project, repo, actor, caller, afterPush: async () => {
      repo.invalidate();
      announceCacheVoid('all');
    } };
  }

  if (projectDenial(actor, 'download_code', project, access.effective)) throw new GitHttpRefusal(403, MESSAGES.downloadCode);
  if (write) {
    checkWriter();
    const denial = projectDenial(actor, 'push_code', project, access.effective);
    if (denial) throw new GitHttpRefusal(403, denial === 'archived' ? MESSAGES.archived : denial === 'read_only' ? MESSAGES.readOnly : MESSAGES.pushCode);
  }
  const repo = repoFor(app.config, project);
  if (!repo.exists()) {
    // Only a current row may bring a repository into being (a remembered one may belong to a deleted project).
    const current = await liveProjectByPath(app, project.full_path_lower, false);
    if (current?.id !== project.id) throw challengeOrMissing();
    await repo.ensure(current.default_branch ?? 'main');
  }
  return { kind: 'project', project, repo, actor, caller, afterPush: (refs) => afterRefsChanged(app, project, repo, refs) };
}

/** A snippet's repository: read with `read_snippet`, pushed with `update_snippet`, through the one policy. */
async function snippetTarget(
  app: FastifyInstance, actor: Actor, id: number, projectPath: string, write: boolean,
  missing: () => GitHttpRefusal, checkReadScope: () => void, checkWriter: () => void,
): Promise<Target> {
  const scope = await snippetScopeFor(app, actor, id);
  if (!scope) throw missing();
  // The URL must name the snippet where it lives: its project's path, or none for a personal snippet.
  if ((scope.project?.full_path_lower ?? '') !== projectPath.toLowerCase()) throw missing();
  if (snippetDenial(actor, 'read_snippet', scope.row, scope.project, scope.level)) throw missing();
  checkReadScope();
  if (write) {
    checkWriter();
    const denial = snippetDenial(actor, 'update_snippet', scope.row, scope.project, scope.level);
    if (denial) throw new GitHttpRefusal(403, denial === 'archived' ? MESSAGES.archived : MESSAGES.pushSnippet);
  }
  const repo = snippetRepo(app, scope.row);
  await repo.ensure(SNIPPET_BRANCH);
  const level = actor.admin ? AccessLevel.OWNER : scope.level;
  const caller: Caller = { userId: actor.user?.id ?? null, level: actor.user ? level : 0, admin: actor.admin };
  return { kind: 'snippet', project: scope.project, repo, actor, caller, afterPush: () => afterSnippetPush(app, scope.row) };
}

function noCache(reply: FastifyReply): void {
  reply.header('expires', 'Fri, 01 Jan 1980 00:00:00 GMT');
  reply.header('pragma', 'no-cache');
  reply.header('cache-control', 'no-cache, max-age=0, must-revalidate');
}

function protocolEnv(req: FastifyRequest): Record<string, string> {
  const v = req.headers['git-protocol'];
  return typeof v === 'string' && GIT_PROTOCOL.test(v) ? { GIT_PROTOCOL: v } : {};
}

function requestBody(req: FastifyRequest): Readable {
  const raw = req.body as Readable | undefined;
  if (!raw || typeof (raw as Readable).pipe !== 'function') throw new GitHttpRefusal(415, 'The request body must be a git request (application/x-git-*-request).');
  const enc = String(req.headers['content-encoding'] ?? '').toLowerCase();
  if (enc === 'gzip' || enc === 'x-gzip') {
    const gunzip = createGunzip();
    raw.on('error', (e) => gunzip.destroy(e));
    return raw.pipe(gunzip);
  }
  return raw;
}

function drain(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    // The end may already have been seen while the command list was read.
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.on('end', resolve);
    stream.on('error', () => resolve());
    stream.resume();
  });
}

async function infoRefs(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const service = (req.query as Record<string, unknown>).service;
  if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
    return refuse(reply, new GitHttpRefusal(403, 'Only the smart HTTP protocol is supported: use a git client that sends ?service=.'));
  }
  let target: Target;
  try {
    target = await resolveTarget(app, req, service);
  } catch (e) {
    if (e instanceof GitHttpRefusal) return refuse(reply, e);
    throw e;
  }
  const env = service === 'git-upload-pack' ? protocolEnv(req) : {};
  const v2 = /(^|:)version=2(:|$)/.test(env.GIT_PROTOCOL ?? '');
  // Protocol v2 advertises capabilities only (no refs), which change only with the repository's configuration:
  // a read cache for a minute.
  const advertise = async () => (await target.repo.git([service.slice(4), '--stateless-rpc', '--advertise-refs', target.repo.path], { env, timeoutMs: 60_000 })).stdout;
  const stdout = v2
    ? await app.caches.define<string, Buffer>('git-v2-advertisements', { max: 1000, window: 60_000 }).get(`${env.GIT_PROTOCOL}\0${target.repo.path}`, advertise)
    : await advertise();
  noCache(reply);
  reply.type(`application/x-${service}-advertisement`);
  return reply.send(v2 ? stdout : Buffer.concat([pkt(`# service=${service}\n`), FLUSH, stdout]));
}

/** The project and request body of an RPC call, or null once the refusal (auth, access, body) has been sent. */
async function rpcRequest(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, service: 'git-upload-pack' | 'git-receive-pack'): Promise<{ target: Target; body: Readable } | null> {
  try {
    const target = await resolveTarget(app, req, service);
    return { target, body: requestBody(req) };
  } catch (e) {
    if (!(e instanceof GitHttpRefusal)) throw e;
    refuse(reply, e);
    return null;
  }
}

async function uploadPack(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const rpc = await rpcRequest(app, req, reply, 'git-upload-pack');
  if (!rpc) return reply;
  const { target, body } = rpc;
  const env = protocolEnv(req);
  let consumed: Buffer | null = null;
  if (env.GIT_PROTOCOL === 'version=2') {
    // A v2 ref listing is answered from the repository's files, without a process; anything else goes to git.
    const head = await readLsRefsRequest(body).catch(() => null);
    if (!head) return reply.code(400).type('text/plain; charset=utf-8').send('The request body could not be read.\n');
    if (head.parse.state === 'ls-refs') {
      // Git answers whatever could not be read here (a broken configuration, a failed object lookup).
      const answer = await answerLsRefs(target.repo.path, head.parse.args).catch((err) => {
        req.log.warn({ err }, 'ls-refs left to git');
        return null;
      });
      if (answer) {
        await drain(body);
        noCache(reply);
        reply.type('application/x-git-upload-pack-result');
        return reply.send(answer);
      }
    }
    consumed = head.consumed;
  }
  const child = spawnGit(['upload-pack', '--stateless-rpc', target.repo.path], { env, timeoutMs: RPC_TIMEOUT_MS, stdio: ['pipe', 'pipe', 'ignore'] });
  body.on('error', () => child.kill('SIGKILL'));
  child.stdin!.on('error', () => {});
  if (consumed?.length) child.stdin!.write(consumed);
  // The whole request may already have been read above; then there is nothing left to pipe.
  if (consumed && body.readableEnded) child.stdin!.end();
  else body.pipe(child.stdin!);
  // A client that goes away mid-answer leaves nobody to read the pack.
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) child.kill('SIGKILL');
  });
  noCache(reply);
  reply.type('application/x-git-upload-pack-result');
  return reply.send(child.stdout);
}

async function receivePack(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const rpc = await rpcRequest(app, req, reply, 'git-receive-pack');
  if (!rpc) return reply;
  const { target, body } = rpc;
  const head = await readPushHead(body);
  if (!head) {
    await drain(body);
    return refuse(reply, new GitHttpRefusal(400, 'The push request is not well formed.'));
  }
  const { project, repo, caller } = target;
  const [branchRules, tagRules, defaultBranch] = target.kind === 'project' && project
    ? await Promise.all([loadBranchRules(app.db, project.id), loadTagRules(app.db, project.id), defaultBranchOf(project, repo)])
    : [[], [], await repo.defaultBranch()];
  const decision = await decidePush(app.db, { commands: head.commands, caller, branchRules, tagRules, defaultBranch });
  noCache(reply);
  reply.type('application/x-git-receive-pack-result');
  if (decision.refused.length) {
    await drain(body);
    return reply.send(refusedPushResponse(head.commands, head.capabilities, decision.refused));
  }

  const hooks = serverHooksDir(app.config.dataDir);
  // fsck on receive also for repositories made before their configuration said so.
  const child = spawnGit(['-c', `core.hooksPath=${hooks}`, '-c', 'receive.fsckObjects=true', 'receive-pack', '--stateless-rpc', repo.path], {
    env: { BELLOWS_NO_FORCE_REFS: decision.noForce.join('\n'), BELLOWS_USER_ID: String(caller.userId ?? '') },
    timeoutMs: RPC_TIMEOUT_MS,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin!.on('error', () => {});
  body.on('error', () => child.kill('SIGKILL'));
  child.stdin!.write(head.consumed);
  // A small push may have arrived whole with the command list; then there is nothing left to pipe.
  if (body.readableEnded) child.stdin!.end();
  else body.pipe(child.stdin!);
  // The answer ends only after the project is brought up to date, so a client that reads the API right
  // after its push sees the new refs.
  const out = new PassThrough();
  child.stdout!.pipe(out, { end: false });
  child.on('close', () => {
    target.afterPush(head.commands.map((c) => c.ref))
      .catch((err) => req.log.error({ err }, 'updating the project after a push failed'))
      .then(settled)
      .finally(() => out.end());
  });
  return reply.send(out);
}

/** Registers the smart HTTP routes for namespaces of any depth up to the reference's limit. */
export function registerGitHttp(app: FastifyInstance): void {
  app.register(async (scope) => {
    // The request bodies are handed over as streams: no buffering, no body limit.
    scope.addContentTypeParser(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'], (_req, payload, done) => done(null, payload));
    for (let depth = 2; depth <= MAX_DEPTH; depth++) {
      const prefix = '/' + Array.from({ length: depth }, (_, i) => `:s${i}`).join('/');
      const hide = { schema: { hide: true } as any };
      scope.get(`${prefix}/info/refs`, hide, (req, reply) => infoRefs(scope, req, reply));
      scope.post(`${prefix}/git-upload-pack`, { ...hide, config: { readOnly: true } }, (req, reply) => uploadPack(scope, req, reply));
      scope.post(`${prefix}/git-receive-pack`, hide, (req, reply) => receivePack(scope, req, reply));
    }
  });
}
