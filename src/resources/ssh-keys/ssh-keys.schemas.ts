import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserPublic } from '../users/users.schemas.ts';
import { DeployKey } from '../deploy-keys/deploy-keys.schemas.ts';

// Response shapes of ssh-keys.presenter.ts and of the key look-ups in ssh-keys.routes.ts, same field order.

const keyFields = {
  id: Type.Integer(), title: Type.String(), created_at: Iso(), expires_at: Nullable(Iso()), key: Type.String(), usage_type: Type.String(),
};
export const SshKey = Entity(keyFields, { description: 'SSHKey' });

export const SshKeyWithUser = Entity({ ...keyFields, user: UserPublic }, { description: 'SSHKeyWithUser' });

/** A deploy key found by fingerprint, with its creator when that user still exists. */
export const DeployKeyWithUser = Entity({ ...DeployKey.properties, user: Nullable(UserPublic) }, { description: 'DeployKeyWithUser' });
