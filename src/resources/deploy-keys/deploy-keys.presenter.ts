import { iso } from '../../http/format.ts';
import type { DeployKeyLinkRow, DeployKeyRow, ProjectSummaryRow } from './deploy-keys.service.ts';

// Deploy keys in the spec's field order. `key` is the stored (sanitised) key text.

export function deployKey(k: DeployKeyRow) {
  return {
    id: k.id,
    title: k.title,
    key: k.key,
    fingerprint: k.fingerprint,
    fingerprint_sha256: `SHA256:${k.fingerprint_sha256}`,
    created_at: iso(k.created_at),
    expires_at: iso(k.expires_at),
  };
}

/** A key as one project uses it: with that project's `can_push`. */
export function projectDeployKey(k: DeployKeyRow, link: DeployKeyLinkRow) {
  return { ...deployKey(k), can_push: !!link.can_push };
}

export function projectSummary(p: ProjectSummaryRow) {
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: `${p.namespace_full_name} / ${p.name}`,
    path: p.path,
    path_with_namespace: p.full_path,
    created_at: iso(p.created_at),
  };
}

/** The instance-wide list: each key with the projects that use it, split by write access. */
export function instanceDeployKey(k: DeployKeyRow, projects: { write: ProjectSummaryRow[]; readonly: ProjectSummaryRow[] }) {
  return {
    ...deployKey(k),
    projects_with_write_access: projects.write.map(projectSummary),
    projects_with_readonly_access: projects.readonly.map(projectSummary),
  };
}
