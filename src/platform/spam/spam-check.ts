import type { ServiceDeps } from '../deps.ts';
import type { Actor } from '../access/actor.ts';
import { FEATURE_LEVEL, featureLevel, skipsSpamCheck, type PolicyProject } from '../access/policy.ts';
import { applicationSettings, type ApplicationSettings } from '../application-settings.ts';
import { SpamError } from '../errors.ts';
import { fitsIntColumn } from '../db/dialect.ts';
import { ruleVerdict } from './rules.ts';
import { akismetSaysSpam, recaptchaAccepts } from './services.ts';

// The one spam-check step (the reference's SpamActionService and SpamVerdictService). The create and update services
// of issues, merge requests, notes and snippets call `checkSpam` once, after their own checks and before anything is
// written. It checks only what the reference checks: public content, changed where it matters, by a caller who is
// not trusted (the access policy's `skipsSpamCheck`: administrators, members with Reporter and up). The verdict
// sources are the built-in rule set and Akismet; a source that fails or times out lets the content through and is
// logged. Flagged content is recorded in `spam_logs` and refused (SpamError): issues and snippets, the reference's
// records with CAPTCHA support, may be sent again with a solved reCAPTCHA and the spam log's id, which lets them
// through once. With the setting `allow_possible_spam` flagged content is only logged and then written.

/** What a request tells the check: its origin, the CAPTCHA retry headers, and where to log a failing source. */
export interface SpamParams {
  ip: string;
  userAgent: string;
  referer: string;
  /** `X-Service-Captcha-Response`. */
  captchaResponse: string | null;
  /** `X-Service-Spam-Log-Id`, as sent. */
  spamLogId: string | null;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

interface Texts { title: string | null; description: string | null }

/** The fields of a record the check reads; a change gives only those it sets (undefined: unchanged). */
export interface SpamFields {
  title?: string | null;
  description?: string | null;
  confidential?: boolean | number | null;
  visibility_level?: number;
  /** A snippet's visibility by name, as a request gives it. */
  visibility?: string;
  /** A note's text. */
  body?: string;
}

/**
 * The record being written, as the check reads it: `before` is the stored record (null on create) and `change` what
 * the request sets. A note names its noteable and whether it is internal; a snippet gives the file contents the
 * change writes (all of them on create, the changed ones on update).
 */
export interface SpamSubject {
  kind: 'Issue' | 'MergeRequest' | 'Note' | 'Snippet';
  /** The project the record belongs to (null: a personal snippet) and the caller's effective level there. */
  project: PolicyProject | null;
  level: number;
  before: SpamFields | null;
  change: SpamFields;
  noteable?: { type: string; id: number };
  internal?: boolean;
  contents?: readonly (string | undefined)[];
  /** A snippet's stored file contents, read when an edit makes it public (its unchanged files become public too). */
  stored?: () => Promise<string[]>;
}

export type SpamKind = SpamSubject['kind'];

/** The record's name in the refusal ("Your comment has been recognized as spam. ..."). */
const ENTITY: Record<SpamKind, string> = { Issue: 'issue', MergeRequest: 'merge request', Note: 'comment', Snippet: 'snippet' };

/** The reference offers a CAPTCHA for these; other flagged records are refused outright. */
const CAPTCHA_KINDS: ReadonlySet<SpamKind> = new Set(['Issue', 'Snippet']);

const PUBLIC = 20;
const MAX_LOGGED = 1_000_000;

const VISIBILITY: Record<string, number> = { private: 0, internal: 10, public: 20 };

/** The record after the change, as far as the check reads it. */
function merged(s: SpamSubject) {
  const b = s.before ?? {};
  const c = s.change;
  const pick = <K extends keyof SpamFields>(k: K) => (c[k] !== undefined ? c[k] : b[k]);
  const visibility = c.visibility !== undefined ? VISIBILITY[c.visibility] ?? 0 : b.visibility_level ?? (b.visibility !== undefined ? VISIBILITY[b.visibility] ?? 0 : 0);
  return {
    title: pick('title')?.trim() ?? null, description: pick('description') ?? null, confidential: !!pick('confidential'),
    visibility, body: pick('body') ?? '',
  };
}

/** The reference's `check_for_spam?` of each record: only public content, only when its text (or exposure) changes. */
async function required(deps: ServiceDeps, s: SpamSubject): Promise<boolean> {
  const after = merged(s);
  const before = s.before && merged({ ...s, change: {} });
  const textChanged = !before || before.title !== after.title || before.description !== after.description;
  const projectPublic = !!s.project && s.project.visibility_level >= PUBLIC;
  switch (s.kind) {
    case 'Issue':
      // `publicly_visible?`: a public project whose issues everyone reads, and not confidential.
      if (!projectPublic || featureLevel(s.project!, 'issues') < FEATURE_LEVEL.enabled || after.confidential) return false;
      return textChanged || before!.confidential !== after.confidential;
    case 'MergeRequest':
      return projectPublic && textChanged;
    case 'Note': {
      if (!projectPublic || s.internal || (before && before.body === after.body)) return false;
      if (s.noteable?.type === 'Issue') {
        const issue = await deps.db.selectFrom('issues').select('confidential').where('id', '=', s.noteable.id).executeTakeFirst();
        return !issue?.confidential;
      }
      if (s.noteable?.type === 'Snippet') {
        const snippet = await deps.db.selectFrom('snippets').select('visibility_level').where('id', '=', s.noteable.id).executeTakeFirst();
        return (snippet?.visibility_level ?? 0) >= PUBLIC;
      }
      return true;
    }
    case 'Snippet':
      if (after.visibility < PUBLIC) return false;
      return !before || before.visibility < PUBLIC || textChanged || (s.contents ?? []).some((x) => x !== undefined);
  }
}

/** The spam log's title and description of the record (the reference's `spam_title` / `spam_description`). */
async function logged(s: SpamSubject): Promise<Texts> {
  const after = merged(s);
  if (s.kind === 'Note') return { title: null, description: after.body };
  if (s.kind === 'Snippet') {
    const exposed = !!s.before && merged({ ...s, change: {} }).visibility < PUBLIC && s.stored ? await s.stored() : [];
    return { title: after.title, description: [after.description, ...(s.contents ?? []), ...exposed].filter((x) => x).join('\n') || null };
  }
  return { title: after.title, description: after.description };
}

const captchaOn = (st: Readonly<ApplicationSettings>) => st.recaptcha_enabled && !!st.recaptcha_site_key && !!st.recaptcha_private_key;

/**
 * A retry with a solved CAPTCHA: the caller's own unused spam log for this kind of record, and a response reCAPTCHA
 * accepts. The log is used up here, so the same id lets one request through; anything else is checked as usual.
 */
async function captchaPasses(deps: ServiceDeps, st: Readonly<ApplicationSettings>, userId: number, kind: SpamKind, p: SpamParams): Promise<boolean> {
  if (!p.captchaResponse || !p.spamLogId || !/^[1-9]\d{0,9}$/.test(p.spamLogId)) return false;
  const id = Number(p.spamLogId);
  if (!fitsIntColumn(id)) return false;
  const log = await deps.db.selectFrom('spam_logs').select('id').where('id', '=', id).where('user_id', '=', userId)
    .where('noteable_type', '=', kind).where('recaptcha_verified', '=', 0).executeTakeFirst();
  if (!log) return false;
  try {
    if (!(await recaptchaAccepts(st.recaptcha_verify_url, st.recaptcha_private_key!, p.captchaResponse, p.ip))) return false;
  } catch (err) {
    p.log?.warn({ err, spam_log_id: id }, 'reCAPTCHA verification failed');
    return false;
  }
  const used = await deps.db.updateTable('spam_logs').set({ recaptcha_verified: 1, updated_at: deps.clock.now() })
    .where('id', '=', id).where('recaptcha_verified', '=', 0).executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/** Why the text is spam (a rule, Akismet), or null. A failing Akismet is logged and counts as not spam. */
async function verdict(deps: ServiceDeps, st: Readonly<ApplicationSettings>, actor: Actor, p: SpamParams, text: string): Promise<string | null> {
  const rule = ruleVerdict(st, text);
  if (rule) return rule;
  if (st.akismet_enabled && st.akismet_api_key) {
    try {
      const spam = await akismetSaysSpam(st.akismet_url, st.akismet_api_key, {
        blog: deps.config.externalUrl, userIp: p.ip, userAgent: p.userAgent, referrer: p.referer,
        author: actor.user!.name, authorEmail: actor.user!.email, content: text,
      });
      if (spam) return 'akismet';
    } catch (err) {
      p.log?.warn({ err }, 'Akismet spam check failed, content allowed');
    }
  }
  return null;
}

/**
 * The spam check of one create or update; returns when the content may be written, throws SpamError when not
 * (after recording it in the spam log).
 */
export async function checkSpam(deps: ServiceDeps, actor: Actor, subject: SpamSubject): Promise<void> {
  const p = actor.spam;
  const user = actor.user;
  if (!p || !user) return;
  if (skipsSpamCheck(actor, subject.project, subject.level)) return;
  if (!(await required(deps, subject))) return;
  const st = await applicationSettings(deps);
  const captcha = CAPTCHA_KINDS.has(subject.kind) && captchaOn(st);
  if (captcha && (await captchaPasses(deps, st, user.id, subject.kind, p))) return;
  const texts = await logged(subject);
  const text = [texts.title, texts.description].filter((x) => x).join('\n');
  const reason = await verdict(deps, st, actor, p, text);
  if (!reason) return;
  const now = deps.clock.now();
  const log = await deps.db.insertInto('spam_logs').values({
    user_id: user.id, source_ip: p.ip.slice(0, 255) || null, user_agent: p.userAgent.slice(0, 2000) || null, via_api: 1,
    noteable_type: subject.kind, title: texts.title?.slice(0, MAX_LOGGED) ?? null, description: texts.description?.slice(0, MAX_LOGGED) ?? null,
    created_at: now, updated_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  // `allow_possible_spam`: the verdict only leaves its log row; the content is written.
  if (st.allow_possible_spam) {
    p.log?.info({ spam_log_id: log.id, reason, user_id: user.id, target_type: subject.kind }, 'content recognized as spam, allowed by allow_possible_spam');
    return;
  }
  p.log?.info({ spam_log_id: log.id, reason, user_id: user.id, target_type: subject.kind }, 'content recognized as spam');
  throw new SpamError(ENTITY[subject.kind], captcha ? { spamLogId: log.id, siteKey: st.recaptcha_site_key! } : null);
}
