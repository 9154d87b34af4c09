import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

test('the project endpoints are in the OpenAPI document', async () => {
  const r = await call(t.app, 'GET', '/openapi.json');
  assert.equal(r.status, 200);
  const paths = Object.keys(r.body.paths);
  for (const p of ['/api/v4/projects', '/api/v4/projects/{id}', '/api/v4/projects/{id}/fork', '/api/v4/projects/{id}/share/{group_id}', '/api/v4/topics', '/api/v4/users/{user_id}/projects', '/api/v4/projects/user/{user_id}']) {
    assert.ok(paths.includes(p), p);
  }
  const params = r.body.paths['/api/v4/projects'].get.parameters.map((x: any) => x.name);
  for (const name of ['archived', 'id_after', 'membership', 'min_access_level', 'order_by', 'topic', 'updated_before', 'with_programming_language']) assert.ok(params.includes(name), name);
});
