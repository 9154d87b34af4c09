// One SSH command of a signed-in key, whoever carries the bytes: the embedded SSH server (a channel) or the
// system's OpenSSH through `bellows ssh shell` (the process's stdin, stdout and stderr). git-upload-pack,
// git-receive-pack and git-upload-archive with a quoted repository path; anything else, a shell included, is
// greeted and nothing runs.
import type { Readable, Writable } from 'node:stream';
import type { ServiceDeps } from '../../platform/deps.ts';
import { readPushHead } from '../../platform/git/pktline.ts';
import { gitProtocolEnv, GitRefusal, openGitTarget, servePush, type GitService } from '../git-http/git-service.ts';
import { sshActor, type SshKeyRef } from './git-ssh.service.ts';

const SERVICES: readonly GitService[] = ['git-upload-pack', 'git-receive-pack', 'git-upload-archive'];
const MAX_COMMAND = 8192;

export type SshCommand = { kind: 'git'; service: GitService; path: string } | { kind: 'welcome' };

/**
 * Reads a shell-quoted word list as git writes it (`git-upload-pack 'group/project.git'`, quotes closed around
 * `\'` and `\!`), and plain words. Null when the quoting is broken.
 */
function shellWords(text: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      if (i + 1 >= text.length) return null;
      word = (word ?? '') + text[++i];
    } else if (c === '"' || c === '`' || c === '$' || c === ';' || c === '|' || c === '&' || c === '\n') {
      return null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * The command a client asked for. The repository path may start with `/` (an ssh:// URL) and end with `.git`
 * and `/`; `git upload-pack` is `git-upload-pack`. Anything not a git service, a shell included, is the welcome.
 */
export function parseSshCommand(command: string | undefined): SshCommand {
  if (!command || command.length > MAX_COMMAND) return { kind: 'welcome' };
  const words = shellWords(command.trim());
  if (!words || words.length === 0) return { kind: 'welcome' };
  let [name, ...args] = words;
  if (name === 'git' && args.length > 0) name = `git-${args.shift()}`;
  if (!(SERVICES as readonly string[]).includes(name!)) return { kind: 'welcome' };
  // upload-pack takes options before the path over SSH too (`--timeout`, `--strict`): the server sets its own.
  const rest = args.filter((a) => !a.startsWith('-'));
  if (rest.length !== 1) return { kind: 'git', service: name as GitService, path: '' };
  let path = rest[0]!.replace(/\/+$/, '').replace(/^\/+/, '');
  if (path.endsWith('.git')) path = path.slice(0, -4);
  return { kind: 'git', service: name as GitService, path };
}

export const DIVIDER = '========================================================================';

/** A message on the client's terminal as the reference frames it: git shows SSH's stderr as it comes. */
export function terminalMessage(message: string): string {
  const lines = ['', DIVIDER, '', ...message.split('\n'), '', DIVIDER, ''];
  return lines.map((l) => `remote: ${l}`.trimEnd() + '\n').join('');
}

export const welcome = (greeting: string) => `Welcome to Bellows, ${greeting}!\n`;

export interface SshIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** Variables the client sent (only GIT_PROTOCOL is read). */
  env: Record<string, string>;
  /** Called once the command's process runs, with a way to stop it (the client went away, the server stops). */
  onStop?: (stop: () => void) => void;
  log: (err: unknown, msg: string) => void;
}

/** Writes everything of `from` to `to` without ending `to`; resolves once `from` has ended. */
function copy(from: Readable, to: Writable): Promise<void> {
  return new Promise((resolve) => {
    from.on('end', resolve);
    from.on('error', () => resolve());
    from.pipe(to, { end: false });
  });
}

/**
 * Runs `command` for the key `ref` over `io` and resolves with the exit status: 0 when served (or greeted), 1
 * when refused (the reason on stderr) or when git failed.
 */
export async function runSshCommand(deps: ServiceDeps, ref: SshKeyRef, command: string | undefined, io: SshIo): Promise<number> {
  const refuse = (message: string) => {
    io.stderr.write(terminalMessage(message));
    return 1;
  };
  let parsed: SshCommand;
  let target;
  let greeting: string;
  try {
    const actor = await sshActor(deps, ref);
    greeting = actor.greeting;
    parsed = parseSshCommand(command);
    if (parsed.kind === 'welcome') {
      io.stdout.write(welcome(greeting));
      return 0;
    }
    target = await openGitTarget(deps, actor.identity, parsed.path, parsed.service);
  } catch (e) {
    if (e instanceof GitRefusal) return refuse(e.message);
    throw e;
  }
  const { repo } = target;
  if (parsed.service === 'git-receive-pack') {
    // A push runs as over HTTP: the refs first, then the command list, decided before receive-pack sees it.
    io.stdout.write(await repo.advertisement('receive-pack'));
    const head = await readPushHead(io.stdin).catch(() => null);
    // Nothing to push (a flush alone) or a client that went away.
    if (!head || head.commands.length === 0) return head ? 0 : 1;
    const answer = await servePush(deps, target, head, io.stdin, io.log);
    if (Buffer.isBuffer(answer)) io.stdout.write(answer);
    else await copy(answer, io.stdout);
    return 0;
  }
  const env = parsed.service === 'git-upload-pack' ? gitProtocolEnv(io.env.GIT_PROTOCOL) : {};
  const child = repo.serve(parsed.service === 'git-upload-pack' ? 'upload-pack' : 'upload-archive', { env, stderr: true });
  io.onStop?.(() => child.kill('SIGKILL'));
  child.stdin!.on('error', () => {});
  io.stdin.on('error', () => child.kill('SIGKILL'));
  io.stdin.pipe(child.stdin!);
  const done = Promise.all([copy(child.stdout!, io.stdout), copy(child.stderr!, io.stderr)]);
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  await done;
  return code === 0 ? 0 : 1;
}
