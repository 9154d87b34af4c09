import { test, before, after, describe, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import {
  castRoles, makeProject, makeSpamLog, makeToken, quickUser, startSpamStandIns, type RoleCast, type SpamStandIns, type TestUser,
} from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { SPAM_LOG_CLEAN_UP } from './spam-logs.routes.ts';

// The spam log's administration (Bellows extensions of the reference's admin pages): who may use it, the list and its
// filters, marking a row as ham (told to a loopback Akismet stand-in), removing a row or its author; the setting
// allow_possible_spam; the daily clean-up.

let t: TestApp;
let svc: SpamStandIns;
let roles: RoleCast;
let admin: TestUser;
let spammer: TestUser;
const base = () => t.app.config.externalUrl;

before(async () => {
  t = await buildTestApp();
  svc = await startSpamStandIns();
  const project = await makeProject(t.app, { visibility: 20 });
  roles = await castRoles(t.app, project);
  admin = roles.admin;
  spammer = await quickUser(t.app);
});
after(async () => {
  await svc.close();
  await t.close();
});
beforeEach(async () => {
  svc.mode = 'ok';
  svc.ham.length = 0;
  svc.akismet.length = 0;
  await t.app.db.deleteFrom('spam_logs').execute();
});

async function settings(body: Record<string, unknown>) {
  const r = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}
const OFF = { allow_possible_spam: false, akismet_enabled: false, recaptcha_enabled: false, spam_check_blocked_words: [], spam_log_retention_days: 90 };
const row = (id: number) => t.app.db.selectFrom('spam_logs').selectAll().where('id', '=', id).executeTakeFirst();
const ids = async () => (await t.app.db.selectFrom('spam_logs').select('id').orderBy('id').execute()).map((r) => r.id);
const userOf = (u: TestUser) => ({
  id: u.user.id, username: u.user.username, name: u.user.name, state: 'active', locked: false, avatar_url: null, web_url: `${base()}/${u.user.username}`,
});

describe('access', () => {
  const ROLES: Array<keyof RoleCast> = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
  const expected = (role: keyof RoleCast, ok: number) => (role === 'anonymous' ? 401 : role === 'admin' ? ok : 403);

  test('every endpoint: administrators only (401 anonymous, 403 for every member role); refusals change nothing', async () => {
    for (const role of ROLES) {
      const token = roles[role]?.token;
      const log = await makeSpamLog(t.app, { userId: spammer.user.id });
      const cases: Array<[string, string, number]> = [
        ['GET', '/admin/spam_logs', 200], ['GET', `/admin/spam_logs/${log.id}`, 200],
        ['POST', `/admin/spam_logs/${log.id}/mark_as_ham`, 201], ['DELETE', `/admin/spam_logs/${log.id}`, 204],
      ];
      for (const [method, url, ok] of cases) {
        const r = await call(t.app, method, url, { token });
        const status = expected(role, ok);
        assert.equal(r.status, status, `${role} ${method} ${url}`);
        if (status === 401) assert.deepEqual(r.body, { message: '401 Unauthorized' });
        if (status === 403) assert.deepEqual(r.body, { message: '403 Forbidden' });
      }
      if (role === 'admin') assert.equal(await row(log.id), undefined);
      else assert.deepEqual(await row(log.id), log, role);
    }
  });

  test('token scopes: read_api reads but does not change; read_user and sudo-less scopes are refused', async () => {
    const log = await makeSpamLog(t.app, { userId: spammer.user.id });
    const readApi = await makeToken(t.app, admin.user, ['read_api']);
    const readUser = await makeToken(t.app, admin.user, ['read_user']);
    assert.equal((await call(t.app, 'GET', '/admin/spam_logs', { token: readApi })).status, 200);
    assert.equal((await call(t.app, 'GET', `/admin/spam_logs/${log.id}`, { token: readApi })).status, 200);
    for (const [method, url] of [['POST', `/admin/spam_logs/${log.id}/mark_as_ham`], ['DELETE', `/admin/spam_logs/${log.id}`]]) {
      const r = await call(t.app, method, url, { token: readApi });
      assert.deepEqual([r.status, r.body.error, r.body.scope], [403, 'insufficient_scope', 'api'], `${method} ${url}`);
    }
    const r = await call(t.app, 'GET', '/admin/spam_logs', { token: readUser });
    assert.deepEqual([r.status, r.body.error], [403, 'insufficient_scope']);
    assert.deepEqual(await row(log.id), log);
  });

  test('the OpenAPI document tags them as Bellows extensions', async () => {
    const doc = (await call(t.app, 'GET', '/openapi.json')).body;
    assert.deepEqual(doc.paths['/api/v4/admin/spam_logs'].get.tags, ['spam_logs', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/admin/spam_logs/{id}/mark_as_ham'].post.tags, ['spam_logs', 'bellows-extensions']);
    assert.deepEqual(doc.paths['/api/v4/admin/spam_logs/{id}'].delete.tags, ['spam_logs', 'bellows-extensions']);
  });
});

describe('reading', () => {
  test('the list: newest first, the entity in the SpamLog column order, filters, offset pagination', async () => {
    const clock = t.clock as ManualClock;
    const start = clock.now();
    const other = await quickUser(t.app);
    const a = await makeSpamLog(t.app, { userId: spammer.user.id, title: 'casino', description: 'play now', createdAt: start - 3000 });
    const b = await makeSpamLog(t.app, { userId: other.user.id, noteableType: 'Note', title: null, description: 'casino!', recaptchaVerified: true, createdAt: start - 2000 });
    const c = await makeSpamLog(t.app, { userId: spammer.user.id, noteableType: 'Snippet', sourceIp: null, userAgent: null, submittedAsHam: true, createdAt: start - 1000 });
    const r = await call(t.app, 'GET', '/admin/spam_logs', { token: admin.token });
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-total'], '3');
    assert.deepEqual(r.body.map((x: any) => x.id), [c.id, b.id, a.id]);
    assert.deepEqual(r.body[2], {
      id: a.id, user: userOf(spammer), source_ip: '192.0.2.7', user_agent: 'spam-bot/1.0', via_api: true, noteable_type: 'Issue',
      title: 'casino', description: 'play now', recaptcha_verified: false, submitted_as_ham: false,
      created_at: new Date(start - 3000).toISOString(), updated_at: new Date(start - 3000).toISOString(),
    });
    assert.deepEqual(Object.keys(r.body[0]), ['id', 'user', 'source_ip', 'user_agent', 'via_api', 'noteable_type', 'title', 'description', 'recaptcha_verified', 'submitted_as_ham', 'created_at', 'updated_at']);
    assert.deepEqual([r.body[0].source_ip, r.body[0].user_agent, r.body[0].submitted_as_ham], [null, null, true]);
    const filtered = async (query: Record<string, string>) =>
      (await call(t.app, 'GET', '/admin/spam_logs', { token: admin.token, query })).body.map((x: any) => x.id);
    assert.deepEqual(await filtered({ recaptcha_verified: 'true' }), [b.id]);
    assert.deepEqual(await filtered({ recaptcha_verified: 'false' }), [c.id, a.id]);
    assert.deepEqual(await filtered({ submitted_as_ham: 'true' }), [c.id]);
    assert.deepEqual(await filtered({ user_id: String(spammer.user.id) }), [c.id, a.id]);
    assert.deepEqual(await filtered({ user_id: '2147483647' }), []);
    assert.deepEqual(await filtered({ noteable_type: 'Note' }), [b.id]);
    const page = await call(t.app, 'GET', '/admin/spam_logs', { token: admin.token, query: { per_page: '2', page: '2' } });
    assert.deepEqual(page.body.map((x: any) => x.id), [a.id]);
    assert.deepEqual([page.headers['x-page'], page.headers['x-per-page'], page.headers['x-total-pages']], ['2', '2', '2']);
    const bad = await call(t.app, 'GET', '/admin/spam_logs', { token: admin.token, query: { noteable_type: 'Epic' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'noteable_type does not have a valid value' }]);
    const one = await call(t.app, 'GET', `/admin/spam_logs/${b.id}`, { token: admin.token });
    assert.deepEqual(one.body, { ...r.body[1] });
    assert.deepEqual(one.body.user, userOf(other));
    for (const id of ['999999', '99999999999']) {
      const missing = await call(t.app, 'GET', `/admin/spam_logs/${id}`, { token: admin.token });
      assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }], id);
    }
  });
});

describe('mark_as_ham', () => {
  test('marks the row; with Akismet on the text reaches its submit-ham once; idempotent', async () => {
    await settings({ ...OFF, akismet_enabled: true, akismet_api_key: 'key', akismet_url: svc.url });
    const clock = t.clock as ManualClock;
    const log = await makeSpamLog(t.app, { userId: spammer.user.id, title: 'casino', description: 'play now' });
    clock.set(clock.now() + 5000);
    const r = await call(t.app, 'POST', `/admin/spam_logs/${log.id}/mark_as_ham`, { token: admin.token });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      id: log.id, user: userOf(spammer), source_ip: '192.0.2.7', user_agent: 'spam-bot/1.0', via_api: true, noteable_type: 'Issue',
      title: 'casino', description: 'play now', recaptcha_verified: false, submitted_as_ham: true,
      created_at: new Date(log.created_at).toISOString(), updated_at: new Date(clock.now()).toISOString(),
    });
    assert.deepEqual(svc.ham, [{
      api_key: 'key', blog: t.app.config.externalUrl, user_ip: '192.0.2.7', user_agent: 'spam-bot/1.0', referrer: '', comment_type: 'comment',
      comment_author: spammer.user.name, comment_author_email: spammer.user.email, comment_content: 'casino\nplay now',
    }]);
    assert.deepEqual(await row(log.id), { ...log, submitted_as_ham: 1, updated_at: clock.now() });
    // Again: the same answer, no second submission.
    clock.set(clock.now() + 5000);
    const again = await call(t.app, 'POST', `/admin/spam_logs/${log.id}/mark_as_ham`, { token: admin.token });
    assert.deepEqual([again.status, again.body], [201, r.body]);
    assert.equal(svc.ham.length, 1);
    const missing = await call(t.app, 'POST', '/admin/spam_logs/999999/mark_as_ham', { token: admin.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
    await settings(OFF);
  });

  test('a failing or refusing Akismet never fails the request; with Akismet off nothing is sent', async () => {
    await settings({ ...OFF, akismet_enabled: true, akismet_api_key: 'key', akismet_url: svc.url });
    for (const mode of ['error', 'drop'] as const) {
      svc.mode = mode;
      const log = await makeSpamLog(t.app, { userId: spammer.user.id });
      const r = await call(t.app, 'POST', `/admin/spam_logs/${log.id}/mark_as_ham`, { token: admin.token });
      assert.deepEqual([r.status, r.body.submitted_as_ham], [201, true], mode);
      assert.equal((await row(log.id))!.submitted_as_ham, 1);
    }
    svc.mode = 'ok';
    await settings({ akismet_api_key: 'bad-key' });
    const refused = await makeSpamLog(t.app, { userId: spammer.user.id });
    assert.equal((await call(t.app, 'POST', `/admin/spam_logs/${refused.id}/mark_as_ham`, { token: admin.token })).status, 201);
    assert.equal(svc.ham.length, 1);
    await settings(OFF);
    svc.ham.length = 0;
    const log = await makeSpamLog(t.app, { userId: spammer.user.id });
    assert.equal((await call(t.app, 'POST', `/admin/spam_logs/${log.id}/mark_as_ham`, { token: admin.token })).status, 201);
    assert.equal((await row(log.id))!.submitted_as_ham, 1);
    assert.equal(svc.ham.length, 0);
  });
});

describe('removal', () => {
  test('a row alone: 204, the user and their other rows stay', async () => {
    const a = await makeSpamLog(t.app, { userId: spammer.user.id });
    const b = await makeSpamLog(t.app, { userId: spammer.user.id });
    const r = await call(t.app, 'DELETE', `/admin/spam_logs/${a.id}`, { token: admin.token });
    assert.deepEqual([r.status, r.text], [204, '']);
    assert.deepEqual(await ids(), [b.id]);
    assert.ok(await t.app.db.selectFrom('users').select('id').where('id', '=', spammer.user.id).executeTakeFirst());
    const missing = await call(t.app, 'DELETE', `/admin/spam_logs/${a.id}`, { token: admin.token });
    assert.deepEqual([missing.status, missing.body], [404, { message: '404 Not found' }]);
  });

  test('remove_user=true deletes the author with all their rows; others stay; an administrator cannot remove themself', async () => {
    const victim = await quickUser(t.app);
    const bystander = await quickUser(t.app);
    const a = await makeSpamLog(t.app, { userId: victim.user.id });
    await makeSpamLog(t.app, { userId: victim.user.id });
    const kept = await makeSpamLog(t.app, { userId: bystander.user.id });
    const r = await call(t.app, 'DELETE', `/admin/spam_logs/${a.id}`, { token: admin.token, query: { remove_user: 'true' } });
    assert.deepEqual([r.status, r.text], [204, '']);
    assert.equal(await t.app.db.selectFrom('users').select('id').where('id', '=', victim.user.id).executeTakeFirst(), undefined);
    assert.deepEqual(await ids(), [kept.id]);
    assert.equal((await call(t.app, 'GET', '/user', { token: victim.token })).status, 401);
    const own = await makeSpamLog(t.app, { userId: admin.user.id });
    const self = await call(t.app, 'DELETE', `/admin/spam_logs/${own.id}`, { token: admin.token, query: { remove_user: 'true' } });
    assert.deepEqual([self.status, self.body], [403, { message: '403 Forbidden - You cannot delete your own account' }]);
    assert.deepEqual(await ids(), [kept.id, own.id]);
    const bad = await call(t.app, 'DELETE', `/admin/spam_logs/${kept.id}`, { token: admin.token, query: { remove_user: 'maybe' } });
    assert.deepEqual([bad.status, bad.body], [400, { error: 'remove_user is invalid' }]);
    assert.deepEqual(await ids(), [kept.id, own.id]);
  });
});

describe('allow_possible_spam', () => {
  test('a flagged issue is stored and only logged; off again, the same issue is refused', async () => {
    const project = await makeProject(t.app, { visibility: 20 });
    const issue = (title: string) => call(t.app, 'POST', `/projects/${project.id}/issues`, { token: spammer.token, body: { title }, headers: { 'user-agent': 'spam-test' } });
    await settings({ ...OFF, spam_check_blocked_words: ['casino'], allow_possible_spam: true });
    const r = await issue('casino night');
    assert.equal(r.status, 201);
    assert.equal(r.body.title, 'casino night');
    const logs = await t.app.db.selectFrom('spam_logs').selectAll().execute();
    assert.deepEqual(logs.map((l) => [l.user_id, l.noteable_type, l.title, l.user_agent, l.submitted_as_ham, l.recaptcha_verified]), [[spammer.user.id, 'Issue', 'casino night', 'spam-test', 0, 0]]);
    // With a CAPTCHA service too: let through, no CAPTCHA asked.
    await settings({ recaptcha_enabled: true, recaptcha_site_key: 'site-key', recaptcha_private_key: 'recaptcha-secret', recaptcha_verify_url: `${svc.url}/siteverify` });
    assert.equal((await issue('casino again')).status, 201);
    assert.equal((await ids()).length, 2);
    await settings({ allow_possible_spam: false, recaptcha_enabled: false });
    const refused = await issue('casino night');
    assert.equal(refused.status, 400);
    assert.equal((await ids()).length, 3);
    await settings(OFF);
  });
});

describe('clean-up', () => {
  const DAY = 86_400_000;
  const jobs = () => t.app.db.selectFrom('jobs').select(['state', 'run_at']).where('kind', '=', SPAM_LOG_CLEAN_UP).orderBy('id').execute();

  test('each day at 01:10 UTC rows older than spam_log_retention_days go; 0 keeps them all', async () => {
    const clock = t.clock as ManualClock;
    await settings({ ...OFF, spam_log_retention_days: 30 });
    await t.app.db.deleteFrom('jobs').where('kind', '=', SPAM_LOG_CLEAN_UP).execute();
    const today = Math.floor(clock.now() / DAY) * DAY;
    const run = today + DAY + 70 * 60_000;
    const old = await makeSpamLog(t.app, { userId: spammer.user.id, createdAt: run - 30 * DAY - 1 });
    const edge = await makeSpamLog(t.app, { userId: spammer.user.id, createdAt: run - 30 * DAY });
    const recent = await makeSpamLog(t.app, { userId: spammer.user.id, createdAt: run - DAY });
    const older = await makeSpamLog(t.app, { userId: null, createdAt: run - 400 * DAY });
    await t.app.jobs.scheduleRecurring();
    await t.app.jobs.scheduleRecurring();
    assert.deepEqual(await jobs(), [{ state: 'queued', run_at: run }]);
    // Not due yet: nothing removed.
    await t.app.jobs.drain();
    assert.deepEqual(await ids(), [old.id, edge.id, recent.id, older.id]);
    clock.set(run + 1000);
    await t.app.jobs.drain();
    assert.deepEqual(await ids(), [edge.id, recent.id]);
    assert.deepEqual((await jobs()).map((j) => [j.state, j.run_at]), [['succeeded', run], ['queued', run + DAY]]);
    // Kept forever with 0.
    const bad = await call(t.app, 'PUT', '/application/settings', { token: admin.token, body: { spam_log_retention_days: -1 } });
    assert.equal(bad.status, 400);
    await settings({ spam_log_retention_days: 0 });
    const start = clock.now();
    clock.set(run + 400 * DAY);
    await t.app.jobs.drain();
    assert.deepEqual(await ids(), [edge.id, recent.id]);
    clock.set(start);
    await settings(OFF);
  });
});
