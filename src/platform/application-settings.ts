import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Config } from '../config/index.ts';
import type { ServiceDeps } from './deps.ts';
import { announceCacheVoid } from './cache-bus.ts';
import { ValidationError } from './errors.ts';
import { blockedWordProblem } from './spam/rules.ts';

// The instance's application settings (the reference's `ApplicationSetting`, `GET/PUT /application/settings`):
// one typed registry. Each entry is a setting Bellows honours: its TypeBox type (the parameter of PUT and the field
// of the answer), its default (which may come from the server's configuration), and a check of a value the type
// lets through. Values an administrator changed are rows of `application_settings`; the rest are defaults. Reads go
// through one read-cache entry, voided on every worker by a write. An area that needs a new setting adds an entry
// here (in the reference's field order) and reads it with `applicationSettings(deps)`.

interface SettingDef<T extends TSchema> {
  type: T;
  default: (config: Config) => Static<T>;
  /**
   * A problem with a value of the right type, as the reference's model validation says it ("must be ..."); `all` holds
   * the settings as they would be after the change, for a rule over several settings ("can't be blank" when enabled).
   */
  check?: (value: Static<T>, all: Readonly<Record<string, unknown>>) => string | null;
  description: string;
}

const setting = <T extends TSchema>(def: SettingDef<T>): SettingDef<T> => def;

const OptionalText = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);
/** Required while the setting `flag` is on (the reference's presence validations). */
const presentWhen = (flag: string) => (v: string | null, all: Readonly<Record<string, unknown>>) => (all[flag] === true && !v?.trim() ? "can't be blank" : null);
const httpUrl = (v: string) => {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password ? null : 'is blocked: Only allowed schemes are http, https';
  } catch {
    return 'must be a valid URL';
  }
};
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const APPLICATION_SETTINGS = {
  default_branch_protection: setting({
    type: Type.Union([0, 1, 2, 3, 4].map((n) => Type.Literal(n))),
    default: (config) => config.defaultBranchProtection,
    description: 'Protection of the default branch of new personal projects and default of new groups: 0 none, 1 developers push, 2 full, 3 developers merge, 4 developers push initially',
  }),
  allow_local_requests_from_web_hooks_and_services: setting({
    type: Type.Boolean(),
    default: () => false,
    description: 'Allow requests to the local network (loopback, private, link-local addresses) from webhooks, integrations and repository imports',
  }),
  allow_local_requests_from_system_hooks: setting({
    type: Type.Boolean(),
    default: () => false,
    description: 'Allow requests to the local network from system hooks',
  }),
  allow_possible_spam: setting({
    type: Type.Boolean(),
    default: () => false,
    description: 'Let content a spam check flags through: it is only recorded in the spam log',
  }),
  // Spam checks (platform/spam.ts). The reference's Akismet and reCAPTCHA settings, plus Bellows extensions: the
  // services' URLs and a built-in rule set.
  akismet_api_key: setting({
    type: OptionalText,
    default: () => null,
    check: presentWhen('akismet_enabled'),
    description: 'Akismet API key; required when akismet_enabled is true',
  }),
  akismet_enabled: setting({
    type: Type.Boolean(),
    default: () => false,
    description: 'Check public issues, merge requests, comments and snippets by users who are not trusted with Akismet',
  }),
  akismet_url: setting({
    type: Type.String({ maxLength: 2000 }),
    default: () => 'https://rest.akismet.com',
    check: httpUrl,
    description: 'Bellows extension: base URL of the Akismet service (its comment-check endpoint is <url>/1.1/comment-check)',
  }),
  recaptcha_enabled: setting({
    type: Type.Boolean(),
    default: () => false,
    description: 'Let content flagged as spam through once the sender solved a reCAPTCHA (v2)',
  }),
  recaptcha_private_key: setting({
    type: OptionalText,
    default: () => null,
    check: presentWhen('recaptcha_enabled'),
    description: 'reCAPTCHA secret key; required when recaptcha_enabled is true',
  }),
  recaptcha_site_key: setting({
    type: OptionalText,
    default: () => null,
    check: presentWhen('recaptcha_enabled'),
    description: 'reCAPTCHA site key (given to clients as captcha_site_key); required when recaptcha_enabled is true',
  }),
  recaptcha_verify_url: setting({
    type: Type.String({ maxLength: 2000 }),
    default: () => 'https://www.google.com/recaptcha/api/siteverify',
    check: httpUrl,
    description: 'Bellows extension: URL of the reCAPTCHA verify endpoint',
  }),
  spam_check_blocked_words: setting({
    type: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }),
    default: () => [],
    check: (v) => v.map(blockedWordProblem).find((p) => p) ?? null,
    description: 'Bellows extension: words (matched as whole words, any case) or /RE2 patterns/ that flag content as spam',
  }),
  spam_check_blocked_link_domains: setting({
    type: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 1000 }),
    default: () => [],
    check: (v) => (v.every((d) => HOSTNAME.test(d.toLowerCase())) ? null : 'must be a list of domain names'),
    description: 'Bellows extension: content linking to these domains (or their subdomains) is flagged as spam',
  }),
  spam_check_max_links: setting({
    type: Type.Integer({ minimum: 0, maximum: 10000 }),
    default: () => 0,
    description: 'Bellows extension: content with more links than this is flagged as spam (0: no limit)',
  }),
  search_rate_limit: setting({
    type: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    default: () => 30,
    description: 'Searches (GET /search, /groups/:id/search, /projects/:id/search) a signed-in user may make per minute (0: no limit)',
  }),
  search_rate_limit_unauthenticated: setting({
    type: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
    default: () => 10,
    description: 'Searches per minute and address without signing in (the API answers 401 to those, so it limits nothing there)',
  }),
  search_rate_limit_allowlist: setting({
    type: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 }),
    default: () => [],
    description: 'Usernames exempt from search_rate_limit (any case)',
  }),
  spam_log_retention_days: setting({
    type: Type.Integer({ minimum: 0, maximum: 36500 }),
    default: () => 90,
    description: 'Bellows extension: spam log rows older than this many days are removed every day (0: kept forever)',
  }),
} as const;

export type SettingName = keyof typeof APPLICATION_SETTINGS;
export type ApplicationSettings = { [K in SettingName]: Static<(typeof APPLICATION_SETTINGS)[K]['type']> };

export const SETTING_NAMES = Object.keys(APPLICATION_SETTINGS) as SettingName[];

/** Names a client may still send for a setting (the reference's legacy parameter names). */
export const SETTING_ALIASES: Record<string, SettingName> = {
  allow_local_requests_from_hooks_and_services: 'allow_local_requests_from_web_hooks_and_services',
};

function defaults(config: Config): ApplicationSettings {
  return Object.fromEntries(SETTING_NAMES.map((n) => [n, APPLICATION_SETTINGS[n].default(config)])) as ApplicationSettings;
}

/** The instance's settings: stored values over defaults (a stored value of a setting no longer known is ignored). */
export function applicationSettings(deps: Pick<ServiceDeps, 'db' | 'config' | 'caches'>): Promise<Readonly<ApplicationSettings>> {
  return deps.caches.define<'all', Readonly<ApplicationSettings>>('application-settings', { max: 1 }).get('all', async () => {
    const out = defaults(deps.config) as Record<string, unknown>;
    for (const row of await deps.db.selectFrom('application_settings').select(['name', 'value']).execute()) {
      if (row.name in APPLICATION_SETTINGS) out[row.name] = JSON.parse(row.value);
    }
    return Object.freeze(out as ApplicationSettings);
  });
}

/**
 * Changes some settings (values already of their type): each value is checked first, then all are written in one
 * transaction, and every worker drops what it cached. Answers the settings after the change.
 */
export async function updateApplicationSettings(deps: ServiceDeps, changes: Partial<ApplicationSettings>): Promise<Readonly<ApplicationSettings>> {
  const errors: Record<string, string[]> = {};
  const entries = Object.entries(changes).filter(([name, v]) => name in APPLICATION_SETTINGS && v !== undefined) as Array<[SettingName, unknown]>;
  // Every setting is checked against the result, so that turning a service on without its key is refused too.
  const after: Record<string, unknown> = { ...(await applicationSettings(deps)), ...Object.fromEntries(entries) };
  for (const name of SETTING_NAMES) {
    const problem = (APPLICATION_SETTINGS[name] as unknown as SettingDef<TSchema>).check?.(after[name] as never, after);
    if (problem) (errors[name] ??= []).push(problem);
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    for (const [name, value] of entries) {
      const json = JSON.stringify(value);
      await trx.insertInto('application_settings').values({ name, value: json, updated_at: now })
        .onConflict((oc) => oc.column('name').doUpdateSet({ value: json, updated_at: now })).execute();
    }
  });
  announceCacheVoid('all');
  return applicationSettings(deps);
}
