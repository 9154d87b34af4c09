import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import { loadConfig } from './config/index.ts';
import { openDatabase } from './platform/db/index.ts';
import { buildApp } from './app.ts';
import { ensureRoot } from './resources/users/users.service.ts';
import { systemClock } from './platform/clock.ts';

/** `bellows serve`: migrate, make sure root exists, listen, and stop gracefully on SIGTERM/SIGINT. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  mkdirSync(config.dataDir, { recursive: true });
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.migrate();
  const deps = { db: database.db, config, clock: systemClock };
  const passwordFile = join(config.dataDir, 'initial_root_password');
  const root = await ensureRoot(deps, {
    password: config.rootPassword, token: config.rootToken, passwordFile,
    writeFile: (p, c) => writeFileSync(p, c, { mode: 0o600 }),
  });
  const app = await buildApp({
    config, database,
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers["private-token"]', 'req.headers.cookie', 'req.headers.sudo'], remove: true },
      serializers: {
        // Query strings may carry private_token/access_token: log the path only.
        req: (r: any) => ({ method: r.method, path: String(r.url).split('?')[0], remote_ip: r.ip }),
      },
    },
  });
  if (root.created) app.log.info({ passwordFile: root.generatedPassword ? passwordFile : undefined }, 'created the root administrator');
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'stopping after an error');
    else app.log.info({ signal }, 'stopping');
    await app.close();
    await database.close();
  });
  await app.listen({ port: config.port, host: config.host });
}
