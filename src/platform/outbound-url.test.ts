import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../test/support/app.ts';
import { updateApplicationSettings } from './application-settings.ts';
import { addressProblem, checkOutboundUrl, gitPinning, redactCredentials, withoutCredentials, BlockedUrlError, type Resolver } from './outbound-url.ts';

// The outbound URL guard: which addresses are refused and why (the reference's sentences), the setting that lets
// local ones through, names resolved (every answer checked), and the pinning git connects with.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const LOCAL = 'Requests to localhost are not allowed';
const table: Array<[string, string | null]> = [
  ['8.8.8.8', null],
  ['2606:4700:4700::1111', null],
  ['127.0.0.1', LOCAL], // an address of this machine
  ['0.0.0.0', LOCAL],
  ['::', LOCAL],
  ['127.0.0.2', 'Requests to loopback addresses are not allowed'],
  ['10.1.2.3', 'Requests to the local network are not allowed'],
  ['172.16.0.1', 'Requests to the local network are not allowed'],
  ['172.31.255.255', 'Requests to the local network are not allowed'],
  ['172.32.0.1', null],
  ['192.168.1.1', 'Requests to the local network are not allowed'],
  ['fd12:3456::1', 'Requests to the local network are not allowed'],
  ['169.254.169.254', 'Requests to the link local network are not allowed'],
  ['fe80::1', 'Requests to the link local network are not allowed'],
  ['100.64.0.1', 'Requests to the shared address space are not allowed'],
  ['100.127.255.255', 'Requests to the shared address space are not allowed'],
  ['100.128.0.1', null],
  ['224.0.0.1', 'Requests to multicast addresses are not allowed'],
  ['ff02::1', 'Requests to multicast addresses are not allowed'],
  ['255.255.255.255', 'Requests to the limited broadcast address are not allowed'],
  ['::ffff:127.0.0.2', 'Requests to loopback addresses are not allowed'],
  ['::ffff:7f00:2', 'Requests to loopback addresses are not allowed'],
  ['::ffff:10.0.0.1', 'Requests to the local network are not allowed'],
  ['::ffff:169.254.1.1', 'Requests to the link local network are not allowed'],
  ['::ffff:8.8.8.8', null],
];

for (const [address, reason] of table) {
  test(`${address}: ${reason ?? 'allowed'}`, () => {
    assert.equal(addressProblem(address), reason);
    // The setting lets every local address through; multicast and broadcast never are.
    const always = reason && /multicast|broadcast/.test(reason) ? reason : null;
    assert.equal(addressProblem(address, true), always);
  });
}

const names: Record<string, string[]> = { 'public.test': ['93.184.216.34'], 'inner.test': ['10.0.0.5'], 'mixed.test': ['93.184.216.34', '192.168.0.9'], 'v6.test': ['::1'] };
const resolver: Resolver = async (host) => (names[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const guard = (url: string) => checkOutboundUrl(t.app, url, { schemes: ['http', 'https', 'git'], allowLocal: 'allow_local_requests_from_web_hooks_and_services', resolver });
const refusal = async (url: string) => {
  try {
    await guard(url);
    return null;
  } catch (e) {
    assert.ok(e instanceof BlockedUrlError);
    return e.message;
  }
};

test('URLs: scheme, port, user name, names resolved with every answer checked; the setting allows local ones', async () => {
  await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: false });
  assert.equal(await refusal('ftp://public.test/x'), 'Only allowed schemes are http, https, git');
  assert.equal(await refusal('not a url'), 'URI is invalid');
  assert.equal(await refusal('http://public.test:22/x'), 'Only allowed ports are 80, 443, and any over 1024');
  assert.equal(await refusal('http://-oProxy@public.test/x'), 'Username needs to start with an alphanumeric character');
  assert.equal(await refusal('http://nowhere.test/x'), 'Host cannot be resolved or invalid');
  assert.equal(await refusal('http://inner.test/x'), 'Requests to the local network are not allowed');
  assert.equal(await refusal('http://mixed.test/x'), 'Requests to the local network are not allowed');
  assert.equal(await refusal('http://v6.test/x'), LOCAL);
  assert.equal(await refusal('http://[::ffff:127.0.0.2]/x'), 'Requests to loopback addresses are not allowed');
  assert.equal(await refusal('http://2130706434/x'), 'Requests to loopback addresses are not allowed'); // 127.0.0.2, the URL parser normalises it
  assert.equal(await refusal('http://169.254.169.254/latest/meta-data'), 'Requests to the link local network are not allowed');
  const ok = await guard('https://user:s3cret@public.test:8443/group/repo.git');
  assert.deepEqual([ok.url.toString(), ok.username, ok.password, ok.host, ok.port, ok.address, ok.family],
    ['https://public.test:8443/group/repo.git', 'user', 's3cret', 'public.test', 8443, '93.184.216.34', 4]);
  assert.equal((await guard('git://public.test/repo.git')).port, 9418);

  await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: true });
  assert.equal((await guard('http://inner.test/x')).address, '10.0.0.5');
  assert.equal((await guard('http://127.0.0.1:9000/x')).address, '127.0.0.1');
  assert.equal(await refusal('http://224.0.0.1/x'), 'Requests to multicast addresses are not allowed');
  await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: false });
  assert.equal(await refusal('http://127.0.0.1:9000/x'), LOCAL);
});

test('git connects to the checked address only, credentials in a header held in the environment', async () => {
  const target = await guard('https://user:s3cret@public.test:8443/repo.git');
  const { url, env } = gitPinning(target);
  assert.equal(url, 'https://public.test:8443/repo.git');
  const config = Object.fromEntries(Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]));
  assert.deepEqual(config, {
    'protocol.allow': 'never', 'protocol.https.allow': 'always', 'http.followRedirects': 'false', 'credential.helper': '',
    'http.curloptResolve': 'public.test:8443:93.184.216.34',
    'http.extraHeader': `Authorization: Basic ${Buffer.from('user:s3cret').toString('base64')}`,
  });
  assert.equal(gitPinning(await guard('git://public.test/repo.git')).url, 'git://93.184.216.34/repo.git');
});

test('credentials never shown: URLs and messages', () => {
  assert.equal(withoutCredentials('https://user:pw@example.com/a.git'), 'https://example.com/a.git');
  assert.equal(withoutCredentials('git://example.com/a.git'), 'git://example.com/a.git');
  assert.equal(withoutCredentials(null), null);
  assert.equal(redactCredentials("fatal: unable to access 'https://bob:hunter22@example.com/bob/x/': hunter22 refused", { password: 'hunter22' }),
    "fatal: unable to access 'https://example.com/bob/x/': [FILTERED] refused");
});
