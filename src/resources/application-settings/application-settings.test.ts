import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeProject, type RoleCast } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonSkip } from '../../../test/support/python-gitlab.ts';
import { applicationSettings } from '../../platform/application-settings.ts';

// GET/PUT /application/settings: administrators only; the settings Bellows honours, their defaults (the
// configuration's where it has one), validation with nothing changed, and the change seen at once by every reader.

let t: TestApp;
let roles: RoleCast;
before(async () => {
  t = await buildTestApp({ config: { defaultBranchProtection: 3 } });
  roles = await castRoles(t.app, await makeProject(t.app));
});
after(async () => { await t.close(); });

const DEFAULTS = {
  id: 1,
  default_branch_protection: 3,
  allow_local_requests_from_web_hooks_and_services: false,
  allow_local_requests_from_system_hooks: false,
  allow_possible_spam: false,
  akismet_api_key: null,
  akismet_enabled: false,
  akismet_url: 'https://rest.akismet.com',
  recaptcha_enabled: false,
  recaptcha_private_key: null,
  recaptcha_site_key: null,
  recaptcha_verify_url: 'https://www.google.com/recaptcha/api/siteverify',
  spam_check_blocked_words: [],
  spam_check_blocked_link_domains: [],
  spam_check_max_links: 0,
  search_rate_limit: 30,
  search_rate_limit_unauthenticated: 10,
  search_rate_limit_allowlist: [],
  spam_log_retention_days: 90,
};
const stored = async () => (await t.app.db.selectFrom('application_settings').select(['name', 'value']).orderBy('name').execute()).map((r) => [r.name, r.value]);

describe('access: administrators only', () => {
  const table: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 403], ['guest', 403], ['reporter', 403], ['developer', 403], ['maintainer', 403], ['owner', 403], ['admin', 200],
  ];
  for (const [role, status] of table) {
    test(`${role}: GET and PUT answer ${status}`, async () => {
      const token = roles[role]?.token;
      const get = await call(t.app, 'GET', '/application/settings', { token });
      assert.equal(get.status, status);
      const put = await call(t.app, 'PUT', '/application/settings', { token, body: { allow_local_requests_from_system_hooks: false } });
      assert.equal(put.status, status);
      if (status === 401) assert.deepEqual(get.body, { message: '401 Unauthorized' });
      if (status === 403) assert.deepEqual(put.body, { message: '403 Forbidden' });
    });
  }
});

test('GET: every setting with its default, id first, the default branch protection from the configuration', async () => {
  await t.app.db.deleteFrom('application_settings').execute();
  const res = await call(t.app, 'GET', '/application/settings', { token: roles.admin.token });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, DEFAULTS);
  assert.deepEqual(Object.keys(res.body), Object.keys(DEFAULTS));
});

test('PUT: changes what is given, stores only that, answers the whole entity; the next read sees it', async () => {
  await t.app.db.deleteFrom('application_settings').execute();
  const admin = roles.admin.token;
  assert.equal((await call(t.app, 'GET', '/application/settings', { token: admin })).body.allow_local_requests_from_web_hooks_and_services, false);
  const res = await call(t.app, 'PUT', '/application/settings', { token: admin, body: { allow_local_requests_from_web_hooks_and_services: true, default_branch_protection: 0 } });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { ...DEFAULTS, default_branch_protection: 0, allow_local_requests_from_web_hooks_and_services: true });
  assert.deepEqual(await stored(), [['allow_local_requests_from_web_hooks_and_services', 'true'], ['default_branch_protection', '0']]);
  assert.deepEqual((await call(t.app, 'GET', '/application/settings', { token: admin })).body, res.body);
  assert.equal((await applicationSettings(t.app)).allow_local_requests_from_web_hooks_and_services, true);
  // A form body and the legacy name of the hooks setting.
  const form = await call(t.app, 'PUT', '/application/settings', { token: admin, form: { allow_local_requests_from_hooks_and_services: 'false' } });
  assert.equal(form.status, 200);
  assert.equal(form.body.allow_local_requests_from_web_hooks_and_services, false);
});

test('the default branch protection setting applies to new groups and to personal projects', async () => {
  const admin = roles.admin.token;
  await call(t.app, 'PUT', '/application/settings', { token: admin, body: { default_branch_protection: 1 } });
  const g = await call(t.app, 'POST', '/groups', { token: admin, body: { name: 'dbp-setting', path: 'dbp-setting' } });
  assert.equal(g.body.default_branch_protection, 1);
  const p = await call(t.app, 'POST', '/projects', { token: admin, body: { name: 'dbp-personal', initialize_with_readme: true } });
  const rules = (await call(t.app, 'GET', `/projects/${p.body.id}/protected_branches`, { token: admin })).body;
  assert.deepEqual(rules.map((r: any) => [r.name, r.push_access_levels.map((a: any) => a.access_level), r.merge_access_levels.map((a: any) => a.access_level)]), [['main', [30], [30]]]);
  await call(t.app, 'PUT', '/application/settings', { token: admin, body: { default_branch_protection: 0 } });
  const q = await call(t.app, 'POST', '/projects', { token: admin, body: { name: 'dbp-none', initialize_with_readme: true } });
  assert.deepEqual((await call(t.app, 'GET', `/projects/${q.body.id}/protected_branches`, { token: admin })).body, []);
});

test('bad input: a v4 400 and nothing changed', async () => {
  await t.app.db.deleteFrom('application_settings').execute();
  const admin = roles.admin.token;
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{}, { error: 'default_branch_protection, allow_local_requests_from_web_hooks_and_services, allow_local_requests_from_system_hooks, allow_possible_spam, akismet_api_key, akismet_enabled, akismet_url, recaptcha_enabled, recaptcha_private_key, recaptcha_site_key, recaptcha_verify_url, spam_check_blocked_words, spam_check_blocked_link_domains, spam_check_max_links, search_rate_limit, search_rate_limit_unauthenticated, search_rate_limit_allowlist, spam_log_retention_days, allow_local_requests_from_hooks_and_services are missing, at least one parameter must be provided' }],
    [{ unknown_setting: true }, { error: 'default_branch_protection, allow_local_requests_from_web_hooks_and_services, allow_local_requests_from_system_hooks, allow_possible_spam, akismet_api_key, akismet_enabled, akismet_url, recaptcha_enabled, recaptcha_private_key, recaptcha_site_key, recaptcha_verify_url, spam_check_blocked_words, spam_check_blocked_link_domains, spam_check_max_links, search_rate_limit, search_rate_limit_unauthenticated, search_rate_limit_allowlist, spam_log_retention_days, allow_local_requests_from_hooks_and_services are missing, at least one parameter must be provided' }],
    [{ default_branch_protection: 7 }, { error: 'default_branch_protection does not have a valid value' }],
    [{ allow_local_requests_from_system_hooks: 'maybe', default_branch_protection: 1 }, { error: 'allow_local_requests_from_system_hooks is invalid' }],
  ];
  for (const [body, error] of cases) {
    const res = await call(t.app, 'PUT', '/application/settings', { token: admin, body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual(res.body, error);
  }
  assert.deepEqual(await stored(), []);
  assert.deepEqual((await call(t.app, 'GET', '/application/settings', { token: admin })).body, DEFAULTS);
});

test('python-gitlab: gl.settings.get() and save()', { skip: pythonSkip }, async () => {
  await t.app.db.deleteFrom('application_settings').execute();
  const url = await listening(t);
  const out = await pythonGitlab(url, roles.admin.token, `
s = gl.settings.get()
out['before'] = [s.id, s.default_branch_protection, s.allow_local_requests_from_web_hooks_and_services]
s.allow_local_requests_from_web_hooks_and_services = True
s.default_branch_protection = 4
s.save()
out['saved'] = [s.default_branch_protection, s.allow_local_requests_from_web_hooks_and_services]
again = gl.settings.get()
out['after'] = [again.default_branch_protection, again.allow_local_requests_from_web_hooks_and_services, again.allow_local_requests_from_system_hooks]
bad = gl.settings.get()
bad.default_branch_protection = 9
out['bad'] = attempt(lambda: bad.save())
`);
  assert.deepEqual(out, {
    before: [1, 3, false],
    saved: [4, true],
    after: [4, true, false],
    bad: [400, 'default_branch_protection does not have a valid value'],
  });
});
