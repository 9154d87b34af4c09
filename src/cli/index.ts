import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../config/index.ts';
import { openDatabase } from '../platform/db/index.ts';
import { systemClock } from '../platform/clock.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { createReadCaches } from '../platform/read-cache.ts';
import { JobQueue } from '../platform/jobs/queue.ts';
import { registerJobs } from '../resources/index.ts';
import { createUser, getUserOr404 } from '../resources/users/users.service.ts';
import { createPersonalAccessToken } from '../resources/access-tokens/access-tokens.service.ts';

async function withDeps<T>(fn: (deps: ServiceDeps) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  // One command reads nothing twice: no read cache.
  const caches = createReadCaches({ window: 0 });
  try {
    await database.migrate();
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
    const shown = { ...c, databaseUrl: c.databaseUrl ? c.databaseUrl.replace(/\/\/([^@/]*)@/, '//***@') : null, rootPassword: hide(c.rootPassword), rootToken: hide(c.rootToken) };
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
      await withDeps(async (deps) => {
        const u = await getUserOr404(deps, o.user);
        const { token: secret } = await createPersonalAccessToken(deps, u, {
          name: o.name, scopes: String(o.scopes).split(',').map((s: string) => s.trim()).filter(Boolean), expiresAt: o.expiresAt ?? null,
        });
        console.log(secret);
      });
    });

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`bellows: configuration error: ${e.message}`);
      process.exit(78);
    }
    const msg = (e as any)?.errors ? JSON.stringify((e as any).errors) : (e as Error).message;
    console.error(`bellows: ${msg}`);
    process.exit(1);
  }
}
