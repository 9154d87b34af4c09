import { createServer } from 'node:net';
import { buildTestApp, type TestApp } from './app.ts';

// A test application listening on a free local port, its external URL that address, for @gitbeaker/rest to drive.

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as any).port;
      s.close(() => resolve(port));
    });
  });
}

export async function listeningTestApp(): Promise<{ t: TestApp; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ config: { externalUrl: base } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, base };
}
