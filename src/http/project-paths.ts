import type { FastifyRequest } from 'fastify';
import { API_PREFIX } from './route.ts';

// Routes below a project's full path, outside the API: `/<group>/<subgroup>/.../<project>.git/info/refs`,
// `/<...>/<project>/uploads/<secret>/<file>`, `/<...>/<project>/alerts/notify/...`. A project path has 2 to 21
// segments (up to 20 levels of groups, then the project). A route per depth and suffix made about 120 routes with up
// to 21 parameters each, for which the router compiles a matcher and a parameter builder at every start (tens of
// milliseconds of each worker's start). Instead, the URL is folded before routing (fastify's `rewriteUrl`): the
// project path becomes one segment, its slashes `%2F`, behind a fixed prefix, so that one route per suffix,
// `/-/project/:project_path<suffix>`, takes it as one parameter, which the router decodes as it decoded each segment
// before (a `%2F` within a segment read as `/` then too, once the segments were joined).
//
// What reaches the router is what reached it before, but for the fold: a path of 1 or of more than 21 segments is not
// folded and finds no route, and a raw `/-/project/...` path has 3 segments before its suffix, so it is folded too
// (into a project path beginning with `-`, which no namespace has): the routes are reached only through the fold.
// API paths are never folded, repeated slashes or not, so that no API route (a branch called `git-upload-pack`) is
// shadowed; no namespace is called `api`.

const PROJECT_PATH_PARAM = 'project_path';
const FOLDED = '/-/project/';
const MIN_SEGMENTS = 2;
const MAX_SEGMENTS = 21;

/** The route of a suffix (`/info/refs`, `/uploads/:secret/:filename`) below a project path. */
export function projectPathRoute(suffix: string): string {
  return `${FOLDED}:${PROJECT_PATH_PARAM}${suffix}`;
}

/** The project's full path a route of `projectPathRoute` was called with. */
export function projectPathOf(req: FastifyRequest): string {
  return (req.params as Record<string, string | undefined>)[PROJECT_PATH_PARAM] ?? '';
}

/**
 * fastify's `rewriteUrl` for the routes of these suffixes: a path that ends with one of them after 2 to 21 segments
 * is folded. Where two suffixes fit, the one after fewer segments wins, as the router preferred the route whose fixed
 * segment comes first. API paths and everything else go to the router unchanged.
 */
export function projectPathFolder(suffixes: readonly string[]): (req: { url?: string }) => string {
  const templates = suffixes.map((s) => s.split('/').filter((seg) => seg !== ''));
  // A fixed segment of each suffix, which a path must contain to be looked at further.
  const markers = [...new Set(templates.map((t) => `/${t.find((seg) => !seg.startsWith(':'))}`))];
  return (req) => {
    const url = req.url ?? '/';
    if (url.startsWith(API_PREFIX)) return url;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (!markers.some((m) => path.includes(m))) return url;
    // As the router reads it: repeated and trailing slashes ignored.
    const segments = path.split('/').filter((seg) => seg !== '');
    if (segments[0] === 'api') return url;
    let fold = 0;
    for (const t of templates) {
      const n = segments.length - t.length;
      if (n < MIN_SEGMENTS || n > MAX_SEGMENTS || (fold && n >= fold)) continue;
      if (t.every((seg, i) => seg.startsWith(':') || seg === segments[n + i])) fold = n;
    }
    if (!fold) return url;
    return `${FOLDED}${segments.slice(0, fold).join('%2F')}/${segments.slice(fold).join('/')}${q < 0 ? '' : url.slice(q)}`;
  };
}
