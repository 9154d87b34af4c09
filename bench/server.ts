// The server under benchmark, run as its own process: the application on PORT and, on PORT+1, a bare
// Fastify route returning a fixed JSON body (the ceiling of this machine and runtime).
import Fastify from 'fastify';
import { loadConfig } from '../src/config/index.ts';
import { openDatabase } from '../src/platform/db/index.ts';
import { buildApp } from '../src/app.ts';

const port = Number(process.env.PORT ?? 18080);
const config = loadConfig({ ...process.env, PORT: String(port), BELLOWS_LOG_LEVEL: 'silent' });
const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await database.migrate();
const app = await buildApp({ config, database, logger: false });
await app.listen({ port, host: '127.0.0.1' });

const bare = Fastify({ logger: false });
const body = { id: 1, name: 'fixed', path_with_namespace: 'bench/fixed', visibility: 'public', star_count: 0 };
bare.get('/', async () => body);
await bare.listen({ port: port + 1, host: '127.0.0.1' });
process.stdout.write('ready\n');
