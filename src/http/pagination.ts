import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import qs from 'qs';

// Offset and keyset pagination, with the reference's headers and Link URLs, written once.

export const MAX_PER_PAGE = 100;
export const COUNT_LIMIT = 10_000;

export interface PageParams {
  page: number;
  perPage: number;
}

export function pageParams(input: { page?: unknown; per_page?: unknown }): PageParams {
  let page = Number(input.page ?? 1);
  let perPage = Number(input.per_page ?? 20);
  if (!Number.isInteger(page) || page < 1) page = 1;
  if (!Number.isInteger(perPage) || perPage < 1) perPage = 20;
  if (perPage > MAX_PER_PAGE) perPage = MAX_PER_PAGE;
  return { page, perPage };
}

const SECRET_PARAMS = new Set(['private_token', 'access_token']);

/** Absolute URL of the same request with some parameters replaced, from the configured external URL. */
export function linkUrl(req: FastifyRequest, overrides: Record<string, unknown>): string {
  // Repeated slashes are routed as one; the links carry the canonical path.
  const pathname = req.url.split('?')[0].replace(/\/{2,}/g, '/');
  const pathParams = new Set(Object.keys((req.params as object) ?? {}));
  const input = ((req as any).input ?? {}) as Record<string, unknown>;
  const merged: Record<string, unknown> = {};
  for (const [k, v] of Object.entries({ ...(req.query as object), ...input })) {
    if (pathParams.has(k) || SECRET_PARAMS.has(k) || v === undefined) continue;
    merged[k] = v;
  }
  Object.assign(merged, overrides);
  // Keys in byte order, as the reference's `to_query` sorts them (independent of the locale).
  const query = qs.stringify(merged, { arrayFormat: 'brackets', sort: (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0), format: 'RFC1738' });
  const base = req.server.config.externalUrl;
  return `${base}${pathname}${query ? `?${query}` : ''}`;
}

/** Sets X-* headers and Link for one page; `total` null means "too many to count". */
export function setOffsetHeaders(req: FastifyRequest, reply: FastifyReply, p: PageParams, total: number | null, hasNext: boolean): void {
  const totalPages = total === null ? null : Math.max(1, Math.ceil(total / p.perPage));
  const outOfRange = totalPages !== null && p.page > totalPages;
  const next = !outOfRange && hasNext ? p.page + 1 : null;
  const prev = !outOfRange && p.page > 1 ? p.page - 1 : null;
  const links: string[] = [];
  const link = (page: number, rel: string) => links.push(`<${linkUrl(req, { page, per_page: p.perPage })}>; rel="${rel}"`);
  if (prev) link(prev, 'prev');
  if (next) link(next, 'next');
  link(1, 'first');
  if (totalPages !== null) link(totalPages, 'last');
  reply.header('x-per-page', String(p.perPage));
  reply.header('x-page', String(p.page));
  reply.header('x-next-page', next ? String(next) : '');
  reply.header('x-prev-page', prev ? String(prev) : '');
  if (total !== null) {
    reply.header('x-total', String(total));
    reply.header('x-total-pages', String(totalPages));
  }
  reply.header('link', links.join(', '));
}

/**
 * One page of a query: one capped count plus one page query. Above 10,000 matches the totals are
 * omitted and the next page is decided by fetching one extra row.
 */
export async function paginateQuery<DB, TB extends keyof DB, O>(
  req: FastifyRequest,
  reply: FastifyReply,
  query: SelectQueryBuilder<DB, TB, O>,
  opts: { withCount?: boolean; params?: PageParams } = {},
): Promise<O[]> {
  const p = opts.params ?? pageParams((req as any).input ?? {});
  const offset = (p.page - 1) * p.perPage;
  let total: number | null = null;
  if (opts.withCount !== false) {
    // Counting stops at 10,001 matches: the database never counts a huge table to the end.
    const capped = query.clearSelect().clearOrderBy().select(sql<number>`1`.as('one')).limit(COUNT_LIMIT + 1);
    const row = await req.server.db.selectFrom(capped.as('capped') as any).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
    const counted = Number((row as { n?: unknown } | undefined)?.n ?? 0);
    total = counted > COUNT_LIMIT ? null : counted;
  }
  const rows = (await query.limit(p.perPage + 1).offset(offset).execute()) as O[];
  const hasNext = rows.length > p.perPage;
  if (hasNext) rows.pop();
  setOffsetHeaders(req, reply, p, total, hasNext);
  return rows;
}

/** The same headers for a list already in memory (refs read from git, for instance). */
export function paginateArray<T>(req: FastifyRequest, reply: FastifyReply, items: T[], params?: PageParams): T[] {
  const p = params ?? pageParams((req as any).input ?? {});
  const offset = (p.page - 1) * p.perPage;
  const total = items.length;
  const page = items.slice(offset, offset + p.perPage);
  setOffsetHeaders(req, reply, p, total > COUNT_LIMIT ? null : total, offset + p.perPage < total);
  return page;
}

/** Keyset: a `rel="next"` link carrying the continuation filter whenever the page is not empty. */
export function setKeysetLink(req: FastifyRequest, reply: FastifyReply, rowsOnPage: number, continuation: Record<string, unknown>, drop: string[] = []): void {
  if (rowsOnPage === 0) return;
  const overrides: Record<string, unknown> = { ...continuation };
  for (const k of drop) overrides[k] = undefined;
  reply.header('link', `<${linkUrl(req, overrides)}>; rel="next"`);
}
