import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, ConfigError, FILE_KEYS } from '../../src/config/index.ts';
import { runCli } from './processes.ts';

// Settings: defaults, then the config file, then the environment; invalid values stop start-up.

const dir = mkdtempSync(join(tmpdir(), 'bellows-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('loadConfig', () => {
  test('defaults', () => {
    const c = loadConfig({});
    assert.deepEqual({ ...c, storage: undefined }, {
      port: 8080,
      host: '127.0.0.1',
      dataDir: resolve('data'),
      externalUrl: 'http://127.0.0.1:8080',
      databaseUrl: null,
      rootPassword: null,
      rootToken: null,
      logLevel: 'info',
      impersonationEnabled: true,
      adminMode: false,
      passwordHashCost: 15,
      maxQueryStringBytes: 8192,
      rateLimit: { authenticatedPerPeriod: 0, unauthenticatedPerPeriod: 0, periodSeconds: 60 },
      storage: undefined,
      monitoringAllowlist: ['127.0.0.0/8', '::1'],
      authCacheMs: 2000,
      dbStatementTimeoutMs: 15000,
      workers: Math.min(16, availableParallelism()),
      defaultBranchProtection: 2,
      sshEnabled: true,
      sshPort: 2222,
      sshHost: '127.0.0.1',
      smtp: { address: null, port: 25, user: null, password: null, tls: false },
      emailFrom: 'bellows@127.0.0.1',
    });
    assert.deepEqual(c.storage, [{ name: 'default', path: resolve('data', 'repositories'), weight: 100 }]);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.rateLimit), 'frozen');
  });

  test('default_branch_protection: 0 to 4', () => {
    assert.equal(loadConfig({ BELLOWS_DEFAULT_BRANCH_PROTECTION: '0' }).defaultBranchProtection, 0);
    assert.throws(() => loadConfig({ BELLOWS_DEFAULT_BRANCH_PROTECTION: '5' }), /BELLOWS_DEFAULT_BRANCH_PROTECTION/);
  });

  test('ssh: enabled, port and host (the external URL\'s host by default)', () => {
    assert.equal(loadConfig({ BELLOWS_EXTERNAL_URL: 'https://git.example.com/x' }).sshHost, 'git.example.com');
    const c = loadConfig({ BELLOWS_SSH_ENABLED: 'false', BELLOWS_SSH_PORT: '22', BELLOWS_SSH_HOST: 'ssh.example.com' });
    assert.deepEqual([c.sshEnabled, c.sshPort, c.sshHost], [false, 22, 'ssh.example.com']);
    assert.throws(() => loadConfig({ BELLOWS_SSH_PORT: '70000' }), /BELLOWS_SSH_PORT must be an integer between 0 and 65535, got "70000"/);
    assert.throws(() => loadConfig({ BELLOWS_SSH_ENABLED: 'maybe' }), /ssh_enabled must be true or false, got "maybe"/);
    assert.throws(() => loadConfig({ BELLOWS_SSH_HOST: 'a b' }), /BELLOWS_SSH_HOST must be a host name or address, got "a b"/);
  });

  test('smtp: address, port, user, password, tls and the From address', () => {
    const c = loadConfig({
      BELLOWS_SMTP_ADDRESS: 'smtp.example.com', BELLOWS_SMTP_PORT: '465', BELLOWS_SMTP_USER: 'u', BELLOWS_SMTP_PASSWORD: 'p',
      BELLOWS_SMTP_TLS: 'true', BELLOWS_EMAIL_FROM: 'git@example.com',
    });
    assert.deepEqual([c.smtp, c.emailFrom], [{ address: 'smtp.example.com', port: 465, user: 'u', password: 'p', tls: true }, 'git@example.com']);
    assert.equal(loadConfig({ BELLOWS_EXTERNAL_URL: 'https://git.example.com' }).emailFrom, 'bellows@git.example.com');
    assert.throws(() => loadConfig({ BELLOWS_SMTP_PORT: '0' }), /BELLOWS_SMTP_PORT must be an integer between 1 and 65535, got "0"/);
    assert.throws(() => loadConfig({ BELLOWS_SMTP_TLS: 'maybe' }), /smtp_tls must be true or false, got "maybe"/);
    assert.throws(() => loadConfig({ BELLOWS_SMTP_ADDRESS: 'a b' }), /BELLOWS_SMTP_ADDRESS must be a host name or address, got "a b"/);
    assert.throws(() => loadConfig({ BELLOWS_EMAIL_FROM: 'nobody' }), /BELLOWS_EMAIL_FROM must be an e-mail address, got "nobody"/);
  });

  test('workers: a count, or auto for one per core', () => {
    assert.equal(loadConfig({ BELLOWS_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({ BELLOWS_WORKERS: 'auto' }).workers, Math.min(16, availableParallelism()));
    assert.throws(() => loadConfig({ BELLOWS_WORKERS: '0' }), /BELLOWS_WORKERS must be an integer between 1 and 64, got "0"/);
    assert.throws(() => loadConfig({ BELLOWS_WORKERS: 'many' }), /BELLOWS_WORKERS must be an integer between 1 and 64, got "many"/);
  });

  test('the external URL follows the port and host by default and loses its trailing slash', () => {
    assert.equal(loadConfig({ PORT: '9000', HOST: '0.0.0.0' }).externalUrl, 'http://127.0.0.1:9000');
    assert.equal(loadConfig({ BELLOWS_EXTERNAL_URL: 'https://git.example.com/' }).externalUrl, 'https://git.example.com');
  });

  test('a YAML file sets values; the environment wins over it', () => {
    const p = file('bellows.yml', [
      'port: 9090', 'host: 0.0.0.0', `data_dir: ${join(dir, 'from-file')}`, 'external_url: https://code.example.com',
      'log_level: warn', 'impersonation_enabled: false', 'admin_mode: true', 'max_query_string_bytes: 4096',
      'rate_limit_authenticated: 600', 'rate_limit_unauthenticated: 60', 'rate_limit_period: 120',
      'monitoring_allowlist: [10.0.0.0/8, "::1"]', 'root_password: file-password',
      'storage:', '  - name: fast', '    path: /srv/fast', '    weight: 10', '  - name: slow', '    path: slow', '    weight: 0',
    ].join('\n'));
    const c = loadConfig({ BELLOWS_CONFIG: p });
    assert.equal(c.port, 9090);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.dataDir, join(dir, 'from-file'));
    assert.equal(c.externalUrl, 'https://code.example.com');
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.impersonationEnabled, false);
    assert.equal(c.adminMode, true);
    assert.equal(c.maxQueryStringBytes, 4096);
    assert.deepEqual(c.rateLimit, { authenticatedPerPeriod: 600, unauthenticatedPerPeriod: 60, periodSeconds: 120 });
    assert.deepEqual(c.monitoringAllowlist, ['10.0.0.0/8', '::1']);
    assert.equal(c.rootPassword, 'file-password');
    assert.deepEqual(c.storage, [
      { name: 'fast', path: '/srv/fast', weight: 10 },
      { name: 'slow', path: join(dir, 'from-file', 'slow'), weight: 0 },
    ]);

    const e = loadConfig({
      BELLOWS_CONFIG: p, PORT: '7070', BELLOWS_DATA_DIR: join(dir, 'from-env'), BELLOWS_EXTERNAL_URL: 'http://env.example',
      BELLOWS_LOG_LEVEL: 'debug', BELLOWS_IMPERSONATION_ENABLED: 'true', BELLOWS_RATE_LIMIT_AUTHENTICATED: '5',
      DATABASE_URL: 'postgresql://u@db/bellows', BELLOWS_ROOT_TOKEN: 'glpat-fixed', BELLOWS_MONITORING_ALLOWLIST: '192.168.0.0/16, 127.0.0.1',
    });
    assert.equal(e.port, 7070);
    assert.equal(e.host, '0.0.0.0', 'what the environment does not set still comes from the file');
    assert.equal(e.dataDir, join(dir, 'from-env'));
    assert.equal(e.externalUrl, 'http://env.example');
    assert.equal(e.logLevel, 'debug');
    assert.equal(e.impersonationEnabled, true);
    assert.equal(e.rateLimit.authenticatedPerPeriod, 5);
    assert.equal(e.rateLimit.unauthenticatedPerPeriod, 60);
    assert.equal(e.databaseUrl, 'postgresql://u@db/bellows');
    assert.equal(e.rootToken, 'glpat-fixed');
    assert.deepEqual(e.monitoringAllowlist, ['192.168.0.0/16', '127.0.0.1']);
  });

  test('an empty environment variable counts as unset', () => {
    assert.equal(loadConfig({ PORT: '', DATABASE_URL: '' }).port, 8080);
    assert.equal(loadConfig({ DATABASE_URL: '' }).databaseUrl, null);
  });

  test('invalid values stop with a one-line reason', () => {
    const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
      [{ PORT: 'abc' }, /^PORT must be an integer between 0 and 65535, got "abc"$/],
      [{ PORT: '70000' }, /^PORT must be an integer/],
      [{ BELLOWS_EXTERNAL_URL: 'ftp://x' }, /^BELLOWS_EXTERNAL_URL must be an http\(s\) URL, got "ftp:\/\/x"$/],
      [{ BELLOWS_EXTERNAL_URL: 'not a url' }, /^BELLOWS_EXTERNAL_URL must be/],
      [{ DATABASE_URL: 'mysql://x/y' }, /^DATABASE_URL must be a postgres:\/\/ URL/],
      [{ BELLOWS_LOG_LEVEL: 'loud' }, /^log level must be one of fatal, error, warn, info, debug, trace, silent$/],
      [{ BELLOWS_IMPERSONATION_ENABLED: 'maybe' }, /^impersonation_enabled must be true or false, got "maybe"$/],
      [{ BELLOWS_ADMIN_MODE: 'yes' }, /^admin_mode must be true or false/],
      [{ BELLOWS_RATE_LIMIT_AUTHENTICATED: '-1' }, /^BELLOWS_RATE_LIMIT_AUTHENTICATED must be an integer/],
      [{ BELLOWS_RATE_LIMIT_PERIOD: '0' }, /^BELLOWS_RATE_LIMIT_PERIOD must be an integer between 1 and 86400/],
      [{ BELLOWS_MAX_QUERY_STRING_BYTES: '10' }, /^BELLOWS_MAX_QUERY_STRING_BYTES must be an integer between 256/],
      [{ BELLOWS_MONITORING_ALLOWLIST: '10.0.0.0/99' }, /^monitoring allowlist entry "10.0.0.0\/99" is not an IP address or CIDR range$/],
      [{ BELLOWS_ROOT_PASSWORD: 'short' }, /^BELLOWS_ROOT_PASSWORD must be at least 8 characters long$/],
      [{ BELLOWS_CONFIG: join(dir, 'missing.yml') }, /^cannot read config file .*missing\.yml$/],
      [{ BELLOWS_CONFIG: file('bad.yml', 'port: [1,\n') }, /^config file .*bad\.yml is not valid YAML: /],
      [{ BELLOWS_CONFIG: file('list.yml', '- 1\n- 2\n') }, /^config file .*list\.yml is not valid YAML: not a mapping$/],
      [{ BELLOWS_CONFIG: file('typo.yml', 'prot: 8080\n') }, /^config file .*typo\.yml has unknown setting "prot"/],
      [{ BELLOWS_CONFIG: file('shard.yml', 'storage:\n  - name: "a b"\n    path: x\n') }, /^storage name "a b" may only contain/],
      [{ BELLOWS_CONFIG: file('weights.yml', 'storage:\n  - name: a\n    path: x\n    weight: 0\n') }, /^at least one storage shard needs a weight above 0$/],
    ];
    for (const [env, re] of cases) {
      assert.throws(() => loadConfig(env), (e: unknown) => {
        assert.ok(e instanceof ConfigError, JSON.stringify(env));
        assert.match(e.message, re, JSON.stringify(env));
        assert.ok(!e.message.includes('\n'), 'one line');
        return true;
      });
    }
  });

  test('every file key is documented in the README configuration table', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync('README.md', 'utf8');
    for (const k of FILE_KEYS) assert.ok(readme.includes(`\`${k}\``), `README names ${k}`);
  });
});

test('config check: exit code 78 and one line on stderr for an invalid setting; the settings without secrets otherwise', () => {
  const env = { PATH: process.env.PATH ?? '', BELLOWS_DATA_DIR: join(dir, 'cli') };
  const bad = runCli(['config', 'check'], { ...env, PORT: 'eighty' });
  assert.equal(bad.status, 78);
  assert.equal(bad.stderr, 'bellows: configuration error: PORT must be an integer between 0 and 65535, got "eighty"\n');
  assert.equal(bad.stdout, '');
  const good = runCli(['config', 'check'], { ...env, PORT: '9999', BELLOWS_ROOT_TOKEN: 'glpat-secret-value', DATABASE_URL: 'postgres://bellows:hunter2@db/bellows', BELLOWS_SMTP_PASSWORD: 'smtp-pass-value' });
  assert.equal(good.status, 0, good.stderr);
  const shown = JSON.parse(good.stdout);
  assert.equal(shown.port, 9999);
  assert.equal(shown.dataDir, join(dir, 'cli'));
  assert.equal(shown.rootToken, '(set)');
  assert.equal(shown.rootPassword, null);
  assert.equal(shown.databaseUrl, 'postgres://***@db/bellows');
  assert.equal(shown.smtp.password, '(set)');
  assert.ok(!good.stdout.includes('glpat-secret-value') && !good.stdout.includes('hunter2') && !good.stdout.includes('smtp-pass-value'));
});
