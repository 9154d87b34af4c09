import { webUrl } from '../../http/format.ts';
import type { NamespaceRow } from '../../platform/membership.ts';

// NamespaceBasic, then Namespace's owner-only member count, in the reference's field order.
export function namespaceEntity(ns: NamespaceRow, base: string, opts: { ownerUsername?: string; membersCount?: number } = {}) {
  const out: Record<string, unknown> = {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: null,
    // A personal namespace links to its owner's profile.
    web_url: ns.kind === 'user' ? webUrl(base, opts.ownerUsername ?? ns.path) : webUrl(base, 'groups', ns.full_path),
  };
  if (opts.membersCount !== undefined) out.members_count_with_descendants = opts.membersCount;
  return out;
}
