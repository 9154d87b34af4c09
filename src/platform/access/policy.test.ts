import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, createProject, makeGroup, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { ed25519Key } from '../../../test/support/ssh-key-fixtures.ts';
import {
  deployKeyDenial, groupDenial, instanceDenial, issueDenial, mergeRequestDenial, projectDenial, snippetDenial, type Denial, type GroupAbility, type IssueAbility,
  type MergeRequestAbility, type PolicyIssue, type PolicyMergeRequest, type PolicyProject, type PolicySnippet, type ProjectAbility, type SnippetAbility,
  collaborationAllowed, collaborationAllowsPush, collaborativePushPossible, mayAllowCollaboration, type PolicyCollaboration,
} from './policy.ts';
import { anonymous, type Actor, type UserRow } from './actor.ts';
import { projectAccessLevels } from '../membership.ts';
import { authorizedProjectIds } from './queries.ts';

// Role x ability tables. Each row: ability, project state, then one letter per caller, in the order
// anonymous, non-member, Guest, Reporter, Developer, Maintainer, Owner, administrator:
// Y allowed, N hidden (404), F forbidden (403), A refused as archived, R refused as read-only.

const CALLERS = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
const LEVEL: Record<(typeof CALLERS)[number], number> = { anonymous: 0, nonMember: 0, guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50, admin: 0 };
const LETTER: Record<string, Denial | null> = { Y: null, N: 'not_found', F: 'forbidden', A: 'archived', R: 'read_only' };

const user = (o: Partial<UserRow> = {}) => ({ id: 1, external: 0, admin: 0, ...o }) as unknown as UserRow;
function actorFor(c: (typeof CALLERS)[number]): Actor {
  if (c === 'anonymous') return anonymous;
  return { user: user(), admin: c === 'admin', token: null, via: 'token', sudo: false };
}

const PRIVATE = 0, INTERNAL = 10, PUBLIC = 20;
const DISABLED = 0, MEMBERS = 10, ENABLED = 20;

function project(o: Partial<PolicyProject> & { wiki?: string; snippets?: string } = {}): PolicyProject {
  const settings: Record<string, string> = {};
  if (o.wiki) settings.wiki_access_level = o.wiki;
  if (o.snippets) settings.snippets_access_level = o.snippets;
  return {
    visibility_level: PUBLIC, archived: 0, repository_read_only: 0, settings: JSON.stringify(settings),
    repository_access_level: ENABLED, issues_access_level: ENABLED, merge_requests_access_level: ENABLED, forking_access_level: ENABLED,
    ...o,
  };
}

const PROJECT_TABLE: Array<[ProjectAbility, string, PolicyProject, string]> = [
  ['read_project', 'private', project({ visibility_level: PRIVATE }), 'NNYYYYYY'],
  ['read_project', 'internal', project({ visibility_level: INTERNAL }), 'NYYYYYYY'],
  ['read_project', 'public', project(), 'YYYYYYYY'],
  ['download_code', 'private, repository enabled', project({ visibility_level: PRIVATE }), 'NNFYYYYY'],
  ['download_code', 'private, repository for members', project({ visibility_level: PRIVATE, repository_access_level: MEMBERS }), 'NNFYYYYY'],
  ['download_code', 'private, repository disabled', project({ visibility_level: PRIVATE, repository_access_level: DISABLED }), 'NNFFFFFF'],
  ['download_code', 'internal, repository enabled', project({ visibility_level: INTERNAL }), 'NYYYYYYY'],
  ['download_code', 'internal, repository for members', project({ visibility_level: INTERNAL, repository_access_level: MEMBERS }), 'NFYYYYYY'],
  ['download_code', 'public, repository enabled', project(), 'YYYYYYYY'],
  ['download_code', 'public, repository for members', project({ repository_access_level: MEMBERS }), 'FFYYYYYY'],
  ['download_code', 'public, repository disabled', project({ repository_access_level: DISABLED }), 'FFFFFFFF'],
  ['push_code', 'public', project(), 'FFFFYYYY'],
  ['push_code', 'private', project({ visibility_level: PRIVATE }), 'NNFFYYYY'],
  ['push_code', 'public, repository disabled', project({ repository_access_level: DISABLED }), 'FFFFFFFF'],
  ['push_code', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['push_code', 'public, read-only repository', project({ repository_read_only: 1 }), 'FFFFRRRR'],
  ['read_protected_branch', 'public', project(), 'FFFYYYYY'],
  ['read_issue', 'public, issues enabled', project(), 'YYYYYYYY'],
  ['read_issue', 'public, issues for members', project({ issues_access_level: MEMBERS }), 'FFYYYYYY'],
  ['read_issue', 'public, issues disabled', project({ issues_access_level: DISABLED }), 'FFFFFFFF'],
  ['read_issue', 'private, issues enabled', project({ visibility_level: PRIVATE }), 'NNYYYYYY'],
  ['create_issue', 'public', project(), 'FYYYYYYY'],
  ['create_issue', 'public, archived', project({ archived: 1 }), 'FAAAAAAA'],
  ['create_issue', 'public, issues disabled', project({ issues_access_level: DISABLED }), 'FFFFFFFF'],
  ['set_issue_iid', 'public', project(), 'FFFFFFYY'],
  ['set_issue_created_at', 'private', project({ visibility_level: PRIVATE }), 'NNFFFFYY'],
  ['set_issue_updated_at', 'public, issues disabled', project({ issues_access_level: DISABLED }), 'FFFFFFFF'],
  ['read_merge_request', 'public, merge requests enabled', project(), 'YYYYYYYY'],
  ['read_merge_request', 'public, merge requests for members', project({ merge_requests_access_level: MEMBERS }), 'FFFYYYYY'],
  ['read_merge_request', 'private', project({ visibility_level: PRIVATE }), 'NNFYYYYY'],
  ['read_merge_request', 'public, merge requests disabled', project({ merge_requests_access_level: DISABLED }), 'FFFFFFFF'],
  ['create_merge_request', 'public', project(), 'FFFFYYYY'],
  ['create_merge_request', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['update_merge_request', 'public', project(), 'FFFFYYYY'],
  ['update_merge_request', 'private', project({ visibility_level: PRIVATE }), 'NNFFYYYY'],
  ['update_merge_request', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['admin_merge_request', 'public', project(), 'FFFFYYYY'],
  ['admin_merge_request', 'public, merge requests disabled', project({ merge_requests_access_level: DISABLED }), 'FFFFFFFF'],
  ['approve_merge_request', 'public', project(), 'FFFFYYYY'],
  ['approve_merge_request', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['destroy_merge_request', 'public', project(), 'FFFFFFYY'],
  ['destroy_merge_request', 'private', project({ visibility_level: PRIVATE }), 'NNFFFFYY'],
  ['read_label', 'public', project(), 'YYYYYYYY'],
  ['read_label', 'private', project({ visibility_level: PRIVATE }), 'NNYYYYYY'],
  ['read_label', 'public, issues disabled', project({ issues_access_level: DISABLED }), 'YYYYYYYY'],
  ['read_label', 'public, issues and merge requests disabled', project({ issues_access_level: DISABLED, merge_requests_access_level: DISABLED }), 'FFFFFFFF'],
  ['read_label', 'public, issues disabled, merge requests for members', project({ issues_access_level: DISABLED, merge_requests_access_level: MEMBERS }), 'FFFYYYYY'],
  ['admin_label', 'public', project(), 'FFFYYYYY'],
  ['admin_label', 'public, archived', project({ archived: 1 }), 'FFFAAAAA'],
  ['read_milestone', 'private, issues for members', project({ visibility_level: PRIVATE, issues_access_level: MEMBERS }), 'NNYYYYYY'],
  ['read_milestone', 'public, issues and merge requests disabled', project({ issues_access_level: DISABLED, merge_requests_access_level: DISABLED }), 'FFFFFFFF'],
  ['admin_milestone', 'private', project({ visibility_level: PRIVATE }), 'NNFYYYYY'],
  ['read_iteration', 'internal', project({ visibility_level: INTERNAL }), 'NYYYYYYY'],
  ['read_wiki', 'public, wiki enabled (default)', project(), 'YYYYYYYY'],
  ['read_wiki', 'public, wiki for members', project({ wiki: 'private' }), 'FFYYYYYY'],
  ['read_wiki', 'public, wiki disabled', project({ wiki: 'disabled' }), 'FFFFFFFF'],
  ['read_snippet', 'public, snippets for members', project({ snippets: 'private' }), 'FFYYYYYY'],
  ['read_snippet', 'public, snippets disabled', project({ snippets: 'disabled' }), 'FFFFFFFF'],
  ['create_wiki', 'public', project(), 'FFFFYYYY'],
  ['create_wiki', 'private', project({ visibility_level: PRIVATE }), 'NNFFYYYY'],
  ['create_wiki', 'public, wiki disabled', project({ wiki: 'disabled' }), 'FFFFFFFF'],
  ['create_wiki', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['admin_wiki', 'public', project(), 'FFFFFYYY'],
  ['admin_wiki', 'public, wiki for members', project({ wiki: 'private' }), 'FFFFFYYY'],
  ['create_snippet', 'public', project(), 'FFFYYYYY'],
  ['create_snippet', 'private', project({ visibility_level: PRIVATE }), 'NNFYYYYY'],
  ['create_snippet', 'public, snippets disabled', project({ snippets: 'disabled' }), 'FFFFFFFF'],
  ['create_snippet', 'public, archived', project({ archived: 1 }), 'FFFAAAAA'],
  ['admin_snippet', 'public', project(), 'FFFFFYYY'],
  ['fork_project', 'public', project(), 'FYYYYYYY'],
  ['fork_project', 'private', project({ visibility_level: PRIVATE }), 'NNFYYYYY'],
  ['fork_project', 'public, forking disabled', project({ forking_access_level: DISABLED }), 'FFFFFFFF'],
  ['fork_project', 'public, repository disabled', project({ repository_access_level: DISABLED }), 'FFFFFFFF'],
  ['upload_file', 'public', project(), 'FYYYYYYY'],
  ['upload_file', 'private', project({ visibility_level: PRIVATE }), 'NNYYYYYY'],
  ['upload_file', 'public, archived', project({ archived: 1 }), 'FAAAAAAA'],
  ['admin_feature_flags_user_lists', 'public', project(), 'FFFFYYYY'],
  ['admin_project', 'public', project(), 'FFFFFYYY'],
  ['admin_project', 'private', project({ visibility_level: PRIVATE }), 'NNFFFYYY'],
  ['admin_project', 'public, archived', project({ archived: 1 }), 'FFFFFYYY'],
  ['admin_web_hook', 'public', project(), 'FFFFFYYY'],
  ['admin_web_hook', 'private', project({ visibility_level: PRIVATE }), 'NNFFFYYY'],
  ['archive_project', 'public', project(), 'FFFFFYYY'],
  ['admin_operations', 'public', project(), 'FFFFFYYY'],
  ['read_alert_management_alert', 'public', project(), 'FFFFYYYY'],
  ['read_alert_management_alert', 'private', project({ visibility_level: PRIVATE }), 'NNFFYYYY'],
  ['update_alert_management_alert', 'public', project(), 'FFFFYYYY'],
  ['update_alert_management_alert', 'public, archived', project({ archived: 1 }), 'FFFFAAAA'],
  ['remove_project', 'public', project(), 'FFFFFFYY'],
  ['change_namespace', 'private', project({ visibility_level: PRIVATE }), 'NNFFFFYY'],
  ['remove_fork_project', 'public', project(), 'FFFFFFYY'],
  ['skip_spam_check', 'public', project(), 'FFFYYYYY'],
  ['skip_spam_check', 'public, archived', project({ archived: 1 }), 'FFFYYYYY'],
];

describe('project abilities', () => {
  for (const [ability, state, p, row] of PROJECT_TABLE) {
    test(`${ability} on a ${state} project: ${row}`, () => {
      const got = CALLERS.map((c) => projectDenial(actorFor(c), ability, p, LEVEL[c]));
      assert.deepEqual(got, [...row].map((l) => LETTER[l]));
    });
  }

  test('an external user reads an internal project only as a member', () => {
    const external: Actor = { user: user({ external: 1 }), admin: false, token: null, via: 'token', sudo: false };
    const p = project({ visibility_level: INTERNAL });
    assert.equal(projectDenial(external, 'read_project', p, 0), 'not_found');
    assert.equal(projectDenial(external, 'download_code', p, 10), null);
  });

  test('an unreadable settings column counts every stored feature as enabled', () => {
    const p = { ...project(), settings: '{not json' };
    assert.equal(projectDenial(anonymous, 'read_wiki', p, 0), null);
  });
});

// Issue-level rules. The callers are user 1 (anonymous aside); the issue's author is user 2 unless said otherwise.
const issue = (o: Partial<PolicyIssue> = {}): PolicyIssue => ({ author_id: 2, confidential: 0, assigneeIds: [], ...o });
const ISSUE_TABLE: Array<[IssueAbility, string, PolicyProject, PolicyIssue, string]> = [
  ['read_issue', 'public, open issue', project(), issue(), 'YYYYYYYY'],
  ['read_issue', 'public, confidential issue', project(), issue({ confidential: 1 }), 'NNNYYYYY'],
  ['read_issue', 'public, confidential issue by the caller', project(), issue({ confidential: 1, author_id: 1 }), 'NYYYYYYY'],
  ['read_issue', 'public, confidential issue assigned to the caller', project(), issue({ confidential: 1, assigneeIds: [1] }), 'NYYYYYYY'],
  ['read_issue', 'private, open issue', project({ visibility_level: PRIVATE }), issue(), 'NNYYYYYY'],
  ['read_issue', 'private, confidential issue', project({ visibility_level: PRIVATE }), issue({ confidential: 1 }), 'NNNYYYYY'],
  ['read_issue', 'public, issues for members', project({ issues_access_level: MEMBERS }), issue(), 'FFYYYYYY'],
  ['read_issue', 'public, issues disabled', project({ issues_access_level: DISABLED }), issue(), 'FFFFFFFF'],
  ['update_issue', 'public, open issue', project(), issue(), 'FFFYYYYY'],
  ['update_issue', 'public, the caller\'s issue', project(), issue({ author_id: 1 }), 'FYYYYYYY'],
  ['update_issue', 'public, the caller\'s issue, archived', project({ archived: 1 }), issue({ author_id: 1 }), 'FAAAAAAA'],
  ['update_issue', 'public, confidential issue', project(), issue({ confidential: 1 }), 'NNNYYYYY'],
  ['update_issue', 'private, open issue', project({ visibility_level: PRIVATE }), issue(), 'NNFYYYYY'],
  ['update_issue', 'public, archived', project({ archived: 1 }), issue(), 'FFFAAAAA'],
  ['destroy_issue', 'public, open issue', project(), issue(), 'FFFFFFYY'],
  ['destroy_issue', 'public, the caller\'s issue', project(), issue({ author_id: 1 }), 'FFFFFFYY'],
  ['destroy_issue', 'public, confidential issue', project(), issue({ confidential: 1 }), 'NNNFFFYY'],
  ['destroy_issue', 'private, open issue', project({ visibility_level: PRIVATE }), issue(), 'NNFFFFYY'],
];

describe('issue abilities', () => {
  for (const [ability, state, p, i, row] of ISSUE_TABLE) {
    test(`${ability} on a ${state}: ${row}`, () => {
      const got = CALLERS.map((c) => issueDenial(actorFor(c), ability, p, LEVEL[c], i));
      assert.deepEqual(got, [...row].map((l) => LETTER[l]));
    });
  }
});

// Merge-request-level rules. The callers are user 1 (anonymous aside); the author is user 2 unless said otherwise.
const mr = (o: Partial<PolicyMergeRequest> = {}): PolicyMergeRequest => ({ author_id: 2, assigneeIds: [], state: 'opened', ...o });
const authorApproves = JSON.stringify({ merge_requests_author_approval: true });
const MR_TABLE: Array<[MergeRequestAbility, string, PolicyProject, PolicyMergeRequest, string]> = [
  ['read_merge_request', 'public', project(), mr(), 'YYYYYYYY'],
  ['read_merge_request', 'private', project({ visibility_level: PRIVATE }), mr(), 'NNFYYYYY'],
  ['read_merge_request', 'public, merge requests for members', project({ merge_requests_access_level: MEMBERS }), mr(), 'FFFYYYYY'],
  ['update_merge_request', 'public', project(), mr(), 'FFFFYYYY'],
  ['update_merge_request', 'public, the caller\'s merge request', project(), mr({ author_id: 1 }), 'FYYYYYYY'],
  ['update_merge_request', 'public, assigned to the caller', project(), mr({ assigneeIds: [1] }), 'FYYYYYYY'],
  ['update_merge_request', 'public, the caller\'s merge request, archived', project({ archived: 1 }), mr({ author_id: 1 }), 'FAAAAAAA'],
  ['update_merge_request', 'private, the caller\'s merge request', project({ visibility_level: PRIVATE }), mr({ author_id: 1 }), 'NNFYYYYY'],
  ['approve_merge_request', 'public, open', project(), mr(), 'FFFFYYYY'],
  ['approve_merge_request', 'public, merged', project(), mr({ state: 'merged' }), 'FFFFFFFF'],
  ['approve_merge_request', 'public, closed', project(), mr({ state: 'closed' }), 'FFFFFFFF'],
  ['approve_merge_request', 'public, the caller\'s merge request', project(), mr({ author_id: 1 }), 'FFFFFFFF'],
  ['approve_merge_request', 'public, the caller\'s, author approval allowed', project({ settings: authorApproves }), mr({ author_id: 1 }), 'FFFFYYYY'],
  ['approve_merge_request', 'private', project({ visibility_level: PRIVATE }), mr(), 'NNFFYYYY'],
  ['destroy_merge_request', 'public', project(), mr(), 'FFFFFFYY'],
  ['destroy_merge_request', 'public, the caller\'s merge request', project(), mr({ author_id: 1 }), 'FFFFFFYY'],
];

describe('merge request abilities', () => {
  for (const [ability, state, p, m, row] of MR_TABLE) {
    test(`${ability} on a ${state}: ${row}`, () => {
      const got = CALLERS.map((c) => mergeRequestDenial(actorFor(c), ability, p, LEVEL[c], m));
      assert.deepEqual(got, [...row].map((l) => LETTER[l]));
    });
  }
});

const group = (visibility_level: number, project_creation_level = 'developer', subgroup_creation_level = 'maintainer') =>
  ({ visibility_level, project_creation_level, subgroup_creation_level });
const GROUP_TABLE: Array<[GroupAbility, string, ReturnType<typeof group>, string]> = [
  ['read_group', 'private', group(PRIVATE), 'NNYYYYYY'],
  ['read_group', 'internal', group(INTERNAL), 'NYYYYYYY'],
  ['read_group', 'public', group(PUBLIC), 'YYYYYYYY'],
  ['admin_group', 'public', group(PUBLIC), 'FFFFFFYY'],
  ['admin_group', 'private', group(PRIVATE), 'NNFFFFYY'],
  ['create_projects', 'public, developers create projects', group(PUBLIC), 'FFFFYYYY'],
  ['create_projects', 'public, maintainers create projects', group(PUBLIC, 'maintainer'), 'FFFFFYYY'],
  ['create_projects', 'public, owners create projects', group(PUBLIC, 'owner'), 'FFFFFFYY'],
  ['create_projects', 'public, nobody creates projects', group(PUBLIC, 'noone'), 'FFFFFFFY'],
  ['create_projects', 'public, administrators create projects', group(PUBLIC, 'administrator'), 'FFFFFFFY'],
  ['create_subgroup', 'public, maintainers create subgroups', group(PUBLIC), 'FFFFFYYY'],
  ['create_subgroup', 'private, owners create subgroups', group(PRIVATE, 'developer', 'owner'), 'NNFFFFYY'],
  ['read_label', 'private', group(PRIVATE), 'NNYYYYYY'],
  ['admin_label', 'public', group(PUBLIC), 'FFFYYYYY'],
  ['read_milestone', 'public', group(PUBLIC), 'YYYYYYYY'],
  ['admin_milestone', 'private', group(PRIVATE), 'NNFYYYYY'],
  ['read_iteration', 'internal', group(INTERNAL), 'NYYYYYYY'],
  ['admin_iteration', 'public', group(PUBLIC), 'FFFYYYYY'],
];

describe('group abilities', () => {
  for (const [ability, state, g, row] of GROUP_TABLE) {
    test(`${ability} on a ${state} group: ${row}`, () => {
      const got = CALLERS.map((c) => groupDenial(actorFor(c), ability, g, LEVEL[c]));
      assert.deepEqual(got, [...row].map((l) => LETTER[l]));
    });
  }
});

describe('installation abilities', () => {
  // Membership of any project or group does not count: Owner here is an Owner somewhere.
  test('admin_spam_log: administrators only (the route layer answers 401 to anonymous callers first)', () => {
    const got = CALLERS.map((c) => instanceDenial(actorFor(c), 'admin_spam_log'));
    assert.deepEqual(got, [...'FFFFFFFY'].map((l) => LETTER[l]));
  });
});

describe('through the API', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => {
    t = await buildTestApp();
    owner = await makeUser(t.app);
  });
  after(async () => { await t.close(); });

  test('group-share members hold the lower of the link and their group role', async () => {
    const p = await createProject(t.app, owner.token, { name: 'shared-levels' });
    const g = await makeGroup(t.app);
    const ownerOfGroup = await makeUser(t.app);
    const developerOfGroup = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, ownerOfGroup.user.id, 50);
    await addMember(t.app, { type: 'Namespace', id: g.id }, developerOfGroup.user.id, 30);
    const share = await call(t.app, 'POST', `/projects/${p.id}/share`, { token: owner.token, body: { group_id: g.id, group_access: 40 } });
    assert.equal(share.status, 201, JSON.stringify(share.body));
    const row = await t.app.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const levels = async (u: TestUser) => (await projectAccessLevels(t.app.db, u.user.id, [row])).get(p.id)!.effective;
    assert.equal(await levels(ownerOfGroup), 40);
    assert.equal(await levels(developerOfGroup), 30);
    const now = t.app.clock.now();
    assert.ok((await authorizedProjectIds(t.app, ownerOfGroup.user.id, 40, now)).has(p.id));
    assert.ok(!(await authorizedProjectIds(t.app, developerOfGroup.user.id, 40, now)).has(p.id));
    // The route layer follows the same levels: Maintainer through the share edits, Developer through it cannot.
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/deploy_keys`, { token: ownerOfGroup.token })).status, 200);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/deploy_keys`, { token: developerOfGroup.token })).status, 403);
  });

  test('a Maintainer through a group share lists the deploy keys of that project', async () => {
    const p = await createProject(t.app, owner.token, { name: 'shared-keys' });
    const g = await makeGroup(t.app);
    const member = await makeUser(t.app);
    await addMember(t.app, { type: 'Namespace', id: g.id }, member.user.id, 50);
    assert.equal((await call(t.app, 'POST', `/projects/${p.id}/share`, { token: owner.token, body: { group_id: g.id, group_access: 40 } })).status, 201);
    const key = await call(t.app, 'POST', `/projects/${p.id}/deploy_keys`, { token: member.token, body: { key: ed25519Key(), title: 'through the share' } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const r = await call(t.app, 'GET', `/users/${member.user.id}/project_deploy_keys`, { token: member.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.map((k: { id: number }) => k.id), [key.body.id]);
    // The project's owner sees the same key as a common project with the member.
    const common = await call(t.app, 'GET', `/users/${member.user.username}/project_deploy_keys`, { token: owner.token });
    assert.equal(common.status, 200);
    assert.deepEqual(common.body.map((k: { id: number }) => k.id), [key.body.id]);
  });

  test('a public project with the repository disabled gives no code to anyone', async () => {
    const p = await createProject(t.app, owner.token, { name: 'no-repo', visibility: 'public' });
    const commit = await call(t.app, 'POST', `/projects/${p.id}/repository/commits`, {
      token: owner.token,
      body: { branch: 'main', commit_message: 'Initial', actions: [{ action: 'create', file_path: 'README.md', content: '# secret\n' }] },
    });
    assert.equal(commit.status, 201, JSON.stringify(commit.body));
    const stranger = await makeUser(t.app);
    // While the repository is enabled the code is public.
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/repository/branches`)).status, 200);
    const off = await call(t.app, 'PUT', `/projects/${p.id}`, { token: owner.token, body: { repository_access_level: 'disabled' } });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    for (const token of [undefined, stranger.token]) {
      const shown = await call(t.app, 'GET', `/projects/${p.id}`, { token });
      assert.equal(shown.status, 200);
      assert.equal(shown.body.default_branch, undefined);
      const branches = await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token });
      assert.equal(branches.status, 403);
      assert.deepEqual(branches.body, { message: '403 Forbidden' });
      const file = await call(t.app, 'GET', `/projects/${p.id}/repository/files/README.md`, { token, query: { ref: 'main' } });
      assert.equal(file.status, 403);
      assert.deepEqual(file.body, { message: '403 Forbidden' });
      const raw = await call(t.app, 'GET', `/projects/${p.id}/repository/files/README.md/raw`, { token, query: { ref: 'main' } });
      assert.equal(raw.status, 403);
    }
    // Members only: a member reads it, a stranger still does not.
    await call(t.app, 'PUT', `/projects/${p.id}`, { token: owner.token, body: { repository_access_level: 'private' } });
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: owner.token })).status, 200);
    assert.equal((await call(t.app, 'GET', `/projects/${p.id}/repository/branches`, { token: stranger.token })).status, 403);
  });
});

describe('deployKeyDenial: a deploy key over SSH', () => {
  // [case, project, link, download_code, push_code]
  const TABLE: Array<[string, PolicyProject, { can_push: number } | null, string | null, string | null]> = [
    ['not enabled on a public project', project(), null, 'not_found', 'not_found'],
    ['read-only key, private project', project({ visibility_level: PRIVATE }), { can_push: 0 }, null, 'forbidden'],
    ['pushing key, private project', project({ visibility_level: PRIVATE }), { can_push: 1 }, null, null],
    ['pushing key, repository for members', project({ repository_access_level: MEMBERS }), { can_push: 1 }, null, null],
    ['pushing key, repository disabled', project({ repository_access_level: DISABLED }), { can_push: 1 }, 'forbidden', 'forbidden'],
    ['pushing key, archived project', project({ archived: 1 }), { can_push: 1 }, null, 'archived'],
    ['pushing key, read-only repository', project({ repository_read_only: 1 }), { can_push: 1 }, null, 'read_only'],
  ];
  for (const [name, p, link, download, push] of TABLE) {
    test(name, () => {
      assert.equal(deployKeyDenial('download_code', p, link), download);
      assert.equal(deployKeyDenial('push_code', p, link), push);
    });
  }
});

// Snippet-level rules. The callers are user 1 (anonymous aside); the snippet's author is user 2 unless said otherwise.
const snip = (o: Partial<PolicySnippet> = {}): PolicySnippet => ({ author_id: 2, visibility_level: PRIVATE, project_id: null, ...o });
const SNIPPET_TABLE: Array<[SnippetAbility, string, PolicySnippet, PolicyProject | null, string]> = [
  ['read_snippet', 'personal public', snip({ visibility_level: PUBLIC }), null, 'YYYYYYYY'],
  ['read_snippet', 'personal internal', snip({ visibility_level: INTERNAL }), null, 'NYYYYYYY'],
  ['read_snippet', 'personal private', snip(), null, 'NNNNNNNY'],
  ['read_snippet', 'personal private, own', snip({ author_id: 1 }), null, 'NYYYYYYY'],
  ['update_snippet', 'personal public', snip({ visibility_level: PUBLIC }), null, 'FFFFFFFY'],
  ['update_snippet', 'personal public, own', snip({ visibility_level: PUBLIC, author_id: 1 }), null, 'FYYYYYYY'],
  ['admin_snippet', 'personal internal, own', snip({ visibility_level: INTERNAL, author_id: 1 }), null, 'NYYYYYYY'],
  ['read_snippet', 'private snippet of a public project', snip({ project_id: 1 }), project(), 'NNYYYYYY'],
  ['read_snippet', 'internal snippet of a public project', snip({ project_id: 1, visibility_level: INTERNAL }), project(), 'NYYYYYYY'],
  ['read_snippet', 'public snippet of a public project', snip({ project_id: 1, visibility_level: PUBLIC }), project(), 'YYYYYYYY'],
  ['read_snippet', 'public snippet of a private project', snip({ project_id: 1, visibility_level: PUBLIC }), project({ visibility_level: PRIVATE }), 'NNYYYYYY'],
  ['read_snippet', 'public snippet, project snippets for members', snip({ project_id: 1, visibility_level: PUBLIC }), project({ snippets: 'private' }), 'FFYYYYYY'],
  ['read_snippet', 'public snippet, project snippets disabled', snip({ project_id: 1, visibility_level: PUBLIC }), project({ snippets: 'disabled' }), 'FFFFFFFF'],
  ['update_snippet', 'public snippet of a public project', snip({ project_id: 1, visibility_level: PUBLIC }), project(), 'FFFFFYYY'],
  ['update_snippet', 'own public snippet of a public project', snip({ project_id: 1, visibility_level: PUBLIC, author_id: 1 }), project(), 'FFFYYYYY'],
  ['admin_snippet', 'own public snippet of a public project', snip({ project_id: 1, visibility_level: PUBLIC, author_id: 1 }), project(), 'FFFYYYYY'],
  ['update_snippet', 'own snippet, archived project', snip({ project_id: 1, visibility_level: PUBLIC, author_id: 1 }), project({ archived: 1 }), 'FFFAAAAA'],
];

describe('snippet abilities', () => {
  for (const [ability, state, s, p, row] of SNIPPET_TABLE) {
    test(`${ability} on a ${state}: ${row}`, () => {
      const got = CALLERS.map((c) => snippetDenial(actorFor(c), ability, s, p, LEVEL[c]));
      assert.deepEqual(got, [...row].map((l) => LETTER[l]));
    });
  }

  test('an external user reads an internal snippet only as its author or a member', () => {
    const external: Actor = { user: user({ external: 1 }), admin: false, token: null, via: 'token', sudo: false };
    assert.equal(snippetDenial(external, 'read_snippet', snip({ visibility_level: INTERNAL }), null, 0), 'not_found');
    assert.equal(snippetDenial(external, 'read_snippet', snip({ visibility_level: INTERNAL, project_id: 1 }), project(), 10), null);
  });
});

describe('collaboration on merge requests from forks', () => {
  const m = (o: Partial<PolicyCollaboration> = {}): PolicyCollaboration => ({
    allow_collaboration: 1, state: 'opened', target: { id: 1, visibility_level: 20 }, source: { id: 2, visibility_level: 10 },
    sourceBranchProtected: false, updatesTargetBranch: true, ...o,
  });
  test('possible only across public or internal projects on an unprotected source branch', () => {
    assert.equal(collaborativePushPossible(m()), true);
    assert.equal(collaborativePushPossible(m({ source: { id: 1, visibility_level: 20 } })), false);
    assert.equal(collaborativePushPossible(m({ source: { id: 2, visibility_level: 0 } })), false);
    assert.equal(collaborativePushPossible(m({ target: { id: 1, visibility_level: 0 } })), false);
    assert.equal(collaborativePushPossible(m({ sourceBranchProtected: true })), false);
  });
  test('the effective value, who may set it, and who may push through it', () => {
    assert.equal(collaborationAllowed(m()), true);
    assert.equal(collaborationAllowed(m({ allow_collaboration: 0 })), false);
    assert.equal(collaborationAllowed(m({ state: 'closed' })), true);
    assert.equal(mayAllowCollaboration(m(), true), true);
    assert.equal(mayAllowCollaboration(m(), false), false);
    assert.equal(mayAllowCollaboration(m({ sourceBranchProtected: true }), true), false);
    assert.equal(collaborationAllowsPush([m()]), true);
    for (const o of [{ state: 'closed' }, { state: 'merged' }, { updatesTargetBranch: false }, { allow_collaboration: 0 }, { sourceBranchProtected: true }]) {
      assert.equal(collaborationAllowsPush([m(o)]), false, JSON.stringify(o));
    }
    assert.equal(collaborationAllowsPush([m({ state: 'closed' }), m()]), true);
    assert.equal(collaborationAllowsPush([]), false);
  });
});
