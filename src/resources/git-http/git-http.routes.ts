// Git smart HTTP: {base}/<namespace>/<project>.git/info/refs, /git-upload-pack, /git-receive-pack.
// Bodies stream straight between the client and `git upload-pack` / `git receive-pack --stateless-rpc`;
// nothing buffers a whole pack. Pushes are checked against the project's rules before any ref moves.
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerLsRefs, readLsRefsRequest } from '../../platform/git/ls-refs.ts';
import { FLUSH, pkt, readPushHead } from '../../platform/git/pktline.ts';
import { anonymous, type Actor } from '../../http/auth.ts';
import { checkSignIn } from '../../platform/sign-in.ts';
import { projectPathOf, projectPathRoute } from '../../http/project-paths.ts';
import { ForbiddenError, InvalidTokenError, UnauthorizedError } from '../../platform/errors.ts';
import { MESSAGES } from './push-policy.ts';
import { drain, gitProtocolEnv, GitRefusal, openGitTarget, servePush, type GitTarget } from './git-service.ts';

type Service = 'git-upload-pack' | 'git-receive-pack';

const REALM = 'Basic realm="Bellows"';

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

async function resolveTarget(app: FastifyInstance, req: FastifyRequest, service: Service): Promise<GitTarget> {
  const actor = await gitActor(app, req);
  const parts = projectPathOf(req).split('/');
  const last = parts[parts.length - 1] ?? '';
  // What the caller cannot see asks an anonymous caller for credentials first.
  const challengeOrMissing = () => new GitHttpRefusal(actor.user ? 404 : 401, actor.user ? MESSAGES.notFound : 'HTTP Basic: Access denied', !actor.user);
  if (parts.length < 2 || !last.endsWith('.git') || last === '.git') throw challengeOrMissing();
  const fullPath = [...parts.slice(0, -1), last.slice(0, -4)].join('/');
  try {
    return await openGitTarget(app, { kind: 'user', actor }, fullPath, service);
  } catch (e) {
    if (!(e instanceof GitRefusal)) throw e;
    if (e.reason === 'not_found') throw challengeOrMissing();
    if (e.reason === 'sign_in') throw new GitHttpRefusal(401, 'HTTP Basic: Access denied', true);
    throw new GitHttpRefusal(403, e.message);
  }
}

function noCache(reply: FastifyReply): void {
  reply.header('expires', 'Fri, 01 Jan 1980 00:00:00 GMT');
  reply.header('pragma', 'no-cache');
  reply.header('cache-control', 'no-cache, max-age=0, must-revalidate');
}

function protocolEnv(req: FastifyRequest): Record<string, string> {
  return gitProtocolEnv(req.headers['git-protocol']);
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

async function infoRefs(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const service = (req.query as Record<string, unknown>).service;
  if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
    return refuse(reply, new GitHttpRefusal(403, 'Only the smart HTTP protocol is supported: use a git client that sends ?service=.'));
  }
  let target: GitTarget;
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
  const advertise = () => target.repo.advertisement(service === 'git-upload-pack' ? 'upload-pack' : 'receive-pack', env);
  const stdout = v2
    ? await app.caches.define<string, Buffer>('git-v2-advertisements', { max: 1000, window: 60_000 }).get(`${env.GIT_PROTOCOL}\0${target.repo.path}`, advertise)
    : await advertise();
  noCache(reply);
  reply.type(`application/x-${service}-advertisement`);
  return reply.send(v2 ? stdout : Buffer.concat([pkt(`# service=${service}\n`), FLUSH, stdout]));
}

/** The project and request body of an RPC call, or null once the refusal (auth, access, body) has been sent. */
async function rpcRequest(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, service: 'git-upload-pack' | 'git-receive-pack'): Promise<{ target: GitTarget; body: Readable } | null> {
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
  const child = target.repo.serve('upload-pack', { stateless: true, env });
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
  noCache(reply);
  reply.type('application/x-git-receive-pack-result');
  return reply.send(await servePush(app, target, head, body, (err, msg) => req.log.error({ err }, msg)));
}

/** The smart HTTP routes' suffixes below a project path (`<path>.git/info/refs`; see http/project-paths.ts). */
export const GIT_HTTP_SUFFIXES = { infoRefs: '/info/refs', uploadPack: '/git-upload-pack', receivePack: '/git-receive-pack' } as const;

/** Registers the smart HTTP routes for namespaces of any depth up to the reference's limit. */
export function registerGitHttp(app: FastifyInstance): void {
  app.register(async (scope) => {
    // The request bodies are handed over as streams: no buffering, no body limit.
    scope.addContentTypeParser(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'], (_req, payload, done) => done(null, payload));
    const hide = { schema: { hide: true } as any };
    scope.get(projectPathRoute(GIT_HTTP_SUFFIXES.infoRefs), hide, (req, reply) => infoRefs(scope, req, reply));
    scope.post(projectPathRoute(GIT_HTTP_SUFFIXES.uploadPack), { ...hide, config: { readOnly: true } }, (req, reply) => uploadPack(scope, req, reply));
    scope.post(projectPathRoute(GIT_HTTP_SUFFIXES.receivePack), hide, (req, reply) => receivePack(scope, req, reply));
  });
}
