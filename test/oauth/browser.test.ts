import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { systemClock } from '../../src/platform/clock.ts';
import { s256 } from '../../src/platform/crypto/pkce.ts';
import { makeUser } from '../support/fixtures.ts';
import { listeningApp } from './listen.ts';

// A real browser signs in, registers an application, and runs the authorization-code flow with PKCE
// against a small local callback server; the code is exchanged and the token calls the API.

const CHROMIUM = '/usr/bin/chromium';
const skip = !existsSync(CHROMIUM) && !process.env.CI
  ? `chromium is not installed at ${CHROMIUM} (apt-get install -y chromium); the browser test runs only where it is`
  : false;

function callbackServer(): Promise<{ server: Server; url: string; hits: URL[] }> {
  const hits: URL[] = [];
  const server = createServer((req, res) => {
    hits.push(new URL(req.url!, 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Callback</title><p>Signed in.</p>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/callback`, hits });
  }));
}

test('browser: sign in, register an application, authorize with PKCE, call the API', { skip, timeout: 60_000 }, async () => {
  // Real time: the browser judges cookie expiry against its own clock.
  const t = await listeningApp({ clock: systemClock });
  const cb = await callbackServer();
  const userDataDir = mkdtempSync(join(tmpdir(), 'bellows-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    const u = await makeUser(t.app, { password: 'correct horse battery' });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);

    // Signed out: the applications page sends us to sign in and back.
    await page.goto(`${t.base}/profile/applications`);
    assert.equal(new URL(page.url()).pathname, '/users/sign_in');
    await page.getByLabel('Username or email').fill(u.user.username);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${t.base}/profile/applications`);

    // Register a public client (no secret: PKCE protects the code).
    await page.getByLabel('Name').fill('Browser client');
    await page.getByLabel('Redirect URI').fill(cb.url);
    await page.locator('#confidential').uncheck();
    await page.locator('input[name="scopes[]"][value="read_user"]').check();
    await page.locator('input[name="scopes[]"][value="api"]').check();
    await page.getByRole('button', { name: 'Save application' }).click();
    const clientId = (await page.locator('#application_id').textContent())!.trim();
    assert.match(clientId, /^[0-9a-f]{64}$/);
    assert.match((await page.locator('#secret').textContent())!, /^gloas-[0-9a-f]{64}$/);

    // Authorization request with PKCE.
    const verifier = 'browser-test-verifier-0123456789-abcdefghijklmnop';
    const state = 'state-from-the-client';
    const authorizeUrl = `${t.base}/oauth/authorize?${new URLSearchParams({
      client_id: clientId, redirect_uri: cb.url, response_type: 'code', scope: 'read_user', state,
      code_challenge: s256(verifier), code_challenge_method: 'S256',
    })}`;
    await page.goto(authorizeUrl);
    await page.getByRole('heading', { name: 'Authorize Browser client to use your account?' }).waitFor();
    mkdirSync('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/consent.png', fullPage: true });
    await page.getByRole('button', { name: 'Authorize Browser client' }).click();
    await page.waitForURL((url) => url.href.startsWith(cb.url));

    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), state);
    const code = callback.searchParams.get('code')!;
    assert.match(code, /^[0-9a-f]{64}$/);
    assert.equal(cb.hits.filter((h) => h.pathname === '/callback').length, 1);

    // The client exchanges the code and calls the API.
    const tokenRes = await fetch(`${t.base}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: cb.url, code_verifier: verifier }),
    });
    assert.equal(tokenRes.status, 200);
    const tokens = (await tokenRes.json()) as { access_token: string; scope: string; token_type: string };
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'read_user');
    const me = await fetch(`${t.base}/api/v4/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { username: string }).username, u.user.username);

    // The application now shows among the authorized ones.
    await page.goto(`${t.base}/profile/applications`);
    await page.getByRole('heading', { name: 'Authorized applications (1)' }).waitFor();
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
    await new Promise((r) => cb.server.close(r));
    await t.close();
  }
});
