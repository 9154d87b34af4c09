import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../config/index.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { JOB_STATES, discardJob, listJobs, retryJob } from '../platform/jobs/admin.ts';

// Each command loads what it uses when it runs: `serve` starts its worker processes before the application's
// modules are read, and the other commands do not read the server's.

async function withDeps<T>(fn: (deps: ServiceDeps) => Promise<T>, o: { migrate?: boolean } = {}): Promise<T> {
  const [{ openDatabase }, { systemClock }, { createReadCaches }, { JobQueue }, { registerJobs }] = await Promise.all([
    import('../platform/db/index.ts'), import('../platform/clock.ts'), import('../platform/read-cache.ts'),
    import('../platform/jobs/queue.ts'), import('../resources/index.ts'),
  ]);
  const config = loadConfig();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // One command reads nothing twice: no read cache.
  const caches = createReadCaches({ window: 0 });
  try {
    if (o.migrate !== false) await database.migrate();
    // Jobs are only queued here; a running server claims them.
    const deps: ServiceDeps = { db: database.db, config, clock: systemClock, caches, jobs: new JobQueue({ db: database.db, clock: systemClock }) };
    registerJobs(deps);
    return await fn(deps);
  } finally {
    caches.close();
    await database.close();
  }
}

const dateArg = (v: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) throw new InvalidArgumentError('expected YYYY-MM-DD');
  return v;
};

export function buildCli(): Command {
  const program = new Command('bellows').description('Bellows: a self-hosted code collaboration server').showHelpAfterError();

  // The server (Fastify and every route) is loaded only for `serve`, so the other commands start quickly.
  program.command('serve').description('run the server (migrates the database first)').action(async () => {
    const { serve } = await import('../main.ts');
    await serve();
  });

  program.command('migrate').description('apply pending database migrations').action(async () => {
    const { openDatabase } = await import('../platform/db/index.ts');
    const config = loadConfig();
    const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await database.migrate();
    await database.close();
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  });

  const configCmd = program.command('config').description('inspect the configuration');
  configCmd.command('check').description('validate the settings and print them (secrets hidden)').action(() => {
    const c = loadConfig();
    const hide = (v: string | null) => (v ? '(set)' : null);
    const shown = { ...c, databaseUrl: c.databaseUrl ? c.databaseUrl.replace(/\/\/([^@/]*)@/, '//***@') : null, rootPassword: hide(c.rootPassword), rootToken: hide(c.rootToken), smtp: { ...c.smtp, password: hide(c.smtp.password) } };
    console.log(JSON.stringify(shown, null, 2));
  });

  const user = program.command('user').description('manage users');
  user.command('create')
    .requiredOption('--username <username>')
    .requiredOption('--email <email>')
    .option('--name <name>')
    .option('--password <password>', 'at least 8 characters')
    .option('--admin', 'grant administrator rights', false)
    .action(async (o) => {
      const { createUser } = await import('../resources/users/users.service.ts');
      await withDeps(async (deps) => {
        const u = await createUser(deps, { username: o.username, email: o.email, name: o.name ?? o.username, password: o.password ?? null, admin: o.admin });
        console.log(JSON.stringify({ id: u.id, username: u.username, admin: !!u.admin }));
      });
    });

  const token = program.command('token').description('manage access tokens');
  token.command('create')
    .requiredOption('--user <id-or-username>')
    .option('--name <name>', 'token name', 'cli')
    .option('--scopes <scopes>', 'comma-separated scopes', 'api')
    .option('--expires-at <date>', 'YYYY-MM-DD', dateArg)
    .action(async (o) => {
      const { getUserOr404 } = await import('../resources/users/users.service.ts');
      const { createPersonalAccessToken } = await import('../resources/access-tokens/access-tokens.service.ts');
      await withDeps(async (deps) => {
        const u = await getUserOr404(deps, o.user);
        const { token: secret } = await createPersonalAccessToken(deps, u, {
          name: o.name, scopes: String(o.scopes).split(',').map((s: string) => s.trim()).filter(Boolean), expiresAt: o.expiresAt ?? null,
        });
        console.log(secret);
      });
    });

  const jobs = program.command('jobs').description('inspect and steer the background job queue');
  const positiveInt = (v: string) => {
    if (!/^[1-9]\d{0,9}$/.test(v)) throw new InvalidArgumentError('expected a positive integer');
    return Number(v);
  };
  jobs.command('list').description('the newest jobs, one JSON object per line')
    .option('--state <state>', JOB_STATES.join(' | '))
    .option('--kind <kind>')
    .option('--limit <n>', 'at most this many', positiveInt, 50)
    .action(async (o) => {
      if (o.state && !(JOB_STATES as readonly string[]).includes(o.state)) throw new InvalidArgumentError(`--state must be one of ${JOB_STATES.join(', ')}`);
      await withDeps(async (deps) => {
        for (const j of await listJobs(deps.db, { state: o.state, kind: o.kind, limit: o.limit })) {
          console.log(JSON.stringify({ id: j.id, kind: j.kind, state: j.state, attempts: j.attempts, max_attempts: j.max_attempts, run_at: new Date(j.run_at).toISOString(), locked_by: j.locked_by, last_error: j.last_error?.split('\n')[0] ?? null, args: JSON.parse(j.args) }));
        }
      });
    });
  jobs.command('retry <id>').description('run a dead or discarded job again').action(async (id: string) => {
    await withDeps(async (deps) => {
      if (!(await retryJob(deps.db, deps.clock, positiveInt(id)))) throw new Error(`job ${id} is not dead or discarded`);
      console.log(`job ${id} queued`);
    });
  });
  jobs.command('discard <id>').description('never run a queued or dead job').action(async (id: string) => {
    await withDeps(async (deps) => {
      if (!(await discardJob(deps.db, deps.clock, positiveInt(id)))) throw new Error(`job ${id} is not queued or dead`);
      console.log(`job ${id} discarded`);
    });
  });

  // For the system's OpenSSH (see README "Git over SSH"): run by sshd for every connection and command, so they
  // leave migrating to the server and print nothing but what sshd and the git client read.
  const ssh = program.command('ssh').description("git over the system's OpenSSH (AuthorizedKeysCommand and forced command)");
  ssh.command('authorized-keys <key-type> <key>').description('print the authorized_keys line of a known key (AuthorizedKeysCommand ... %t %k)')
    .action(async (type: string, key: string) => {
      const { authorizedKeysLine } = await import('../resources/git-ssh/openssh.ts');
      const line = await withDeps((deps) => authorizedKeysLine(deps, type, key, [process.execPath, resolve(process.argv[1]!)]), { migrate: false });
      if (line) console.log(line);
    });
  ssh.command('shell <key-id>').description('serve SSH_ORIGINAL_COMMAND for a key (the forced command of authorized-keys)')
    .action(async (keyId: string) => {
      const { parseKeyId } = await import('../resources/git-ssh/openssh.ts');
      const { runSshCommand } = await import('../resources/git-ssh/ssh-command.ts');
      const ref = parseKeyId(keyId);
      if (!ref) throw new InvalidArgumentError('expected key-<id> or deploy-key-<id>');
      const code = await withDeps((deps) => runSshCommand(deps, ref, process.env.SSH_ORIGINAL_COMMAND, {
        stdin: process.stdin, stdout: process.stdout, stderr: process.stderr,
        env: process.env.GIT_PROTOCOL ? { GIT_PROTOCOL: process.env.GIT_PROTOCOL } : {},
        log: (err, msg) => process.stderr.write(`bellows: ${msg}: ${(err as Error)?.message ?? err}\n`),
      }), { migrate: false });
      // Everything written reaches the client before the process ends.
      await new Promise<void>((done) => process.stdout.write('', () => done()));
      process.exit(code);
    });

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      // A worker of `serve` reads the configuration its primary reads, and the primary says what is wrong: the
      // first worker, forked before the primary read it, would otherwise print the same line a second time.
      if (!cluster.isWorker) console.error(`bellows: configuration error: ${e.message}`);
      process.exit(78);
    }
    const msg = (e as any)?.errors ? JSON.stringify((e as any).errors) : (e as Error).message;
    console.error(`bellows: ${msg}`);
    process.exit(1);
  }
}
