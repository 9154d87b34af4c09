import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';

// Response shapes of deploy-keys.presenter.ts, same field order.

const keyFields = {
  id: Type.Integer(), title: Type.String(), key: Type.String(), fingerprint: Type.String(),
  fingerprint_sha256: Type.String(), created_at: Iso(), expires_at: Nullable(Iso()),
};
export const DeployKey = Entity(keyFields, { description: 'DeployKey' });

/** A key as one project uses it. */
export const ProjectDeployKey = Entity({ ...keyFields, can_push: Type.Boolean() }, { description: 'DeployKeysProject' });

export const ProjectSummary = Entity({
  id: Type.Integer(), description: Nullable(Type.String()), name: Type.String(), name_with_namespace: Type.String(),
  path: Type.String(), path_with_namespace: Type.String(), created_at: Iso(),
}, { description: 'BasicProjectDetails' });

/** The instance-wide list entry. */
export const InstanceDeployKey = Entity({
  ...keyFields, projects_with_write_access: Type.Array(ProjectSummary), projects_with_readonly_access: Type.Array(ProjectSummary),
}, { description: 'DeployKeyWithProjects' });
