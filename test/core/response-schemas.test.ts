import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, call, declaredRoute, type TestApp } from '../support/app.ts';
import { makeUser } from '../support/fixtures.ts';

// Every API route declares its success body; the document shows it and call() checks answers against it.

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

test('every /api/v4 operation in the OpenAPI document has a success response schema', async () => {
  const doc = (await call(t.app, 'GET', '/api/v4/openapi.json')).body;
  const missing: string[] = [];
  let count = 0;
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    // The OAuth provider and git over HTTP are outside the v4 API.
    if (!path.startsWith('/api/v4/')) continue;
    for (const [method, op] of Object.entries<any>(ops)) {
      count++;
      const success = Object.entries<any>(op.responses ?? {}).find(([code]) => /^2/.test(code));
      if (!success || (!EMPTY.has(code(success[0])) && !success[1].content?.['application/json']?.schema)) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.ok(count > 100, `${count} operations`);
  assert.deepEqual(missing, []);
});

const code = (c: string) => (c === '2XX' ? 200 : Number(c));
/** Answers without a body: 204, and a 202 that only says the work was accepted (GPG key revocation). */
const EMPTY = new Set([202, 204]);

test('the document shows the declared entity, exact and nullable where the presenter may give null', async () => {
  const doc = (await call(t.app, 'GET', '/api/v4/openapi.json')).body;
  const list = doc.paths['/api/v4/projects/{id}/deploy_keys'].get.responses['2XX'].content['application/json'].schema;
  assert.equal(list.type, 'array');
  assert.equal(list.items.additionalProperties, false);
  assert.deepEqual(Object.keys(list.items.properties), ['id', 'title', 'key', 'fingerprint', 'fingerprint_sha256', 'created_at', 'expires_at', 'can_push']);
  assert.equal(list.items.properties.expires_at.nullable, true);
  assert.ok(doc.paths['/api/v4/projects/{id}/deploy_keys/{key_id}'].delete.responses['204']);
});

test('an answer that drifts from its declared schema fails the call', async () => {
  const admin = await makeUser(t.app, { admin: true });
  const route = declaredRoute(t.app, 'GET', '/api/v4/broadcast_messages/1?x=1');
  assert.equal(route?.url, '/api/v4/broadcast_messages/:id');
  const created = await call(t.app, 'POST', '/broadcast_messages', { token: admin.token, body: { message: 'hello' } });
  assert.equal(created.status, 201);
  const schema = route!.response as unknown as { properties: Record<string, unknown> };
  // The validator is compiled on first use, so the schema is changed before the first check of this route.
  const saved = schema.properties.font;
  delete schema.properties.font;
  try {
    await assert.rejects(
      call(t.app, 'GET', `/broadcast_messages/${created.body.id}`),
      /GET \/api\/v4\/broadcast_messages\/\d+ \(\/api\/v4\/broadcast_messages\/:id\) answered 200 with a body that does not match its declared response schema: body must NOT have additional properties \{"additionalProperty":"font"\}/,
    );
  } finally {
    schema.properties.font = saved;
  }
});
