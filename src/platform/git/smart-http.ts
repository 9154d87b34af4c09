// Git smart HTTP without an HTTP framework: the HTTP layer routes, authenticates and applies push policy, and these
// helpers run `git upload-pack|receive-pack --stateless-rpc` with streams in and out (packs are never buffered).
import { Readable, PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { isAbsolute } from 'node:path';
import { spawnGit, assertSafeArg, GitError } from './command.ts';
import { invalidateRefCache, Repository } from './repository.ts';
import { RepositoryNotFoundError } from './errors.ts';

export type GitService = 'upload-pack' | 'receive-pack';

export const advertisementContentType = (s: GitService) => `application/x-git-${s}-advertisement`;
export const requestContentType = (s: GitService) => `application/x-git-${s}-request`;
export const resultContentType = (s: GitService) => `application/x-git-${s}-result`;

/** The request body does not follow the pkt-line protocol. */
export class GitProtocolError extends Error {
  override name = 'GitProtocolError';
}

export const FLUSH_PKT = Buffer.from('0000');

export function pktLine(data: string | Buffer): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  if (body.length > 65516) throw new RangeError('pkt-line payload too long');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

// Gitea's rule: colon-separated key=value pairs of plain words, nothing that could smuggle other settings.
const GIT_PROTOCOL_RE = /^[0-9a-zA-Z]+=[0-9a-zA-Z]+(?::[0-9a-zA-Z]+=[0-9a-zA-Z]+)*$/;

/** The Git-Protocol header value if it is safe to pass on as GIT_PROTOCOL, else undefined (treated as absent). */
export function sanitizeGitProtocol(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.length <= 256 && GIT_PROTOCOL_RE.test(value) ? value : undefined;
}

// Per-service settings given on the command line, so they hold whatever the repository's config says.
function serviceArgs(service: GitService, repoPath: string): string[] {
  if (service !== 'upload-pack' && service !== 'receive-pack') throw new GitProtocolError(`unknown service ${String(service)}`);
  if (!isAbsolute(repoPath)) throw new RepositoryNotFoundError(repoPath);
  assertSafeArg(repoPath, 'repository path');
  if (!Repository.exists(repoPath)) throw new RepositoryNotFoundError(repoPath);
  const config =
    service === 'upload-pack'
      ? ['uploadpack.allowFilter=true']
      : // Check incoming objects like fsck, minus the historic mistakes Gitaly also lets through.
        [
          'receive.fsckObjects=true',
          'receive.fsck.badTimezone=ignore',
          'receive.fsck.missingSpaceBeforeDate=ignore',
          'receive.fsck.zeroPaddedFilemode=ignore',
        ];
  return [...config.flatMap((c) => ['-c', c]), service, '--stateless-rpc'];
}

function gitProtocolEnv(gitProtocol: string | undefined): Record<string, string> {
  const proto = sanitizeGitProtocol(gitProtocol);
  return proto ? { GIT_PROTOCOL: proto } : {};
}

/**
 * The body of GET info/refs?service=git-<service>. Resolves once git has produced its first bytes, so a broken
 * repository is reported as an error before any response header is sent; the rest streams.
 */
export async function advertiseRefs(
  repoPath: string,
  service: GitService,
  gitProtocol?: string,
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Readable> {
  const args = [...serviceArgs(service, repoPath), '--advertise-refs', repoPath];
  const env = { ...opts.env, ...gitProtocolEnv(gitProtocol) };
  // Under protocol v2 upload-pack answers with its capability list, which the client expects without the
  // "# service" preamble (as git http-backend does). receive-pack has no v2 and always gets the preamble.
  const v2 = service === 'upload-pack' && /(?:^|:)version=2(?::|$)/.test(env.GIT_PROTOCOL ?? '');
  const child = spawnGit(args, { env, timeoutMs: opts.timeoutMs ?? 60_000 });
  const stderr: Buffer[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const chunks = child.stdout![Symbol.asyncIterator]();
  const first = await chunks.next();
  if (first.done) {
    const code = await exited;
    const text = Buffer.concat(stderr).toString();
    throw new GitError(`git ${service} --advertise-refs failed: ${text.trim()}`, args, code, text);
  }
  const preamble = v2 ? [] : [pktLine(`# service=git-${service}\n`), FLUSH_PKT];
  const body = Readable.from(
    (async function* () {
      yield* preamble;
      yield first.value as Buffer;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value as Buffer;
    })(),
  );
  // A client that goes away mid-advertisement must not leave git blocked on a full pipe.
  body.on('close', () => child.exitCode === null && !child.stdout!.readableEnded && child.kill('SIGKILL'));
  return body;
}

/** Gunzips a request body when the client sent Content-Encoding: gzip. */
export function decodeRequestBody(body: Readable, gzip: boolean): Readable {
  if (!gzip) return body;
  const out = createGunzip();
  body.on('error', (e) => out.destroy(e));
  return body.pipe(out);
}

export interface RpcResult {
  /** git's response; pipe it into the HTTP response. */
  stdout: Readable;
  /** Settles when git exits; never rejects (a failed run is visible in code and stderr, e.g. for logging). */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

const activePushes = new Map<string, number>();

/** receive-pack runs in progress for a repository (storage moves wait for this to drop to zero). */
export function pushesInProgress(repoPath: string): number {
  return activePushes.get(repoPath) ?? 0;
}

/**
 * The body of POST git-<service>: streams `prefix` (bytes already read and decoded, e.g. the receive-pack command
 * list the caller parsed for policy checks) and then `requestBody` (gunzipped first when `gzip`) into git, and
 * returns git's stdout as a stream. For receive-pack the ref cache is invalidated when git exits.
 */
export function serviceRpc(
  repoPath: string,
  service: GitService,
  requestBody: Readable,
  opts: { gitProtocol?: string; gzip?: boolean; env?: Record<string, string>; prefix?: Buffer; timeoutMs?: number; signal?: AbortSignal } = {},
): RpcResult {
  const args = [...serviceArgs(service, repoPath), repoPath];
  const child = spawnGit(args, {
    env: { ...opts.env, ...gitProtocolEnv(opts.gitProtocol) },
    timeoutMs: opts.timeoutMs ?? 60 * 60_000,
    signal: opts.signal,
  });
  if (service === 'receive-pack') activePushes.set(repoPath, pushesInProgress(repoPath) + 1);
  const stderr: Buffer[] = [];
  let stderrLen = 0;
  child.stderr!.on('data', (c: Buffer) => {
    if ((stderrLen += c.length) <= 64 * 1024) stderr.push(c);
  });
  const done = new Promise<Awaited<RpcResult['done']>>((resolve) => {
    child.on('close', (code, signal) => {
      if (service === 'receive-pack') {
        const left = pushesInProgress(repoPath) - 1;
        if (left > 0) activePushes.set(repoPath, left);
        else activePushes.delete(repoPath);
        invalidateRefCache(repoPath);
      }
      resolve({ code, signal, stderr: Buffer.concat(stderr).toString() });
    });
  });

  const stdin = child.stdin!;
  stdin.on('error', () => {}); // git may stop reading early (e.g. upload-pack after a fatal want); not our error
  if (opts.prefix?.length) stdin.write(opts.prefix);
  pipeline(decodeRequestBody(requestBody, opts.gzip ?? false), stdin).catch(() => {
    // A broken or aborted upload (bad gzip, client gone) must not leave git waiting for more input.
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  const stdout = new PassThrough();
  child.stdout!.pipe(stdout);
  stdout.on('close', () => child.exitCode === null && !child.stdout!.readableEnded && child.kill('SIGKILL'));
  return { stdout, done };
}

// ---------------------------------------------------------------------------------------------------------------
// receive-pack requests: the command list comes first ("<old> <new> <ref>" pkt-lines, capabilities after a NUL on
// the first one, then a flush), then the pack. Policy is decided on the commands before git sees anything.

export interface ReceivePackCommand {
  oldSha: string;
  newSha: string;
  ref: string;
}

export interface ReceivePackRequest {
  commands: ReceivePackCommand[];
  capabilities: string[];
  /** Bytes of the command section, flush included; the pack (if any) starts here. */
  length: number;
}

const COMMAND_RE = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (.+)$/;

/** Parses the command section at the start of a receive-pack request; null until the buffer holds all of it. */
export function parseReceivePackCommands(buf: Buffer): ReceivePackRequest | null {
  const commands: ReceivePackCommand[] = [];
  let capabilities: string[] | undefined;
  for (let at = 0; ; ) {
    if (buf.length < at + 4) return null;
    const hex = buf.toString('latin1', at, at + 4);
    const len = /^[0-9a-f]{4}$/.test(hex) ? parseInt(hex, 16) : NaN;
    if (len === 0) return { commands, capabilities: capabilities ?? [], length: at + 4 };
    if (!(len >= 4)) throw new GitProtocolError(`bad pkt-line length ${JSON.stringify(hex)}`);
    if (buf.length < at + len) return null;
    let line = buf.toString('utf8', at + 4, at + len);
    at += len;
    if (line.endsWith('\n')) line = line.slice(0, -1);
    if (capabilities === undefined) {
      const nul = line.indexOf('\0');
      capabilities = nul === -1 ? [] : line.slice(nul + 1).split(' ').filter(Boolean);
      if (nul !== -1) line = line.slice(0, nul);
    }
    // Other lines ("shallow <sha>", push-certificate headers) carry no ref update.
    const m = COMMAND_RE.exec(line);
    if (m) commands.push({ oldSha: m[1], newSha: m[2], ref: m[3] });
  }
}

/**
 * Reads a request body up to the end of its command section, leaving the stream paused right there.
 * `head` holds every byte consumed (possibly the first bytes of the pack): hand it to serviceRpc as `prefix`.
 */
export function readReceivePackCommands(
  body: Readable,
  maxBytes = 4 * 1024 * 1024,
): Promise<ReceivePackRequest & { head: Buffer }> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const finish = () => {
      body.pause();
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      try {
        const parsed = parseReceivePackCommands(head);
        if (parsed) {
          finish();
          resolve({ ...parsed, head });
        } else if (head.length > maxBytes) {
          finish();
          reject(new GitProtocolError('receive-pack command list too long'));
        }
      } catch (e) {
        finish();
        reject(e);
      }
    };
    const onEnd = () => {
      finish();
      reject(new GitProtocolError('request ended inside the command list'));
    };
    const onError = (e: Error) => {
      finish();
      reject(e);
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}

function sideband(band: 1 | 2 | 3, data: Buffer, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += max) out.push(pktLine(Buffer.concat([Buffer.from([band]), data.subarray(i, i + max)])));
  return out;
}

/**
 * A complete receive-pack response refusing every command of the request, so `git push` exits non-zero and shows
 * `message` as "remote: …" lines (side-band) and each ref as "! [remote rejected] <ref> (<reason>)".
 * The caller should drain the rest of the request body before answering.
 */
export function receivePackError(
  message: string,
  request: Pick<ReceivePackRequest, 'commands' | 'capabilities'>,
  reason = 'pre-receive hook declined',
): Buffer {
  const caps = new Set(request.capabilities);
  // Payload room per packet: 65520 (side-band-64k) or 1000 (side-band) minus the length and band bytes.
  const room = caps.has('side-band-64k') ? 65515 : caps.has('side-band') ? 995 : 0;
  const lines = message.replace(/\r/g, '').split('\n').filter((l) => l !== '');
  const oneLine = reason.replace(/[\0-\x1f\x7f]+/g, ' ').trim() || 'rejected';
  if (!caps.has('report-status') && !caps.has('report-status-v2')) {
    // Without a status report the client would assume success; an error packet makes it stop with the message.
    const text = Buffer.from(`${lines.join(' ') || oneLine}\n`);
    return room ? Buffer.concat([...sideband(3, text, room), FLUSH_PKT]) : pktLine(`ERR ${text}`);
  }
  const report = Buffer.concat([
    pktLine('unpack ok\n'),
    ...request.commands.map((c) => pktLine(`ng ${c.ref} ${oneLine}\n`)),
    FLUSH_PKT,
  ]);
  if (!room) return report;
  const notes = lines.flatMap((l) => sideband(2, Buffer.from(`${l}\n`), room));
  return Buffer.concat([...notes, ...sideband(1, report, room), FLUSH_PKT]);
}
