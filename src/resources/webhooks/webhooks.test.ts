import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { gitClient } from '../repository/testing.ts';
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { startHookReceiver, type HookReceiver, type ReceivedHook } from '../../../test/support/hook-receiver.ts';
import { addMember, castGroupRoles, castRoles, makeGroup, makeProject, quickUser, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import { updateApplicationSettings } from '../../platform/application-settings.ts';
import type { ManualClock } from '../../platform/clock.ts';

// Project webhooks: the API, and deliveries received by a local HTTP server (local requests allowed by the setting).

let t: TestApp;
let hooks: HookReceiver;
let hookUrl = '';

before(async () => {
  t = await buildTestApp();
  hooks = await startHookReceiver();
  hookUrl = hooks.url;
  await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: true });
});
after(async () => {
  await hooks.close();
  await t.close();
});

const hookCount = async () => Number((await t.app.db.selectFrom('web_hooks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

async function deliver(): Promise<ReceivedHook[]> {
  hooks.take();
  await t.app.jobs.drain();
  return hooks.take();
}

const ALL_EVENTS = {
  push_events: true, tag_push_events: true, issues_events: true, confidential_issues_events: true, merge_requests_events: true,
  note_events: true, confidential_note_events: true, wiki_page_events: true,
};

describe('project hooks: access', () => {
  let project: { id: number };
  let roles: RoleCast;
  before(async () => {
    project = await makeProject(t.app);
    roles = await castRoles(t.app, project);
  });
  const expected: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 403], ['developer', 403],
    ['maintainer', 200], ['owner', 200], ['admin', 200],
  ];
  for (const [role, status] of expected) {
    test(`${role}: list ${status}, create ${status === 200 ? 201 : status}`, async () => {
      const token = roles[role]?.token;
      const list = await call(t.app, 'GET', `/projects/${project.id}/hooks`, { token });
      assert.equal(list.status, status);
      if (status === 401) assert.deepEqual(list.body, { message: '401 Unauthorized' });
      if (status === 404) assert.deepEqual(list.body, { message: '404 Project Not Found' });
      if (status === 403) assert.deepEqual(list.body, { message: '403 Forbidden' });
      const n = await hookCount();
      const made = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token, body: { url: 'http://127.0.0.1:9999/x' } });
      assert.equal(made.status, status === 200 ? 201 : status);
      assert.equal(await hookCount(), n + (status === 200 ? 1 : 0));
    });
  }
});

describe('project hooks: CRUD', () => {
  let owner: TestUser;
  let project: { id: number };
  before(async () => {
    owner = await quickUser(t.app);
    project = await makeProject(t.app, { owner: owner.user });
  });

  test('create, read, update and delete; the token and header values are never shown', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/hooks`, {
      token: owner.token,
      body: { url: hookUrl, token: 's3cret', issues_events: true, push_events_branch_filter: 'release/*', custom_headers: [{ key: 'X-Extra', value: 'v1' }] },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      id: r.body.id, url: hookUrl, name: '', description: '', created_at: '2026-06-01T12:00:00.000Z', push_events: true, tag_push_events: false,
      merge_requests_events: false, repository_update_events: false, enable_ssl_verification: true, alert_status: 'executable',
      disabled_until: null, url_variables: [], push_events_branch_filter: 'release/*', branch_filter_strategy: 'wildcard',
      custom_webhook_template: null, custom_headers: [{ key: 'X-Extra' }], project_id: project.id, issues_events: true,
      confidential_issues_events: false, note_events: false, confidential_note_events: false, pipeline_events: false,
      wiki_page_events: false, deployment_events: false, feature_flag_events: false, job_events: false, releases_events: false,
      milestone_events: false, emoji_events: false, resource_access_token_events: false,
    });
    const id = r.body.id;
    const got = await call(t.app, 'GET', `/projects/${project.id}/hooks/${id}`, { token: owner.token });
    assert.deepEqual(got.body, r.body);
    const list = await call(t.app, 'GET', `/projects/${project.id}/hooks`, { token: owner.token });
    assert.deepEqual(list.body.map((h: any) => h.id), [id]);
    assert.equal(list.headers['x-total'], '1');
    const put = await call(t.app, 'PUT', `/projects/${project.id}/hooks/${id}`, { token: owner.token, body: { note_events: true, push_events: false } });
    assert.equal(put.status, 200);
    assert.equal(put.body.note_events, true);
    assert.equal(put.body.push_events, false);
    assert.equal(put.body.issues_events, true);
    const row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.token, 's3cret');
    assert.deepEqual(JSON.parse(row.custom_headers), { 'X-Extra': 'v1' });
    const del = await call(t.app, 'DELETE', `/projects/${project.id}/hooks/${id}`, { token: owner.token });
    assert.equal(del.status, 204);
    const gone = await call(t.app, 'GET', `/projects/${project.id}/hooks/${id}`, { token: owner.token });
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { message: '404 Project hook Not Found' });
  });

  test('bad input: 4xx and nothing stored', async () => {
    const n = await hookCount();
    const missing = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: {} });
    assert.equal(missing.status, 400);
    const scheme = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: 'ftp://example.com/x' } });
    assert.equal(scheme.status, 422);
    assert.deepEqual(scheme.body, { message: 'Invalid url given' });
    const filter = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: hookUrl, push_events_branch_filter: 'a..b' } });
    assert.equal(filter.status, 422);
    assert.deepEqual(filter.body, { message: 'Invalid branch filter given' });
    assert.equal(await hookCount(), n);
  });

  test('private and loopback addresses are refused unless the setting allows them', async () => {
    await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: false });
    try {
      const n = await hookCount();
      for (const url of ['http://127.0.0.1:8080/x', 'http://10.1.2.3/x', 'http://192.168.1.1/x', 'http://[::1]:8080/x', 'http://169.254.169.254/x']) {
        const r = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url } });
        assert.equal(r.status, 422, url);
        assert.deepEqual(r.body, { message: 'Invalid url given' });
      }
      assert.equal(await hookCount(), n);
    } finally {
      await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: true });
    }
    const ok = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: 'http://127.0.0.1:8080/x' } });
    assert.equal(ok.status, 201);
  });
});

describe('project hooks: an event no hook can take is not queued for them', () => {
  test('a project without hooks (and no group hook anywhere) queues no webhooks job; once it has one, its events go to it', async () => {
    const owner = await quickUser(t.app);
    const made = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'unhooked' } });
    assert.equal(made.status, 201);
    const webhookJobs = async () => Number((await t.app.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'events.webhooks').executeTakeFirstOrThrow()).n);
    const notificationJobs = async () => Number((await t.app.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'events.notifications').executeTakeFirstOrThrow()).n);
    const [before, notifiedBefore] = [await webhookJobs(), await notificationJobs()];
    const first = await call(t.app, 'POST', `/projects/${made.body.id}/issues`, { token: owner.token, body: { title: 'Nobody hears' } });
    assert.equal(first.status, 201);
    assert.equal(await webhookJobs(), before);
    assert.equal(await notificationJobs(), notifiedBefore + 1, 'the other subscriber still gets the event');
    assert.deepEqual(await deliver(), []);
    const h = await call(t.app, 'POST', `/projects/${made.body.id}/hooks`, { token: owner.token, body: { url: hookUrl, issues_events: true } });
    assert.equal(h.status, 201);
    const second = await call(t.app, 'POST', `/projects/${made.body.id}/issues`, { token: owner.token, body: { title: 'Someone hears' } });
    assert.equal(second.status, 201);
    assert.equal(await webhookJobs(), before + 1);
    const got = await deliver();
    assert.deepEqual(got.map((g) => [g.headers['x-gitlab-event'], g.body.object_attributes.title]), [['Issue Hook', 'Someone hears']]);
  });
});

describe('project hooks: deliveries', () => {
  let owner: TestUser;
  let project: any;
  let hookId: number;
  before(async () => {
    owner = await quickUser(t.app);
    const r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'hooked', initialize_with_readme: true } });
    assert.equal(r.status, 201);
    project = r.body;
    const h = await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: hookUrl, token: 'tok-1', ...ALL_EVENTS, custom_headers: [{ key: 'X-Extra', value: 'v1' }] } });
    hookId = h.body.id;
    await deliver();
  });

  const projectAttrs = () => ({
    id: project.id, name: 'hooked', description: '', web_url: project.web_url, avatar_url: null,
    git_ssh_url: project.ssh_url_to_repo, git_http_url: project.http_url_to_repo, namespace: owner.user.name,
    visibility_level: 0, path_with_namespace: project.path_with_namespace, default_branch: 'main', ci_config_path: null,
    homepage: project.web_url, url: project.ssh_url_to_repo, ssh_url: project.ssh_url_to_repo, http_url: project.http_url_to_repo,
  });

  test('an issue: one Issue Hook with the secret, the custom header and the payload', async () => {
    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Broken', description: 'It is' } });
    assert.equal(r.status, 201);
    const got = await deliver();
    assert.equal(got.length, 1);
    const { headers, body } = got[0];
    assert.equal(headers['x-gitlab-event'], 'Issue Hook');
    assert.equal(headers['x-gitlab-token'], 'tok-1');
    assert.equal(headers['x-extra'], 'v1');
    assert.equal(headers['content-type'], 'application/json');
    assert.match(headers['user-agent']!, /^GitLab\//);
    assert.match(headers['x-gitlab-event-uuid'] as string, /^[0-9a-f-]{36}$/);
    assert.equal(headers['x-gitlab-instance'], t.config.externalUrl);
    assert.equal(body.object_kind, 'issue');
    assert.equal(body.event_type, 'issue');
    assert.deepEqual(body.user, { id: owner.user.id, name: owner.user.name, username: owner.user.username, avatar_url: null, email: '[REDACTED]' });
    assert.deepEqual(body.project, projectAttrs());
    assert.deepEqual(body.repository, { name: 'hooked', url: project.ssh_url_to_repo, description: '', homepage: project.web_url });
    const o = body.object_attributes;
    assert.equal(o.id, r.body.id);
    assert.equal(o.iid, r.body.iid);
    assert.equal(o.title, 'Broken');
    assert.equal(o.description, 'It is');
    assert.equal(o.state, 'opened');
    assert.equal(o.state_id, 1);
    assert.equal(o.action, 'open');
    assert.equal(o.confidential, false);
    assert.equal(o.author_id, owner.user.id);
    assert.equal(o.project_id, project.id);
    assert.equal(o.url, `${project.web_url}/-/issues/${r.body.iid}`);
    assert.deepEqual(o.assignee_ids, []);
    assert.equal(o.assignee_id, null);
    assert.deepEqual(body.labels, []);
    assert.deepEqual(body.changes.title, { previous: null, current: 'Broken' });

    const closed = await call(t.app, 'PUT', `/projects/${project.id}/issues/${r.body.iid}`, { token: owner.token, body: { state_event: 'close' } });
    assert.equal(closed.status, 200);
    const c = await deliver();
    assert.equal(c.length, 1, 'a state change is one close event');
    assert.equal(c[0].body.object_attributes.action, 'close');
    assert.deepEqual(c[0].body.changes.state_id, { previous: 1, current: 2 });
  });

  test('a note on an issue: Note Hook with the issue', async () => {
    const issue = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Noted' } });
    await deliver();
    const n = await call(t.app, 'POST', `/projects/${project.id}/issues/${issue.body.iid}/notes`, { token: owner.token, body: { body: 'Hello world' } });
    assert.equal(n.status, 201);
    const got = await deliver();
    assert.equal(got.length, 1);
    assert.equal(got[0].headers['x-gitlab-event'], 'Note Hook');
    const b = got[0].body;
    assert.equal(b.object_kind, 'note');
    assert.equal(b.event_type, 'note');
    assert.equal(b.project_id, project.id);
    assert.equal(b.object_attributes.note, 'Hello world');
    assert.equal(b.object_attributes.noteable_type, 'Issue');
    assert.equal(b.object_attributes.noteable_id, issue.body.id);
    assert.equal(b.object_attributes.action, 'create');
    assert.equal(b.object_attributes.url, `${project.web_url}/-/issues/${issue.body.iid}#note_${n.body.id}`);
    assert.equal(b.issue.iid, issue.body.iid);
    assert.equal(b.issue.title, 'Noted');
  });

  test('a branch, a commit and a tag through the API: push and tag_push', async () => {
    const br = await call(t.app, 'POST', `/projects/${project.id}/repository/branches`, { token: owner.token, body: { branch: 'feature', ref: 'main' } });
    assert.equal(br.status, 201);
    const created = await deliver();
    assert.equal(created.length, 1);
    assert.equal(created[0].headers['x-gitlab-event'], 'Push Hook');
    assert.equal(created[0].body.before, '0000000000000000000000000000000000000000');
    assert.equal(created[0].body.after, br.body.commit.id);
    assert.equal(created[0].body.ref, 'refs/heads/feature');
    assert.deepEqual(created[0].body.commits, []);
    assert.equal(created[0].body.total_commits_count, 0);

    const cm = await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token, body: { branch: 'feature', commit_message: 'Add a file\n\nbody', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] },
    });
    assert.equal(cm.status, 201);
    const pushed = await deliver();
    assert.equal(pushed.length, 1);
    const p = pushed[0].body;
    assert.equal(p.object_kind, 'push');
    assert.equal(p.event_name, 'push');
    assert.equal(p.before, br.body.commit.id);
    assert.equal(p.after, cm.body.id);
    assert.equal(p.checkout_sha, cm.body.id);
    assert.equal(p.user_id, owner.user.id);
    assert.equal(p.user_username, owner.user.username);
    assert.equal(p.project_id, project.id);
    assert.deepEqual(p.project, projectAttrs());
    assert.equal(p.total_commits_count, 1);
    assert.deepEqual(p.commits, [{
      id: cm.body.id, message: 'Add a file\n\nbody', title: 'Add a file', timestamp: cm.body.authored_date.replace('.000+', '+'),
      url: `${project.web_url}/-/commit/${cm.body.id}`, author: { name: cm.body.author_name, email: cm.body.author_email },
      added: ['a.txt'], modified: [], removed: [],
    }]);
    assert.deepEqual(p.repository, {
      name: 'hooked', url: project.ssh_url_to_repo, description: '', homepage: project.web_url,
      git_http_url: project.http_url_to_repo, git_ssh_url: project.ssh_url_to_repo, visibility_level: 0,
    });

    const tag = await call(t.app, 'POST', `/projects/${project.id}/repository/tags`, { token: owner.token, body: { tag_name: 'v1.0.0', ref: 'feature' } });
    assert.equal(tag.status, 201);
    const tagged = await deliver();
    assert.equal(tagged.length, 1);
    assert.equal(tagged[0].headers['x-gitlab-event'], 'Tag Push Hook');
    assert.equal(tagged[0].body.object_kind, 'tag_push');
    assert.equal(tagged[0].body.ref, 'refs/tags/v1.0.0');
    assert.equal(tagged[0].body.checkout_sha, cm.body.id);
  });

  test('a merge request: Merge Request Hook, and the branch filter', async () => {
    await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token, body: { branch: 'topic', start_branch: 'main', commit_message: 'Topic', actions: [{ action: 'create', file_path: 't.txt', content: 't' }] },
    });
    const push = await deliver();
    assert.equal(push.length, 1);
    await call(t.app, 'PUT', `/projects/${project.id}/hooks/${hookId}`, { token: owner.token, body: { push_events_branch_filter: 'main' } });
    await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token, body: { branch: 'topic', commit_message: 'More', actions: [{ action: 'create', file_path: 'u.txt', content: 'u' }] },
    });
    assert.equal((await deliver()).length, 0, 'a push to a branch the filter leaves out is not sent');
    const mr = await call(t.app, 'POST', `/projects/${project.id}/merge_requests`, { token: owner.token, body: { title: 'Topic', source_branch: 'topic', target_branch: 'main' } });
    assert.equal(mr.status, 201);
    const got = await deliver();
    assert.equal(got.length, 1);
    assert.equal(got[0].headers['x-gitlab-event'], 'Merge Request Hook');
    const o = got[0].body.object_attributes;
    assert.equal(got[0].body.object_kind, 'merge_request');
    assert.equal(o.iid, mr.body.iid);
    assert.equal(o.source_branch, 'topic');
    assert.equal(o.target_branch, 'main');
    assert.equal(o.state, 'opened');
    assert.equal(o.action, 'open');
    assert.equal(o.url, `${project.web_url}/-/merge_requests/${mr.body.iid}`);
    assert.deepEqual(o.target, projectAttrs());
    assert.equal(o.last_commit.id, mr.body.sha);
    const closed = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${mr.body.iid}`, { token: owner.token, body: { state_event: 'close' } });
    assert.equal(closed.status, 200);
    const c = await deliver();
    assert.equal(c.length, 1);
    assert.equal(c[0].body.object_attributes.action, 'close');
  });

  test('a merge that closes an issue (Closes #N): the Issue Hook with action close, as an explicit close', async () => {
    await call(t.app, 'POST', `/projects/${project.id}/repository/commits`, {
      token: owner.token, body: { branch: 'closer', start_branch: 'main', commit_message: 'Close it', actions: [{ action: 'create', file_path: 'c.txt', content: 'c' }] },
    });
    const issue = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Closed by a merge' } });
    const mr = await call(t.app, 'POST', `/projects/${project.id}/merge_requests`, {
      token: owner.token, body: { title: 'Closer', source_branch: 'closer', target_branch: 'main', description: `Closes #${issue.body.iid}` },
    });
    assert.equal(mr.status, 201);
    await deliver();
    const merged = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${mr.body.iid}/merge`, { token: owner.token });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    const got = await deliver();
    const issueHooks = got.filter((g) => g.headers['x-gitlab-event'] === 'Issue Hook');
    assert.equal(issueHooks.length, 1);
    const b = issueHooks[0].body;
    assert.equal(b.object_kind, 'issue');
    assert.equal(b.object_attributes.id, issue.body.id);
    assert.equal(b.object_attributes.action, 'close');
    assert.equal(b.object_attributes.state, 'closed');
    assert.deepEqual(b.changes.state_id, { previous: 1, current: 2 });
    assert.equal(b.user.id, owner.user.id);
    const mrHooks = got.filter((g) => g.headers['x-gitlab-event'] === 'Merge Request Hook');
    assert.deepEqual(mrHooks.map((g) => g.body.object_attributes.action), ['merge']);
  });

  test('a wiki page: Wiki Page Hook', async () => {
    const w = await call(t.app, 'POST', `/projects/${project.id}/wikis`, { token: owner.token, body: { title: 'Home', content: 'hello' } });
    assert.equal(w.status, 201);
    const got = await deliver();
    assert.equal(got.length, 1);
    assert.equal(got[0].headers['x-gitlab-event'], 'Wiki Page Hook');
    const b = got[0].body;
    assert.equal(b.object_kind, 'wiki_page');
    assert.deepEqual(b.project, projectAttrs());
    assert.equal(b.wiki.path_with_namespace, `${project.path_with_namespace}.wiki`);
    assert.equal(b.object_attributes.title, 'Home');
    assert.equal(b.object_attributes.slug, 'Home');
    assert.equal(b.object_attributes.content, 'hello');
    assert.equal(b.object_attributes.format, 'markdown');
    assert.equal(b.object_attributes.action, 'create');
    assert.equal(b.object_attributes.url, `${project.web_url}/-/wikis/Home`);
  });
});

describe('project hooks: confidentiality, retries, auto-disabling, refusal at delivery', () => {
  let owner: TestUser;
  let project: { id: number };
  before(async () => {
    owner = await quickUser(t.app);
    project = await makeProject(t.app, { owner: owner.user });
  });
  const makeHook = async (body: Record<string, unknown>) => (await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: hookUrl, ...body } })).body;
  const newIssue = (body: Record<string, unknown> = {}) => call(t.app, 'POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'x', ...body } });

  test('a confidential issue goes only to hooks with confidential_issues_events', async () => {
    const open = await makeHook({ url: `${hookUrl}?open`, issues_events: true });
    const conf = await makeHook({ url: `${hookUrl}?conf`, confidential_issues_events: true });
    await newIssue({ confidential: true });
    const got = await deliver();
    assert.equal(got.length, 1);
    assert.equal(got[0].body.event_type, 'confidential_issue');
    await newIssue();
    const plain = await deliver();
    assert.equal(plain.length, 1);
    for (const h of [open, conf]) await call(t.app, 'DELETE', `/projects/${project.id}/hooks/${h.id}`, { token: owner.token });
  });

  test('a failing receiver is retried with backoff until it accepts', async () => {
    const h = await makeHook({ issues_events: true });
    hooks.answers = [500];
    await newIssue();
    const first = await deliver();
    assert.equal(first.length, 1);
    let row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', h.id).executeTakeFirstOrThrow();
    assert.equal(row.recent_failures, 1);
    assert.equal((await deliver()).length, 0, 'not before the backoff');
    (t.clock as ManualClock).advance(60_000);
    const second = await deliver();
    assert.equal(second.length, 1);
    assert.equal(second[0].headers['idempotency-key'], first[0].headers['idempotency-key']);
    row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', h.id).executeTakeFirstOrThrow();
    assert.equal(row.recent_failures, 0);
    await call(t.app, 'DELETE', `/projects/${project.id}/hooks/${h.id}`, { token: owner.token });
  });

  test('repeated failures disable the hook for a while; a test run that succeeds enables it', async () => {
    const h = await makeHook({ issues_events: true });
    await newIssue();
    await deliver();
    hooks.answers = [500, 500, 500, 500];
    for (let i = 0; i < 4; i++) {
      const r = await call(t.app, 'POST', `/projects/${project.id}/hooks/${h.id}/test/issues_events`, { token: owner.token });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body, { message: 'HTTP 500' });
    }
    const shown = await call(t.app, 'GET', `/projects/${project.id}/hooks/${h.id}`, { token: owner.token });
    assert.equal(shown.body.alert_status, 'temporarily_disabled');
    assert.equal(shown.body.disabled_until, new Date(t.clock.now() + 60_000).toISOString());
    await newIssue();
    assert.equal((await deliver()).length, 0, 'a disabled hook is not sent to');
    const ok = await call(t.app, 'POST', `/projects/${project.id}/hooks/${h.id}/test/issues_events`, { token: owner.token });
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body, { message: '201 Created' });
    assert.equal(hooks.received.length, 1, 'the test run was delivered at once');
    assert.equal(hooks.received[0].body.object_kind, 'issue');
    const again = await call(t.app, 'GET', `/projects/${project.id}/hooks/${h.id}`, { token: owner.token });
    assert.equal(again.body.alert_status, 'executable');
    await call(t.app, 'DELETE', `/projects/${project.id}/hooks/${h.id}`, { token: owner.token });
  });

  test('a hook whose address became local is refused at delivery', async () => {
    const h = await makeHook({ issues_events: true });
    await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: false });
    try {
      await newIssue();
      assert.equal((await deliver()).length, 0);
      const row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', h.id).executeTakeFirstOrThrow();
      assert.equal(row.recent_failures, 1);
      const job = await t.app.db.selectFrom('jobs').selectAll().where('kind', '=', 'webhooks.deliver').orderBy('id', 'desc').executeTakeFirstOrThrow();
      assert.equal(job.state, 'succeeded', 'a refused address is not retried');
    } finally {
      await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: true });
    }
  });
});

describe('project hooks: git pushes over HTTP', () => {
  test('one push event per updated branch, one tag_push per tag, with the commits pushed', async () => {
    const host = new URL(await listening(t)).host;
    const owner = await quickUser(t.app);
    const project = await makeProject(t.app, { owner: owner.user });
    await call(t.app, 'POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: hookUrl, push_events: true, tag_push_events: true } });
    const g = gitClient();
    const remote = `http://anyone:${owner.token}@${host}/${project.full_path}.git`;
    assert.equal((await g.run(['init', '-q', 'w'])).code, 0);
    const dir = join(g.home, 'w');
    await g.run(['commit', '--allow-empty', '-q', '-m', 'first'], dir);
    await g.run(['commit', '--allow-empty', '-q', '-m', 'second\n\nwith a body'], dir);
    await g.run(['tag', 'v1'], dir);
    const r = await g.run(['push', '-q', remote, 'HEAD:refs/heads/main', 'refs/tags/v1'], dir);
    assert.equal(r.code, 0, r.stderr);
    const head = (await g.run(['rev-parse', 'HEAD'], dir)).stdout.trim();
    const got = await deliver();
    const byKind = Object.fromEntries(got.map((x) => [x.body.object_kind, x]));
    assert.equal(got.length, 2);
    assert.equal(byKind.push.headers['x-gitlab-event'], 'Push Hook');
    assert.equal(byKind.push.body.ref, 'refs/heads/main');
    assert.equal(byKind.push.body.before, '0000000000000000000000000000000000000000');
    assert.equal(byKind.push.body.after, head);
    assert.equal(byKind.push.body.total_commits_count, 2);
    assert.deepEqual(byKind.push.body.commits.map((c: any) => [c.title, c.message]), [['first', 'first\n'], ['second', 'second\n\nwith a body\n']]);
    assert.equal(byKind.tag_push.body.ref, 'refs/tags/v1');
    assert.equal(byKind.tag_push.body.checkout_sha, head);
  });
});

describe('group hooks: access (Owner of the group, or an administrator)', () => {
  let group: { id: number };
  let roles: RoleCast;
  before(async () => {
    group = await makeGroup(t.app, { visibility: 0 });
    roles = await castGroupRoles(t.app, group);
  });
  const expected: Array<[keyof RoleCast, number]> = [
    ['anonymous', 401], ['nonMember', 404], ['guest', 403], ['reporter', 403], ['developer', 403],
    ['maintainer', 403], ['owner', 200], ['admin', 200],
  ];
  for (const [role, status] of expected) {
    test(`${role}: list ${status}, create ${status === 200 ? 201 : status}`, async () => {
      const token = roles[role]?.token;
      const list = await call(t.app, 'GET', `/groups/${group.id}/hooks`, { token });
      assert.equal(list.status, status);
      if (status === 401) assert.deepEqual(list.body, { message: '401 Unauthorized' });
      if (status === 404) assert.deepEqual(list.body, { message: '404 Group Not Found' });
      if (status === 403) assert.deepEqual(list.body, { message: '403 Forbidden' });
      const n = await hookCount();
      const made = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token, body: { url: 'http://127.0.0.1:9999/x' } });
      assert.equal(made.status, status === 200 ? 201 : status);
      assert.equal(await hookCount(), n + (status === 200 ? 1 : 0));
    });
  }
});

describe('group hooks: CRUD and deliveries', () => {
  let owner: TestUser;
  let group: Awaited<ReturnType<typeof makeGroup>>;
  let sub: Awaited<ReturnType<typeof makeGroup>>;
  let inSub: any;
  let elsewhere: any;
  before(async () => {
    owner = await quickUser(t.app);
    group = await makeGroup(t.app);
    sub = await makeGroup(t.app, { parent: group });
    const other = await makeGroup(t.app);
    for (const g of [group, other]) await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, 50);
    const a = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'in-sub', namespace_id: sub.id, initialize_with_readme: true } });
    assert.equal(a.status, 201);
    inSub = a.body;
    const b = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'elsewhere', namespace_id: other.id } });
    assert.equal(b.status, 201);
    elsewhere = b.body;
    await deliver();
  });

  test('create, read, update and delete, with the reference\'s GroupHook fields', async () => {
    const r = await call(t.app, 'POST', `/groups/${group.id}/hooks`, {
      token: owner.token, body: { url: hookUrl, token: 'g-secret', issues_events: true, subgroup_events: true, push_events: false, custom_headers: [{ key: 'X-Group', value: 'g' }] },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, {
      id: r.body.id, url: hookUrl, name: '', description: '', created_at: new Date(t.clock.now()).toISOString(), push_events: false, tag_push_events: false,
      merge_requests_events: false, repository_update_events: false, enable_ssl_verification: true, alert_status: 'executable',
      disabled_until: null, url_variables: [], push_events_branch_filter: null, branch_filter_strategy: 'wildcard',
      custom_webhook_template: null, custom_headers: [{ key: 'X-Group' }], group_id: group.id, issues_events: true,
      confidential_issues_events: false, note_events: false, confidential_note_events: false, pipeline_events: false,
      wiki_page_events: false, job_events: false, deployment_events: false, feature_flag_events: false, releases_events: false,
      milestone_events: false, subgroup_events: true, emoji_events: false, resource_access_token_events: false, member_events: false,
      vulnerability_events: false, project_events: false,
    });
    const id = r.body.id;
    const row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.group_id, group.id);
    assert.equal(row.project_id, null);
    assert.equal(row.token, 'g-secret');
    assert.deepEqual((await call(t.app, 'GET', `/groups/${group.id}/hooks/${id}`, { token: owner.token })).body, r.body);
    const list = await call(t.app, 'GET', `/groups/${group.id}/hooks`, { token: owner.token });
    assert.deepEqual(list.body.map((h: any) => h.id), [id]);
    assert.equal(list.headers['x-total'], '1');
    const viaProject = await call(t.app, 'GET', `/projects/${inSub.id}/hooks/${id}`, { token: owner.token });
    assert.equal(viaProject.status, 404, 'a group hook is not one of the project\'s hooks');
    assert.deepEqual((await call(t.app, 'GET', `/projects/${inSub.id}/hooks`, { token: owner.token })).body, []);
    const viaSub = await call(t.app, 'GET', `/groups/${sub.id}/hooks/${id}`, { token: owner.token });
    assert.equal(viaSub.status, 404);
    assert.deepEqual(viaSub.body, { message: '404 Group hook Not Found' });
    const put = await call(t.app, 'PUT', `/groups/${group.id}/hooks/${id}`, { token: owner.token, body: { member_events: true, issues_events: false } });
    assert.equal(put.status, 200);
    assert.equal(put.body.member_events, true);
    assert.equal(put.body.issues_events, false);
    assert.equal(put.body.subgroup_events, true);
    const del = await call(t.app, 'DELETE', `/groups/${group.id}/hooks/${id}`, { token: owner.token });
    assert.equal(del.status, 204);
    assert.equal(await t.app.db.selectFrom('web_hooks').select('id').where('id', '=', id).executeTakeFirst(), undefined);
  });

  test('bad input and private addresses: the same refusals as a project hook, nothing stored', async () => {
    const n = await hookCount();
    const missing = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: {} });
    assert.equal(missing.status, 400);
    const filter = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: { url: hookUrl, push_events_branch_filter: 'a..b' } });
    assert.equal(filter.status, 422);
    assert.deepEqual(filter.body, { message: 'Invalid branch filter given' });
    await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: false });
    try {
      for (const url of ['http://127.0.0.1:8080/x', 'http://10.1.2.3/x', 'http://169.254.169.254/x']) {
        const r = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: { url } });
        assert.equal(r.status, 422, url);
        assert.deepEqual(r.body, { message: 'Invalid url given' });
      }
    } finally {
      await updateApplicationSettings(t.app, { allow_local_requests_from_web_hooks_and_services: true });
    }
    assert.equal(await hookCount(), n);
  });

  test('a group hook receives the events of projects in the group and its subgroups, not of other groups', async () => {
    const h = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: { url: `${hookUrl}?group`, token: 'g-tok', issues_events: true, push_events: false } });
    assert.equal(h.status, 201);
    const own = await call(t.app, 'POST', `/projects/${inSub.id}/hooks`, { token: owner.token, body: { url: `${hookUrl}?project`, issues_events: true, push_events: false } });
    const issue = await call(t.app, 'POST', `/projects/${inSub.id}/issues`, { token: owner.token, body: { title: 'Seen by the group', description: 'd' } });
    assert.equal(issue.status, 201);
    const got = await deliver();
    assert.equal(got.length, 2, 'the project hook and the group hook');
    const fromGroup = got.find((g) => g.headers['x-gitlab-token'] === 'g-tok')!;
    assert.ok(fromGroup, 'the group hook got it with its secret');
    assert.equal(fromGroup.headers['x-gitlab-event'], 'Issue Hook');
    const b = fromGroup.body;
    assert.equal(b.object_kind, 'issue');
    assert.equal(b.event_type, 'issue');
    assert.deepEqual(b.user, { id: owner.user.id, name: owner.user.name, username: owner.user.username, avatar_url: null, email: '[REDACTED]' });
    assert.equal(b.project.id, inSub.id);
    assert.equal(b.project.path_with_namespace, inSub.path_with_namespace);
    assert.equal(b.project.namespace, sub.name);
    assert.equal(b.project.web_url, inSub.web_url);
    assert.equal(b.object_attributes.id, issue.body.id);
    assert.equal(b.object_attributes.iid, issue.body.iid);
    assert.equal(b.object_attributes.project_id, inSub.id);
    assert.equal(b.object_attributes.title, 'Seen by the group');
    assert.equal(b.object_attributes.action, 'open');
    assert.equal(b.object_attributes.url, `${inSub.web_url}/-/issues/${issue.body.iid}`);
    assert.deepEqual(b, got.find((g) => g !== fromGroup)!.body, 'the same payload as the project hook\'s');

    const other = await call(t.app, 'POST', `/projects/${elsewhere.id}/issues`, { token: owner.token, body: { title: 'Not seen' } });
    assert.equal(other.status, 201);
    assert.equal((await deliver()).length, 0, 'a project of another group is not sent to the group hook');
    await call(t.app, 'DELETE', `/projects/${inSub.id}/hooks/${own.body.id}`, { token: owner.token });
    await call(t.app, 'DELETE', `/groups/${group.id}/hooks/${h.body.id}`, { token: owner.token });
  });

  test('failures of a group hook count toward the same auto-disabling', async () => {
    const h = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: { url: hookUrl, issues_events: true } });
    hooks.answers = [500];
    await call(t.app, 'POST', `/projects/${inSub.id}/issues`, { token: owner.token, body: { title: 'fails' } });
    assert.equal((await deliver()).length, 1);
    const row = await t.app.db.selectFrom('web_hooks').selectAll().where('id', '=', h.body.id).executeTakeFirstOrThrow();
    assert.equal(row.recent_failures, 1);
    (t.clock as ManualClock).advance(60_000);
    assert.equal((await deliver()).length, 1, 'retried');
    await call(t.app, 'DELETE', `/groups/${group.id}/hooks/${h.body.id}`, { token: owner.token });
  });

  test('a test run uses the group\'s first project with commits; without one, 422', async () => {
    const h = await call(t.app, 'POST', `/groups/${group.id}/hooks`, { token: owner.token, body: { url: hookUrl } });
    hooks.take();
    const none = await call(t.app, 'POST', `/groups/${group.id}/hooks/${h.body.id}/test/push_events`, { token: owner.token });
    assert.equal(none.status, 422);
    assert.deepEqual(none.body, { message: 'Ensure the group has a project with commits.' });
    assert.equal(hooks.received.length, 0);
    const direct = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'direct', namespace_id: group.id, initialize_with_readme: true } });
    assert.equal(direct.status, 201);
    await deliver();
    const bad = await call(t.app, 'POST', `/groups/${group.id}/hooks/${h.body.id}/test/nonsense`, { token: owner.token });
    assert.equal(bad.status, 400);
    hooks.take();
    const ok = await call(t.app, 'POST', `/groups/${group.id}/hooks/${h.body.id}/test/push_events`, { token: owner.token });
    assert.equal(ok.status, 201);
    assert.deepEqual(ok.body, { message: '201 Created' });
    assert.equal(hooks.received.length, 1);
    assert.equal(hooks.received[0].headers['x-gitlab-event'], 'Push Hook');
    assert.equal(hooks.received[0].body.object_kind, 'push');
    assert.equal(hooks.received[0].body.project_id, direct.body.id);
    assert.equal(hooks.received[0].body.ref, 'refs/heads/main');
    await call(t.app, 'DELETE', `/groups/${group.id}/hooks/${h.body.id}`, { token: owner.token });
  });
});
