import { createServer } from 'node:net';
import { buildTestApp, type TestApp } from '../support/app.ts';
import type { Clock } from '../../src/platform/clock.ts';

/** A free local port (the server's external URL must name it before the app is built). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A whole application listening on 127.0.0.1, with its external URL pointing at itself. */
export async function listeningApp(o: { clock?: Clock } = {}): Promise<TestApp & { base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await buildTestApp({ config: { externalUrl: base }, clock: o.clock });
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, { base });
}

export function setCookies(res: Response): string[] {
  return res.headers.getSetCookie().map((c) => c.split(';')[0]);
}

/** Signs in over HTTP; returns the Cookie header value of the session. */
export async function httpSignIn(base: string, login: string, password = 'password123'): Promise<string> {
  const page = await fetch(`${base}/users/sign_in`);
  const pre = setCookies(page).find((c) => c.startsWith('_service_csrf='))!;
  const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())![1];
  const res = await fetch(`${base}/users/sign_in`, {
    method: 'POST', redirect: 'manual', headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login, password, authenticity_token: token }),
  });
  if (res.status !== 302) throw new Error(`sign-in failed: ${res.status}`);
  return setCookies(res).find((c) => c.startsWith('_service_session='))!;
}
