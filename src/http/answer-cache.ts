import type { FastifyReply } from 'fastify';
import type { ApiRequest } from './route.ts';
import { bodyWithTag, etagOf } from './plumbing.ts';

// Whole GET answers from the application's read cache (platform/read-cache.ts): the JSON text and the pagination
// headers a handler produced, kept for the window under the caller and the full URL, so a list or a record read
// again within the window costs no query and no presenting. Any write through the server voids them (the cache
// rule), and the caller is part of the key, so nobody is served what another may read.

const PAGE_HEADERS = ['x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'link'] as const;

interface Answer {
  json: string;
  /** Its ETag, made once when the answer is made. */
  tag: string;
  headers: Array<[string, string]>;
}

/**
 * The answer of `load` (a JSON value; pagination headers set on `reply`), from the cache called `name` when the same
 * caller read the same URL within the window. Answers the JSON text, sent as application/json.
 */
export async function cachedAnswer(req: ApiRequest<any>, reply: FastifyReply, name: string, load: () => Promise<unknown>): Promise<string> {
  const key = `${req.actor.user?.id ?? 0}:${req.actor.admin ? 1 : 0}:${req.url}`;
  let fresh = false;
  const answer = await req.server.caches.define<string, Answer>(name, { max: 2_000 }).get(key, async () => {
    fresh = true;
    const json = JSON.stringify(await load());
    const headers: Array<[string, string]> = [];
    for (const h of PAGE_HEADERS) {
      const v = reply.getHeader(h);
      if (v !== undefined) headers.push([h, String(v)]);
    }
    return { json, tag: etagOf(json), headers };
  });
  if (!fresh) for (const [h, v] of answer.headers) reply.header(h, v);
  bodyWithTag(reply, answer.tag);
  reply.type('application/json; charset=utf-8');
  return answer.json;
}
