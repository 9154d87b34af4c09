import { createHash } from 'node:crypto';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../http/auth.ts';
import type { ProjectAccess } from '../../platform/membership.ts';
import { loadPresentation, presentOne, type PresentOptions } from './projects.presenter.ts';
import type { Project } from './projects.service.ts';

// Project entities as JSON text, each reused while nothing it was made from can have changed: the row (its
// database-maintained row_version is in the key), the caller's access to it (in the key), and the namespaces,
// topics and group shares it shows (read caches, see platform/read-cache.ts). A page whose entities are all known
// costs no presentation query and no JSON work.
// Forms that show fresher data (statistics, custom attributes, a fork's source) are always built.
// Each entity is kept as UTF-8 bytes with their SHA-256: a page is the parts copied together, and its ETag is
// made from the parts' digests (see http/plumbing.ts), so neither encoding nor hashing grows with the page.

export interface RenderedEntity {
  bytes: Buffer;
  digest: Buffer;
}

function keyOf(p: Project, full: boolean, actor: Actor, acc: ProjectAccess | undefined): string {
  return `${full ? 'f' : 's'}${actor.admin ? 'a' : ''}:${p.id}:${p.row_version}:${acc?.project ?? '-'}:${acc?.group ?? '-'}:${acc?.effective ?? 0}`;
}

/** Each row's entity as JSON bytes, in the rows' order. */
export async function renderProjects(deps: ServiceDeps, actor: Actor, rows: Project[], opts: PresentOptions): Promise<RenderedEntity[]> {
  const access = opts.access ? await opts.access : undefined;
  const reusable = !opts.statistics && !opts.customAttributes && (actor.user === null || access !== undefined);
  const keys = rows.map((p) => (reusable && (p.forked_from_project_id === null || !opts.full) ? keyOf(p, opts.full, actor, access?.get(p.id)) : null));
  const built = new Map<Project, RenderedEntity>();
  // One presentation (a constant number of queries) for every row not cached, reusable or not.
  const build = async (ps: Project[]) => {
    if (ps.length === 0) return;
    const pres = await loadPresentation(deps, actor, ps, { ...opts, access });
    for (const p of ps) {
      const bytes = Buffer.from(JSON.stringify(presentOne(p, pres)));
      built.set(p, { bytes, digest: createHash('sha256').update(bytes).digest() });
    }
  };
  const once = rows.filter((_, i) => keys[i] === null);
  const byKey = new Map<string, Project>();
  rows.forEach((p, i) => keys[i] !== null && byKey.set(keys[i]!, p));
  const cached = await deps.caches.define<string, RenderedEntity>('project-entities', { max: 10_000 })
    .getMany([...byKey.keys()], async (missing) => {
      await build([...missing.map((k) => byKey.get(k)!), ...once]);
      return new Map(missing.map((k) => [k, built.get(byKey.get(k)!)!]));
    });
  if (once.length && !built.has(once[0]!)) await build(once);
  return rows.map((p, i) => (keys[i] !== null ? cached.get(keys[i]!)! : built.get(p)!));
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
