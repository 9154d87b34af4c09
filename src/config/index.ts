import { readFileSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import YAML from 'yaml';

export interface StorageShard {
  name: string;
  path: string;
  weight: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  externalUrl: string;
  databaseUrl: string | null;
  rootPassword: string | null;
  rootToken: string | null;
  logLevel: string;
  impersonationEnabled: boolean;
  adminMode: boolean;
  /** log2 of the scrypt cost for new password hashes. */
  passwordHashCost: number;
  maxQueryStringBytes: number;
  rateLimit: {
    authenticatedPerPeriod: number;
    unauthenticatedPerPeriod: number;
    periodSeconds: number;
  };
  storage: StorageShard[];
  monitoringAllowlist: string[];
  /** How long a resolved token and its user are reused without a lookup (0: never). */
  authCacheMs: number;
  /**
   * PostgreSQL: how long one statement of an API read (a GET or HEAD request, outside transactions) may run before
   * the database stops it and the request is answered with a 500 (0: no limit).
   */
  dbStatementTimeoutMs: number;
  /** Server processes that share the port (`bellows serve`); 1 serves from the starting process itself. */
  workers: number;
  /**
   * The instance's default branch protection (the reference's application setting `default_branch_protection`):
   * 0 none, 1 developers push, 2 full (Maintainers push and merge), 3 developers merge, 4 developers' initial push.
   * Applies to projects in personal namespaces and is the default of new groups.
   */
  defaultBranchProtection: number;
  /** Git over SSH inside `bellows serve`: whether it listens, its port (also the port of `ssh_url_to_repo`) and the host named in the URLs. */
  sshEnabled: boolean;
  sshPort: number;
  sshHost: string;
  /**
   * Outgoing mail (notification e-mails). With `smtp.address` set, messages go to that SMTP server; without it each
   * message is written as an `.eml` file under `<data dir>/mail` and logged. `tls`: implicit TLS from the first byte
   * (port 465); otherwise STARTTLS is used when the server offers it.
   */
  smtp: { address: string | null; port: number; user: string | null; password: string | null; tls: boolean };
  /** The From address of the server's e-mails. */
  emailFrom: string;
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Every key a config file may hold; anything else is a typo and stops start-up. */
export const FILE_KEYS = [
  'port', 'host', 'data_dir', 'external_url', 'database_url', 'root_password', 'root_token', 'log_level',
  'impersonation_enabled', 'admin_mode', 'max_query_string_bytes', 'rate_limit_authenticated',
  'rate_limit_unauthenticated', 'rate_limit_period', 'storage', 'monitoring_allowlist', 'password_hash_cost', 'auth_cache_ms',
  'db_statement_timeout_ms', 'workers', 'default_branch_protection', 'ssh_enabled', 'ssh_port', 'ssh_host',
  'smtp_address', 'smtp_port', 'smtp_user', 'smtp_password', 'smtp_tls', 'email_from',
] as const;

type Layer = Record<string, unknown>;

/** Settings from defaults, then an optional YAML/JSON file, then the environment; validated once and frozen. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const file = env.BELLOWS_CONFIG || (existsSync('bellows.yml') ? 'bellows.yml' : null);
  const fromFile: Layer = file ? readConfigFile(file) : {};
  const unknown = Object.keys(fromFile).filter((k) => !(FILE_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new ConfigError(`config file ${file} has unknown setting "${unknown[0]}" (known: ${FILE_KEYS.join(', ')})`);

  const pick = (envName: string, fileKey: string, fallback: unknown): unknown => {
    if (env[envName] !== undefined && env[envName] !== '') return env[envName];
    if (fromFile[fileKey] !== undefined) return fromFile[fileKey];
    return fallback;
  };

  const dataDir = resolve(String(pick('BELLOWS_DATA_DIR', 'data_dir', overrides.dataDir ?? './data')));
  const port = toInt('PORT', pick('PORT', 'port', overrides.port ?? 8080), 0, 65535);
  const host = String(pick('HOST', 'host', overrides.host ?? '127.0.0.1'));
  const externalUrlRaw = String(pick('BELLOWS_EXTERNAL_URL', 'external_url', overrides.externalUrl ?? `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`));
  let externalUrl: string;
  try {
    const u = new URL(externalUrlRaw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    externalUrl = u.toString().replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`BELLOWS_EXTERNAL_URL must be an http(s) URL, got "${externalUrlRaw}"`);
  }
  const databaseUrl = (pick('DATABASE_URL', 'database_url', overrides.databaseUrl ?? null) as string | null) || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite database)');
  }
  const logLevel = String(pick('BELLOWS_LOG_LEVEL', 'log_level', overrides.logLevel ?? 'info'));
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(', ')}`);

  const storageFromFile = fromFile.storage as Array<{ name: string; path: string; weight?: number }> | undefined;
  const storage: StorageShard[] = (overrides.storage ?? storageFromFile ?? [{ name: 'default', path: 'repositories', weight: 100 }]).map((s) => ({
    name: String(s.name),
    path: resolve(dataDir, String(s.path)),
    weight: Number(s.weight ?? 100),
  }));
  for (const s of storage) {
    if (!/^[A-Za-z0-9_.-]+$/.test(s.name)) throw new ConfigError(`storage name "${s.name}" may only contain letters, digits, '_', '.', '-'`);
    if (!Number.isFinite(s.weight) || s.weight < 0) throw new ConfigError(`storage "${s.name}" weight must be a number >= 0`);
  }
  if (!storage.some((s) => s.weight > 0)) throw new ConfigError('at least one storage shard needs a weight above 0');

  const monitoringAllowlist = listOf(pick('BELLOWS_MONITORING_ALLOWLIST', 'monitoring_allowlist', overrides.monitoringAllowlist ?? DEFAULT_MONITORING_ALLOWLIST));
  for (const entry of monitoringAllowlist) {
    // The defaults are valid as written; checking `::1` would compile Node's large IPv6 pattern in every process's start.
    if (!DEFAULT_MONITORING_ALLOWLIST.includes(entry) && !isCidr(entry)) throw new ConfigError(`monitoring allowlist entry "${entry}" is not an IP address or CIDR range`);
  }

  const rootPassword = (pick('BELLOWS_ROOT_PASSWORD', 'root_password', overrides.rootPassword ?? null) as string | null) || null;
  if (rootPassword !== null && String(rootPassword).length < 8) throw new ConfigError('BELLOWS_ROOT_PASSWORD must be at least 8 characters long');

  const sshHost = String(pick('BELLOWS_SSH_HOST', 'ssh_host', overrides.sshHost ?? new URL(externalUrl).hostname));
  if (!/^[A-Za-z0-9.:_\[\]-]{1,255}$/.test(sshHost)) throw new ConfigError(`BELLOWS_SSH_HOST must be a host name or address, got "${sshHost}"`);

  const smtpAddress = (pick('BELLOWS_SMTP_ADDRESS', 'smtp_address', overrides.smtp?.address ?? null) as string | null) || null;
  if (smtpAddress !== null && !/^[A-Za-z0-9.:_\[\]-]{1,255}$/.test(String(smtpAddress))) throw new ConfigError(`BELLOWS_SMTP_ADDRESS must be a host name or address, got "${smtpAddress}"`);
  const emailFrom = String(pick('BELLOWS_EMAIL_FROM', 'email_from', overrides.emailFrom ?? `bellows@${new URL(externalUrl).hostname}`));
  if (!/^[^\s@<>"]{1,64}@[^\s@<>"]{1,255}$/.test(emailFrom)) throw new ConfigError(`BELLOWS_EMAIL_FROM must be an e-mail address, got "${emailFrom}"`);

  const config: Config = {
    port,
    host,
    dataDir,
    externalUrl,
    databaseUrl,
    rootPassword,
    rootToken: (pick('BELLOWS_ROOT_TOKEN', 'root_token', overrides.rootToken ?? null) as string | null) || null,
    logLevel,
    impersonationEnabled: toBool('impersonation_enabled', pick('BELLOWS_IMPERSONATION_ENABLED', 'impersonation_enabled', overrides.impersonationEnabled ?? true)),
    adminMode: toBool('admin_mode', pick('BELLOWS_ADMIN_MODE', 'admin_mode', overrides.adminMode ?? false)),
    passwordHashCost: toInt('BELLOWS_PASSWORD_HASH_COST', pick('BELLOWS_PASSWORD_HASH_COST', 'password_hash_cost', overrides.passwordHashCost ?? 15), 10, 20),
    maxQueryStringBytes: toInt('BELLOWS_MAX_QUERY_STRING_BYTES', pick('BELLOWS_MAX_QUERY_STRING_BYTES', 'max_query_string_bytes', overrides.maxQueryStringBytes ?? 8192), 256, 1 << 20),
    rateLimit: {
      authenticatedPerPeriod: toInt('BELLOWS_RATE_LIMIT_AUTHENTICATED', pick('BELLOWS_RATE_LIMIT_AUTHENTICATED', 'rate_limit_authenticated', overrides.rateLimit?.authenticatedPerPeriod ?? 0), 0, 1e9),
      unauthenticatedPerPeriod: toInt('BELLOWS_RATE_LIMIT_UNAUTHENTICATED', pick('BELLOWS_RATE_LIMIT_UNAUTHENTICATED', 'rate_limit_unauthenticated', overrides.rateLimit?.unauthenticatedPerPeriod ?? 0), 0, 1e9),
      periodSeconds: toInt('BELLOWS_RATE_LIMIT_PERIOD', pick('BELLOWS_RATE_LIMIT_PERIOD', 'rate_limit_period', overrides.rateLimit?.periodSeconds ?? 60), 1, 86400),
    },
    storage,
    monitoringAllowlist,
    authCacheMs: toInt('BELLOWS_AUTH_CACHE_MS', pick('BELLOWS_AUTH_CACHE_MS', 'auth_cache_ms', overrides.authCacheMs ?? 2000), 0, 60_000),
    dbStatementTimeoutMs: toInt('BELLOWS_DB_STATEMENT_TIMEOUT_MS', pick('BELLOWS_DB_STATEMENT_TIMEOUT_MS', 'db_statement_timeout_ms', overrides.dbStatementTimeoutMs ?? 15_000), 0, 3_600_000),
    workers: toWorkers(pick('BELLOWS_WORKERS', 'workers', overrides.workers ?? 'auto')),
    defaultBranchProtection: toInt('BELLOWS_DEFAULT_BRANCH_PROTECTION', pick('BELLOWS_DEFAULT_BRANCH_PROTECTION', 'default_branch_protection', overrides.defaultBranchProtection ?? 2), 0, 4),
    sshEnabled: toBool('ssh_enabled', pick('BELLOWS_SSH_ENABLED', 'ssh_enabled', overrides.sshEnabled ?? true)),
    sshPort: toInt('BELLOWS_SSH_PORT', pick('BELLOWS_SSH_PORT', 'ssh_port', overrides.sshPort ?? 2222), 0, 65535),
    sshHost,
    smtp: {
      address: smtpAddress === null ? null : String(smtpAddress),
      port: toInt('BELLOWS_SMTP_PORT', pick('BELLOWS_SMTP_PORT', 'smtp_port', overrides.smtp?.port ?? 25), 1, 65535),
      user: (pick('BELLOWS_SMTP_USER', 'smtp_user', overrides.smtp?.user ?? null) as string | null) || null,
      password: (pick('BELLOWS_SMTP_PASSWORD', 'smtp_password', overrides.smtp?.password ?? null) as string | null) || null,
      tls: toBool('smtp_tls', pick('BELLOWS_SMTP_TLS', 'smtp_tls', overrides.smtp?.tls ?? false)),
    },
    emailFrom,
  };
  return deepFreeze(config);
}

const DEFAULT_MONITORING_ALLOWLIST = ['127.0.0.0/8', '::1'];

function listOf(v: unknown): string[] {
  const items = Array.isArray(v) ? v.map(String) : String(v).split(',');
  return items.map((x) => x.trim()).filter(Boolean);
}

function isCidr(entry: string): boolean {
  const [addr, bits, more] = entry.split('/');
  if (more !== undefined) return false;
  const fam = isIP(addr);
  if (!fam) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (fam === 4 ? 32 : 128);
}

function readConfigFile(file: string): Layer {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new ConfigError(`cannot read config file ${file}`);
  }
  try {
    const parsed = YAML.parse(text) ?? {};
    if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a mapping');
    return parsed as Layer;
  } catch (e) {
    throw new ConfigError(`config file ${file} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
}

function toInt(name: string, v: unknown, min: number, max: number): number {
  const n = typeof v === 'number' ? v : /^-?\d+$/.test(String(v)) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${String(v)}"`);
  return n;
}

/** A count, or "auto": one per core the process may use, at most 16. */
function toWorkers(v: unknown): number {
  if (v === 'auto') return Math.min(16, availableParallelism());
  return toInt('BELLOWS_WORKERS', v, 1, 64);
}

function toBool(name: string, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${String(v)}"`);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
