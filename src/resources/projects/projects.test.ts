import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createProject, enableFeature, makeGroup, makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { repositoryPath } from './repository.ts';
import { Repository } from '../../platform/git/index.ts';

let t: TestApp;
let owner: TestUser;
let admin: TestUser;
let other: TestUser;

before(async () => {
  t = await buildTestApp({ config: { storage: [{ name: 'default', path: 'repositories', weight: 100 }, { name: 'cold', path: 'cold', weight: 0 }] } as any });
  owner = await makeUser(t.app);
  admin = await makeUser(t.app, { admin: true });
  other = await makeUser(t.app);
});
after(async () => { await t.close(); });

const repoOf = (id: number, storage = 'default') => repositoryPath(t.config, storage, id);

const SIMPLE_KEYS = [
  'id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list',
  'topics', 'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'avatar_url', 'star_count', 'last_activity_at', 'namespace',
];

const FULL_KEYS_OWNER = [
  'id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list', 'topics',
  'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'readme_url', 'forks_count', 'avatar_url', 'star_count', 'last_activity_at', 'namespace',
  'container_registry_image_prefix', '_links', 'packages_enabled', 'empty_repo', 'archived', 'visibility', 'owner',
  'resolve_outdated_diff_discussions', 'container_expiration_policy', 'issues_enabled', 'merge_requests_enabled', 'wiki_enabled',
  'jobs_enabled', 'snippets_enabled', 'container_registry_enabled', 'service_desk_enabled', 'can_create_merge_request_in',
  'issues_access_level', 'repository_access_level', 'merge_requests_access_level', 'forking_access_level', 'wiki_access_level',
  'builds_access_level', 'snippets_access_level', 'pages_access_level', 'analytics_access_level', 'container_registry_access_level',
  'security_and_compliance_access_level', 'requirements_access_level', 'emails_disabled', 'emails_enabled', 'shared_runners_enabled',
  'lfs_enabled', 'creator_id', 'import_url', 'import_type', 'import_status', 'open_issues_count', 'description_html', 'updated_at',
  'ci_default_git_depth', 'ci_forward_deployment_enabled', 'ci_forward_deployment_rollback_allowed', 'ci_job_token_scope_enabled',
  'ci_separated_caches', 'ci_allow_fork_pipelines_to_run_in_parent_project', 'keep_latest_artifact', 'restrict_user_defined_variables',
  'runners_token', 'runner_token_expiration_interval', 'group_runners_enabled', 'auto_cancel_pending_pipelines', 'build_timeout',
  'auto_devops_enabled', 'auto_devops_deploy_strategy', 'ci_config_path', 'public_jobs', 'shared_with_groups',
  'only_allow_merge_if_pipeline_succeeds', 'allow_merge_on_skipped_pipeline', 'request_access_enabled',
  'only_allow_merge_if_all_discussions_are_resolved', 'remove_source_branch_after_merge', 'printing_merge_request_link_enabled',
  'merge_method', 'squash_option', 'enforce_auth_checks_on_uploads', 'suggestion_commit_message', 'merge_commit_template',
  'squash_commit_template', 'issue_branch_template', 'autoclose_referenced_issues', 'external_authorization_classification_label',
  'requirements_enabled', 'security_and_compliance_enabled', 'compliance_frameworks', 'marked_for_deletion_at', 'marked_for_deletion_on',
  'permissions',
];
const MAINTAINER_ONLY = [
  'import_url', 'import_type', 'ci_default_git_depth', 'ci_forward_deployment_enabled', 'ci_forward_deployment_rollback_allowed',
  'ci_job_token_scope_enabled', 'ci_separated_caches', 'ci_allow_fork_pipelines_to_run_in_parent_project', 'keep_latest_artifact',
  'restrict_user_defined_variables', 'runners_token', 'runner_token_expiration_interval', 'group_runners_enabled',
  'auto_cancel_pending_pipelines', 'build_timeout', 'auto_devops_enabled', 'auto_devops_deploy_strategy',
];

describe('create', () => {
  test('a personal project: 201 full form, Owner member, a real bare repository with the README', async () => {
    const r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'Hello World', description: 'x <b>', initialize_with_readme: true, topics: 'zeta, alpha,alpha', visibility: 'public' } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body), FULL_KEYS_OWNER);
    assert.equal(r.body.path, 'hello-world');
    assert.equal(r.body.path_with_namespace, `${owner.user.username}/hello-world`);
    assert.equal(r.body.name_with_namespace, `${owner.user.name} / Hello World`);
    assert.deepEqual(r.body.topics, ['alpha', 'zeta']);
    assert.deepEqual(r.body.tag_list, ['alpha', 'zeta']);
    assert.equal(r.body.visibility, 'public');
    assert.equal(r.body.empty_repo, false);
    assert.equal(r.body.default_branch, 'main');
    assert.equal(r.body.readme_url, `http://bellows.test/${owner.user.username}/hello-world/-/blob/main/README.md`);
    assert.equal(r.body.http_url_to_repo, `http://bellows.test/${owner.user.username}/hello-world.git`);
    assert.equal(r.body.ssh_url_to_repo, `ssh://git@bellows.test:2222/${owner.user.username}/hello-world.git`);
    assert.equal(r.body._links.self, `http://bellows.test/api/v4/projects/${r.body.id}`);
    assert.equal(r.body.description_html, '<p>x &lt;b&gt;</p>');
    assert.deepEqual(r.body.permissions, { project_access: { access_level: 50, notification_level: 3 }, group_access: null });
    assert.equal(r.body.owner.id, owner.user.id);
    assert.equal(r.body.creator_id, owner.user.id);
    const member = await t.app.db.selectFrom('members').selectAll().where('source_type', '=', 'Project').where('source_id', '=', r.body.id).execute();
    assert.deepEqual(member.map((m) => [m.user_id, m.access_level]), [[owner.user.id, 50]]);
    const row = await t.app.db.selectFrom('projects').selectAll().where('id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.equal(row.repository_storage, 'default'); // the weight-0 shard never gets new repositories
    const repo = new Repository(repoOf(r.body.id));
    assert.equal(Repository.exists(repo.path), true);
    assert.equal((await repo.readBlob('main', 'README.md'))?.content.toString().startsWith('# Hello World'), true);
  });

  test('without a README the repository exists and is empty', async () => {
    const p = await createProject(t.app, owner.token, { path: 'empty-one' });
    assert.equal(p.name, 'empty-one');
    assert.equal(p.empty_repo, true);
    assert.equal(p.readme_url, null);
    assert.equal(p.visibility, 'private');
    assert.equal(Repository.exists(repoOf(p.id)), true);
    assert.equal(await new Repository(repoOf(p.id)).isEmpty(), true);
  });

  test('bad input: 400 with the reference bodies and nothing created', async () => {
    const before = await t.app.db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    let r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { description: 'no name' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'name, path are missing, at least one parameter must be provided' });
    r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'Hello World' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: { name: ['has already been taken'], path: ['has already been taken'] } });
    r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'ok', path: '-bad' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.message.path, ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"]);
    r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'ok', visibility: 'secret' } });
    assert.deepEqual([r.status, r.body], [400, { error: 'visibility does not have a valid value' }]);
    r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'ok', issues_enabled: 'maybe' } });
    assert.deepEqual([r.status, r.body], [400, { error: 'issues_enabled is invalid' }]);
    r = await call(t.app, 'POST', '/projects', { body: { name: 'anon' } });
    assert.deepEqual([r.status, r.body], [401, { message: '401 Unauthorized' }]);
    const ro = await makeToken(t.app, owner.user, ['read_api']);
    r = await call(t.app, 'POST', '/projects', { token: ro, body: { name: 'readonly' } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error, 'insufficient_scope');
    const after = await t.app.db.selectFrom('projects').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
  });

  test('in a group: needs Developer, no project member row, visibility capped by the group', async () => {
    const g = await makeGroup(t.app, { visibility: 10 });
    let r = await call(t.app, 'POST', '/projects', { token: other.token, body: { name: 'gp', namespace_id: g.id } });
    assert.deepEqual([r.status, r.body], [400, { message: { namespace: ['is not valid'] } }]);
    await addMember(t.app, { type: 'Namespace', id: g.id }, other.user.id, 30);
    r = await call(t.app, 'POST', '/projects', { token: other.token, body: { name: 'gp', namespace_id: g.id, visibility: 'public' } });
    assert.deepEqual([r.status, r.body], [400, { message: { visibility_level: ['public is not allowed in a internal group.'] } }]);
    r = await call(t.app, 'POST', '/projects', { token: other.token, body: { name: 'gp', namespace_id: g.full_path } });
    assert.equal(r.status, 201);
    assert.equal(r.body.path_with_namespace, `${g.full_path}/gp`);
    assert.equal(r.body.namespace.kind, 'group');
    assert.equal(r.body.namespace.web_url, `http://bellows.test/groups/${g.full_path}`);
    assert.equal('owner' in r.body, false);
    assert.deepEqual(r.body.permissions, { project_access: null, group_access: { access_level: 30, notification_level: 3 } });
    assert.equal(MAINTAINER_ONLY.some((k) => k in r.body), false);
    const members = await t.app.db.selectFrom('members').selectAll().where('source_type', '=', 'Project').where('source_id', '=', r.body.id).execute();
    assert.equal(members.length, 0);
    r = await call(t.app, 'POST', '/projects', { token: other.token, body: { name: 'gp2', namespace_id: 999999 } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Namespace Not Found' }]);
  });

  test('POST /projects/user/:user_id is for administrators and creates in that user\'s namespace', async () => {
    let r = await call(t.app, 'POST', `/projects/user/${other.user.id}`, { token: owner.token, body: { name: 'for-other' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'POST', `/projects/user/${other.user.id}`, { token: admin.token, body: { name: 'for-other' } });
    assert.equal(r.status, 201);
    assert.equal(r.body.namespace.id, (await t.app.db.selectFrom('namespaces').select('id').where('owner_id', '=', other.user.id).executeTakeFirstOrThrow()).id);
    assert.equal(r.body.repository_storage, 'default');
    const m = await t.app.db.selectFrom('members').selectAll().where('source_type', '=', 'Project').where('source_id', '=', r.body.id).executeTakeFirstOrThrow();
    assert.deepEqual([m.user_id, m.access_level], [other.user.id, 50]);
    r = await call(t.app, 'POST', '/projects/user/999999', { token: admin.token, body: { name: 'x' } });
    assert.deepEqual([r.status, r.body], [404, { message: '404 User Not Found' }]);
  });
});

describe('read', () => {
  test('anonymous gets the simple form; private is 404 to strangers; roles shape the full form', async () => {
    const pub = await createProject(t.app, owner.token, { name: 'read-pub', visibility: 'public' });
    const priv = await createProject(t.app, owner.token, { name: 'read-priv' });
    let r = await call(t.app, 'GET', `/projects/${pub.id}`);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), SIMPLE_KEYS);
    r = await call(t.app, 'GET', `/projects/${priv.id}`);
    assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${encodeURIComponent(priv.path_with_namespace)}`, { token: other.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${encodeURIComponent(priv.path_with_namespace)}`, { token: owner.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.id, priv.id);
    // A Reporter sees the full form without the Maintainer block; statistics from Reporter up.
    const reporter = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: priv.id }, reporter.user.id, 20);
    r = await call(t.app, 'GET', `/projects/${priv.id}?statistics=true`, { token: reporter.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.permissions, { project_access: { access_level: 20, notification_level: 3 }, group_access: null });
    assert.equal(MAINTAINER_ONLY.some((k) => k in r.body), false);
    assert.deepEqual(Object.keys(r.body.statistics), ['commit_count', 'storage_size', 'repository_size', 'wiki_size', 'lfs_objects_size', 'job_artifacts_size', 'pipeline_artifacts_size', 'packages_size', 'snippets_size', 'uploads_size']);
    assert.ok(r.body.statistics.repository_size > 0);
    const guest = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: priv.id }, guest.user.id, 10);
    r = await call(t.app, 'GET', `/projects/${priv.id}?statistics=true`, { token: guest.token });
    assert.equal('statistics' in r.body, false);
    // A Guest of a private project cannot read its code: no default branch, README or forks count.
    assert.deepEqual(['default_branch', 'readme_url', 'forks_count', 'ci_config_path'].map((k) => k in r.body), [false, false, false, false]);
    // Administrators see everything, with the storage and import error.
    r = await call(t.app, 'GET', `/projects/${priv.id}?with_custom_attributes=true`, { token: admin.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.repository_storage, 'default');
    assert.deepEqual(r.body.custom_attributes, []);
    assert.equal('import_error' in r.body, true);
    assert.deepEqual(r.body.permissions, { project_access: null, group_access: null });
    r = await call(t.app, 'GET', '/projects/999999', { token: owner.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Project Not Found' }]);
  });
});

describe('edit, archive, star', () => {
  test('PUT needs Maintainer; renames keep the old path reachable; 301 with the feature gate', async () => {
    const p = await createProject(t.app, owner.token, { name: 'editme', visibility: 'public' });
    const dev = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, dev.user.id, 30);
    let r = await call(t.app, 'PUT', `/projects/${p.id}`, { token: dev.token, body: { description: 'nope' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'PUT', `/projects/${p.id}`, { token: owner.token, body: {} });
    assert.equal(r.status, 400);
    assert.match(r.body.error, /^name, path, description, default_branch, visibility, topics, tag_list, .* are missing, at least one parameter must be provided$/);
    (t.clock as any).advance(60_000);
    r = await call(t.app, 'PUT', `/projects/${p.id}`, { token: owner.token, body: { path: 'renamed', description: 'new', topics: ['one'], merge_method: 'ff', issues_access_level: 'private' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.path_with_namespace, `${owner.user.username}/renamed`);
    assert.equal(r.body.description, 'new');
    assert.equal(r.body.merge_method, 'ff');
    assert.equal(r.body.issues_access_level, 'private');
    assert.notEqual(r.body.updated_at, p.updated_at);
    assert.equal(r.body.last_activity_at, p.last_activity_at);
    assert.equal(Repository.exists(repoOf(p.id)), true); // the repository does not move
    const old = encodeURIComponent(p.path_with_namespace);
    r = await call(t.app, 'GET', `/projects/${old}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.id, p.id);
    await enableFeature(t.app, 'api_redirect_moved_projects');
    r = await call(t.app, 'GET', `/projects/${old}?statistics=true`);
    assert.equal(r.status, 301);
    assert.equal(r.headers.location, `http://bellows.test/api/v4/projects/${p.id}?statistics=true`);
    assert.equal(r.text, `This resource has been moved permanently to http://bellows.test/api/v4/projects/${p.id}?statistics=true`);
    r = await call(t.app, 'GET', `/projects/${old}/starrers`);
    assert.equal(r.headers.location, `http://bellows.test/api/v4/projects/${p.id}/starrers`);
    r = await call(t.app, 'PUT', `/projects/${old}`, { token: owner.token, body: { description: 'x' } });
    assert.deepEqual([r.status, r.body], [405, { message: 'Non GET methods are not allowed for moved projects' }]);
    // The current path is served, and a private moved project stays 404 to strangers.
    r = await call(t.app, 'GET', `/projects/${encodeURIComponent(`${owner.user.username}/renamed`)}`);
    assert.equal(r.status, 200);
    await t.app.db.deleteFrom('feature_gates').execute();
  });

  test('archive and unarchive', async () => {
    const p = await createProject(t.app, owner.token, { name: 'arch' });
    let r = await call(t.app, 'POST', `/projects/${p.id}/archive`, { token: owner.token });
    assert.deepEqual([r.status, r.body.archived], [201, true]);
    r = await call(t.app, 'POST', `/projects/${p.id}/archive`, { token: owner.token });
    assert.deepEqual([r.status, r.body.archived], [201, true]);
    r = await call(t.app, 'POST', `/projects/${p.id}/unarchive`, { token: owner.token });
    assert.deepEqual([r.status, r.body.archived], [201, false]);
    r = await call(t.app, 'POST', `/projects/${p.id}/archive`, { token: other.token });
    assert.equal(r.status, 404);
  });

  test('star and unstar: 304 when nothing changes; starrers', async () => {
    const p = await createProject(t.app, owner.token, { name: 'starry', visibility: 'public' });
    let r = await call(t.app, 'POST', `/projects/${p.id}/star`, { token: other.token, headers: { 'content-type': 'application/json' } });
    assert.deepEqual([r.status, r.body.star_count], [201, 1]);
    r = await call(t.app, 'POST', `/projects/${p.id}/star`, { token: other.token });
    assert.deepEqual([r.status, r.text], [304, '']);
    r = await call(t.app, 'GET', `/projects/${p.id}/starrers`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.map((s: any) => [s.user.id, Object.keys(s)]), [[other.user.id, ['starred_since', 'user']]]);
    assert.equal(r.body[0].starred_since, '2026-06-01T12:01:00.000Z');
    r = await call(t.app, 'GET', `/projects/${p.id}/starrers?search=nomatch`);
    assert.deepEqual(r.body, []);
    r = await call(t.app, 'POST', `/projects/${p.id}/unstar`, { token: other.token });
    assert.deepEqual([r.status, r.body.star_count], [201, 0]);
    r = await call(t.app, 'POST', `/projects/${p.id}/unstar`, { token: other.token });
    assert.equal(r.status, 304);
    r = await call(t.app, 'POST', `/projects/${p.id}/star`);
    assert.equal(r.status, 401);
  });
});

describe('delete, transfer, fork, share, custom attributes', () => {
  test('DELETE needs Owner, answers 202 and removes the repository and rows', async () => {
    const p = await createProject(t.app, owner.token, { name: 'doomed', initialize_with_readme: true, topics: ['gone'] });
    const maint = await makeUser(t.app);
    await addMember(t.app, { type: 'Project', id: p.id }, maint.user.id, 40);
    let r = await call(t.app, 'DELETE', `/projects/${p.id}`, { token: maint.token });
    assert.equal(r.status, 403);
    assert.equal(Repository.exists(repoOf(p.id)), true);
    r = await call(t.app, 'DELETE', `/projects/${p.id}`, { token: owner.token, headers: { 'content-type': 'application/json' } });
    assert.deepEqual([r.status, r.body], [202, { message: '202 Accepted' }]);
    assert.equal(existsSync(repoOf(p.id)), false);
    r = await call(t.app, 'GET', `/projects/${p.id}`, { token: owner.token });
    assert.equal(r.status, 404);
    const topic = await t.app.db.selectFrom('topics').selectAll().where('name', '=', 'gone').executeTakeFirstOrThrow();
    assert.equal(topic.total_projects_count, 0);
    // The path is free again.
    r = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'doomed' } });
    assert.equal(r.status, 201);
  });

  test('transfer moves the route, not the repository', async () => {
    const p = await createProject(t.app, owner.token, { name: 'mover', visibility: 'public' });
    const g = await makeGroup(t.app, { visibility: 10 });
    let r = await call(t.app, 'PUT', `/projects/${p.id}/transfer`, { token: owner.token, body: { namespace: g.id } });
    assert.deepEqual([r.status, r.body], [400, { message: 'Failed to transfer project {:namespace=>["You don\'t have permission to transfer this project to that namespace."]}' }]);
    await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, 50);
    r = await call(t.app, 'PUT', `/projects/${p.id}/transfer`, { token: owner.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "namespace" not given' }]);
    r = await call(t.app, 'PUT', `/projects/${p.id}/transfer`, { token: owner.token, body: { namespace: g.full_path } });
    assert.equal(r.status, 200);
    assert.equal(r.body.path_with_namespace, `${g.full_path}/mover`);
    assert.equal(r.body.visibility, 'internal');
    assert.equal(Repository.exists(repoOf(p.id)), true);
    r = await call(t.app, 'GET', `/projects/${encodeURIComponent(p.path_with_namespace)}`, { token: owner.token });
    assert.deepEqual([r.status, r.body.id], [200, p.id]);
  });

  test('fork copies the repository; forks lists it; name conflicts are 409', async () => {
    const src = await createProject(t.app, owner.token, { name: 'upstream', visibility: 'public', initialize_with_readme: true, topics: ['t1'] });
    let r = await call(t.app, 'POST', `/projects/${src.id}/fork`, { token: other.token });
    assert.equal(r.status, 201);
    const fork = r.body;
    assert.equal(fork.path_with_namespace, `${other.user.username}/upstream`);
    assert.equal(fork.forked_from_project.id, src.id);
    assert.deepEqual(Object.keys(fork.forked_from_project), SIMPLE_KEYS);
    assert.equal(fork.empty_repo, false);
    assert.equal(fork.mr_default_target_self, false);
    assert.deepEqual(fork.topics, ['t1']);
    const copy = new Repository(repoOf(fork.id));
    assert.equal((await copy.readBlob('main', 'README.md')) !== null, true);
    assert.equal(await copy.resolveRef('main'), await new Repository(repoOf(src.id)).resolveRef('main'));
    r = await call(t.app, 'GET', `/projects/${src.id}`, { token: owner.token });
    assert.equal(r.body.forks_count, 1);
    r = await call(t.app, 'GET', `/projects/${src.id}/forks`);
    assert.deepEqual(r.body.map((x: any) => x.id), [fork.id]);
    r = await call(t.app, 'POST', `/projects/${src.id}/fork`, { token: other.token });
    assert.deepEqual([r.status, r.body], [409, { message: { name: ['has already been taken'], path: ['has already been taken'] } }]);
    r = await call(t.app, 'POST', `/projects/${src.id}/fork`, { token: other.token, body: { name: 'Second Fork', visibility: 'private' } });
    assert.deepEqual([r.status, r.body.path, r.body.visibility], [201, 'second-fork', 'private']);
    // Unlinking: 204, then 304 when there is nothing left to unlink.
    r = await call(t.app, 'DELETE', `/projects/${fork.id}/fork`, { token: other.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', `/projects/${fork.id}/fork`, { token: other.token });
    assert.equal(r.status, 304);
    r = await call(t.app, 'GET', `/projects/${fork.id}`, { token: other.token });
    assert.equal('forked_from_project' in r.body, false);
    r = await call(t.app, 'GET', `/projects/${src.id}/forks`, { token: other.token });
    assert.deepEqual(r.body.map((x: any) => x.path), ['second-fork']);
    r = await call(t.app, 'GET', `/projects/${src.id}/forks`);
    assert.deepEqual(r.body, [], 'a private fork is not listed to anonymous callers');
    // The fork of a private project the caller cannot see is 404.
    const priv = await createProject(t.app, owner.token, { name: 'secret-up' });
    r = await call(t.app, 'POST', `/projects/${priv.id}/fork`, { token: other.token });
    assert.equal(r.status, 404);
  });

  test('share with a group grants its members access; unshare removes it', async () => {
    const p = await createProject(t.app, owner.token, { name: 'shared' });
    const g = await makeGroup(t.app, { visibility: 0 });
    const sub = await makeGroup(t.app, { visibility: 0, parent: g });
    const m = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, m.user.id, 40);
    await addMember(t.app, { type: 'Namespace', id: g.id }, owner.user.id, 10);
    let r = await call(t.app, 'GET', `/projects/${p.id}`, { token: m.token });
    assert.equal(r.status, 404);
    r = await call(t.app, 'POST', `/projects/${p.id}/share`, { token: owner.token, body: { group_id: sub.id, group_access: 25 } });
    assert.deepEqual([r.status, r.body], [400, { error: 'group_access does not have a valid value' }]);
    r = await call(t.app, 'POST', `/projects/${p.id}/share`, { token: owner.token, body: { group_id: sub.id, group_access: 30 } });
    assert.equal(r.status, 201);
    assert.deepEqual(r.body, { id: r.body.id, project_id: p.id, group_id: sub.id, group_access: 30, expires_at: null });
    r = await call(t.app, 'POST', `/projects/${p.id}/share`, { token: owner.token, body: { group_id: sub.id, group_access: 30 } });
    assert.deepEqual([r.status, r.body], [409, { message: 'Group already shared with this group' }]);
    // An inherited Maintainer of the shared subgroup gets min(40, 30) = Developer.
    r = await call(t.app, 'GET', `/projects/${p.id}`, { token: m.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.permissions, { project_access: null, group_access: null });
    r = await call(t.app, 'PUT', `/projects/${p.id}`, { token: m.token, body: { description: 'x' } });
    assert.equal(r.status, 403);
    r = await call(t.app, 'GET', `/projects/${p.id}`, { token: owner.token });
    assert.deepEqual(r.body.shared_with_groups, [{ group_id: sub.id, group_name: sub.name, group_full_path: sub.full_path, group_access_level: 30, expires_at: null }]);
    r = await call(t.app, 'GET', '/projects?membership=true&min_access_level=30', { token: m.token });
    assert.deepEqual(r.body.map((x: any) => x.id), [p.id]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/share/${sub.id}`, { token: owner.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/share/${sub.id}`, { token: owner.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Group Link Not Found' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}`, { token: m.token });
    assert.equal(r.status, 404);
  });

  test('custom attributes are for administrators', async () => {
    const p = await createProject(t.app, owner.token, { name: 'attrs' });
    let r = await call(t.app, 'PUT', `/projects/${p.id}/custom_attributes/tier`, { token: owner.token, body: { value: 'gold' } });
    assert.equal(r.status, 403);
    r = await call(t.app, 'PUT', `/projects/${p.id}/custom_attributes/tier`, { token: admin.token, body: { value: 'gold' } });
    assert.deepEqual([r.status, r.body], [200, { key: 'tier', value: 'gold' }]);
    r = await call(t.app, 'PUT', `/projects/${p.id}/custom_attributes/tier`, { token: admin.token, body: {} });
    assert.deepEqual([r.status, r.body], [400, { message: '400 (Bad request) "value" not given' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/custom_attributes`, { token: admin.token });
    assert.deepEqual(r.body, [{ key: 'tier', value: 'gold' }]);
    r = await call(t.app, 'GET', `/projects/${p.id}/custom_attributes/tier`, { token: admin.token });
    assert.deepEqual(r.body, { key: 'tier', value: 'gold' });
    r = await call(t.app, 'GET', `/projects?custom_attributes[tier]=gold&with_custom_attributes=true`, { token: admin.token });
    assert.deepEqual(r.body.map((x: any) => [x.id, x.custom_attributes]), [[p.id, [{ key: 'tier', value: 'gold' }]]]);
    r = await call(t.app, 'DELETE', `/projects/${p.id}/custom_attributes/tier`, { token: admin.token });
    assert.equal(r.status, 204);
    r = await call(t.app, 'GET', `/projects/${p.id}/custom_attributes/tier`, { token: admin.token });
    assert.deepEqual([r.status, r.body], [404, { message: '404 Custom Attribute Not Found' }]);
  });
});

describe('default_branch longer than its column', () => {
  test('creating or editing with a 256-character default branch is a validation error and changes nothing', async () => {
    const long = 'b'.repeat(256);
    const created = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'longbranch', default_branch: long } });
    assert.deepEqual([created.status, created.body], [400, { message: { default_branch: ['is invalid'] } }]);
    const made = await call(t.app, 'POST', '/projects', { token: owner.token, body: { name: 'shortbranch' } });
    assert.equal(made.status, 201);
    const edited = await call(t.app, 'PUT', `/projects/${made.body.id}`, { token: owner.token, body: { default_branch: long } });
    assert.deepEqual([edited.status, edited.body], [400, { message: { default_branch: ['is invalid'] } }]);
    assert.equal((await call(t.app, 'GET', `/projects/${made.body.id}`, { token: owner.token })).body.default_branch, 'main');
  });
});
