import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { makeToken, makeUser, type TestUser } from '../../../test/support/fixtures.ts';
import { insertGroup, insertProject } from '../../../test/support/instance-settings-rows.ts';
import { actorInPercentage, isFeatureEnabled, loadFeatureDefinitions } from '../../platform/features.ts';

let t: TestApp;
let admin: TestUser;
let user: TestUser;

const REDIRECT = 'api_redirect_moved_projects';
const ROLES = 'role_targeted_broadcast_messages';
const redirectDefinition = {
  name: REDIRECT, introduced_by_url: null, rollout_issue_url: null, milestone: '0.1', log_state_changes: true,
  type: 'ops', group: 'group::source code', default_enabled: false,
};
const allMentionDefinition = {
  name: 'disable_all_mention', introduced_by_url: null, rollout_issue_url: null, milestone: '0.1', log_state_changes: true,
  type: 'ops', group: 'group::project management', default_enabled: false,
};
const rolesDefinition = {
  name: ROLES, introduced_by_url: null, rollout_issue_url: null, milestone: '0.1', log_state_changes: false,
  type: 'development', group: 'group::foundations', default_enabled: false,
};

const set = (name: string, body: Record<string, unknown>, token = admin.token) => call(t.app, 'POST', `/features/${name}`, { token, body });
const gateRows = async () => t.app.db.selectFrom('feature_gates').select(['feature_key', 'key', 'value']).orderBy('id').execute();

before(async () => {
  t = await buildTestApp();
  admin = await makeUser(t.app, { admin: true, username: 'fadmin' });
  user = await makeUser(t.app, { username: 'fuser' });
});
after(async () => { await t.close(); });
beforeEach(async () => { await t.app.db.deleteFrom('feature_gates').execute(); });

test('every route needs an administrator; read_api may only read', async () => {
  const routes: Array<[string, string]> = [['GET', '/features'], ['GET', '/features/definitions'], ['POST', `/features/${REDIRECT}`], ['DELETE', `/features/${REDIRECT}`]];
  const readApi = await makeToken(t.app, admin.user, ['read_api']);
  for (const [method, url] of routes) {
    const body = method === 'POST' ? { value: 'true' } : undefined;
    const anon = await call(t.app, method, url, { body });
    assert.equal(anon.status, 401);
    assert.deepEqual(anon.body, { message: '401 Unauthorized' });
    const forbidden = await call(t.app, method, url, { token: user.token, body });
    assert.equal(forbidden.status, 403);
    assert.deepEqual(forbidden.body, { message: '403 Forbidden' });
    const scoped = await call(t.app, method, url, { token: readApi, body });
    assert.equal(scoped.status, method === 'GET' ? 200 : 403, `${method} ${url}`);
  }
  assert.deepEqual(await gateRows(), []);
});

test('GET /features/definitions lists the shipped definitions; GET /features starts empty', async () => {
  const d = await call(t.app, 'GET', '/features/definitions', { token: admin.token });
  assert.equal(d.status, 200);
  assert.deepEqual(d.body, [redirectDefinition, allMentionDefinition, rolesDefinition]);
  assert.deepEqual(Object.keys(d.body[0]), ['name', 'introduced_by_url', 'rollout_issue_url', 'milestone', 'log_state_changes', 'type', 'group', 'default_enabled']);
  assert.deepEqual((await call(t.app, 'GET', '/features', { token: admin.token })).body, []);
});

test('true and false switch the boolean gate; the flag stays listed until deleted', async () => {
  const on = await set(REDIRECT, { value: 'true' });
  assert.equal(on.status, 201);
  assert.deepEqual(on.body, { name: REDIRECT, state: 'on', gates: [{ key: 'boolean', value: true }], definition: redirectDefinition });
  assert.equal(await isFeatureEnabled(t.app.db, REDIRECT), true);

  const off = await set(REDIRECT, { value: false });
  assert.equal(off.status, 201);
  assert.deepEqual(off.body, { name: REDIRECT, state: 'off', gates: [{ key: 'boolean', value: false }], definition: redirectDefinition });
  assert.equal(await isFeatureEnabled(t.app.db, REDIRECT), false);

  const list = await call(t.app, 'GET', '/features', { token: admin.token });
  assert.deepEqual(list.body, [off.body]);
});

test('an integer value gives a conditional percentage of time; percentage_of_actors likewise; 100 and 0 are on and off', async () => {
  const pot = await set(ROLES, { value: 50 });
  assert.deepEqual(pot.body, { name: ROLES, state: 'conditional', gates: [{ key: 'boolean', value: false }, { key: 'percentage_of_time', value: 50 }], definition: rolesDefinition });
  const poa = await set(ROLES, { value: '25', key: 'percentage_of_actors' });
  assert.deepEqual(poa.body.gates, [{ key: 'boolean', value: false }, { key: 'percentage_of_actors', value: 25 }, { key: 'percentage_of_time', value: 50 }]);
  assert.equal(poa.body.state, 'conditional');
  const again = await set(ROLES, { value: '0.5', key: 'percentage_of_time' });
  assert.deepEqual(again.body.gates, [{ key: 'boolean', value: false }, { key: 'percentage_of_actors', value: 25 }, { key: 'percentage_of_time', value: 0.5 }]);

  const full = await set(ROLES, { value: '100', key: 'percentage_of_actors' });
  assert.deepEqual([full.body.state, full.body.gates], ['on', [{ key: 'boolean', value: true }]]);
  for (const [key, kind] of [[undefined, 'time'], ['percentage_of_time', 'time'], ['percentage_of_actors', 'actors']] as const) {
    const r = await set(ROLES, { value: 30, ...(key ? { key } : {}) });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: `400 Bad request - Cannot enable percentage of ${kind} for a fully-enabled flag` });
  }
  const zero = await set(ROLES, { value: 0, key: 'percentage_of_time' });
  assert.deepEqual([zero.body.state, zero.body.gates], ['off', [{ key: 'boolean', value: false }]]);
  assert.deepEqual(await gateRows(), [{ feature_key: ROLES, key: 'boolean', value: 'false' }]);
});

test('values that are neither boolean nor a percentage answer the reference texts and change nothing', async () => {
  await set(ROLES, { value: 10 });
  const before = await gateRows();
  const cases: Array<[Record<string, unknown>, unknown]> = [
    [{ value: 'maybe' }, { message: `400 Bad request - Cannot set '${ROLES}' to "maybe"` }],
    [{ value: '-5' }, { message: `400 Bad request - Cannot set '${ROLES}' to "-5"` }],
    [{ value: 'abc', key: 'percentage_of_actors' }, { message: '400 Bad request - Not a percentage' }],
    [{ value: 'abc', key: 'percentage_of_time' }, { message: '400 Bad request - Not a percentage' }],
    [{ value: '50', key: 'sometimes' }, { message: `400 Bad request - Cannot set '${ROLES}' ("sometimes") to "50"` }],
    [{ value: 150 }, { message: '400 Bad request - value must be a positive number less than or equal to 100, but was 150' }],
    [{}, { message: '400 (Bad request) "value" not given' }],
    [{ value: { a: 1 } }, { error: 'value is invalid' }],
    [{ value: 'true', force: 'yes' }, { error: 'force is invalid' }],
    [{ value: 'true', key: 'percentage_of_time', user: 'fuser' }, { error: 'key, user are mutually exclusive' }],
    [{ value: 'true', key: 'percentage_of_time', repository: 'x.git' }, { error: 'key, repository are mutually exclusive' }],
    [{ value: 'true', key: 'percentage_of_actors', feature_group: 'admins' }, { error: 'key, feature_group are mutually exclusive' }],
  ];
  for (const [body, expected] of cases) {
    const r = await set(ROLES, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, expected, JSON.stringify(body));
  }
  assert.deepEqual(await gateRows(), before);
});

test('names without a definition are created, with or without force; their definition is null', async () => {
  const r = await set('my_new_flag', { value: 'true' });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, { name: 'my_new_flag', state: 'on', gates: [{ key: 'boolean', value: true }], definition: null });
  assert.deepEqual(await gateRows(), [{ feature_key: 'my_new_flag', key: 'boolean', value: 'true' }]);
  const forced = await set('my_forced_flag', { value: 'false', force: true });
  assert.equal(forced.status, 201);
  assert.deepEqual(forced.body, { name: 'my_forced_flag', state: 'off', gates: [{ key: 'boolean', value: false }], definition: null });
  const form = await call(t.app, 'POST', '/features/other_flag', { token: admin.token, form: { value: '20' } });
  assert.equal(form.status, 201);
  assert.deepEqual(form.body.gates, [{ key: 'boolean', value: false }, { key: 'percentage_of_time', value: 20 }]);
  const list = await call(t.app, 'GET', '/features', { token: admin.token });
  assert.deepEqual(list.body.map((f: any) => [f.name, f.definition]), [['my_forced_flag', null], ['my_new_flag', null], ['other_flag', null]]);
});

test('actor lists resolve to real records, all or nothing', async () => {
  const other = await makeUser(t.app, { username: 'fother' });
  const g = await insertGroup(t.app, { path: 'fgroup' });
  const sub = await insertGroup(t.app, { path: 'sub', parent: g });
  const p = await insertProject(t.app, sub, { path: 'proj' });
  const userNs = await t.app.db.selectFrom('namespaces').select('id').where('full_path', '=', 'fuser').executeTakeFirstOrThrow();

  const r = await set(REDIRECT, {
    value: 'true', user: 'fuser,,FOther,', group: 'fgroup/sub', namespace: 'fuser,fgroup', project: 'fgroup/sub/proj',
    repository: 'fgroup/sub/proj.git', feature_group: 'admins',
  });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.body, {
    name: REDIRECT, state: 'conditional', definition: redirectDefinition,
    gates: [
      { key: 'boolean', value: false },
      { key: 'actors', value: [`User:${user.user.id}`, `User:${other.user.id}`, `Group:${sub.id}`, `Namespace:${userNs.id}`, `Namespace:${g.id}`, `Project:${p.id}`, `Repository:${p.id}`] },
      { key: 'groups', value: ['admins'] },
    ],
  });
  const enabledFor = async (actor: Parameters<typeof isFeatureEnabled>[2]) => isFeatureEnabled(t.app.db, REDIRECT, actor);
  assert.equal(await enabledFor({ type: 'User', id: user.user.id }), true);
  assert.equal(await enabledFor({ type: 'Project', id: p.id }), true);
  assert.equal(await enabledFor({ type: 'Group', id: g.id }), false, 'the parent group was not named');
  assert.equal(await enabledFor({ type: 'User', id: admin.user.id }), true, 'through the admins feature group');
  assert.equal(await enabledFor(undefined), false);

  const before = await gateRows();
  for (const [body, missing] of [
    [{ user: 'fuser,ghost' }, 'ghost'], [{ group: 'fuser' }, 'fuser'], [{ namespace: 'fgroup/nope' }, 'fgroup/nope'],
    [{ project: 'fgroup/proj' }, 'fgroup/proj'], [{ repository: 'fgroup/sub/proj' }, 'fgroup/sub/proj'],
    [{ repository: 'fgroup/sub/proj.wiki.git' }, 'fgroup/sub/proj.wiki.git'], [{ user: 'fuser', project: 'a/b' }, 'a/b'],
  ] as const) {
    const bad = await set(REDIRECT, { value: 'false', ...body });
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.deepEqual(bad.body, { message: `400 Bad request - ${missing} is not found!` });
  }
  const numeric = await set(REDIRECT, { value: '50', user: 'fuser' });
  assert.deepEqual(numeric.body, { message: `400 Bad request - Cannot set '${REDIRECT}' to "50" for User:${user.user.id}` });
  assert.deepEqual(await gateRows(), before);

  const off = await set(REDIRECT, { value: 'false', user: 'fother', feature_group: 'admins' });
  assert.deepEqual(off.body.gates, [
    { key: 'boolean', value: false },
    { key: 'actors', value: [`User:${user.user.id}`, `Group:${sub.id}`, `Namespace:${userNs.id}`, `Namespace:${g.id}`, `Project:${p.id}`, `Repository:${p.id}`] },
  ]);
  assert.equal(await enabledFor({ type: 'User', id: other.user.id }), false);
  const twice = await set(REDIRECT, { value: 'true', user: 'fuser' });
  assert.equal(twice.body.gates[1].value.filter((a: string) => a === `User:${user.user.id}`).length, 1);
  const global = await set(REDIRECT, { value: 'true' });
  assert.deepEqual(global.body.gates, [{ key: 'boolean', value: true }]);
});

test('disabling an actor of a flag never set persists it as off', async () => {
  const r = await set(REDIRECT, { value: 'false', user: 'fuser' });
  assert.deepEqual(r.body, { name: REDIRECT, state: 'off', gates: [{ key: 'boolean', value: false }], definition: redirectDefinition });
  assert.equal((await call(t.app, 'GET', '/features', { token: admin.token })).body.length, 1);
});

test('DELETE removes every gate and answers 204 whether or not the flag existed', async () => {
  await set(REDIRECT, { value: 'true', user: 'fuser' });
  await set(REDIRECT, { value: '30', key: 'percentage_of_actors' });
  await set(ROLES, { value: 'true' });
  const del = await call(t.app, 'DELETE', `/features/${REDIRECT}`, { token: admin.token });
  assert.equal(del.status, 204);
  assert.equal(del.text, '');
  assert.deepEqual((await gateRows()).map((r) => r.feature_key), [ROLES]);
  const again = await call(t.app, 'DELETE', `/features/${REDIRECT}`, { token: admin.token });
  assert.equal(again.status, 204);
  const never = await call(t.app, 'DELETE', '/features/never_existed', { token: admin.token, headers: { 'content-type': 'application/json' } });
  assert.equal(never.status, 204);
  assert.deepEqual((await call(t.app, 'GET', '/features', { token: admin.token })).body.map((f: any) => f.name), [ROLES]);
  assert.equal(await isFeatureEnabled(t.app.db, REDIRECT, { type: 'User', id: user.user.id }), false);
});

test('isFeatureEnabled: defaults, percentage of actors stable per actor, percentage of time', async () => {
  assert.equal(await isFeatureEnabled(t.app.db, REDIRECT), false);
  assert.equal(await isFeatureEnabled(t.app.db, 'no_such_flag'), false);

  await set(REDIRECT, { value: '40', key: 'percentage_of_actors' });
  const actors = Array.from({ length: 400 }, (_, i) => ({ type: 'User' as const, id: i + 1 }));
  const first = await Promise.all(actors.map((a) => isFeatureEnabled(t.app.db, REDIRECT, a)));
  const second = await Promise.all(actors.map((a) => isFeatureEnabled(t.app.db, REDIRECT, a)));
  assert.deepEqual(first, second, 'the same actor always gets the same answer');
  const share = first.filter(Boolean).length;
  assert.ok(share > 110 && share < 210, `about 40% enabled, got ${share}`);
  assert.deepEqual(first, actors.map((a) => actorInPercentage(REDIRECT, a, 40)));
  assert.equal(await isFeatureEnabled(t.app.db, REDIRECT), false, 'no actor: no percentage of actors');
  // Raising the percentage keeps everyone who was in.
  const wider = actors.map((a) => actorInPercentage(REDIRECT, a, 60));
  assert.ok(first.every((on, i) => !on || wider[i]));

  await call(t.app, 'DELETE', `/features/${REDIRECT}`, { token: admin.token });
  await set(REDIRECT, { value: '50' });
  let on = 0;
  for (let i = 0; i < 600; i++) if (await isFeatureEnabled(t.app.db, REDIRECT)) on++;
  assert.ok(on > 230 && on < 370, `about half of the calls, got ${on}`);
});

test('definition files are checked when read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bellows-flags-'));
  try {
    writeFileSync(join(dir, 'good_flag.yml'), 'name: good_flag\ntype: ops\ndefault_enabled: true\n');
    const defs = loadFeatureDefinitions(dir);
    assert.deepEqual(defs.get('good_flag'), {
      name: 'good_flag', introduced_by_url: null, rollout_issue_url: null, milestone: null, log_state_changes: null, type: 'ops', group: null, default_enabled: true,
    });
    writeFileSync(join(dir, 'bad_flag.yml'), 'name: other_name\ntype: ops\ndefault_enabled: false\n');
    assert.throws(() => loadFeatureDefinitions(dir), /bad_flag.yml: name must match the file name/);
    writeFileSync(join(dir, 'bad_flag.yml'), 'name: bad_flag\ntype: ops\ndefault_enabled: "no"\n');
    assert.throws(() => loadFeatureDefinitions(dir), /default_enabled must be true or false/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
