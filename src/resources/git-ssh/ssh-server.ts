// Git over SSH inside `bellows serve` (the ssh2 package, no system sshd): public-key sign-in for the user `git`
// only, one exec (a git service) or shell (the welcome) per session, nothing else: no password or
// keyboard-interactive methods, no port forwarding, agent, X11 or subsystems. Limits: a connection must sign in
// within LOGIN_GRACE_MS and may sit without a running command for IDLE_MS; a key runs at most
// `maxSessionsPerKey` commands at once (per server process).
import { createRequire } from 'node:module';
import { createServer, type Socket } from 'node:net';
import type ssh2 from 'ssh2';
import type { Connection, ServerChannel } from 'ssh2';
import type { ServiceDeps } from '../../platform/deps.ts';
import { findSshKey, SSH_MESSAGES, type SshKeyRef } from './git-ssh.service.ts';
import { runSshCommand, terminalMessage } from './ssh-command.ts';

// The SSH library is loaded by the first connection, not by every worker's start (about 50 ms of it).
let library: typeof ssh2 | undefined;
const sshLibrary = (): typeof ssh2 => (library ??= createRequire(import.meta.url)('ssh2') as typeof ssh2);

export interface SshServerOptions {
  hostKeys: Buffer[];
  /** Time to sign in after connecting. */
  loginGraceMs?: number;
  /** Time a signed-in connection may hold no running command. */
  idleMs?: number;
  maxSessionsPerKey?: number;
  /** Failed public-key attempts before the connection is closed (OpenSSH's MaxAuthTries). */
  maxAuthTries?: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface SshServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, closes connections that run nothing and stops the rest after `graceMs`. */
  close(graceMs?: number): Promise<void>;
  /** Commands running now, by key (`user:<id>` / `deploy_key:<id>`). */
  running: Map<string, number>;
}

const GIT_USER = 'git';

export function createSshServer(deps: ServiceDeps, o: SshServerOptions): SshServer {
  const loginGraceMs = o.loginGraceMs ?? 30_000;
  const idleMs = o.idleMs ?? 60_000;
  const maxSessions = o.maxSessionsPerKey ?? 10;
  const maxAuthTries = o.maxAuthTries ?? 6;
  const running = new Map<string, number>();
  // Each connection with the number of commands it runs now.
  const connections = new Map<Connection, { active: number }>();
  const stops = new Set<() => void>();
  // The sign-in deadline of each TCP connection, by address and port: ssh2 shows a connection only once the
  // client has spoken, and one that never does must not hold a socket either.
  const deadlines = new Map<string, NodeJS.Timeout>();

  let server: ssh2.Server | undefined;
  const sshServer = () => (server ??= new (sshLibrary().Server)({ hostKeys: o.hostKeys, ident: 'Bellows' }, (client, info) => {
    const state = { active: 0 };
    connections.set(client, state);
    let key: SshKeyRef | null = null;
    let failures = 0;
    let idleTimer: NodeJS.Timeout | undefined;
    const peer = `${info.ip}:${info.port}`;
    const login = deadlines.get(peer);
    const idle = () => {
      clearTimeout(idleTimer);
      if (state.active === 0) idleTimer = setTimeout(() => client.end(), idleMs);
    };
    client.on('close', () => {
      clearTimeout(login);
      clearTimeout(idleTimer);
      connections.delete(client);
    });
    client.on('error', () => {});

    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey' || ctx.username !== GIT_USER) return ctx.reject(['publickey']);
      const blob = ctx.key.data;
      findSshKey(deps, blob).then((found) => {
        if (!found) return fail();
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature) return ctx.accept();
        const parsed = sshLibrary().utils.parseKey(blob);
        if (parsed instanceof Error || !ctx.blob || parsed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return fail();
        key = found;
        ctx.accept();
      }, (err) => {
        o.log.error({ err }, 'looking up an SSH key failed');
        ctx.reject(['publickey']);
      });
      function fail() {
        ctx.reject(['publickey']);
        if (++failures >= maxAuthTries) client.end();
      }
    });

    client.on('ready', () => {
      clearTimeout(login);
      idle();
      const ref = key!;
      const slot = `${ref.kind}:${ref.id}`;
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        const env: Record<string, string> = {};
        session.on('env', (accept, reject, e) => {
          if (e.key === 'GIT_PROTOCOL') {
            env.GIT_PROTOCOL = e.val;
            accept?.();
          } else reject?.();
        });
        // An interactive `ssh git@host` asks for a terminal: granted, it only ever shows the welcome.
        session.on('pty', (accept) => accept?.());
        const start = (channel: ServerChannel, command: string | undefined) => {
          if ((running.get(slot) ?? 0) >= maxSessions) {
            channel.stderr.write(terminalMessage(SSH_MESSAGES.tooManySessions));
            channel.exit(1);
            channel.end();
            return;
          }
          running.set(slot, (running.get(slot) ?? 0) + 1);
          state.active++;
          clearTimeout(idleTimer);
          let stop: (() => void) | undefined;
          channel.on('close', () => stop?.());
          runSshCommand(deps, ref, command, {
            stdin: channel, stdout: channel, stderr: channel.stderr, env,
            onStop: (s) => {
              stop = s;
              stops.add(s);
            },
            log: (err, msg) => o.log.error({ err }, msg),
          }).catch((err) => {
            o.log.error({ err, ip: info.ip }, 'an SSH command failed');
            return 1;
          }).then((code) => {
            if (stop) stops.delete(stop);
            const left = (running.get(slot) ?? 1) - 1;
            if (left > 0) running.set(slot, left);
            else running.delete(slot);
            state.active--;
            channel.exit(code);
            channel.end();
            idle();
          });
        };
        session.on('exec', (accept, _reject, e) => start(accept(), e.command));
        session.on('shell', (accept) => start(accept(), undefined));
      });
    });
    // Port forwarding (local and remote), agent and X11 are never granted: ssh2 refuses every request nobody
    // listens for, and these handlers say so explicitly for the global requests.
    client.on('request', (_accept, reject) => reject?.());
    client.on('tcpip', (_accept, reject) => reject());
    client.on('openssh.streamlocal', (_accept, reject) => reject());
  }));
  const tcp = createServer((socket: Socket) => {
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    deadlines.set(peer, setTimeout(() => socket.destroy(), loginGraceMs));
    socket.once('close', () => {
      clearTimeout(deadlines.get(peer));
      deadlines.delete(peer);
    });
    try {
      sshServer().injectSocket(socket);
    } catch (err) {
      // The library or the host keys could not be loaded: this connection is refused, the server goes on.
      o.log.error({ err }, 'SSH server error');
      socket.destroy();
    }
  });
  tcp.on('error', (err: Error) => o.log.error({ err }, 'SSH server error'));

  return {
    running,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, host, () => {
          tcp.off('error', reject);
          resolve((tcp.address() as { port: number }).port);
        });
      });
    },
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const [c, st] of connections) if (st.active === 0) c.end();
      const timer = setTimeout(() => {
        for (const s of stops) s();
        for (const c of connections.keys()) c.end();
      }, graceMs);
      timer.unref();
      await closed;
      clearTimeout(timer);
    },
  };
}
