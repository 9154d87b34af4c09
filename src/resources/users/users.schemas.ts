import { Type } from '@sinclair/typebox';
import { Entity, Iso, IsoDay, Nullable } from '../../http/response-schemas.ts';

// Response shapes of users.presenter.ts, same field order: UserBasic ⊂ User ⊂ UserPublic ⊂ UserWithAdmin.

const basicFields = {
  id: Type.Integer(), username: Type.String(), name: Type.String(), state: Type.String(), locked: Type.Boolean(),
  avatar_url: Nullable(Type.String()), web_url: Type.String(),
};
export const UserBasic = Entity(basicFields, { description: 'UserBasic' });

const userFields = {
  ...basicFields,
  created_at: Iso(), bio: Type.String(), location: Type.String(), public_email: Type.String(), skype: Type.String(),
  linkedin: Type.String(), twitter: Type.String(), discord: Type.String(), website_url: Type.String(), organization: Type.String(),
  job_title: Type.String(), pronouns: Nullable(Type.String()), bot: Type.Boolean(), work_information: Nullable(Type.String()),
  followers: Type.Integer(), following: Type.Integer(), is_followed: Type.Boolean(), local_time: Nullable(Type.String()),
};
export const User = Entity(userFields, { description: 'User' });

const publicFields = {
  ...userFields,
  last_sign_in_at: Nullable(Iso()), confirmed_at: Nullable(Iso()), last_activity_on: Nullable(IsoDay()), email: Type.String(),
  theme_id: Type.Integer(), color_scheme_id: Type.Integer(), projects_limit: Type.Integer(), current_sign_in_at: Nullable(Iso()),
  identities: Type.Array(Entity({ provider: Type.String(), extern_uid: Type.String() }, { description: 'Identity' })), can_create_group: Type.Boolean(), can_create_project: Type.Boolean(),
  two_factor_enabled: Type.Boolean(), external: Type.Boolean(), private_profile: Type.Boolean(), commit_email: Type.String(),
  namespace_id: Nullable(Type.Integer()),
};
export const UserPublic = Entity(publicFields, { description: 'UserPublic' });

export const UserWithAdmin = Entity({
  ...publicFields, is_admin: Type.Boolean(), note: Nullable(Type.String()), using_license_seat: Type.Boolean(),
}, { description: 'UserWithAdmin' });

/** What GET /users/:id and /user give: the admin view, the caller's own view, or the public one. */
export const AnyUser = Type.Union([UserWithAdmin, UserPublic, User]);
