import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../http/auth.ts';
import { readCacheState, type ProjectAccess } from '../../platform/membership.ts';
import { loadPresentation, presentOne, type PresentOptions } from './projects.presenter.ts';
import type { Project } from './projects.service.ts';

// Project entities as JSON text, each reused while nothing it was made from can have changed: the row (its
// database-maintained row_version is in the key), the caller's access to it (in the key), and the namespaces,
// topics and group shares it shows (read caches of the credential-cache window, voided in every worker by any
// state-changing request). A page whose entities are all known costs no presentation query and no JSON work.
// Forms that show fresher data (statistics, custom attributes, a fork's source) are always built.
// Each entity is kept as UTF-8 bytes with their SHA-256: a page is the parts copied together, and its ETag is
// made from the parts' digests (see http/plumbing.ts), so neither encoding nor hashing grows with the page.


export interface RenderedEntity {
  bytes: Buffer;
  digest: Buffer;
}

type Entities = LRUCache<string, RenderedEntity & { gen: number; at: number }>;
const byDatabase = new WeakMap<object, Entities>();

function keyOf(p: Project, full: boolean, actor: Actor, acc: ProjectAccess | undefined): string {
  return `${full ? 'f' : 's'}${actor.admin ? 'a' : ''}:${p.id}:${p.row_version}:${acc?.project ?? '-'}:${acc?.group ?? '-'}:${acc?.effective ?? 0}`;
}

/** Each row's entity as JSON bytes, in the rows' order. */
export async function renderProjects(deps: ServiceDeps, actor: Actor, rows: Project[], opts: PresentOptions): Promise<RenderedEntity[]> {
  const { ttl, gen } = readCacheState(deps.db);
  let entities = byDatabase.get(deps.db);
  if (!entities) byDatabase.set(deps.db, (entities = new LRUCache({ max: 10_000 })));
  const access = opts.access ? await opts.access : undefined;
  const reusable = ttl > 0 && !opts.statistics && !opts.customAttributes && (actor.user === null || access !== undefined);
  const now = Date.now();
  const out: Array<RenderedEntity | undefined> = new Array(rows.length);
  const keys: Array<string | null> = rows.map((p) => (reusable && (p.forked_from_project_id === null || !opts.full) ? keyOf(p, opts.full, actor, access?.get(p.id)) : null));
  const missing: Project[] = [];
  rows.forEach((p, i) => {
    const key = keys[i];
    const hit = key ? entities!.get(key) : undefined;
    if (hit && hit.gen === gen && now - hit.at < ttl) out[i] = hit;
    else missing.push(p);
  });
  if (missing.length) {
    const pres = await loadPresentation(deps, actor, missing, { ...opts, access });
    // Entities built while a write passed may be stale: they serve this request only.
    const keep = reusable && readCacheState(deps.db).gen === gen;
    let m = 0;
    rows.forEach((p, i) => {
      if (out[i] !== undefined) return;
      const bytes = Buffer.from(JSON.stringify(presentOne(missing[m++]!, pres)));
      const entity = { bytes, digest: createHash('sha256').update(bytes).digest() };
      out[i] = entity;
      const key = keys[i];
      if (keep && key) {
        entities!.set(key, { ...entity, gen, at: now });
      }
    });
  }
  return out as RenderedEntity[];
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** A JSON array of entities, byte for byte what JSON.stringify gives for the list of their values. */
export function jsonArray(parts: RenderedEntity[]): Buffer {
  const chunks: Buffer[] = [OPEN];
  parts.forEach((p, i) => {
    if (i) chunks.push(COMMA);
    chunks.push(p.bytes);
  });
  chunks.push(CLOSE);
  return Buffer.concat(chunks);
}
