import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { castRoles, makeAlert, makeProject, makeToken, type RoleCast } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';

// Alert metric images, every status and text of gitlab-areas.md §8: 1 MB, safe image types checked by extension
// and by content, public URLs only, url/url_text lengths, 403/404 as the reference; the files on disk, served back
// with their detected type to whoever reads the alert, removed with the image and with the project.

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]), Buffer.alloc(100, 1), Buffer.from([0xff, 0xd9])]);
const BASE = 'http://bellows.test';
const EXT_TEXT = 'File does not have a supported extension. Only png, jpg, jpeg, gif, bmp, tiff, ico, and webp are supported';

let t: TestApp;
before(async () => { t = await buildTestApp(); });
after(async () => { await t.close(); });

const file = (filename: string, content: Buffer | string = PNG, type = 'image/png') => ({ filename, content, type });
const imagesUrl = (projectId: number, iid: number) => `/projects/${projectId}/alert_management_alerts/${iid}/metric_images`;
const rows = (alertId: number) => t.app.db.selectFrom('alert_metric_images').selectAll().where('alert_id', '=', alertId).orderBy('id').execute();
const onDisk = (projectId: number, id: number, name: string) => join(t.dataDir, 'uploads', 'project', String(projectId), 'alert_metric_image', String(id), name);
const download = (url: string, token?: string) => t.app.inject({ method: 'GET', url: url.replace(BASE, ''), headers: token ? { 'private-token': token } : {} });

describe('metric images: upload, list, update, delete', () => {
  let project: Awaited<ReturnType<typeof makeProject>>;
  let roles: RoleCast;
  let alert: Awaited<ReturnType<typeof makeAlert>>;
  before(async () => {
    project = await makeProject(t.app, { visibility: 0 });
    roles = await castRoles(t.app, project);
    alert = await makeAlert(t.app, project);
  });

  test('a PNG and a JPEG: stored on disk, listed oldest first, served with their detected type', async () => {
    let r = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), {
      token: roles.developer.token, multipart: { file: file('cpu graph.png'), url: 'https://grafana.example.com/d/cpu', url_text: 'CPU' },
    });
    assert.equal(r.status, 201, r.text);
    const [png] = await rows(alert.id);
    assert.deepEqual(r.body, {
      id: png.id, created_at: '2026-06-01T12:00:00.000Z', filename: 'cpu_graph.png',
      file_path: `${BASE}/uploads/-/system/alert_metric_image/file/${png.id}/cpu_graph.png`, url: 'https://grafana.example.com/d/cpu', url_text: 'CPU',
    });
    assert.deepEqual(readFileSync(onDisk(project.id, png.id, 'cpu_graph.png')), PNG);
    (t.clock as ManualClock).advance(1000);
    // A JPEG sent as application/octet-stream: the content decides its type.
    r = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.maintainer.token, multipart: { file: file('mem.JPG', JPEG, 'application/octet-stream') } });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual([r.body.url, r.body.url_text], [null, null]);
    const list = await call(t.app, 'GET', imagesUrl(project.id, alert.iid), { token: roles.developer.token });
    assert.deepEqual(list.body.map((m: any) => m.filename), ['cpu_graph.png', 'mem.JPG']);
    const got = await download(list.body[1].file_path, roles.developer.token);
    assert.equal(got.statusCode, 200);
    assert.equal(got.headers['content-type'], 'image/jpeg');
    assert.equal(got.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(got.rawPayload, JPEG);
  });

  test('refusals by content and extension, size, URL and lengths: 400 with the model messages, nothing stored', async () => {
    const before = (await rows(alert.id)).length;
    const cases: Array<[string, Record<string, any>, number, unknown]> = [
      ['a PNG renamed .txt', { file: file('graph.txt') }, 400, { message: EXT_TEXT }],
      ['a text file renamed .png', { file: file('notes.png', 'just text, no image', 'image/png') }, 400, { message: 'File content is not a png image' }],
      ['a PNG named .jpg', { file: file('graph.jpg') }, 400, { message: 'File content is not a jpg image' }],
      ['an SVG', { file: file('graph.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml') }, 400, { message: EXT_TEXT }],
      ['an empty file', { file: file('empty.png', Buffer.alloc(0)) }, 400, { message: 'File content is not a png image' }],
      ['1 MB + 1 byte', { file: file('big.png', Buffer.concat([PNG, Buffer.alloc(1024 * 1024 + 1 - PNG.length)])) }, 400, { message: '400 Bad request - File is too large' }],
      ['no file', { url: 'https://example.com' }, 400, { message: '400 (Bad request) "file" not given' }],
      ['a file as text', { file: 'graph.png' }, 400, { error: 'file is invalid' }],
      ['a loopback URL', { file: file('a.png'), url: 'http://127.0.0.1:9090/graph' }, 400, { message: 'Url is blocked: Requests to localhost are not allowed' }],
      ['localhost', { file: file('a.png'), url: 'http://localhost/x' }, 400, { message: 'Url is blocked: Requests to localhost are not allowed' }],
      ['loopback as a number', { file: file('a.png'), url: 'http://2130706433/' }, 400, { message: 'Url is blocked: Requests to localhost are not allowed' }],
      ['mapped IPv6 loopback', { file: file('a.png'), url: 'http://[::ffff:127.0.0.1]/' }, 400, { message: 'Url is blocked: Requests to localhost are not allowed' }],
      ['IPv6 loopback', { file: file('a.png'), url: 'http://[::1]/' }, 400, { message: 'Url is blocked: Requests to localhost are not allowed' }],
      ['a private network', { file: file('a.png'), url: 'https://10.1.2.3/d' }, 400, { message: 'Url is blocked: Requests to the local network are not allowed' }],
      ['link-local (cloud metadata)', { file: file('a.png'), url: 'http://169.254.169.254/latest' }, 400, { message: 'Url is blocked: Requests to the link local network are not allowed' }],
      ['unique local IPv6', { file: file('a.png'), url: 'http://[fd00::1]/' }, 400, { message: 'Url is blocked: Requests to the local network are not allowed' }],
      ['another scheme', { file: file('a.png'), url: 'ftp://example.com/x' }, 400, { message: 'Url is blocked: Only allowed schemes are http, https' }],
      ['not a URL', { file: file('a.png'), url: 'not a url' }, 400, { message: 'Url is blocked: URI is invalid' }],
      ['url over 255', { file: file('a.png'), url: `https://example.com/${'a'.repeat(236)}` }, 400, { message: 'Url is too long (maximum is 255 characters)' }],
      ['url_text over 128', { file: file('a.png'), url_text: 'x'.repeat(129) }, 400, { message: 'Url text is too long (maximum is 128 characters)' }],
      ['several at once', { file: file('a.txt'), url: 'http://192.168.1.1/', url_text: 'x'.repeat(129) }, 400, {
        message: `${EXT_TEXT}, Url is blocked: Requests to the local network are not allowed, Url text is too long (maximum is 128 characters)`,
      }],
    ];
    for (const [name, multipart, status, body] of cases) {
      const r = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.developer.token, multipart });
      assert.deepEqual([r.status, r.body], [status, body], name);
    }
    assert.equal((await rows(alert.id)).length, before);
    // Exactly 1 MB, and the longest url and url_text, are taken.
    const r = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), {
      token: roles.developer.token,
      multipart: { file: file('full.png', Buffer.concat([PNG, Buffer.alloc(1024 * 1024 - PNG.length)])), url: `https://example.com/${'a'.repeat(235)}`, url_text: 'x'.repeat(128) },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(readFileSync(onDisk(project.id, r.body.id, 'full.png')).length, 1024 * 1024);
  });

  test('missing alert and image: 403 to change, 404 to read, as the reference', async () => {
    const dev = roles.developer.token;
    let r = await call(t.app, 'POST', imagesUrl(project.id, 999), { token: dev, multipart: { file: file('a.png') } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'GET', imagesUrl(project.id, 999), { token: dev });
    assert.deepEqual([r.status, r.body], [404, { message: 'Alert not found' }]);
    r = await call(t.app, 'PUT', `${imagesUrl(project.id, 999)}/1`, { token: dev, body: { url_text: 'x' } });
    assert.deepEqual([r.status, r.body], [403, { message: '403 Forbidden' }]);
    r = await call(t.app, 'PUT', `${imagesUrl(project.id, alert.iid)}/999999`, { token: dev, body: { url_text: 'x' } });
    assert.deepEqual([r.status, r.body], [404, { message: 'Metric image not found' }]);
    r = await call(t.app, 'DELETE', `${imagesUrl(project.id, alert.iid)}/999999`, { token: dev });
    assert.deepEqual([r.status, r.body], [404, { message: 'Metric image not found' }]);
    // An image of another alert is not this alert's.
    const other = await makeAlert(t.app, project);
    const img = (await rows(alert.id))[0];
    r = await call(t.app, 'DELETE', `${imagesUrl(project.id, other.iid)}/${img.id}`, { token: dev });
    assert.deepEqual([r.status, r.body], [404, { message: 'Metric image not found' }]);
  });

  test('PUT changes url and url_text; a refused value is 422 and changes nothing', async () => {
    const img = (await rows(alert.id))[0];
    const url = `${imagesUrl(project.id, alert.iid)}/${img.id}`;
    let r = await call(t.app, 'PUT', url, { token: roles.developer.token, body: { url: 'https://prom.example.org/g', url_text: 'Prom' } });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.id, r.body.url, r.body.url_text], [img.id, 'https://prom.example.org/g', 'Prom']);
    for (const body of [{ url: 'http://10.0.0.1/' }, { url_text: 'x'.repeat(129) }, { url: `https://e.com/${'a'.repeat(250)}` }]) {
      r = await call(t.app, 'PUT', url, { token: roles.developer.token, body });
      assert.deepEqual([r.status, r.body], [422, { message: 'Metric image could not be updated' }]);
    }
    const after = (await rows(alert.id))[0];
    assert.deepEqual([after.url, after.url_text], ['https://prom.example.org/g', 'Prom']);
  });

  test('DELETE: 204, the row and the file gone; the queued removal takes a file left behind', async () => {
    const r0 = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.developer.token, multipart: { file: file('gone.png') } });
    const id = r0.body.id;
    const path = onDisk(project.id, id, 'gone.png');
    assert.equal(existsSync(path), true);
    const r = await call(t.app, 'DELETE', `${imagesUrl(project.id, alert.iid)}/${id}`, { token: roles.developer.token });
    assert.deepEqual([r.status, r.text], [204, '']);
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(join(path, '..')), false);
    assert.equal((await rows(alert.id)).some((m) => m.id === id), false);
    assert.equal((await download(r0.body.file_path, roles.developer.token)).statusCode, 404);
    // As if the removal had failed: the job queued with the deletion removes what is left.
    const job = await t.app.db.selectFrom('jobs').selectAll().where('kind', '=', 'uploads.remove_file').orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(job.args as unknown as string).key, ['project', String(project.id), 'alert_metric_image', String(id), 'gone.png']);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, PNG);
    await t.app.jobs.drain();
    assert.equal(existsSync(join(path, '..')), false);
  });
});

describe('metric images: roles and scopes', () => {
  const cases = [
    { visibility: 20, expect: { anonymous: [401, 404, 404], nonMember: [403, 404, 404], guest: [403, 404, 404], reporter: [403, 404, 404], developer: [201, 200, 200], maintainer: [201, 200, 200], owner: [201, 200, 200], admin: [201, 200, 200] } },
    { visibility: 0, expect: { anonymous: [401, 404, 404], nonMember: [404, 404, 404], guest: [403, 404, 404], reporter: [403, 404, 404], developer: [201, 200, 200], maintainer: [201, 200, 200], owner: [201, 200, 200], admin: [201, 200, 200] } },
  ];
  for (const { visibility, expect } of cases) {
    test(`${visibility ? 'public' : 'private'} project: upload, list and download by role; PUT and DELETE need Developer`, async () => {
      const project = await makeProject(t.app, { visibility });
      const roles = await castRoles(t.app, project);
      const alert = await makeAlert(t.app, project);
      const seed = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.owner.token, multipart: { file: file('seed.png') } });
      for (const [role, [post, list, dl]] of Object.entries(expect)) {
        const token = roles[role as keyof RoleCast]?.token;
        const p = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token, multipart: { file: file(`${role}.png`) } });
        assert.equal(p.status, post, `${role} POST ${p.text}`);
        if (post === 404) assert.deepEqual(p.body, { message: '404 Project Not Found' });
        const l = await call(t.app, 'GET', imagesUrl(project.id, alert.iid), { token });
        assert.equal(l.status, list, `${role} GET`);
        if (list === 404) assert.deepEqual(l.body, visibility === 0 && ['anonymous', 'nonMember'].includes(role) ? { message: '404 Project Not Found' } : { message: 'Alert not found' });
        assert.equal((await download(seed.body.file_path, token)).statusCode, dl, `${role} download`);
        const change = post === 201 ? 200 : post;
        const u = await call(t.app, 'PUT', `${imagesUrl(project.id, alert.iid)}/${seed.body.id}`, { token, body: { url_text: role } });
        assert.equal(u.status, change, `${role} PUT`);
      }
      const images = await rows(alert.id);
      assert.deepEqual(images.map((m) => m.filename), ['seed.png', 'developer.png', 'maintainer.png', 'owner.png', 'admin.png']);
      for (const role of ['guest', 'reporter'] as const) {
        const d = await call(t.app, 'DELETE', `${imagesUrl(project.id, alert.iid)}/${seed.body.id}`, { token: roles[role].token });
        assert.deepEqual([d.status, d.body], [403, { message: '403 Forbidden' }]);
      }
      assert.equal((await call(t.app, 'DELETE', `${imagesUrl(project.id, alert.iid)}/${seed.body.id}`, { token: roles.developer.token })).status, 204);
    });
  }

  test('a read_api token lists and downloads but cannot upload; an archived project refuses changes', async () => {
    const project = await makeProject(t.app, { visibility: 0 });
    const roles = await castRoles(t.app, project);
    const alert = await makeAlert(t.app, project);
    const seed = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.developer.token, multipart: { file: file('seed.png') } });
    const token = await makeToken(t.app, roles.developer.user, ['read_api']);
    assert.equal((await call(t.app, 'GET', imagesUrl(project.id, alert.iid), { token })).status, 200);
    const p = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token, multipart: { file: file('x.png') } });
    assert.deepEqual([p.status, p.body.error], [403, 'insufficient_scope']);
    await t.app.db.updateTable('projects').set({ archived: 1 }).where('id', '=', project.id).execute();
    t.app.caches.voidAll();
    const a = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.developer.token, multipart: { file: file('x.png') } });
    assert.equal(a.status, 403);
    assert.equal((await call(t.app, 'GET', imagesUrl(project.id, alert.iid), { token: roles.developer.token })).status, 200);
    assert.equal((await rows(alert.id)).length, 1);
    void seed;
  });
});

test('deleting the project removes its metric image files', async () => {
  const project = await makeProject(t.app, { visibility: 0 });
  const roles = await castRoles(t.app, project);
  const alert = await makeAlert(t.app, project);
  const r = await call(t.app, 'POST', imagesUrl(project.id, alert.iid), { token: roles.developer.token, multipart: { file: file('kept.png') } });
  const path = onDisk(project.id, r.body.id, 'kept.png');
  assert.equal(existsSync(path), true);
  // The alert's system notes and assignees go with it.
  await call(t.app, 'PUT', `/projects/${project.id}/alert_management_alerts/${alert.iid}`, { token: roles.developer.token, body: { status: 'acknowledged', assignee_ids: [roles.developer.user.id] } });
  const d = await call(t.app, 'DELETE', `/projects/${project.id}`, { token: roles.owner.token });
  assert.equal(d.status, 202);
  assert.equal(existsSync(join(t.dataDir, 'uploads', 'project', String(project.id))), false);
  assert.equal(await t.app.db.selectFrom('alert_metric_images').select('id').where('id', '=', r.body.id).executeTakeFirst(), undefined);
  assert.equal(await t.app.db.selectFrom('alert_management_alerts').select('id').where('id', '=', alert.id).executeTakeFirst(), undefined);
  assert.equal(await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'AlertManagement::Alert').where('noteable_id', '=', alert.id).executeTakeFirst(), undefined);
  assert.equal((await download(r.body.file_path, roles.admin.token)).statusCode, 404);
});
