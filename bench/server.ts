// The server under benchmark, run as its own process: the application on PORT and, on PORT+1, a bare
// Fastify route returning a fixed JSON body (the ceiling of this machine and runtime). With BENCH_WORKERS=n,
// n worker processes serve both ports, as `bellows serve` does with `workers: n`.
import cluster from 'node:cluster';
import Fastify from 'fastify';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { buildApp } from '../src/app.ts';
import { relayCacheVoids } from '../src/platform/cache-bus.ts';

const port = Number(process.env.PORT ?? 18080);
const workers = Number(process.env.BENCH_WORKERS ?? 1);
const config = loadConfig({ ...process.env, PORT: String(port), BELLOWS_LOG_LEVEL: 'silent' });

if (cluster.isPrimary) {
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.migrate();
  if (workers > 1) {
    await database.close();
    relayCacheVoids();
    let listening = 0;
    for (let i = 0; i < workers; i++) {
      // Each worker listens twice (application and ceiling).
      cluster.fork().on('listening', () => {
        if (++listening === workers * 2) process.stdout.write('ready\n');
      });
    }
    process.on('SIGTERM', () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(0);
    });
  } else {
    await listen(database);
    process.stdout.write('ready\n');
  }
} else {
  await listen(openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
}

async function listen(database: ReturnType<typeof openDatabase>) {
  const app = await buildApp({ config, database, logger: false });
  await app.listen({ port, host: '127.0.0.1' });
  const bare = Fastify({ logger: false });
  const body = { id: 1, name: 'fixed', path_with_namespace: 'bench/fixed', visibility: 'public', star_count: 0 };
  bare.get('/', async () => body);
  await bare.listen({ port: port + 1, host: '127.0.0.1' });
}
