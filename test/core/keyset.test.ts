import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { paginateArray, setKeysetLink } from '../../src/http/pagination.ts';

// The shared keyset and in-memory mechanisms, on a request as the route layer leaves it.

function fake(url: string, input: Record<string, unknown>, params: Record<string, unknown> = {}) {
  const query = Object.fromEntries(new URL(url, 'http://x').searchParams);
  const headers: Record<string, string> = {};
  const req = { url, params, query, input, server: { config: { externalUrl: 'https://git.example.com' } } } as unknown as FastifyRequest;
  const reply = { header: (k: string, v: string) => { headers[k] = v; return reply; } } as unknown as FastifyReply;
  return { req, reply, headers };
}

test('keyset: rel="next" carries the continuation filter, replaces an old one, keeps the other parameters', () => {
  const { req, reply, headers } = fake('/api/v4/groups?pagination=keyset&order_by=name&sort=asc&per_page=2&cursor=old&private_token=secret', {
    pagination: 'keyset', order_by: 'name', sort: 'asc', per_page: 2, cursor: 'old', private_token: 'secret',
  });
  setKeysetLink(req, reply, 2, { cursor: 'eyJuYW1lIjoiYiJ9' });
  assert.equal(headers.link, '<https://git.example.com/api/v4/groups?cursor=eyJuYW1lIjoiYiJ9&order_by=name&pagination=keyset&per_page=2&sort=asc>; rel="next"');
});

test('keyset: the dropped parameters leave the link; an empty page has no Link header', () => {
  const { req, reply, headers } = fake('/api/v4/projects?pagination=keyset&order_by=id&sort=desc&id_after=5', {
    pagination: 'keyset', order_by: 'id', sort: 'desc', id_after: 5,
  });
  setKeysetLink(req, reply, 1, { id_before: 42 }, ['id_after']);
  assert.equal(headers.link, '<https://git.example.com/api/v4/projects?id_before=42&order_by=id&pagination=keyset&sort=desc>; rel="next"');
  const empty = fake('/api/v4/projects?pagination=keyset&order_by=id', { pagination: 'keyset', order_by: 'id' });
  setKeysetLink(empty.req, empty.reply, 0, { id_before: 1 });
  assert.equal(empty.headers.link, undefined);
});

test('paginateArray: the offset headers for a list in memory; path parameters stay out of the query', () => {
  const items = Array.from({ length: 45 }, (_, i) => i + 1);
  const { req, reply, headers } = fake('/api/v4/projects/7/repository/branches?page=2&per_page=20', { id: '7', page: 2, per_page: 20 }, { id: '7' });
  const page = paginateArray(req, reply, items);
  assert.deepEqual(page, items.slice(20, 40));
  assert.deepEqual([headers['x-page'], headers['x-per-page'], headers['x-next-page'], headers['x-prev-page'], headers['x-total'], headers['x-total-pages']], ['2', '20', '3', '1', '45', '3']);
  const u = (p: number) => `https://git.example.com/api/v4/projects/7/repository/branches?page=${p}&per_page=20`;
  assert.equal(headers.link, `<${u(1)}>; rel="prev", <${u(3)}>; rel="next", <${u(1)}>; rel="first", <${u(3)}>; rel="last"`);
  const past = fake('/api/v4/x?page=9', { page: 9 });
  assert.deepEqual(paginateArray(past.req, past.reply, items), []);
  assert.deepEqual([past.headers['x-next-page'], past.headers['x-prev-page']], ['', '']);
});
