import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { addMember, castRoles, makeProject, makeSnippet, quickUser, type TestUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import { snippetDenial } from '../../platform/access/policy.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { snippetScopeFor, type SnippetRow } from './snippets.service.ts';

// Snippet listings filter in the database with the policy's rule (`readableSnippetsExpr`): the rows `/snippets/all`
// gives are exactly those `snippetDenial` lets the caller read, page by page.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const roles = ['anonymous', 'nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
const VIS = ['private', 'internal', 'public'] as const;

async function projectWith(visibility: number, snippets: string) {
  const p = await makeProject(t.app, { visibility });
  await t.app.db.updateTable('projects').set({ settings: JSON.stringify({ snippets_access_level: snippets }) }).where('id', '=', p.id).execute();
  return t.app.db.selectFrom('projects').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
}

async function allIds(token: string | undefined, query: Record<string, string> = {}) {
  const r = await call(t.app, 'GET', '/snippets/all', { token, query: { per_page: '100', ...query } });
  return { status: r.status, ids: Array.isArray(r.body) ? r.body.map((s: any) => s.id) : r.body, headers: r.headers };
}

describe('GET /snippets/all', () => {
  test('role table: a private project, and a public one whose snippets are for members', async () => {
    const priv = await projectWith(0, 'enabled');
    const membersOnly = await projectWith(20, 'private');
    const open = await projectWith(20, 'enabled');
    const cast = await castRoles(t.app, priv);
    const levels = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
    for (const [role, level] of Object.entries(levels)) await addMember(t.app, { type: 'Project', id: membersOnly.id }, cast[role as keyof typeof levels].user.id, level);
    const outsider = (await quickUser(t.app)).user;
    const made: Record<string, number> = {};
    for (const [name, p] of [['priv', priv], ['members', membersOnly], ['open', open]] as const) {
      for (const v of VIS) made[`${name}-${v}`] = (await makeSnippet(t.app, name === 'open' ? outsider : cast.developer.user, { project: p, visibility: v })).id;
    }
    const ours = new Set(Object.values(made));
    const expected: Record<(typeof roles)[number], string[] | 401> = {
      anonymous: 401,
      nonMember: ['open-internal', 'open-public'],
      guest: ['priv-private', 'priv-internal', 'priv-public', 'members-private', 'members-internal', 'members-public', 'open-internal', 'open-public'],
      reporter: ['priv-private', 'priv-internal', 'priv-public', 'members-private', 'members-internal', 'members-public', 'open-internal', 'open-public'],
      developer: ['priv-private', 'priv-internal', 'priv-public', 'members-private', 'members-internal', 'members-public', 'open-internal', 'open-public'],
      maintainer: ['priv-private', 'priv-internal', 'priv-public', 'members-private', 'members-internal', 'members-public', 'open-internal', 'open-public'],
      owner: ['priv-private', 'priv-internal', 'priv-public', 'members-private', 'members-internal', 'members-public', 'open-internal', 'open-public'],
      admin: Object.keys(made),
    };
    for (const role of roles) {
      const r = await allIds(role === 'anonymous' ? undefined : cast[role].token);
      const want = expected[role];
      if (want === 401) {
        assert.equal(r.status, 401, role);
        continue;
      }
      assert.equal(r.status, 200, role);
      const got = r.ids.filter((id: number) => ours.has(id));
      assert.deepEqual(got, want.map((k) => made[k]).sort((a, b) => b - a), role);
    }
  });

  test('every caller gets exactly what the policy lets it read (personal and project snippets, every feature level)', async () => {
    const author = await quickUser(t.app);
    const member = await quickUser(t.app);
    const external = await quickUser(t.app);
    await t.app.db.updateTable('users').set({ external: 1 }).where('id', '=', external.user.id).execute();
    const stranger = await quickUser(t.app);
    const admin = await quickUser(t.app, { admin: true });
    const projects = [
      await projectWith(20, 'enabled'), await projectWith(20, 'private'), await projectWith(20, 'disabled'),
      await projectWith(10, 'enabled'), await projectWith(0, 'enabled'), await projectWith(0, 'private'), await projectWith(20, 'enabled'),
    ];
    for (const p of projects) await addMember(t.app, { type: 'Project', id: p.id }, member.user.id, 10);
    for (const v of VIS) {
      await makeSnippet(t.app, author.user, { visibility: v });
      for (const p of projects) await makeSnippet(t.app, author.user, { project: p, visibility: v });
    }
    // A project pending deletion hides its snippets from everyone.
    await t.app.db.updateTable('projects').set({ pending_delete: 1 }).where('id', '=', projects[6].id).execute();
    const rows: SnippetRow[] = await t.app.db.selectFrom('snippets').selectAll().orderBy('id', 'desc').execute();
    for (const who of [author, member, external, stranger, admin]) {
      const actor: Actor = { user: { ...who.user, external: who === external ? 1 : 0 } as any, admin: who === admin, token: null, via: 'token', sudo: false } as any;
      const want: number[] = [];
      for (const row of rows) {
        const scope = await snippetScopeFor(t.app, actor, row.id);
        if (scope && !snippetDenial(actor, 'read_snippet', scope.row, scope.project, scope.level)) want.push(row.id);
      }
      const got = (await allIds(who.token)).ids;
      assert.deepEqual(got, want);
      // Paged, the same rows in the same order, with the count the policy allows.
      const p1 = await allIds(who.token, { per_page: '3', page: '1' });
      assert.deepEqual(p1.ids, want.slice(0, 3));
      assert.equal(p1.headers['x-total'], String(want.length));
      assert.deepEqual((await allIds(who.token, { per_page: '3', page: '2' })).ids, want.slice(3, 6));
    }
    // Spot checks that the comparison above is not empty-handed.
    const nonAdmin = (await allIds(stranger.token)).ids;
    assert.ok(nonAdmin.length > 0);
    assert.ok((await allIds(admin.token)).ids.length > nonAdmin.length);
  });

  test('created_after / created_before; repository_storage for administrators only', async () => {
    const clock = t.clock as ManualClock;
    const u = await quickUser(t.app);
    const admin = await quickUser(t.app, { admin: true });
    const day = 86_400_000;
    const start = Math.ceil(clock.now() / day) * day + day;
    const at = (days: number) => new Date(start + days * day).toISOString();
    clock.set(start);
    const a = await makeSnippet(t.app, u.user, { visibility: 'private' });
    clock.set(start + day);
    const b = await makeSnippet(t.app, u.user, { visibility: 'private' });
    clock.set(start + 2 * day);
    const c = await makeSnippet(t.app, u.user, { visibility: 'private' });
    await t.app.db.updateTable('snippets').set({ repository_storage: 'elsewhere' }).where('id', '=', c.id).execute();
    const mine = (q: Record<string, string>) => allIds(u.token, q).then((r) => r.ids.filter((id: number) => [a.id, b.id, c.id].includes(id)));
    assert.deepEqual(await mine({ created_after: at(1) }), [c.id, b.id]);
    assert.deepEqual(await mine({ created_before: at(1) }), [b.id, a.id]);
    assert.deepEqual(await mine({ created_after: at(0.5), created_before: at(1.5) }), [b.id]);
    // Not an administrator: the shard filter is ignored.
    assert.deepEqual(await mine({ repository_storage: 'elsewhere' }), [c.id, b.id, a.id]);
    assert.deepEqual((await allIds(admin.token, { repository_storage: 'elsewhere' })).ids, [c.id]);
    assert.deepEqual((await allIds(admin.token, { repository_storage: 'none' })).ids, []);
    // The caller's own and the public lists take the time bounds too.
    const own = await call(t.app, 'GET', '/snippets', { token: u.token, query: { created_before: at(0.9) } });
    assert.deepEqual(own.body.map((s: any) => s.id), [a.id]);
    const bad = await call(t.app, 'GET', '/snippets/all', { token: u.token, query: { created_after: 'yesterday' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body, { error: 'created_after is invalid' });
  });
});
