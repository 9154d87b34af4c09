import { test, before, after, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import {
  addMember, castRoles, commitFiles, makeFork, makeIssue, makeProject, quickUser, startSpamStandIns,
  type RoleCast, type SpamStandIns, type TestUser,
} from '../../../test/support/fixtures.ts';
import type { ProjectRow } from '../membership.ts';
import { ruleVerdict } from './rules.ts';

// The spam check of issues, merge requests, comments and snippets (spec error rule 10) against loopback stand-ins for
// Akismet and reCAPTCHA: what is checked (public content by callers who are not trusted), the verdict sources (rules,
// Akismet, a failing Akismet allowing), the refusals with nothing stored, the spam log, and the CAPTCHA retry.

let t: TestApp;
let svc: SpamStandIns;
let admin: TestUser;
let pub: ProjectRow;
let roles: RoleCast;
let stranger: TestUser;

before(async () => {
  t = await buildTestApp();
  svc = await startSpamStandIns();
  pub = await makeProject(t.app, { visibility: 20, repository: true });
  await commitFiles(t.app, pub, 'main', { 'README.md': '# hello\n' });
  roles = await castRoles(t.app, pub);
  admin = roles.admin;
  stranger = await quickUser(t.app);
});
after(async () => {
  await svc.close();
  await t.close();
});

const RULES = { spam_check_blocked_words: ['casino', '/fr[e3]+\\s*money/'], spam_check_blocked_link_domains: ['spam.example'], spam_check_max_links: 3 };
const OFF = {
  allow_possible_spam: false, akismet_enabled: false, recaptcha_enabled: false, spam_check_blocked_words: [], spam_check_blocked_link_domains: [], spam_check_max_links: 0,
};

async function settings(body: Record<string, unknown>) {
  const r = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}
const withRules = () => settings({ ...OFF, ...RULES });
const withAkismet = () => settings({ ...OFF, akismet_enabled: true, akismet_api_key: 'key', akismet_url: svc.url });
const withCaptcha = () => settings({
  ...OFF, ...RULES, recaptcha_enabled: true, recaptcha_site_key: 'site-key', recaptcha_private_key: 'recaptcha-secret', recaptcha_verify_url: `${svc.url}/siteverify`,
});

const count = async (table: 'issues' | 'merge_requests' | 'notes' | 'snippets' | 'spam_logs') =>
  Number((await t.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const lastLog = () => t.app.db.selectFrom('spam_logs').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();

const refused = (entity: string) => ({ message: { error: `Your ${entity} has been recognized as spam. Please, change the content to proceed.` } });
const captchaBody = (entity: string, id: number) => ({
  needs_captcha_response: true, spam_log_id: id, captcha_site_key: 'site-key',
  message: { error: `Your ${entity} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.` },
});

const newIssue = (token: string, title: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, project = pub) =>
  call(t.app, 'POST', `/projects/${project.id}/issues`, { token, body: { title, ...extra }, headers: { 'user-agent': 'spam-test', ...headers } });

beforeEach(() => {
  svc.mode = 'ok';
  svc.akismet.length = 0;
  svc.recaptcha.length = 0;
});

describe('settings', () => {
  test('the spam settings: defaults, a service turned on without its key, invalid patterns and domains refused with nothing changed', async () => {
    await t.app.db.deleteFrom('application_settings').execute();
    const get = await call(t.app, 'GET', '/application/settings', { token: admin.token });
    const { id: _id, default_branch_protection: _d, allow_local_requests_from_web_hooks_and_services: _a, allow_local_requests_from_system_hooks: _s, ...spam } = get.body;
    assert.deepEqual(spam, {
      allow_possible_spam: false, akismet_api_key: null, akismet_enabled: false, akismet_url: 'https://rest.akismet.com',
      recaptcha_enabled: false, recaptcha_private_key: null, recaptcha_site_key: null, recaptcha_verify_url: 'https://www.google.com/recaptcha/api/siteverify',
      spam_check_blocked_words: [], spam_check_blocked_link_domains: [], spam_check_max_links: 0, spam_log_retention_days: 90,
      search_rate_limit: 30, search_rate_limit_unauthenticated: 10, search_rate_limit_allowlist: [],
    });
    const bad: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{ akismet_enabled: true }, { akismet_api_key: ["can't be blank"] }],
      [{ recaptcha_enabled: true, recaptcha_site_key: 'k' }, { recaptcha_private_key: ["can't be blank"] }],
      [{ spam_check_blocked_words: ['ok', '/(?<=x)y/'] }, { spam_check_blocked_words: ['contains an invalid pattern: /(?<=x)y/'] }],
      [{ spam_check_blocked_words: [' '] }, { spam_check_blocked_words: ["can't contain blank entries"] }],
      [{ spam_check_blocked_link_domains: ['not a domain'] }, { spam_check_blocked_link_domains: ['must be a list of domain names'] }],
      [{ akismet_url: 'ftp://x' }, { akismet_url: ['is blocked: Only allowed schemes are http, https'] }],
    ];
    for (const [body, errors] of bad) {
      const r = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.body, { message: errors });
    }
    assert.equal(await count('spam_logs'), 0);
    assert.deepEqual(await t.app.db.selectFrom('application_settings').select('name').execute(), []);
    const max = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body: { spam_check_max_links: -1 } });
    assert.equal(max.status, 400);
    // A key set with the switch in one request; the secret keys are shown to administrators as the reference does.
    const ok = await settings({ akismet_enabled: true, akismet_api_key: 'k1', spam_check_blocked_words: ['casino', '/a{1,3}b/'] });
    assert.equal(ok.akismet_api_key, 'k1');
    assert.deepEqual(ok.spam_check_blocked_words, ['casino', '/a{1,3}b/']);
    await settings(OFF);
  });

  test('the rule set: whole words in any case, RE2 patterns, blocked link domains and subdomains, too many links', () => {
    const st = { ...RULES };
    assert.equal(ruleVerdict(st, 'Best CASINO in town'), 'blocked word casino');
    assert.equal(ruleVerdict(st, 'casinos and casinoville'), null);
    assert.equal(ruleVerdict(st, 'get FR33 money now'), 'blocked word /fr[e3]+\\s*money/');
    assert.equal(ruleVerdict(st, 'see https://www.spam.example/x'), 'link to spam.example');
    assert.equal(ruleVerdict(st, 'see https://notspam.example/x'), null);
    assert.equal(ruleVerdict(st, 'http://a.org http://b.org www.c.org'), null);
    assert.equal(ruleVerdict(st, 'http://a.org http://b.org www.c.org https://d.org'), '4 links (at most 3)');
  });
});

describe('issues', () => {
  test('a public project, a caller who is not a member: clean text is stored, a blocked word is refused with nothing stored and logged', async () => {
    await withRules();
    const ok = await newIssue(stranger.token, 'A real bug', { description: 'It crashes' });
    assert.equal(ok.status, 201);
    const [issues, logs] = [await count('issues'), await count('spam_logs')];
    const r = await newIssue(stranger.token, 'Visit my casino', { description: 'cheap' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, refused('issue'));
    assert.equal(await count('issues'), issues);
    assert.equal(await count('spam_logs'), logs + 1);
    const log = await lastLog();
    assert.deepEqual(
      { user_id: log.user_id, noteable_type: log.noteable_type, title: log.title, description: log.description, via_api: log.via_api, user_agent: log.user_agent, recaptcha_verified: log.recaptcha_verified, submitted_as_ham: log.submitted_as_ham },
      { user_id: stranger.user.id, noteable_type: 'Issue', title: 'Visit my casino', description: 'cheap', via_api: 1, user_agent: 'spam-test', recaptcha_verified: 0, submitted_as_ham: 0 },
    );
    assert.equal(log.source_ip, '127.0.0.1');
    // A link to a blocked domain in the description, and an edit bringing a blocked word in.
    const link = await newIssue(stranger.token, 'Look', { description: 'at http://go.spam.example/now' });
    assert.equal(link.status, 400);
    const edit = await call(t.app, 'PUT', `/projects/${pub.id}/issues/${ok.body.iid}`, { token: stranger.token, body: { title: 'A real casino' } });
    assert.equal(edit.status, 400);
    assert.deepEqual(edit.body, refused('issue'));
    const row = await t.app.db.selectFrom('issues').select(['title', 'updated_at']).where('id', '=', ok.body.id).executeTakeFirstOrThrow();
    assert.equal(row.title, 'A real bug');
    // An edit that leaves the text alone is not checked (a state change of an issue whose text was stored before the rule).
    await t.app.db.updateTable('issues').set({ title: 'old casino' }).where('id', '=', ok.body.id).execute();
    const close = await call(t.app, 'PUT', `/projects/${pub.id}/issues/${ok.body.iid}`, { token: stranger.token, body: { state_event: 'close' } });
    assert.equal(close.status, 200);
  });

  test('who is checked: Guests, members of nothing; never Reporters and up nor administrators', async () => {
    await withRules();
    const table: Array<[keyof RoleCast, number]> = [
      ['nonMember', 400], ['guest', 400], ['reporter', 201], ['developer', 201], ['maintainer', 201], ['owner', 201], ['admin', 201],
    ];
    for (const [role, status] of table) {
      const before = await count('spam_logs');
      const r = await newIssue(roles[role]!.token, `casino by ${role}`);
      assert.equal(r.status, status, role);
      assert.equal(await count('spam_logs'), before + (status === 400 ? 1 : 0), role);
    }
  });

  test('what is checked: only public content; confidential issues and internal or private projects are not', async () => {
    await withRules();
    const conf = await newIssue(stranger.token, 'casino', { confidential: true });
    assert.equal(conf.status, 201);
    // Making it public is a change the check reads.
    const expose = await call(t.app, 'PUT', `/projects/${pub.id}/issues/${conf.body.iid}`, { token: stranger.token, body: { confidential: false } });
    assert.equal(expose.status, 400);
    const internal = await makeProject(t.app, { visibility: 10 });
    assert.equal((await newIssue(stranger.token, 'casino', {}, {}, internal)).status, 201);
    const priv = await makeProject(t.app, { visibility: 0 });
    const guest = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: priv.id }, guest.user.id, 10);
    assert.equal((await newIssue(guest.token, 'casino', {}, {}, priv)).status, 201);
  });

  test('Akismet: its verdict is asked with the text and the sender; spam refused, a failing or refusing service lets the issue through', async () => {
    await withAkismet();
    const ok = await newIssue(stranger.token, 'Hello', { description: 'there' }, { referer: 'http://ref.example/' });
    assert.equal(ok.status, 201);
    assert.equal(svc.akismet.length, 1);
    const sent = svc.akismet[0];
    assert.deepEqual(
      { api_key: sent.api_key, blog: sent.blog, comment_type: sent.comment_type, comment_content: sent.comment_content, comment_author: sent.comment_author, comment_author_email: sent.comment_author_email, user_agent: sent.user_agent, referrer: sent.referrer, user_ip: sent.user_ip },
      { api_key: 'key', blog: t.app.config.externalUrl, comment_type: 'comment', comment_content: 'Hello\nthere', comment_author: stranger.user.name, comment_author_email: stranger.user.email, user_agent: 'spam-test', referrer: 'http://ref.example/', user_ip: '127.0.0.1' },
    );
    const before = await count('issues');
    const spam = await newIssue(stranger.token, 'akismet-spam here');
    assert.equal(spam.status, 400);
    assert.deepEqual(spam.body, refused('issue'));
    assert.equal(await count('issues'), before);
    for (const mode of ['error', 'drop'] as const) {
      svc.mode = mode;
      const r = await newIssue(stranger.token, `akismet-spam while the service is down (${mode})`);
      assert.equal(r.status, 201, mode);
    }
    svc.mode = 'ok';
    await settings({ akismet_api_key: 'bad-key' });
    assert.equal((await newIssue(stranger.token, 'akismet-spam with a refused key')).status, 201);
    // A trusted caller's content never reaches the service.
    svc.akismet.length = 0;
    assert.equal((await newIssue(roles.reporter.token, 'akismet-spam by a reporter')).status, 201);
    assert.equal(svc.akismet.length, 0);
    await settings(OFF);
  });

  test('CAPTCHA: flagged issues ask for one; the retry with a solved CAPTCHA and the spam log id passes once; wrong, reused or foreign ids do not', async () => {
    await withCaptcha();
    const before = await count('issues');
    const first = await newIssue(stranger.token, 'casino night');
    assert.equal(first.status, 409);
    const log = await lastLog();
    assert.deepEqual(first.body, captchaBody('issue', log.id));
    assert.equal(await count('issues'), before);
    // A wrong CAPTCHA response: checked again, a new spam log.
    const wrong = await newIssue(stranger.token, 'casino night', {}, { 'x-service-captcha-response': 'guess', 'x-service-spam-log-id': String(log.id) });
    assert.equal(wrong.status, 409);
    assert.equal(wrong.body.spam_log_id, log.id + 1);
    assert.deepEqual(svc.recaptcha.map((f) => [f.secret, f.response, f.remoteip]), [['recaptcha-secret', 'guess', '127.0.0.1']]);
    // Another user's spam log, a log of another kind, and an id that is not one.
    const other = await quickUser(t.app);
    for (const id of [String(log.id), '99999999', '9999999999', 'abc', '-1']) {
      const r = await newIssue(other.token, 'casino night', {}, { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': id });
      assert.equal(r.status, 409, id);
    }
    // The right answer with the log: stored once.
    const passed = await newIssue(stranger.token, 'casino night', {}, { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': String(log.id) });
    assert.equal(passed.status, 201);
    assert.equal(passed.body.title, 'casino night');
    assert.equal(await count('issues'), before + 1);
    assert.equal((await t.app.db.selectFrom('spam_logs').select('recaptcha_verified').where('id', '=', log.id).executeTakeFirstOrThrow()).recaptcha_verified, 1);
    const reused = await newIssue(stranger.token, 'casino night', {}, { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': String(log.id) });
    assert.equal(reused.status, 409);
    assert.equal(await count('issues'), before + 1);
    // The verify endpoint failing: not verified, asked again.
    const again = (await lastLog()).id;
    svc.mode = 'error';
    const down = await newIssue(stranger.token, 'casino night', {}, { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': String(again) });
    assert.equal(down.status, 409);
    await settings(OFF);
  });
});

describe('merge requests', () => {
  test('from a fork into a public project: flagged ones are refused outright (no CAPTCHA for merge requests); the author\'s edit is checked', async () => {
    await withCaptcha();
    const author = await quickUser(t.app);
    const fork = await makeFork(t.app, pub, author.user, 'fix', { 'fix.txt': 'fixed\n' });
    const before = await count('merge_requests');
    const body = { source_branch: 'fix', target_branch: 'main', title: 'Free casino', target_project_id: pub.id };
    const r = await call(t.app, 'POST', `/projects/${fork.id}/merge_requests`, { token: author.token, body });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, refused('merge request'));
    assert.equal(await count('merge_requests'), before);
    assert.equal((await lastLog()).noteable_type, 'MergeRequest');
    assert.equal(await t.app.db.selectFrom('merge_requests').select('id').where('target_project_id', '=', pub.id).executeTakeFirst(), undefined);
    const mr = await call(t.app, 'POST', `/projects/${fork.id}/merge_requests`, { token: author.token, body: { ...body, title: 'Fix' } });
    assert.equal(mr.status, 201);
    const edit = await call(t.app, 'PUT', `/projects/${pub.id}/merge_requests/${mr.body.iid}`, { token: author.token, body: { description: 'visit casino' } });
    assert.equal(edit.status, 400);
    assert.deepEqual(edit.body, refused('merge request'));
    assert.equal((await t.app.db.selectFrom('merge_requests').select('description').where('id', '=', mr.body.id).executeTakeFirstOrThrow()).description, null);
    await settings(OFF);
  });
});

describe('comments', () => {
  test('on a public issue and a merge request by a caller who is not a member: refused and not stored; Reporters are not checked', async () => {
    await withCaptcha();
    const issue = await makeIssue(t.app, pub, { title: 'Bug' });
    const notes = await count('notes');
    const r = await call(t.app, 'POST', `/projects/${pub.id}/issues/${issue.iid}/notes`, { token: stranger.token, body: { body: 'casino!' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, refused('comment'));
    assert.equal(await count('notes'), notes);
    assert.equal((await lastLog()).noteable_type, 'Note');
    assert.equal((await lastLog()).description, 'casino!');
    const ok = await call(t.app, 'POST', `/projects/${pub.id}/issues/${issue.iid}/notes`, { token: stranger.token, body: { body: 'same here' } });
    assert.equal(ok.status, 201);
    const edit = await call(t.app, 'PUT', `/projects/${pub.id}/issues/${issue.iid}/notes/${ok.body.id}`, { token: stranger.token, body: { body: 'casino' } });
    assert.equal(edit.status, 400);
    assert.equal((await t.app.db.selectFrom('notes').select('body').where('id', '=', ok.body.id).executeTakeFirstOrThrow()).body, 'same here');
    const thread = await call(t.app, 'POST', `/projects/${pub.id}/issues/${issue.iid}/discussions`, { token: stranger.token, body: { body: 'casino' } });
    assert.equal(thread.status, 400);
    assert.equal((await call(t.app, 'POST', `/projects/${pub.id}/issues/${issue.iid}/notes`, { token: roles.reporter.token, body: { body: 'casino' } })).status, 201);
    // The merge request kind of comment.
    const author = await quickUser(t.app);
    const fork = await makeFork(t.app, pub, author.user, 'doc', { 'doc.txt': 'doc\n' });
    const mr = await call(t.app, 'POST', `/projects/${fork.id}/merge_requests`, { token: author.token, body: { source_branch: 'doc', target_branch: 'main', title: 'Doc', target_project_id: pub.id } });
    assert.equal(mr.status, 201);
    const before = await count('notes');
    const onMr = await call(t.app, 'POST', `/projects/${pub.id}/merge_requests/${mr.body.iid}/notes`, { token: stranger.token, body: { body: 'free money at casino' } });
    assert.equal(onMr.status, 400);
    assert.deepEqual(onMr.body, refused('comment'));
    assert.equal(await count('notes'), before);
    await settings(OFF);
  });
});

describe('snippets', () => {
  const snippet = (token: string, visibility: string, content: string, headers: Record<string, string> = {}) =>
    call(t.app, 'POST', '/snippets', { token, body: { title: 'Snip', file_name: 'a.txt', content, visibility }, headers });

  test('a public personal snippet asks for a CAPTCHA and passes once solved; private ones and administrators are not checked', async () => {
    await withCaptcha();
    const before = await count('snippets');
    const r = await snippet(stranger.token, 'public', 'play casino');
    assert.equal(r.status, 409);
    const log = await lastLog();
    assert.deepEqual(r.body, captchaBody('snippet', log.id));
    assert.deepEqual([log.noteable_type, log.title, log.description], ['Snippet', 'Snip', 'play casino']);
    assert.equal(await count('snippets'), before);
    // An issue's CAPTCHA does not pass a snippet, and the other way round.
    const issueLog = await newIssue(stranger.token, 'casino');
    const cross = await snippet(stranger.token, 'public', 'play casino', { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': String(issueLog.body.spam_log_id) });
    assert.equal(cross.status, 409);
    const passed = await snippet(stranger.token, 'public', 'play casino', { 'x-service-captcha-response': 'solved', 'x-service-spam-log-id': String(log.id) });
    assert.equal(passed.status, 201);
    assert.equal(await count('snippets'), before + 1);
    assert.equal((await snippet(stranger.token, 'private', 'play casino')).status, 201);
    assert.equal((await snippet(admin.token, 'public', 'play casino')).status, 201);
    // Making a private snippet public is checked, without a CAPTCHA service too.
    await withRules();
    const priv = await snippet(stranger.token, 'private', 'play casino');
    const expose = await call(t.app, 'PUT', `/snippets/${priv.body.id}`, { token: stranger.token, body: { visibility: 'public' } });
    assert.equal(expose.status, 400);
    assert.deepEqual(expose.body, refused('snippet'));
    assert.equal((await t.app.db.selectFrom('snippets').select('visibility_level').where('id', '=', priv.body.id).executeTakeFirstOrThrow()).visibility_level, 0);
    // A file change is checked before anything is committed.
    const clean = await snippet(stranger.token, 'public', 'hello');
    const change = await call(t.app, 'PUT', `/snippets/${clean.body.id}`, { token: stranger.token, body: { content: 'casino' } });
    assert.equal(change.status, 400);
    const raw = await call(t.app, 'GET', `/snippets/${clean.body.id}/raw`, { token: stranger.token });
    assert.equal(raw.text, 'hello');
    await settings(OFF);
  });
});
